import { defineConfig } from 'vitest/config';
import { cloudflareTest, readD1Migrations } from '@cloudflare/vitest-pool-workers';
import path from 'node:path';
import fs from 'node:fs';
import { jwksUpstream } from './test/support/upstreams/jwks';
import { gateService } from './test/support/upstreams/gate';
import { nodeEngineService } from './test/support/node-engine';
import { ensureDevVars } from './build/dev-vars';
import { keepConsoleLog, quietExpectedRuntimeOutput } from './test/support/quiet-output';

const root = path.dirname(new URL(import.meta.url).pathname);
// The workerd tests read JWT_SECRET from .dev.vars (git-ignored): create it before the pool starts.
ensureDevVars(root);
// Only what a test did not cause on purpose reaches the output (test/support/quiet-output.ts).
quietExpectedRuntimeOutput();

export default defineConfig(async () => {
  const migrations = await readD1Migrations(path.join(root, 'worker/migrations'));
  return {
    test: {
      // A green run reads clean: a test's console output is shown only when the test fails, and
      // wrangler's config note (when a test starts Miniflare through wrangler's config) never.
      silent: 'passed-only' as const,
      onConsoleLog: (log: string) => keepConsoleLog(log),
      projects: [
        {
          // Plain Node: kernels, artifact format, importer, tokenizer core, training.
          test: {
            name: 'node',
            include: ['test/node/**/*.test.ts'],
            environment: 'node',
            testTimeout: 120_000,
            hookTimeout: 300_000,
            globalSetup: ['test/node/support/global-setup.ts'],
          },
        },
        {
          // workerd with real D1/R2/KV bindings from wrangler.toml.
          plugins: [
            cloudflareTest({
              wrangler: { configPath: './wrangler.toml' },
              miniflare: {
                bindings: { TEST_MIGRATIONS: migrations },
                // Outbound fetches go to test doubles of external services (the identity provider's JWKS).
                outboundService: jwksUpstream,
                // Tests fetch generated files (build/generated/...) through this binding to put them into R2.
                serviceBindings: {
                  // Gates that hold a storage operation until the test opens them (test/worker/support/storage-gate.ts).
                  GATE: gateService,
                  // The CLI's engine in Node: answers the EngineSource suite compares workerd's with.
                  NODE_ENGINE: nodeEngineService,
                  FIXTURES: async (request: Request) => {
                    const rel = decodeURIComponent(new URL(request.url).pathname).replace(/^\/+/, '');
                    const file = path.join(root, 'build', 'generated', rel);
                    if (rel.includes('..') || !fs.existsSync(file)) return new Response('not found', { status: 404 });
                    return new Response(fs.readFileSync(file));
                  },
                },
              },
            }),
          ],
          test: {
            name: 'worker',
            include: ['test/worker/**/*.test.ts'],
            setupFiles: ['test/worker/support/apply-migrations.ts'],
            testTimeout: 120_000,
            hookTimeout: 300_000,
            globalSetup: ['test/node/support/global-setup.ts'],
          },
        },
        {
          // Real Chromium (Debian package) + wrangler dev on port 8798: offline scorer parity, playground.
          test: {
            name: 'e2e',
            include: ['test/e2e/**/*.test.ts'],
            environment: 'node',
            testTimeout: 600_000,
            hookTimeout: 900_000,
          },
        },
      ],
    },
  };
});
