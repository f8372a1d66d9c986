import { createApp } from './app';
import type { Env } from './env';
import { purgeExpiredIdempotencyKeys } from './idempotency';
import { guardStorage } from './storage-guard';

const app = createApp();

/**
 * The Worker: the Hono app for HTTP, and the Cron Trigger of wrangler.toml ([triggers] crons),
 * which removes expired Idempotency-Key records (decisions.md "Idempotency": 24 hours).
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
