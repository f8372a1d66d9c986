/** Pure calendar arithmetic of quotas (worker/quotas/cycle.ts). */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  DAY_MS,
  cycleParams,
  cycleStartFor,
  daysInMonth,
  isoDate,
  nextCycleStartMs,
  secondsUntilNextUtcMidnight,
} from '../../worker/quotas/cycle';

const t = (iso: string): number => Date.parse(iso);

describe('daysInMonth', () => {
  it('knows February in leap and common years, and the long and short months', () => {
    expect(daysInMonth(2024, 1)).toBe(29);
    expect(daysInMonth(2023, 1)).toBe(28);
    expect(daysInMonth(2000, 1)).toBe(29); // divisible by 400
    expect(daysInMonth(1900, 1)).toBe(28); // divisible by 100 only
    expect(daysInMonth(2024, 0)).toBe(31);
    expect(daysInMonth(2024, 3)).toBe(30);
    expect(daysInMonth(2024, 11)).toBe(31);
  });
});

describe('cycleStartFor', () => {
  it('anchor 1: calendar months, the boundary at 00:00:00.000 UTC', () => {
    expect(cycleStartFor(t('2024-03-31T23:59:59.999Z'), 1)).toBe('2024-03-01');
    expect(cycleStartFor(t('2024-04-01T00:00:00.000Z'), 1)).toBe('2024-04-01');
    expect(cycleStartFor(t('2024-01-01T00:00:00.000Z'), 1)).toBe('2024-01-01');
    expect(cycleStartFor(t('2023-12-31T23:59:59.999Z'), 1)).toBe('2023-12-01');
  });

  it('anchor 31 clamps to the last day of short months (leap February included)', () => {
    expect(cycleStartFor(t('2024-02-28T23:59:59.999Z'), 31)).toBe('2024-01-31');
    expect(cycleStartFor(t('2024-02-29T00:00:00.000Z'), 31)).toBe('2024-02-29');
    expect(cycleStartFor(t('2023-02-28T00:00:00.000Z'), 31)).toBe('2023-02-28');
    expect(cycleStartFor(t('2023-02-27T23:59:59.999Z'), 31)).toBe('2023-01-31');
    expect(cycleStartFor(t('2024-03-30T12:00:00.000Z'), 31)).toBe('2024-02-29');
    expect(cycleStartFor(t('2024-03-31T00:00:00.000Z'), 31)).toBe('2024-03-31');
    expect(cycleStartFor(t('2024-04-30T00:00:00.000Z'), 31)).toBe('2024-04-30');
    expect(cycleStartFor(t('2024-05-30T23:59:59.999Z'), 31)).toBe('2024-04-30');
  });

  it('anchor 29 and 30 in February', () => {
    expect(cycleStartFor(t('2023-02-28T00:00:00.000Z'), 29)).toBe('2023-02-28');
    expect(cycleStartFor(t('2023-03-28T23:59:59.999Z'), 29)).toBe('2023-02-28');
    expect(cycleStartFor(t('2023-03-29T00:00:00.000Z'), 29)).toBe('2023-03-29');
    expect(cycleStartFor(t('2024-02-29T00:00:00.000Z'), 30)).toBe('2024-02-29');
    expect(cycleStartFor(t('2024-02-28T23:59:59.999Z'), 29)).toBe('2024-01-29');
  });

  it('crosses the year backwards', () => {
    expect(cycleStartFor(t('2024-01-10T00:00:00.000Z'), 15)).toBe('2023-12-15');
  });

  it('rejects anchor days outside 1..31', () => {
    expect(() => cycleStartFor(0, 0)).toThrow(RangeError);
    expect(() => cycleStartFor(0, 32)).toThrow(RangeError);
  });

  it('property: the cycle start is the latest day <= today whose day is min(anchor, month length)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1999, 0, 1), max: Date.UTC(2101, 0, 1) }),
        fc.integer({ min: 1, max: 31 }),
        (ms, anchor) => {
          // Plain search, day by day backwards.
          const isAnchor = (d: Date) =>
            d.getUTCDate() ===
            Math.min(anchor, new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate());
          let d = Math.floor(ms / DAY_MS) * DAY_MS;
          while (!isAnchor(new Date(d))) d -= DAY_MS;
          expect(cycleStartFor(ms, anchor)).toBe(isoDate(d));
          // The next cycle starts at the first anchor date after today.
          let n = Math.floor(ms / DAY_MS) * DAY_MS + DAY_MS;
          while (!isAnchor(new Date(n))) n += DAY_MS;
          expect(nextCycleStartMs(ms, anchor)).toBe(n);
          // The previous cycle start is the anchor date before the current one.
          let p = d - DAY_MS;
          while (!isAnchor(new Date(p))) p -= DAY_MS;
          expect(cycleParams(ms, anchor)).toEqual({
            today: isoDate(ms),
            cycleStart: isoDate(d),
            previousCycleStart: isoDate(p),
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('secondsUntilNextUtcMidnight', () => {
  it('is 1 at 23:59:59.999, 86400 at 00:00:00.000, rounds up in between', () => {
    expect(secondsUntilNextUtcMidnight(t('2024-02-29T23:59:59.999Z'))).toBe(1);
    expect(secondsUntilNextUtcMidnight(t('2024-03-01T00:00:00.000Z'))).toBe(86_400);
    expect(secondsUntilNextUtcMidnight(t('2024-03-01T00:00:00.001Z'))).toBe(86_400);
    expect(secondsUntilNextUtcMidnight(t('2024-03-01T23:00:00.000Z'))).toBe(3_600);
  });
});
