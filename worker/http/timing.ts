/**
 * Server-Timing phases of a route on top of hono/timing (its middleware in app.ts adds `total`):
 * `load` and `compute` as the engine marks them (core/engine.ts EngineOptions.mark), `meter`
 * around the quota charge. workerd advances performance.now() only across I/O.
 */
import type { Context } from 'hono';
import { endTime, startTime } from 'hono/timing';
import type { AppEnv } from '../env';

const PRECISION = 2;

/** Starts `load`; the returned mark ends a phase (and starts `compute` after `load`). */
export function phases(c: Context<AppEnv>): (phase: 'load' | 'compute') => void {
  startTime(c, 'load');
  return (phase) => {
    endTime(c, phase, PRECISION);
    if (phase === 'load') startTime(c, 'compute');
  };
}

/** Runs the charge as the `meter` phase. */
export async function metered<T>(c: Context<AppEnv>, charge: () => Promise<T>): Promise<T> {
  startTime(c, 'meter');
  try {
    return await charge();
  } finally {
    endTime(c, 'meter', PRECISION);
  }
}
