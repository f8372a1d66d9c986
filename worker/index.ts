import { createApp } from './app';
import type { Env } from './env';
import { purgeExpiredIdempotencyKeys } from './idempotency';
import { guardStorage } from './storage-guard';

// The Durable Object class of the METER binding (wrangler.toml) is exported by the main module.
export { WorkspaceMeter } from './quotas/meter-do';
// The entrypoint of a model host (worker/hosts/host.ts): the same script, deployed per host of the placement.
export { ModelHost } from './hosts/host';

const app = createApp();

/**
 * The Worker: the Hono app for HTTP, and the Cron Trigger of wrangler.toml ([triggers] crons),
 * which removes expired Idempotency-Key records of the D1-metering era (decisions.md "Idempotency":
 * 24 hours); the workspace meters purge their own records with their alarms.
 */
export default {
  fetch: app.fetch,
  async scheduled(_controller: ScheduledController, env: Env, ctx: ExecutionContext): Promise<void> {
    ctx.waitUntil(
      purgeExpiredIdempotencyKeys(guardStorage(env).DB).then((n) => {
        if (n > 0) console.log(`[cron] removed ${n} expired idempotency key(s)`);
      }),
    );
  },
} satisfies ExportedHandler<Env>;
