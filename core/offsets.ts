/**
 * Token offsets as clients count them (docs/api.md "Offsets"). The tokenizer and the scorers work
 * in UTF-16 code units (JavaScript string indices); answers count characters, that is Unicode code
 * points, unless the request's `offsetUnit` asks for UTF-16 code units or UTF-8 bytes. A text with
 * no surrogate pair (for UTF-8: no non-ASCII character) has the same offsets in every unit and
 * is returned untouched; any other is converted with one pass over the text.
 */
import { z } from 'zod';

export const OFFSET_UNITS = ['codePoint', 'utf16', 'utf8'] as const;
export type OffsetUnit = (typeof OFFSET_UNITS)[number];
export const DEFAULT_OFFSET_UNIT: OffsetUnit = 'codePoint';

const SURROGATE = /[\uD800-\uDFFF]/;
const NON_ASCII = /[\u0080-\uFFFF]/;

/** Number of code points in `s` (a lone surrogate counts as one). */
export function codePointLength(s: string): number {
  if (!SURROGATE.test(s)) return s.length;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/**
 * A string of at most `max` characters (code points). The UTF-16 length bounds the count from
 * above, so only a string longer than `max` code units is counted.
 */
export function maxCharacters(max: number, message = `At most ${max} characters`) {
  return z.string().refine((s) => s.length <= max || codePointLength(s) <= max, { message, abort: true });
}

/**
 * The UTF-16 index -> `unit` offset map of `text`, or null when the two agree everywhere. The
 * table has text.length + 1 entries; an index inside a surrogate pair maps to the pair's start.
 */
function offsetTable(text: string, unit: OffsetUnit): Uint32Array | null {
  if (unit === 'utf16') return null;
  if (unit === 'codePoint' ? !SURROGATE.test(text) : !NON_ASCII.test(text)) return null;
  const table = new Uint32Array(text.length + 1);
  let at = 0;
  for (let i = 0; i < text.length; i++) {
    table[i] = at;
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00;
    if (pair) table[++i] = at;
    if (unit === 'codePoint') at += 1;
    else at += pair ? 4 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
  }
  table[text.length] = at;
  return table;
}

interface Spanned {
  indexStart: number;
  indexEnd: number;
}

/**
 * A function rewriting spans' UTF-16 offsets into `text` as `unit` offsets, in place (the table
 * is built once for all the spans of one text); null when nothing changes.
 */
export function spanConverter(
  text: string,
  unit: OffsetUnit = DEFAULT_OFFSET_UNIT,
): ((spans: readonly Spanned[]) => void) | null {
  const table = offsetTable(text, unit);
  if (!table) return null;
  return (spans) => {
    for (const s of spans) {
      s.indexStart = table[s.indexStart]!;
      s.indexEnd = table[s.indexEnd]!;
    }
  };
}

/** The spans of `text` with `unit` offsets (rewritten in place); returns `spans`. */
export function convertOffsets<T extends Spanned>(text: string, spans: T[], unit?: OffsetUnit): T[] {
  if (spans.length > 0) spanConverter(text, unit)?.(spans);
  return spans;
}
