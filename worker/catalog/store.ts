/**
 * The model and mapper catalog: the JSON sidecars in R2 (models/{id}.json manifests and
 * mappers/{modelId}/{key}.json bundle infos) and, on a local first start, building.json (what is
 * still being built: core/building.ts), parsed once and cached.
 *
 * Read path (getCatalog):
 *   1. isolate memory, for CATALOG_MEMORY_TTL_MS (no I/O at all);
 *   2. KV (binding CACHE): the generation token at CATALOG_GENERATION_KEY, then the parsed
 *      catalog at `catalog:v1:{generation}` (two KV reads, no R2);
 *   3. R2: list models/ and mappers/, read every sidecar, store the result in KV under the
 *      generation read in step 2 (expirationTtl CATALOG_KV_TTL_S) and in memory.
 * Concurrent misses in one isolate share one load.
 *
 * Invalidation: whoever changes a sidecar in R2 writes a new random generation token
 * (invalidateCatalog here; build/wrangler.ts bumpCatalogGeneration for the build scripts,
 * which write R2 from outside the Worker). Readers then look up a key nobody has written, so
 * they list R2 again. A load that raced with the write may store its (old) listing, but under
 * the previous generation, which no reader asks for any more; and a load started in this
 * isolate before invalidateCatalog never fills the memory cache.
 *
 * Staleness bound after a change in R2:
 *   - invalidateCatalog in this isolate (tests, Worker code): none;
 *   - a generation bump from outside (build scripts): CATALOG_MEMORY_TTL_MS in other isolates
 *     (plus KV propagation to other locations in production, about 60 s; the token itself is
 *     read with cacheTtl GENERATION_CACHE_TTL_S);
 *   - a write without a bump (a hand-made `wrangler r2 object put`, the dashboard):
 *     CATALOG_KV_TTL_S + CATALOG_MEMORY_TTL_MS (plus KV's edge cache in production).
 * GET /api/v1/embedding-models/{id} does not answer a stale 404: an id missing from the cached
 * catalog is looked up in R2 (one get, as before the cache), and when the manifest is there
 * the catalog is reloaded from R2 (refreshCatalog).
 */
import { BUILDING_KEY, CATALOG_GENERATION_KEY, KV_KEYS, R2_PREFIXES } from '../../core/storage-keys';
import { parseBuildingState, type BuildingState } from '../../core/building';
import { type MapperBundleInfo, type ModelManifest } from '../../core/types';
import type { Env } from '../env';
import { keepAlive, type WaitUntil } from '../../core/shared-load';

/** How long an isolate serves its in-memory catalog without asking KV. */
export const CATALOG_MEMORY_TTL_MS = 5_000;
/**
 * expirationTtl of the KV entry: the bound for writers that do not bump the generation. Every
 * expiry costs a KV write at the next miss, so it is not KV's 60 s minimum (1,440 writes a day
 * under steady traffic, more than the Workers Free plan's 1,000) but 300 s (288 a day).
 */
export const CATALOG_KV_TTL_S = 300;
/** KV edge-cache time of the generation token (30 s is KV's minimum cacheTtl). */
const GENERATION_CACHE_TTL_S = 30;

/**
 * What the catalog routes need of a mapper bundle info (the KV entry keeps only these fields);
 * modelId is the model of the R2 prefix (mappers/{modelId}/), not the sidecar's field.
 */
export type CatalogMapper = Pick<
  MapperBundleInfo,
  'modelId' | 'key' | 'variables' | 'translationKey' | 'label' | 'language' | 'country' | 'multilingual'
>;

export interface Catalog {
  /** Every model manifest in R2, sorted by id. */
  manifests: ModelManifest[];
  /** Every mapper bundle info in R2, in R2 key order (model id, then bundle key). */
  mappers: CatalogMapper[];
  /** What a local first start is still building (core/building.ts); absent when nothing is. */
  building?: BuildingState;
}

/** The manifest of one model in the catalog. */
export function catalogManifest(catalog: Catalog, id: string): ModelManifest | undefined {
  return catalog.manifests.find((m) => m.id === id);
}

/** The mapper bundles of one model, sorted by bundle key. */
export function catalogMappersOf(catalog: Catalog, modelId: string): CatalogMapper[] {
  return catalog.mappers
    .filter((b) => b.modelId === modelId)
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

// ---------------------------------------------------------------------------------------------
// R2
// ---------------------------------------------------------------------------------------------

async function listKeys(env: Env, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await env.ARTIFACTS.list({ prefix, cursor, limit: 1000 });
    for (const o of page.objects) keys.push(o.key);
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return keys;
}

async function readJson<T>(env: Env, key: string): Promise<T | null> {
  const obj = await env.ARTIFACTS.get(key);
  if (!obj) return null;
  try {
    return (await obj.json()) as T;
  } catch {
    console.error(`[catalog] ${key} is not valid JSON; skipped`);
    return null;
  }
}

/** R2 loads of the catalog in this isolate (tests: "served without listing R2"). */
let r2Loads = 0;
export function catalogR2Loads(): number {
  return r2Loads;
}

/** Lists R2 and reads every sidecar (the uncached catalog). */
export async function readCatalogFromR2(env: Env): Promise<Catalog> {
  r2Loads++;
  const [modelKeys, mapperKeys, building] = await Promise.all([
    listKeys(env, R2_PREFIXES.models),
    listKeys(env, R2_PREFIXES.mappers),
    // Absent outside a local first start: a failed read means nothing is being built.
    readJson<unknown>(env, BUILDING_KEY).then(parseBuildingState, () => null),
  ]);
  const manifestKeys = modelKeys.filter(
    (k) => k.endsWith('.json') && !k.slice(R2_PREFIXES.models.length).includes('/'),
  );
  const infoKeys = mapperKeys.filter((k) => k.endsWith('.json') && k.split('/').length === 3);
  const [manifests, infos] = await Promise.all([
    Promise.all(manifestKeys.map((k) => readJson<ModelManifest>(env, k))),
    Promise.all(
      infoKeys.map(async (k) => ({ modelId: k.split('/')[1], info: await readJson<MapperBundleInfo>(env, k) })),
    ),
  ]);
  const mappers: CatalogMapper[] = [];
  for (const { modelId, info } of infos) {
    if (!info || typeof info.key !== 'string') continue;
    mappers.push({
      modelId,
      key: info.key,
      variables: info.variables,
      translationKey: info.translationKey,
      label: info.label,
      language: info.language ?? null,
      country: info.country ?? null,
      multilingual: info.multilingual === true,
    });
  }
  return {
    manifests: manifests
      .filter((m): m is ModelManifest => !!m && typeof m.id === 'string')
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    mappers,
    ...(building ? { building } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// KV and isolate memory
// ---------------------------------------------------------------------------------------------

const isCatalog = (v: unknown): v is Catalog =>
  !!v && typeof v === 'object' && Array.isArray((v as Catalog).manifests) && Array.isArray((v as Catalog).mappers);

async function kvGeneration(env: Env): Promise<string> {
  try {
    return (await env.CACHE.get(CATALOG_GENERATION_KEY, { cacheTtl: GENERATION_CACHE_TTL_S })) ?? '0';
  } catch (err) {
    console.error(`[catalog] KV read of ${CATALOG_GENERATION_KEY} failed: ${(err as Error).message}`);
    return '';
  }
}

/** Loads from KV (or R2 on a miss); `fromR2` skips the KV read but still stores the result. */
async function load(env: Env, fromR2: boolean): Promise<Catalog> {
  const generation = await kvGeneration(env);
  const key = KV_KEYS.catalog(generation);
  if (!fromR2 && generation) {
    try {
      const cached = await env.CACHE.get<unknown>(key, 'json');
      if (isCatalog(cached)) return cached;
    } catch (err) {
      console.error(`[catalog] KV read of ${key} failed: ${(err as Error).message}`);
    }
  }
  const catalog = await readCatalogFromR2(env);
  if (generation) {
    try {
      await env.CACHE.put(key, JSON.stringify(catalog), { expirationTtl: CATALOG_KV_TTL_S });
    } catch (err) {
      console.error(`[catalog] KV write of ${key} failed: ${(err as Error).message}`);
    }
  }
  return catalog;
}

let memo: { catalog: Catalog; expiresAt: number } | null = null;
let inflight: Promise<Catalog> | null = null;
/** Incremented by every invalidation: a load started under an older epoch does not fill the memory cache. */
let epoch = 0;

function start(env: Env, fromR2: boolean, ctx: WaitUntil | undefined): Promise<Catalog> {
  const started = epoch;
  const p = load(env, fromR2).then((catalog) => {
    if (epoch === started) memo = { catalog, expiresAt: Date.now() + CATALOG_MEMORY_TTL_MS };
    return catalog;
  });
  inflight = p;
  keepAlive(ctx, p);
  const clear = (): void => {
    if (inflight === p) inflight = null;
  };
  p.then(clear, clear);
  return p;
}

/** The catalog: isolate memory, else KV, else R2 (see the module comment for staleness). */
export async function getCatalog(env: Env, ctx?: WaitUntil): Promise<Catalog> {
  if (memo && Date.now() < memo.expiresAt) return memo.catalog;
  return inflight ?? start(env, false, ctx);
}

/** Reloads the catalog from R2 now (this isolate's memory and the current KV entry). */
export async function refreshCatalog(env: Env, ctx?: WaitUntil): Promise<Catalog> {
  epoch++;
  memo = null;
  return start(env, true, ctx);
}

/**
 * Call after changing catalog sidecars in R2 (models/*.json, mappers/{modelId}/*.json): drops
 * this isolate's copy and writes a new KV generation, so every isolate lists R2 again (others
 * within CATALOG_MEMORY_TTL_MS). Tests that write R2 directly call it (test/worker/support/api.ts).
 */
export async function invalidateCatalog(env: Env): Promise<void> {
  await env.CACHE.put(CATALOG_GENERATION_KEY, crypto.randomUUID());
  // After the write: a load started while it was in flight read the old generation.
  epoch++;
  memo = null;
  inflight = null;
}
