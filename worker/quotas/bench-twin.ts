/**
 * The unmetered twin of a metered request, for `npm run bench:api` only (docs/quotas.md
 * "What the meter costs"): the bench compares a metered request with the very same request
 * (same route, body, auth, validation, scoring and response) minus the call to the workspace's
 * meter, so the difference is the meter alone.
 *
 * It exists only in a build made with `wrangler dev --define __BENCH_UNMETERED_TWIN__:true`
 * (bench/api.ts starts its local server so). A define is substituted by the bundler at build
 * time: no [vars] entry, secret or dashboard setting can switch it on, wrangler.toml has no
 * [define], and `wrangler deploy` of this repository never passes one; without it the constant
 * is undefined, this function is always false and the header below is ignored (a normal charge).
 * Even in the bench build, only a request that asks with `X-Bench-Unmetered: 1` skips the charge.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env';

declare const __BENCH_UNMETERED_TWIN__: boolean | undefined;

export const BENCH_TWIN_HEADER = 'x-bench-unmetered';

/** True only in the bench build and only for a request carrying `X-Bench-Unmetered: 1`. */
export function isBenchTwin(c: Context<AppEnv>): boolean {
  return (
    typeof __BENCH_UNMETERED_TWIN__ !== 'undefined' &&
    __BENCH_UNMETERED_TWIN__ === true &&
    c.req.header(BENCH_TWIN_HEADER) === '1'
  );
}
