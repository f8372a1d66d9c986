/** Runs the project's pinned wrangler with telemetry and remote fetches off. */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions, type SpawnSyncReturns } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { CATALOG_GENERATION_KEY } from '../core/storage-keys';
import { ROOT } from './paths';

// Defined in build/paths.ts; still exported here for the tests and benches that import them from this module.
export { GENERATED, ROOT } from './paths';

const WRANGLER = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');

export const QUIET_ENV: NodeJS.ProcessEnv = {
  ...process.env,
  WRANGLER_SEND_METRICS: 'false',
  WRANGLER_HIDE_BANNER: 'true',
  CLOUDFLARE_CF_FETCH_ENABLED: 'false',
};

/** Runs wrangler to completion (`input` on its stdin) and returns how it ended, failed or not. */
export function wranglerRun(args: string[], input?: string): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: QUIET_ENV, encoding: 'utf8', input });
}

/** Runs wrangler to completion; throws with its output when it fails. */
export function wranglerSync(args: string[]): string {
  const res = wranglerRun(args);
  if (res.status !== 0)
    throw new Error(`wrangler ${args.join(' ')} failed (${res.status}):\n${res.stdout}\n${res.stderr}`);
  return res.stdout;
}

/** wranglerSync without blocking: several can run at once (each is mostly a Node start and esbuild). */
export function wranglerAsync(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRANGLER, ...args], {
      cwd: ROOT,
      env: QUIET_ENV,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(stdout)
        : reject(new Error(`wrangler ${args.join(' ')} failed (${code}):\n${stdout}\n${stderr}`)),
    );
  });
}

/** How many wrangler bundlings run at once: one per core. */
export const BUNDLE_CONCURRENCY = Math.max(1, os.availableParallelism());

/** The ARTIFACTS bucket of wrangler.toml. */
export const R2_BUCKET = 'embedding-edge-artifacts';

/** Puts a file into the ARTIFACTS bucket; `where` is ['--local', ...] or ['--remote']. */
export function r2Put(key: string, file: string, contentType: string | undefined, where: string[]): void {
  wranglerSync([
    'r2',
    'object',
    'put',
    `${R2_BUCKET}/${key}`,
    '--file',
    file,
    ...(contentType ? ['--content-type', contentType] : []),
    ...where,
  ]);
}

/**
 * Writes a new catalog generation into KV (binding CACHE) after catalog sidecars changed in R2,
 * so the Worker lists R2 again instead of serving its cached catalog (worker/catalog/store.ts; a
 * running worker sees it within CATALOG_MEMORY_TTL_MS). `where` as for r2Put.
 */
export function bumpCatalogGeneration(where: string[]): void {
  wranglerSync([
    'kv',
    'key',
    'put',
    '--binding',
    'CACHE',
    CATALOG_GENERATION_KEY,
    `${Date.now()}-${randomUUID()}`,
    ...where,
  ]);
}

/** Starts wrangler (default: in ROOT, output inherited); `options` override the spawn options. */
export function wranglerSpawn(args: string[], options: SpawnOptions = {}): ChildProcess {
  return spawn(process.execPath, [WRANGLER, ...args], { cwd: ROOT, env: QUIET_ENV, stdio: 'inherit', ...options });
}
