/**
 * The local server of `npm start`, the benches and the e2e tests: the Worker bundled by wrangler
 * (`wrangler deploy --dry-run`, the bytes a deploy would upload) and served by Miniflare's workerd
 * directly, with the bindings of wrangler.toml and the state of `wrangler dev` (same directory
 * layout, so the seeding commands and `npm run dev` share it).
 *
 * Why not `wrangler dev`: it puts a proxy Worker in a second workerd in front of the Worker, and
 * the pooled connections between the two close after 5 s idle on both sides at once (kj's
 * HttpClientSettings.idleTimeout and HttpServerSettings.pipelineTimeout; workers-sdk #14641,
 * #15317). A request written into such a connection is lost before it reaches the Worker, and the
 * proxy answers it with a plain-text 503 "Your worker restarted mid-request" (POST) or parks it
 * until the next reload (GET). Under bursts on a loaded machine that hit 6-8% of requests
 * (docs/reliability.md). Here clients talk to the Worker's own workerd.
 * `npm run dev` keeps wrangler dev for editing (reload on change).
 *
 *   tsx build/serve.ts [--port 8787] [--persist-to DIR] [--define KEY:VALUE]... [--log-level info]
 *                      [--placement FILE|none] [--var KEY=VALUE]... [--single-port N] [--direct-port N]
 *                      [--entry FILE --host-kind durable-object]   (bench entries only)
 *                      [--bundle DIR]   (a deploy's bundle: npm run deploy -- --local DIR puts it in DIR/scripts/)
 *
 * It serves the whole topology (build/topology.ts): the API Worker and the model hosts of the
 * placement, in one workerd, as production runs them as separate Workers.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Log, LogLevel, Miniflare, type WorkerOptions } from 'miniflare';
import { unstable_getMiniflareWorkerOptions } from 'wrangler';
import { placementOf } from './placement';
import { withLock, writeStamp, stampMatches } from './stamp';
import { topologyWorkers, type HostKind } from './topology';
import { KERNELS_WASM, ROOT, WORKER_BUNDLES_DIR } from './paths';
import { wranglerAsync } from './wrangler';

/** Sources whose change needs a new bundle (walked for size and mtime). */
const BUNDLE_INPUTS = ['worker', 'core', 'wrangler.toml', 'package-lock.json', KERNELS_WASM];

function fingerprint(defines: string[], entry?: string): string {
  const h = crypto.createHash('sha256').update(JSON.stringify([defines, entry ?? null]));
  const walk = (p: string): void => {
    const st = fs.statSync(p, { throwIfNoEntry: false });
    if (!st) return;
    if (st.isDirectory()) for (const name of fs.readdirSync(p).sort()) walk(path.join(p, name));
    else h.update(`${path.relative(ROOT, p)}\0${st.size}\0${st.mtimeMs}\n`);
  };
  for (const input of entry ? [...BUNDLE_INPUTS, path.dirname(entry)] : BUNDLE_INPUTS) walk(path.resolve(ROOT, input));
  return h.digest('hex');
}

/**
 * Bundles the Worker with wrangler into build/generated/worker-bundle/<defines hash>/ unless the
 * same sources were bundled there before; returns the directory. Two processes never bundle the
 * same directory at once (withLock), and a reader never sees half a bundle (temp dir + rename).
 */
export async function bundleWorker(defines: string[] = [], entry?: string): Promise<string> {
  const key = entry ? JSON.stringify([defines, entry]) : JSON.stringify(defines);
  const id = crypto.createHash('sha256').update(key).digest('hex').slice(0, 12);
  const dir = path.join(WORKER_BUNDLES_DIR, id);
  const stampFile = `${dir}.stamp.json`;
  // The sources do not change while this process waits for the lock: one walk serves both checks.
  const stamp = { fingerprint: fingerprint(defines, entry) };
  const fresh = () => fs.existsSync(path.join(dir, mainModule(entry))) && stampMatches(stampFile, stamp);
  return withLock(
    `${dir}.lock`,
    300_000,
    fresh,
    async () => {
      const tmp = `${dir}.${process.pid}.tmp`;
      fs.rmSync(tmp, { recursive: true, force: true });
      console.log('[serve] bundling the Worker (wrangler deploy --dry-run)');
      // Not blocking: a first start bundles while it builds the default model (build/start.ts).
      await wranglerAsync([
        'deploy',
        ...(entry ? [entry] : []),
        '--dry-run',
        '--outdir',
        tmp,
        ...defines.flatMap((d) => ['--define', d]),
      ]);
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
      writeStamp(stampFile, stamp);
      return dir;
    },
    () => dir,
  );
}

/** The bundle's main module: wrangler names it after the entry (worker/index.ts: index.js). */
const mainModule = (entry?: string): string => (entry ? path.basename(entry).replace(/\.ts$/, '.js') : 'index.js');

/** The bundle's files as Miniflare modules: the entry first, wasm compiled, the Swagger UI files as text (wrangler.toml rules). */
function bundleModules(
  dir: string,
  entry?: string,
): Array<{ type: 'ESModule' | 'CompiledWasm' | 'Text'; path: string }> {
  const files = fs.readdirSync(dir).filter((f) => !f.endsWith('.map') && f !== 'README.md');
  const main = mainModule(entry);
  const typeOf = (f: string) => (f === main ? 'ESModule' : f.endsWith('.wasm') ? 'CompiledWasm' : 'Text');
  return files
    .map((f) => ({ type: typeOf(f), path: path.join(dir, f) }) as const)
    .sort((a, b) => Number(b.type === 'ESModule') - Number(a.type === 'ESModule'));
}

export interface ServeOptions {
  port: number;
  /** State directory as wrangler's --persist-to (default .wrangler/state); the data lives in its v3/. */
  persistTo?: string;
  /** Build-time constants as wrangler's --define KEY:VALUE. */
  defines?: string[];
  /** none, error, warn, info (default: one line per request), debug. */
  logLevel?: string;
  /**
   * The placement file the model hosts are built from (default build/generated/placement.json,
   * written by build/placement.ts when missing); 'none' serves the one-Worker deployment.
   */
  placement?: string;
  /** Vars set on every worker (KEY=VALUE), over wrangler.toml's. */
  vars?: Record<string, string>;
  /** Also serves the API Worker without hosts on this port (parity tests, benches: build/topology.ts). */
  singlePort?: number;
  /** Also serves the API Worker directly on this port, past Miniflare's entry worker (benches). */
  directPort?: number;
  /** Another entry module than wrangler.toml's main (bench entries: bench/workers/topology-do-entry.ts). */
  entry?: string;
  /** How the API Worker reaches the hosts (build/topology.ts); the bench's Durable Object candidate needs its entry. */
  hostKind?: HostKind;
  /** Serve this bundle directory (a deploy's scripts, `npm run deploy -- --local`) instead of bundling the sources. */
  bundle?: string;
}

function logLevel(name = 'info'): LogLevel {
  const level = (LogLevel as unknown as Record<string, LogLevel | undefined>)[name.toUpperCase()];
  if (level === undefined) throw new Error(`unknown log level '${name}' (none, error, warn, info, debug)`);
  return level;
}

/** Bundles (when needed) and serves the Worker on 127.0.0.1:`port`; resolves once it answers. */
export async function serveWorker(options: ServeOptions): Promise<Miniflare> {
  const dir = options.bundle ? path.resolve(options.bundle) : await bundleWorker(options.defines ?? [], options.entry);
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(ROOT, 'wrangler.toml'));
  // The bundle's own files replace the rules (they name source paths, not bundle files).
  const { modulesRules: _rules, ...bindings } = workerOptions;
  const persistTo = path.resolve(ROOT, options.persistTo ?? path.join('.wrangler', 'state'));
  const workers = topologyWorkers({
    base: bindings as WorkerOptions,
    modules: bundleModules(dir, options.entry),
    modulesRoot: dir,
    placement: placementOf(options.placement),
    vars: options.vars,
    singlePort: options.singlePort,
    directPort: options.directPort,
    hostKind: options.hostKind,
  });
  const mf = new Miniflare({
    workers,
    host: '127.0.0.1',
    port: options.port,
    defaultPersistRoot: path.join(persistTo, 'v3'),
    cf: false, // no request to Cloudflare for a cf object (offline machines)
    log: new Log(logLevel(options.logLevel)),
  });
  await mf.ready;
  return mf;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', default: process.env.PORT ?? '8787' },
      'persist-to': { type: 'string' },
      define: { type: 'string', multiple: true, default: [] },
      'log-level': { type: 'string', default: 'info' },
      placement: { type: 'string' },
      var: { type: 'string', multiple: true, default: [] },
      'single-port': { type: 'string' },
      'direct-port': { type: 'string' },
      entry: { type: 'string' },
      'host-kind': { type: 'string', default: 'service' },
      bundle: { type: 'string' },
    },
  });
  const port = Number(values.port);
  const mf = await serveWorker({
    port,
    persistTo: values['persist-to'],
    defines: values.define,
    logLevel: values['log-level'],
    placement: values.placement,
    vars: Object.fromEntries(values.var.map((v) => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)])),
    singlePort: values['single-port'] ? Number(values['single-port']) : undefined,
    directPort: values['direct-port'] ? Number(values['direct-port']) : undefined,
    entry: values.entry,
    hostKind: values['host-kind'] as HostKind,
    bundle: values.bundle,
  });
  console.log(`[serve] ready on http://127.0.0.1:${port}`);
  disposeOnSignals(mf);
}

/** Stops workerd and exits on SIGINT / SIGTERM. */
export function disposeOnSignals(mf: Miniflare): void {
  const stop = (): void => {
    void mf.dispose().finally(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
