import type { D1Migration } from 'cloudflare:test';

declare global {
  namespace Cloudflare {
    // The Worker's bindings come from worker-configuration.d.ts (wrangler types); these are the tests' own.
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      // Serves files of build/generated/ (see vitest.config.ts).
      FIXTURES: Fetcher;
      // Gates of test/support/upstreams/gate.ts (see vitest.config.ts).
      GATE: Fetcher;
      // The CLI's engine in Node (test/support/node-engine.ts, see vitest.config.ts).
      NODE_ENGINE: Fetcher;
    }
  }
}
