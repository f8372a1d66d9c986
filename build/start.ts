/**
 * `npm start`: build what is missing, migrate local D1, seed local R2, then serve the whole
 * API on http://127.0.0.1:8787 (build/serve.ts: the bundled API Worker and its model hosts in
 * Miniflare's workerd; build/placement.ts places the models on the hosts).
 * `npm run dev`: the same, served by wrangler dev instead, which rebuilds and reloads the Worker
 * when a source changes (for editing; its proxy loses requests under bursts, see serve.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { pathToFileURL } from 'node:url';
import { ensureDevVars } from './dev-vars';
import { ensureBuilt, type R2Artifact } from './ensure';
import { disposeOnSignals, serveWorker } from './serve';
import { writePlacement } from './placement';
import { ensureShardArtifacts } from './model-shards';
import { writeStamp } from './stamp';
import { isCatalogKey } from '../core/storage-keys';
import { withLocalStorage } from './local-storage';
import { ROOT } from './paths';
import { wranglerSpawn } from './wrangler';

const DEFAULT_STAMP = path.join(ROOT, '.wrangler', 'seeded-artifacts.json');

function fingerprint(file: string): string {
  const st = fs.statSync(file);
  return crypto.createHash('sha1').update(`${st.size}:${st.mtimeMs}`).digest('hex');
}

/**
 * Migrates local D1 and seeds local R2 in one Miniflare instance (build/local-storage.ts); each
 * artifact is put unless the same file was seeded before (persistTo: another state dir).
 */
export async function prepareLocalState(artifacts: R2Artifact[], persistTo?: string): Promise<void> {
  const STAMP = persistTo ? path.join(persistTo, 'seeded-artifacts.json') : DEFAULT_STAMP;
  const seeded: Record<string, string> = fs.existsSync(STAMP) ? JSON.parse(fs.readFileSync(STAMP, 'utf8')) : {};
  const save = (): void => {
    fs.mkdirSync(path.dirname(STAMP), { recursive: true });
    writeStamp(STAMP, seeded);
  };
  // One put per key (a sharded model's catalog entry comes from its build step and its shards).
  const unique = [...new Map(artifacts.map((a) => [a.key, a])).values()];
  const todo = unique.map((a) => ({ ...a, fp: fingerprint(a.file) })).filter((a) => seeded[a.key] !== a.fp);
  await withLocalStorage(persistTo, async (storage) => {
    const applied = await storage.migrateD1();
    if (applied.length > 0) console.log(`[start] applied D1 migrations: ${applied.join(', ')}`);
    // Catalog sidecars are stamped only after the generation bump, so a run killed in between puts
    // (and bumps) them again next time instead of leaving the cached catalog stale.
    const catalogSeeded: Array<[string, string]> = [];
    // One line for the whole seeding (a fresh state holds about 40 objects).
    if (todo.length > 0) {
      const mb = todo.reduce((n, a) => n + fs.statSync(a.file).size, 0) / 1e6;
      const folders = [...new Set(todo.map((a) => a.key.split('/')[0]))].join(', ');
      console.log(`[start] seeding local R2: ${todo.length} objects, ${mb.toFixed(1)} MB (${folders})`);
    }
    for (const a of todo) {
      await storage.putObject(a.key, a.file, a.contentType);
      if (isCatalogKey(a.key)) {
        catalogSeeded.push([a.key, a.fp]);
        continue;
      }
      seeded[a.key] = a.fp;
      save();
    }
    // The Worker caches the catalog in KV (worker/catalog/store.ts): a new sidecar needs a new generation.
    if (catalogSeeded.length > 0) {
      await storage.bumpCatalogGeneration();
      for (const [key, fp] of catalogSeeded) seeded[key] = fp;
      save();
    }
  });
}

async function main(): Promise<void> {
  ensureDevVars(ROOT);
  const artifacts = await ensureBuilt();
  // Models are placed on hosts anew each start: a model added with model:import gets a host, and
  // one over the budget is row-sharded (its parts and word map are cut and seeded with the rest).
  const placement = writePlacement();
  for (const h of placement.hosts)
    console.log(`[start] ${h.name}: ${[...h.models, ...h.shards].join(', ')} (${(h.bytes / 1e6).toFixed(1)} MB)`);
  console.log('[start] applying D1 migrations and seeding R2 (local)');
  await prepareLocalState([...artifacts, ...ensureShardArtifacts(placement)]);
  const port = process.env.PORT ?? '8787';
  if (!process.argv.includes('--dev')) {
    const mf = await serveWorker({ port: Number(port) });
    console.log(`[start] serving on http://127.0.0.1:${port}`);
    disposeOnSignals(mf);
    return;
  }
  console.log(`[start] serving on http://127.0.0.1:${port} (wrangler dev, reloads on change)`);
  const child = wranglerSpawn([
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    port,
    '--local',
    '--show-interactive-dev-session=false',
  ]);
  const stop = (): void => {
    child.kill('SIGINT');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.on('exit', (code) => process.exit(code ?? 0));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
