/**
 * The unmetered twin of a metered request and the meter probes, for `npm run bench:api` only
 * (docs/quotas.md "What the meter costs"): the bench compares a metered request with the very same
 * request (same route, body, auth, validation, scoring and response) minus the call to the
 * workspace's meter, so the difference is the meter alone. The probes replace the charge by the
 * two parts every charge is made of, to measure the floor under the meter in the same run:
 * - `rpc`: the same bounded call to the workspace's meter that writes nothing (the Worker-to-object
 *   round trip);
 * - `write`: the same call making the smallest durable write the object can make (one row of its
 *   own, one synchronous transaction, answered after the output gate: the durable commit), and no
 *   charge: the counters, the outbox and the keys are not touched.
 *
 * They exist only in a build made with `wrangler dev --define __BENCH_UNMETERED_TWIN__:true`
 * (bench/api.ts starts its local server so). A define is substituted by the bundler at build
 * time: no [vars] entry, secret or dashboard setting can switch it on, wrangler.toml has no
 * [define], and `wrangler deploy` of this repository never passes one; without it the constant
 * is undefined, isBenchBuild() is always false, the headers below are ignored (a normal charge)
 * and the meter refuses the probe call.
 * Even in the bench build, only a request carrying `X-Bench-Unmetered: 1` skips the charge, and
 * only one carrying `X-Bench-Meter-Probe: rpc | write` probes instead of charging.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env';

declare const __BENCH_UNMETERED_TWIN__: boolean | undefined;

export const BENCH_TWIN_HEADER = 'x-bench-unmetered';
export const BENCH_PROBE_HEADER = 'x-bench-meter-probe';

export type BenchProbe = 'rpc' | 'write';

/** True only in a build made with `--define __BENCH_UNMETERED_TWIN__:true`. */
export function isBenchBuild(): boolean {
  return typeof __BENCH_UNMETERED_TWIN__ !== 'undefined' && __BENCH_UNMETERED_TWIN__ === true;
}

/** True only in the bench build and only for a request carrying `X-Bench-Unmetered: 1`. */
export function isBenchTwin(c: Context<AppEnv>): boolean {
  return isBenchBuild() && c.req.header(BENCH_TWIN_HEADER) === '1';
}

/** The probe a request asks for with `X-Bench-Meter-Probe`, only in the bench build; otherwise null. */
export function benchProbeOf(c: Context<AppEnv>): BenchProbe | null {
  if (!isBenchBuild()) return null;
  const v = c.req.header(BENCH_PROBE_HEADER);
  return v === 'rpc' || v === 'write' ? v : null;
}
