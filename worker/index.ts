import { createApp } from './app';
import type { Env } from './env';

// The Durable Object class of the METER binding (wrangler.toml) is exported by the main module.
export { WorkspaceMeter } from './quotas/meter-do';
// The entrypoint of a model host (worker/hosts/host.ts): the same script, deployed per host of the placement.
export { ModelHost } from './hosts/host';

const app = createApp();

/**
 * The Worker: the Hono app for HTTP. Nothing runs on a schedule: the workspace meters purge their
 * own expired Idempotency-Key records with their alarms.
 */
export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
