/**
 * Log lines never carry a client's long value whole (a 100 KB id would be written to the logs
 * as often as it is sent): values are cut to a bounded length with a note of what was left out.
 */
export const LOG_VALUE_MAX_CHARS = 200;

/** The value as a string of at most `max` characters (plus a marker saying how much was cut). */
export function clip(value: unknown, max = LOG_VALUE_MAX_CHARS): string {
  const s =
    typeof value === 'string' ? value : value instanceof Error ? `${value.name}: ${value.message}` : String(value);
  return s.length <= max ? s : `${s.slice(0, max)}… [${s.length - max} more characters]`;
}
