import type { D1Migration } from 'cloudflare:test';
import type { Env as WorkerEnv } from '../../worker/env';

declare global {
  namespace Cloudflare {
    interface Env extends WorkerEnv {
      TEST_MIGRATIONS: D1Migration[];
      // Serves files of build/generated/ (see vitest.config.ts).
      FIXTURES: Fetcher;
      // Gates of test/support/upstreams/gate.ts (see vitest.config.ts).
      GATE: Fetcher;
    }
  }
}
