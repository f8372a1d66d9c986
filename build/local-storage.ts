/**
 * Writes into the local D1 database, R2 bucket and KV namespace of wrangler.toml (the state
 * directory that `npm start`, build/serve.ts and wrangler dev read) through one Miniflare
 * instance. This is what `wrangler d1 migrations apply --local`, `wrangler r2 object put --local`
 * and `wrangler kv key put --local` do, with the same storage layout and the same `d1_migrations`
 * table, but those start one wrangler process and a workerd per object or statement (1 to 3 s
 * each; a fresh state directory needs about 55); here all writes share one workerd.
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { Miniflare } from 'miniflare';
import { unstable_getMiniflareWorkerOptions, unstable_splitSqlQuery } from 'wrangler';
import { CATALOG_GENERATION_KEY } from '../core/storage-keys';
import { ROOT } from './paths';

export interface LocalStorage {
  /** Applies the migrations of worker/migrations not yet in `d1_migrations` (as wrangler does); returns their names. */
  migrateD1(): Promise<string[]>;
  /** Puts a file into the ARTIFACTS bucket, with its content type. */
  putObject(key: string, file: string, contentType: string | undefined): Promise<void>;
  /** A new catalog generation in KV (CACHE), as bumpCatalogGeneration in build/wrangler.ts. */
  bumpCatalogGeneration(): Promise<void>;
  /** Removes an object from the ARTIFACTS bucket (tests of a missing artifact). */
  deleteObject(key: string): Promise<void>;
  /** An object of the ARTIFACTS bucket as text; null when there is none. */
  getText(key: string): Promise<string | null>;
  /** Puts a text into the ARTIFACTS bucket. */
  putText(key: string, text: string, contentType?: string): Promise<void>;
  /** The migrations of worker/migrations not yet in `d1_migrations`, without applying them. */
  pendingMigrations(): Promise<string[]>;
}

// The PUT handler of wrangler's usingLocalBucket.
const SCRIPT = `export default {
  async fetch(request, env) {
    if (request.method !== 'PUT') return new Response(null, { status: 405 });
    const key = decodeURIComponent(new URL(request.url).pathname.slice(1));
    const opts = JSON.parse(request.headers.get('x-put-options') ?? '{}');
    try {
      await env.BUCKET.put(key, request.body, opts);
      return new Response(null, { status: 204 });
    } catch (e) {
      return new Response(String(e?.stack ?? e), { status: 500 });
    }
  },
};`;

/** Runs `fn` with the local storage of state directory `persistTo` (default .wrangler/state). */
export async function withLocalStorage<T>(
  persistTo: string | undefined,
  fn: (storage: LocalStorage) => Promise<T>,
): Promise<T> {
  const { workerOptions } = unstable_getMiniflareWorkerOptions(path.join(ROOT, 'wrangler.toml'));
  const bucket = bindingId(workerOptions.r2Buckets, 'ARTIFACTS');
  const namespace = bindingId(workerOptions.kvNamespaces, 'CACHE');
  const database = bindingId(workerOptions.d1Databases, 'DB');
  const state = path.resolve(ROOT, persistTo ?? path.join('.wrangler', 'state'));
  const mf = new Miniflare({
    modules: true,
    script: SCRIPT,
    defaultPersistRoot: path.join(state, 'v3'),
    r2Buckets: { BUCKET: bucket },
    kvNamespaces: { CACHE: namespace },
    d1Databases: { DB: database },
    cf: false,
  });
  try {
    await mf.ready;
    return await fn({
      async migrateD1() {
        const db = await mf.getD1Database('DB');
        // wrangler's table (d1/migrations): `wrangler d1 migrations apply` sees these as applied.
        await db
          .prepare(
            `CREATE TABLE IF NOT EXISTS d1_migrations(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
          )
          .run();
        const done = new Set(
          (await db.prepare('SELECT name FROM d1_migrations').all<{ name: string }>()).results.map((r) => r.name),
        );
        const applied: string[] = [];
        for (const name of migrationNames()) {
          if (done.has(name)) continue;
          const queries = unstable_splitSqlQuery(fs.readFileSync(path.join(MIGRATIONS_DIR, name), 'utf8'));
          // One batch: the migration and its record commit together, as in wrangler.
          await db.batch([
            ...queries.map((q) => db.prepare(q)),
            db.prepare('INSERT INTO d1_migrations (name) VALUES (?)').bind(name),
          ]);
          applied.push(name);
        }
        return applied;
      },
      async putObject(key, file, contentType) {
        const res = await mf.dispatchFetch(`http://localhost/${encodeURIComponent(key)}`, {
          method: 'PUT',
          body: fs.readFileSync(file),
          headers: {
            'content-length': String(fs.statSync(file).size),
            'x-put-options': JSON.stringify({ httpMetadata: contentType ? { contentType } : {} }),
          },
        });
        if (res.status !== 204) throw new Error(`local R2 put of ${key} failed (${res.status}): ${await res.text()}`);
      },
      async deleteObject(key) {
        await (await mf.getR2Bucket('BUCKET')).delete(key);
      },
      async getText(key) {
        const obj = await (await mf.getR2Bucket('BUCKET')).get(key);
        return obj ? obj.text() : null;
      },
      async putText(key, text, contentType) {
        await (await mf.getR2Bucket('BUCKET')).put(key, text, contentType ? { httpMetadata: { contentType } } : {});
      },
      async pendingMigrations() {
        const db = await mf.getD1Database('DB');
        const table = await db
          .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'd1_migrations'`)
          .first<{ name: string }>();
        const done = table
          ? new Set(
              (await db.prepare('SELECT name FROM d1_migrations').all<{ name: string }>()).results.map((r) => r.name),
            )
          : new Set<string>();
        return migrationNames().filter((n) => !done.has(n));
      },
      async bumpCatalogGeneration() {
        const kv = await mf.getKVNamespace('CACHE');
        await kv.put(CATALOG_GENERATION_KEY, `${Date.now()}-${randomUUID()}`);
      },
    });
  } finally {
    await mf.dispose();
  }
}

const MIGRATIONS_DIR = path.join(ROOT, 'worker', 'migrations');

/** The migrations of worker/migrations in the order wrangler applies them. */
export function migrationNames(): string[] {
  return fs
    .readdirSync(MIGRATIONS_DIR)
    .filter((n) => n.endsWith('.sql'))
    .sort((a, b) => parseInt(a) - parseInt(b));
}

/** The id of a binding as unstable_getMiniflareWorkerOptions gives it (a string or { id }). */
function bindingId(bindings: unknown, name: string): string {
  const b = (bindings as Record<string, string | { id: string }> | undefined)?.[name];
  const id = typeof b === 'string' ? b : b?.id;
  if (!id) throw new Error(`wrangler.toml has no binding ${name}`);
  return id;
}
