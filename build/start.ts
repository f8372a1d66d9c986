/**
 * `npm start`: build what is missing, migrate local D1, seed local R2, then serve the whole
 * API on http://127.0.0.1:8787 (build/serve.ts: the bundled Worker in Miniflare's workerd).
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
import { writeStamp } from './stamp';
import { isCatalogKey } from '../core/storage-keys';
import { bumpCatalogGeneration, r2Put, ROOT, wranglerSpawn, wranglerSync } from './wrangler';

const DEFAULT_STAMP = path.join(ROOT, '.wrangler', 'seeded-artifacts.json');

function fingerprint(file: string): string {
  const st = fs.statSync(file);
  return crypto.createHash('sha1').update(`${st.size}:${st.mtimeMs}`).digest('hex');
}

/** Puts each artifact into local R2 unless the same file was seeded before (persistTo: another state dir). */
export function seedR2(artifacts: R2Artifact[], persistTo?: string): void {
  const STAMP = persistTo ? path.join(persistTo, 'seeded-artifacts.json') : DEFAULT_STAMP;
  const seeded: Record<string, string> = fs.existsSync(STAMP) ? JSON.parse(fs.readFileSync(STAMP, 'utf8')) : {};
  const where = ['--local', ...(persistTo ? ['--persist-to', persistTo] : [])];
  const save = (): void => {
    fs.mkdirSync(path.dirname(STAMP), { recursive: true });
    writeStamp(STAMP, seeded);
  };
  // Catalog sidecars are stamped only after the generation bump, so a run killed in between puts
  // (and bumps) them again next time instead of leaving the cached catalog stale.
  const catalogSeeded: Array<[string, string]> = [];
  for (const a of artifacts) {
    const fp = fingerprint(a.file);
    if (seeded[a.key] === fp) continue;
    console.log(`[start] seeding local R2: ${a.key} (${(fs.statSync(a.file).size / 1e6).toFixed(1)} MB)`);
    r2Put(a.key, a.file, a.contentType, where);
    if (isCatalogKey(a.key)) {
      catalogSeeded.push([a.key, fp]);
      continue;
    }
    seeded[a.key] = fp;
    save();
  }
  // The Worker caches the catalog in KV (worker/catalog/store.ts): a new sidecar needs a new generation.
  if (catalogSeeded.length > 0) {
    bumpCatalogGeneration(where);
    for (const [key, fp] of catalogSeeded) seeded[key] = fp;
    save();
  }
}

/** Applies the D1 migrations to the local database (persistTo: another state dir). */
export function migrateLocal(persistTo?: string): void {
  wranglerSync(['d1', 'migrations', 'apply', 'DB', '--local', ...(persistTo ? ['--persist-to', persistTo] : [])]);
}

async function main(): Promise<void> {
  ensureDevVars(ROOT);
  const artifacts = await ensureBuilt();
  console.log('[start] applying D1 migrations (local)');
  migrateLocal();
  seedR2(artifacts);
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
