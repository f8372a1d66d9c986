/**
 * The service clock. Everything time-dependent in quotas and metering (daily reset at
 * midnight UTC, monthly cycles, ledger timestamps, Retry-After) reads `now()`.
 *
 * `setClock` exists for tests only: vitest-pool-workers runs the tests in the same isolate
 * as the Worker, so a test can stand on 23:59:59.999 UTC and then on 00:00:00.000 UTC.
 * Production code never calls it, and no request header or parameter can reach it.
 */
type ClockFn = () => number | Date;

let override: ClockFn | null = null;

/** Milliseconds since the epoch, from the injected clock or Date.now(). */
export function nowMs(): number {
  if (!override) return Date.now();
  const v = override();
  return typeof v === 'number' ? v : v.getTime();
}

export function now(): Date {
  return new Date(nowMs());
}

/** Test-only: replace the clock (`null` restores the real one). */
export function setClock(fn: ClockFn | null): void {
  override = fn;
}
