/**
 * The catalog cache (worker/catalog/store.ts) against real KV and R2: a warm catalog request lists
 * nothing in R2 (isolate memory, then KV), a change made directly in R2 stays invisible until
 * the generation changes (invalidateCatalog, or a build script's bump seen after the memory
 * TTL), a load that races with an invalidation never caches the old listing, and
 * GET /api/v1/embedding-models/{id} does not answer a stale 404.
 * Each test file runs in its own Miniflare, so nothing else touches this file's R2 and KV.
 */
import { env } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CATALOG_GENERATION_KEY } from '../../core/storage-keys';
import {
  CATALOG_KV_TTL_S,
  CATALOG_MEMORY_TTL_MS,
  catalogR2Loads,
  getCatalog,
  invalidateCatalog,
} from '../../worker/catalog/store';
import type { Env } from '../../worker/env';
import {
  call,
  expectProblem,
  makeModel,
  mapperInfo,
  uploadMapper,
  uploadModel,
  type SyntheticModel,
} from './support/api';

let m: SyntheticModel;

beforeAll(async () => {
  m = makeModel('cache-model', { seed: 500, country: 'QC', language: 'en' });
  await uploadModel(m);
  await uploadMapper(m, 'alpha', { valence: new Float64Array(m.words.length) });
});

afterEach(() => {
  vi.restoreAllMocks();
});

/** Date.now() as the Worker sees it, `ms` later than the real clock (the memory TTL is checked with Date.now). */
function advanceClock(ms: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() + ms);
}

/** Puts a mapper info sidecar straight into R2, without invalidating (as a hand-made upload would). */
async function putInfoDirectly(modelId: string, key: string): Promise<void> {
  await env.ARTIFACTS.put(`mappers/${modelId}/${key}.json`, JSON.stringify(mapperInfo(modelId, key, ['valence'])));
}

const embeddedKeys = async (id: string): Promise<string[]> => {
  const r = await call('GET', `/api/v1/embedding-models/${id}`);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body._embedded.mappers.map((b: { key: string }) => b.key);
};
const listedMappers = async (): Promise<string[]> =>
  (await call('GET', '/api/v1/mappers?size=100')).body.data.map((e: { key: string }) => e.key);
const listedModels = async (): Promise<string[]> =>
  (await call('GET', '/api/v1/embedding-models?country=QC&size=100')).body.data.map((e: { id: string }) => e.id);

describe('catalog cache', () => {
  it('serves warm requests without listing R2: memory first, then KV; a direct R2 change shows after invalidateCatalog', async () => {
    expect(await embeddedKeys(m.id)).toEqual(['alpha']);
    const loads = catalogR2Loads();

    await putInfoDirectly(m.id, 'beta');
    // Isolate memory: every catalog route answers from the cached catalog.
    expect(await embeddedKeys(m.id)).toEqual(['alpha']);
    expect(await listedMappers()).toEqual(['alpha_valence']);
    expect(await listedModels()).toEqual([m.id]);
    expect(catalogR2Loads()).toBe(loads);

    // Past the memory TTL the isolate asks KV: same generation, same entry, still no R2 listing.
    advanceClock(CATALOG_MEMORY_TTL_MS + 1_000);
    expect(await embeddedKeys(m.id)).toEqual(['alpha']);
    expect(catalogR2Loads()).toBe(loads);

    await invalidateCatalog(env);
    expect(await embeddedKeys(m.id)).toEqual(['alpha', 'beta']);
    expect(await listedMappers()).toEqual(['alpha_valence', 'beta_valence']);
    expect(catalogR2Loads()).toBe(loads + 1);

    await env.ARTIFACTS.delete(`mappers/${m.id}/beta.json`);
    await invalidateCatalog(env);
    expect(await embeddedKeys(m.id)).toEqual(['alpha']);
  });

  it('keeps the parsed catalog in KV under the current generation, expiring after CATALOG_KV_TTL_S', async () => {
    await invalidateCatalog(env);
    // The clock before and after the request that writes the entry brackets its expiration
    // (no tolerance that a slow run could exceed).
    const before = Math.floor(Date.now() / 1000);
    await listedModels();
    const after = Math.ceil(Date.now() / 1000);
    const generation = await env.CACHE.get(CATALOG_GENERATION_KEY);
    expect(generation).toBeTruthy();
    const listed = await env.CACHE.list({ prefix: 'catalog:v1:' });
    const entry = listed.keys.find((k) => k.name === `catalog:v1:${generation}`);
    expect(entry, JSON.stringify(listed.keys)).toBeDefined();
    expect(entry!.expiration).toBeGreaterThanOrEqual(before + CATALOG_KV_TTL_S);
    expect(entry!.expiration).toBeLessThanOrEqual(after + CATALOG_KV_TTL_S);
    const cached = await env.CACHE.get<{ manifests: Array<{ id: string }>; mappers: Array<{ key: string }> }>(
      `catalog:v1:${generation}`,
      'json',
    );
    expect(cached!.manifests.map((x) => x.id)).toContain(m.id);
    expect(cached!.mappers.map((x) => x.key)).toEqual(['alpha']);
  });

  it('a generation written from outside the Worker (build scripts) is seen once the memory TTL has passed', async () => {
    await listedMappers();
    const loads = catalogR2Loads();
    await putInfoDirectly(m.id, 'gamma');
    await env.CACHE.put(CATALOG_GENERATION_KEY, 'from-a-build-script');
    // This isolate still has its copy in memory...
    expect(await listedMappers()).toEqual(['alpha_valence']);
    expect(catalogR2Loads()).toBe(loads);
    // ...and lists R2 again once it asks KV.
    advanceClock(CATALOG_MEMORY_TTL_MS + 1_000);
    expect(await listedMappers()).toEqual(['alpha_valence', 'gamma_valence']);
    expect(catalogR2Loads()).toBe(loads + 1);
    vi.restoreAllMocks();
    await env.ARTIFACTS.delete(`mappers/${m.id}/gamma.json`);
    await invalidateCatalog(env);
    expect(await listedMappers()).toEqual(['alpha_valence']);
  });

  it('a load in flight during an invalidation caches its listing neither in memory nor under the new generation', async () => {
    await invalidateCatalog(env);
    // A load whose R2 listing is taken before the upload and finishes after it.
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slowEnv = {
      ...env,
      ARTIFACTS: {
        list: async (options: R2ListOptions) => {
          const page = await env.ARTIFACTS.list(options);
          await gate;
          return page;
        },
        get: (key: string) => env.ARTIFACTS.get(key),
      },
    } as unknown as Env;
    const inFlight = getCatalog(slowEnv);
    await uploadMapper(m, 'delta', { valence: new Float64Array(m.words.length) });
    release();
    expect((await inFlight).mappers.map((b) => b.key)).toEqual(['alpha']);
    expect(await listedMappers()).toEqual(['alpha_valence', 'delta_valence']);
    await env.ARTIFACTS.delete([`mappers/${m.id}/delta.json`, `mappers/${m.id}/delta.bin`]);
    await invalidateCatalog(env);
    expect(await listedMappers()).toEqual(['alpha_valence']);
  });

  it('GET /api/v1/embedding-models/{id} reloads the catalog for a model uploaded since it was cached, and 404s unknown ids without listing R2', async () => {
    await listedModels();
    const late = makeModel('cache-late', { seed: 501, country: 'QC' });
    await env.ARTIFACTS.put(`models/${late.id}.json`, JSON.stringify(late.manifest));
    const loads = catalogR2Loads();
    expect(await listedModels()).toEqual([m.id]);
    const r = await call('GET', `/api/v1/embedding-models/${late.id}`);
    expect(r.status).toBe(200);
    expect(r.body.id).toBe(late.id);
    expect(catalogR2Loads()).toBe(loads + 1);
    // The reload refreshed the cached catalog for the list routes too.
    expect(await listedModels()).toEqual([late.id, m.id].sort());
    expectProblem(await call('GET', '/api/v1/embedding-models/cache-none'), 404, 'EMBEDDING_MODEL_NOT_FOUND');
    expect(catalogR2Loads()).toBe(loads + 1);
    await env.ARTIFACTS.delete(`models/${late.id}.json`);
    await invalidateCatalog(env);
    expect(await listedModels()).toEqual([m.id]);
  });

  it('MAPPER_MODEL_MISMATCH comes from the cached catalog', async () => {
    const other = makeModel('cache-other', { seed: 502, country: 'QC' });
    await uploadModel(other);
    const base = { seedWords: ['good'], whitelistWords: ['bad'], embeddingModelId: other.id };
    const r = await call('POST', '/api/v1/workspaces/ws_demo/word-scores', { ...base, mapperKeys: ['alpha_valence'] });
    expectProblem(r, 422, 'MAPPER_MODEL_MISMATCH');
    expect(r.body.detail).toContain(m.id);
    const loads = catalogR2Loads();
    expectProblem(
      await call('POST', '/api/v1/workspaces/ws_demo/word-scores', { ...base, mapperKeys: ['alpha_valence'] }),
      422,
      'MAPPER_MODEL_MISMATCH',
    );
    expectProblem(
      await call('POST', '/api/v1/workspaces/ws_demo/word-scores', { ...base, mapperKeys: ['nosuch_valence'] }),
      422,
      'MAPPER_NOT_FOUND',
    );
    expect(catalogR2Loads()).toBe(loads);
  });
});
