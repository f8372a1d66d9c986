/**
 * Seeding local R2 with the generated artifacts, through either a Miniflare instance of its own
 * before the server starts (build/local-storage.ts) or the running server's own Miniflare (a first
 * `npm start` seeds what it builds after it serves: a second Miniflare on the same state directory
 * would race the server's). The stamp file records what was put (key -> size and mtime of the
 * file), so a file is put once; catalog sidecars and building.json come last and bump the catalog
 * generation (the Worker caches the catalog in KV: worker/catalog/store.ts).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Miniflare } from 'miniflare';
import { randomUUID } from 'node:crypto';
import type { BuildingState } from '../core/building';
import { buildingDone } from '../core/building';
import { BUILDING_KEY, CATALOG_GENERATION_KEY, isCatalogKey } from '../core/storage-keys';
import type { R2Artifact } from './ensure';
import type { LocalStorage } from './local-storage';
import { writeStamp } from './stamp';

/** What seeding needs of local storage. */
export type SeedTarget = Pick<
  LocalStorage,
  'putObject' | 'putText' | 'getText' | 'deleteObject' | 'bumpCatalogGeneration'
>;

export function fingerprint(file: string): string {
  const st = fs.statSync(file);
  return crypto.createHash('sha1').update(`${st.size}:${st.mtimeMs}`).digest('hex');
}

/** The seeded-artifacts stamp of a state directory. */
export class SeedStamp {
  private readonly seeded: Record<string, string>;

  constructor(readonly file: string) {
    this.seeded = fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, string>) : {};
  }

  /** Whether `key` holds `file`'s current bytes (false when the file is missing). */
  has(key: string, file: string): boolean {
    return fs.existsSync(file) && this.seeded[key] === fingerprint(file);
  }

  /** Whether `key` was seeded at all. */
  hasKey(key: string): boolean {
    return key in this.seeded;
  }

  keys(): string[] {
    return Object.keys(this.seeded);
  }

  set(key: string, fp: string): void {
    this.seeded[key] = fp;
  }

  save(): void {
    fs.mkdirSync(path.dirname(this.file), { recursive: true });
    writeStamp(this.file, this.seeded);
  }
}

/** Puts building.json (deletes it when nothing is being built); true when it changed. */
async function writeBuilding(target: SeedTarget, state: BuildingState | null): Promise<boolean> {
  const text = buildingDone(state) ? null : `${JSON.stringify(state)}\n`;
  if ((await target.getText(BUILDING_KEY)) === text) return false;
  if (text === null) await target.deleteObject(BUILDING_KEY);
  else await target.putText(BUILDING_KEY, text, 'application/json');
  return true;
}

/**
 * Puts what `artifacts` hold that the stamp does not, the catalog sidecars after the rest; then
 * building.json as `building()` gives it (computed after the puts; undefined leaves it as it is),
 * and a new catalog generation when a sidecar or building.json changed. Returns what was put.
 */
export async function seedArtifacts(
  target: SeedTarget,
  stamp: SeedStamp,
  artifacts: readonly R2Artifact[],
  building?: () => BuildingState | null,
): Promise<R2Artifact[]> {
  // One put per key (a sharded model's catalog entry comes from its build step and its shards).
  const unique = [...new Map(artifacts.map((a) => [a.key, a])).values()];
  const todo = unique.map((a) => ({ ...a, fp: fingerprint(a.file) })).filter((a) => !stamp.has(a.key, a.file));
  const catalog = todo.filter((a) => isCatalogKey(a.key));
  for (const a of todo.filter((x) => !isCatalogKey(x.key))) {
    await target.putObject(a.key, a.file, a.contentType);
    stamp.set(a.key, a.fp);
    stamp.save();
  }
  for (const a of catalog) await target.putObject(a.key, a.file, a.contentType);
  // Sidecars are stamped only after the generation bump, so a run killed in between puts (and
  // bumps) them again next time instead of leaving the cached catalog stale.
  for (const a of catalog) stamp.set(a.key, a.fp);
  const changed = building ? await writeBuilding(target, building()) : false;
  if (catalog.length > 0 || changed) await target.bumpCatalogGeneration();
  stamp.save();
  return todo;
}

/** The local storage of the running server (its Miniflare's bindings of the API Worker). */
export async function liveTarget(mf: Miniflare): Promise<SeedTarget> {
  const bucket = await mf.getR2Bucket('ARTIFACTS');
  const kv = await mf.getKVNamespace('CACHE');
  return {
    async putObject(key, file, contentType) {
      // A plain Uint8Array: Miniflare's proxy refuses a Buffer that is a view into Node's pool.
      await bucket.put(key, new Uint8Array(fs.readFileSync(file)), {
        httpMetadata: contentType ? { contentType } : {},
      });
    },
    async putText(key, text, contentType) {
      await bucket.put(key, text, contentType ? { httpMetadata: { contentType } } : {});
    },
    async getText(key) {
      const obj = await bucket.get(key);
      return obj ? obj.text() : null;
    },
    async deleteObject(key) {
      await bucket.delete(key);
    },
    async bumpCatalogGeneration() {
      await kv.put(CATALOG_GENERATION_KEY, `${Date.now()}-${randomUUID()}`);
    },
  };
}
