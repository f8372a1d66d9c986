/**
 * Timings of the offline scorer's load phases (IndexedDB reads, downloads, parsing, WASM compile,
 * first score), in ms since the Web Worker started (performance.now() of the worker). Exposed by
 * the scorer's status() and printed by `npm run bench:browser`.
 */
import type { PhaseTiming } from './protocol';

const log: PhaseTiming[] = [];

export function mark(name: string, start: number, end = performance.now()): void {
  log.push({ name, start: Math.round(start * 10) / 10, end: Math.round(end * 10) / 10 });
  if (log.length > 256) log.shift();
}

/** Runs fn and records its duration (sync or async) under `name`. */
export function phase<T>(name: string, fn: () => T): T {
  const t0 = performance.now();
  const out = fn();
  if (out instanceof Promise) {
    return out.then(
      (v) => {
        mark(name, t0);
        return v;
      },
      (err: unknown) => {
        mark(`${name} (failed)`, t0);
        throw err;
      },
    ) as T;
  }
  mark(name, t0);
  return out;
}

/** The phases recorded since `from` (ms since the worker started; the page's reads began before: negative). */
export function phasesSince(from = -Infinity): PhaseTiming[] {
  return log.filter((p) => p.start >= from);
}
