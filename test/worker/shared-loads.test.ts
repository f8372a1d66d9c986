/**
 * Loads shared by the requests of one isolate (catalog, language data, mapper bundles, models)
 * must survive the request that started them ending first. workerd cancels a finished request's
 * pending I/O; a shared promise left pending would hang every later request that waits on it.
 *
 * Each case forces the interleaving with gated R2 (storage-gate.ts): the shared load is held at
 * its R2 read while the request that started it ends early (a sibling lookup fails), and only
 * then is the read let go. The next request must be answered with the right result. Without
 * the keepAlive of core/shared-load.ts the held load never resumes (workerd drops the ended
 * request's continuations) and the next request never gets an answer: the test then fails at
 * the harness's test timeout, the only time limit involved.
 */
import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { invalidateCatalog } from '../../worker/catalog/store';
import { call, expectProblem, makeModel, uploadEnglish, uploadMapper, uploadModel, WS } from './support/api';
import { installGatedArtifacts } from './support/storage-gate';

const WS_PATH = `/api/v1/workspaces/${WS}`;

let gated: ReturnType<typeof installGatedArtifacts> | null = null;
afterEach(async () => {
  await gated?.openAll();
  gated?.restore();
  gated = null;
});

describe('shared loads outlive the request that started them', () => {
  it('catalog: a load started by a text-scores request that ends early still serves the catalog routes', async () => {
    const m = makeModel('shared-catalog', { seed: 43 });
    await uploadModel(m);
    await uploadMapper(m, 'alpha', { valence: new Float64Array(m.words.length) });
    await invalidateCatalog(env);
    gated = installGatedArtifacts();
    const listing = gated.hold('list', 'mappers/');
    // The request's checks ask the catalog (held at its R2 listing) and D1 at once: the unknown
    // stored dimension ends the request with 422 while the catalog load is still held.
    const a = await call('POST', `${WS_PATH}/text-scores`, {
      texts: ['a'],
      embeddingModelId: m.id,
      mapperKeys: ['alpha_valence'],
      dimensions: [{ id: 987_001, type: 'dimension' }],
    });
    expectProblem(a, 422, 'DIMENSION_NOT_FOUND');
    expect(listing.isReached()).toBe(true);
    await listing.open();
    const after = await call('GET', '/api/v1/mappers?size=100');
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.data.map((e: { key: string }) => e.key)).toContain('alpha_valence');
    // Served by the load the ended request started, not by a second listing.
    expect(gated.log.filter((l) => l === 'list mappers/')).toEqual(['list mappers/']);
  });

  it('language data: a load started by a text-scores request that ends early serves the request that joined it', async () => {
    await uploadEnglish();
    const m = makeModel('shared-lang', { seed: 44 });
    await uploadModel(m);
    const values = new Float64Array(m.words.length).map((_, i) => i / m.words.length);
    await uploadMapper(m, 'tone', { valence: values });
    // A bundle listed for this model but trained for another: the engine refuses it when it parses it.
    const other = makeModel('shared-lang-other', { seed: 46 });
    const foreign = await uploadMapper(other, 'foreign', { valence: new Float64Array(other.words.length) });
    const bytes = await (await env.ARTIFACTS.get(`mappers/${other.id}/foreign.bin`))!.arrayBuffer();
    await env.ARTIFACTS.put(`mappers/${m.id}/foreign.bin`, bytes);
    await env.ARTIFACTS.put(`mappers/${m.id}/foreign.json`, JSON.stringify(foreign));
    await invalidateCatalog(env);
    await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: m.id, whitelistWords: ['a'] }); // model loaded
    expect((await call('GET', '/api/v1/mappers')).status).toBe(200); // catalog in memory
    gated = installGatedArtifacts();
    const language = gated.hold('get', 'lang/en.bin');
    const bundle = gated.hold('get', `mappers/${m.id}/tone.bin`);
    // The foreign bundle ends the request with 422 while the English data is held.
    const a = await call('POST', `${WS_PATH}/text-scores`, {
      texts: ['the dog'],
      embeddingModelId: m.id,
      mapperKeys: ['foreign_valence'],
    });
    expectProblem(a, 422, 'MAPPER_MODEL_MISMATCH');
    expect(language.isReached()).toBe(true);
    // The next request joins the held load: it asks for the language data (the shared promise)
    // before it reads its mapper bundle, so once the bundle read has arrived it is waiting on it.
    const b = call('POST', `${WS_PATH}/text-scores`, {
      texts: ['the dog'],
      embeddingModelId: m.id,
      mapperKeys: ['tone_valence'],
    });
    await bundle.reached();
    await language.open();
    await bundle.open();
    const after = await b;
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0].modelRankScore).toBeGreaterThan(0);
    // The only English read is the one of the request that ended: the second request used its load.
    expect(gated.log.filter((l) => l === 'get lang/en.bin')).toEqual(['get lang/en.bin']);
  });

  it('mapper bundle: a load started by a text-scores request that ends early serves word-scores with that mapper', async () => {
    const m = makeModel('shared-bundle', { seed: 45, language: 'yy' }); // no lang/yy.bin
    await uploadModel(m);
    const values = new Float64Array(m.words.length).map((_, i) => i / m.words.length);
    await uploadMapper(m, 'beta', { valence: values });
    await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: m.id, whitelistWords: ['a'] }); // model loaded
    gated = installGatedArtifacts();
    const language = gated.hold('get', 'lang/yy.bin');
    const bundle = gated.hold('get', `mappers/${m.id}/beta.bin`);
    const a = call('POST', `${WS_PATH}/text-scores`, {
      texts: ['a'],
      embeddingModelId: m.id,
      mapperKeys: ['beta_valence'],
    });
    // The request ends (missing language data) only once its bundle load is held.
    await bundle.reached();
    await language.reached();
    await language.open();
    expectProblem(await a, 503, 'LANGUAGE_DATA_UNAVAILABLE');
    await bundle.open();
    const after = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['a'],
      embeddingModelId: m.id,
      whitelistWords: [m.words[3]],
      mapperKeys: ['beta_valence'],
    });
    expect(after.status, JSON.stringify(after.body)).toBe(200);
    expect(after.body.data).toHaveLength(1);
    expect(after.body.data[0].mapperScores.beta_valence).toBeCloseTo(values[3], 1);
    expect(gated.log.filter((l) => l === `get mappers/${m.id}/beta.bin`)).toHaveLength(1);
  });
});
