/** Runs the project's pinned wrangler with telemetry and remote fetches off. */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions, type SpawnSyncReturns } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
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

/** wrangler's last line on a failure: where its log went (which says nothing by itself). */
const LOG_LINE = /Logs were written to "([^"]+)"/;
/** Where wrangler's error block starts: "✘ [ERROR] ..." (the ✘ is "X" on terminals without it). */
const ERROR_START = /^\s*(✘|X \[ERROR\])|\[ERROR\]/;
const MAX_ERROR_LINES = 40;

/**
 * The lines of a failed wrangler run that say why: its error block ("✘ [ERROR] ..." and what
 * follows) from stderr, else stdout; without one, the last lines it printed. Colours and the log
 * line are left out.
 */
export function wranglerErrorLines(out: { stdout?: string | null; stderr?: string | null }): string[] {
  for (const text of [out.stderr ?? '', out.stdout ?? '']) {
    const lines = stripVTControlCharacters(text)
      .split('\n')
      .map((l) => l.trimEnd());
    const start = lines.findIndex((l) => ERROR_START.test(l));
    if (start >= 0)
      return lines
        .slice(start)
        .filter((l) => l.trim() && !LOG_LINE.test(l))
        .slice(0, MAX_ERROR_LINES);
  }
  const rest = stripVTControlCharacters(`${out.stderr ?? ''}\n${out.stdout ?? ''}`)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() && !LOG_LINE.test(l));
  return rest.slice(-MAX_ERROR_LINES);
}

/** wrangler's reason in one line: its first error line without the "✘ [ERROR]" mark. */
export function wranglerReason(out: { stdout?: string | null; stderr?: string | null }): string {
  const first = wranglerErrorLines(out)[0]?.trim() ?? '';
  return first.replace(/^(✘|X)?\s*\[ERROR\]\s*/, '') || 'no output';
}

/**
 * How a wrangler step failed, for the user: the command, its exit code, wrangler's own error
 * lines (the log it names holds no more than these for the usual failures), and the log's path.
 */
export function wranglerFailure(
  args: string[],
  res: { status: number | null; stdout?: string | null; stderr?: string | null; error?: Error },
): string {
  const log = LOG_LINE.exec(stripVTControlCharacters(`${res.stderr ?? ''}\n${res.stdout ?? ''}`))?.[1];
  return [
    `wrangler ${args.join(' ')} failed (${res.error?.message ?? `exit ${res.status}`}):`,
    ...wranglerErrorLines(res).map((l) => `  ${l}`),
    ...(log ? [`  (wrangler's log: ${log})`] : []),
  ].join('\n');
}

/** Runs wrangler to completion; throws with its error lines when it fails. */
export function wranglerSync(args: string[]): string {
  const res = wranglerRun(args);
  if (res.status !== 0) throw new Error(wranglerFailure(args, res));
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
      code === 0 ? resolve(stdout) : reject(new Error(wranglerFailure(args, { status: code, stdout, stderr }))),
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
