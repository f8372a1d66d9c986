/**
 * Cloudflare's published limits that `npm run deploy:check` holds the deployment to, each with the
 * page it is taken from. Looked up in the copies of developers.cloudflare.com available when this
 * was written; the copies disagree on some figures (noted below), and where they do the check keeps
 * the stricter one, so a deployment it passes also passes under the older rule.
 */

export type Plan = 'free' | 'paid';

export const WORKERS_LIMITS_URL = 'https://developers.cloudflare.com/workers/platform/limits/';
export const STARTUP_CHANGELOG_URL = 'https://developers.cloudflare.com/changelog/2025-10-10-increased-startup-time';
export const CPU_CHANGELOG_URL = 'https://developers.cloudflare.com/changelog/2025-03-25-higher-cpu-limits/';
export const R2_LIMITS_URL = 'https://developers.cloudflare.com/r2/platform/limits/';
/** wrangler's own cap, a constant of the pinned wrangler (not a platform limit). */
export const WRANGLER_R2_PUT_SOURCE = 'node_modules/wrangler (4.86.0) MAX_UPLOAD_SIZE_BYTES';

const MiB = 1024 * 1024;

/**
 * Worker size after gzip ("Worker size": 3 MB free, 10 MB paid). wrangler's dry run reports the
 * gzip of its modules joined and warns against 3 MiB, so the caps are read as MiB. A draft of the
 * docs (cloudflare-docs PR 31002, May 2026) replaces them with one 64 MiB uncompressed limit; the
 * compressed caps stay here, being the stricter.
 */
export const WORKER_SIZE_GZIP: Record<Plan, number> = { free: 3 * MiB, paid: 10 * MiB };

/**
 * Worker startup: parse and run the global scope within 1 second on both plans (raised from 400
 * ms on 2025-10-10, STARTUP_CHANGELOG_URL).
 */
export const STARTUP_MS = 1000;

/** Memory of one isolate ("Memory": 128 MB on both plans), read as MiB like the runtime's heap limit. */
export const ISOLATE_MEMORY_BYTES = 128 * MiB;

/**
 * CPU time of one HTTP request: 10 ms free; paid 30 s by default, configurable up to 5 minutes
 * with [limits] cpu_ms (CPU_CHANGELOG_URL; the limits page's table gives the 5-minute maximum).
 */
export const CPU_MS: Record<Plan, number> = { free: 10, paid: 30_000 };
export const PAID_CPU_MS_MAX = 300_000;

/**
 * Subrequests of one request: 50 free, 1,000 paid. Later copies of the page give 10,000 on paid;
 * 1,000 is kept (stricter). The same page counts R2, KV, D1 and Durable Object calls as
 * subrequests; service binding calls are counted here too (conservative).
 */
export const SUBREQUESTS: Record<Plan, number> = { free: 50, paid: 1000 };

/** R2 single-part upload: 5 GiB less 5 MiB ("Maximum upload size", footnote 3), on both plans. */
export const R2_SINGLE_UPLOAD_BYTES = 5 * 1024 * MiB - 5 * MiB;

/**
 * `wrangler r2 object put` refuses files over 300 MiB ("Wrangler only supports uploading files up
 * to 300 MiB"), and build/wrangler.ts r2Put is how the project uploads its artifacts.
 */
export const WRANGLER_R2_PUT_BYTES = 300 * MiB;

/** Why paid is the default plan, printed with the table. */
export const DEFAULT_PLAN_REASON =
  'paid is the default: the model hosts need more CPU per request than the free plan allows (10 ms; see the CPU rows), and several Workers with 40+ MB models are a paid-plan deployment; pass --plan free to hold it to the free caps';
