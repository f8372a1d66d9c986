/**
 * Calendar arithmetic of quotas, as pure functions of a UTC instant (ms since the epoch).
 *
 * - The day is the UTC calendar day; daily counters belong to a day and reset at 00:00:00.000 UTC.
 * - A workspace has an anchor day A (1..31). The anchor date of a month is day min(A, last day
 *   of that month): anchor 31 means Jan 31, Feb 28 (Feb 29 in leap years), Mar 31, Apr 30, ...
 * - A billing cycle starts at 00:00:00.000 UTC of an anchor date and lasts until the next one.
 *   cycleStartFor(t) is the latest anchor date on or before t's UTC day.
 * All dates are ISO `YYYY-MM-DD` strings, which order lexicographically like the dates.
 */
export const DAY_MS = 86_400_000;

export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Start of the UTC day holding `ms`. */
export function startOfUtcDay(ms: number): number {
  return Math.floor(ms / DAY_MS) * DAY_MS;
}

/** Days of month `month0` (0 = January) of `year`, leap years included. */
export function daysInMonth(year: number, month0: number): number {
  return new Date(Date.UTC(year, month0 + 1, 0)).getUTCDate();
}

/** The anchor date of a month as epoch ms (00:00 UTC): day min(anchorDay, last day). */
export function anchorDateOf(year: number, month0: number, anchorDay: number): number {
  const y = year + Math.floor(month0 / 12);
  const m = ((month0 % 12) + 12) % 12;
  return Date.UTC(y, m, Math.min(anchorDay, daysInMonth(y, m)));
}

function checkAnchor(anchorDay: number): void {
  if (!Number.isInteger(anchorDay) || anchorDay < 1 || anchorDay > 31)
    throw new RangeError(`anchor day ${anchorDay} is not in 1..31`);
}

/** Epoch ms (00:00 UTC) of the cycle holding `ms`. */
export function cycleStartMs(ms: number, anchorDay: number): number {
  checkAnchor(anchorDay);
  const d = new Date(ms);
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth();
  const thisMonth = anchorDateOf(y, m, anchorDay);
  return startOfUtcDay(ms) >= thisMonth ? thisMonth : anchorDateOf(y, m - 1, anchorDay);
}

/** Epoch ms (00:00 UTC) at which the cycle holding `ms` ends (= the next cycle starts). */
export function nextCycleStartMs(ms: number, anchorDay: number): number {
  const start = new Date(cycleStartMs(ms, anchorDay));
  return anchorDateOf(start.getUTCFullYear(), start.getUTCMonth() + 1, anchorDay);
}

export function cycleStartFor(ms: number, anchorDay: number): string {
  return isoDate(cycleStartMs(ms, anchorDay));
}

/** Whole seconds from `ms` to the next midnight UTC, at least 1 (for Retry-After). */
export function secondsUntilNextUtcMidnight(ms: number): number {
  return Math.max(1, Math.ceil((startOfUtcDay(ms) + DAY_MS - ms) / 1000));
}

/** The dates the rollover of a quota row to an instant depends on (quota-rules.ts). */
export interface CycleParams {
  /** Today's UTC date: the day of the daily counter. */
  today: string;
  /** Start of the current cycle. */
  cycleStart: string;
  /** Start of the cycle before it: a stored cycle start >= this is exactly one rollover behind. */
  previousCycleStart: string;
}

export function cycleParams(ms: number, anchorDay: number): CycleParams {
  const start = cycleStartMs(ms, anchorDay);
  return {
    today: isoDate(ms),
    cycleStart: isoDate(start),
    previousCycleStart: isoDate(cycleStartMs(start - DAY_MS, anchorDay)),
  };
}
