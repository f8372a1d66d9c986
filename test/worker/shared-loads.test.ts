/**
 * Loads shared by the requests of one isolate (catalog, language data, mapper bundles, models)
 * must survive the request that started them ending first. workerd cancels a finished request's
 * pending I/O; a shared promise left pending would hang every later request that waits on it.
 * Each case ends the starting request early (a sibling lookup fails fast) while the shared load
 * is still running, then checks that the next request is answered.
 */
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { invalidateCatalog } from '../../worker/catalog';
import { call, expectProblem, makeModel, uploadEnglish, uploadMapper, uploadModel, WS, type Called } from './api-helpers';

const WS_PATH = `/api/v1/workspaces/${WS}`;
const TIMEOUT = Symbol('timeout');
/** The call's answer, or TIMEOUT when it has not come within `ms` (a hung shared load). */
function within<T>(p: Promise<T>, ms = 10_000): Promise<T | typeof TIMEOUT> {
  return Promise.race([p, new Promise<typeof TIMEOUT>((r) => setTimeout(() => r(TIMEOUT), ms))]);
}

describe('shared loads outlive the request that started them', () => {
  it('catalog: a load started by a text-scores request that fails early still serves the catalog routes', { timeout: 60_000 }, async () => {
    const m = makeModel('shared-catalog', { seed: 43, language: 'xx' }); // no lang/xx.bin: text-scores fails fast
    await uploadModel(m);
    await uploadMapper(m, 'alpha', { valence: new Float64Array(m.words.length) });
    await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: m.id, whitelistWords: ['a'] }); // model loaded
    await invalidateCatalog(env);
    // An unknown mapper key makes resolveMappers load the catalog (MAPPER_MODEL_MISMATCH check)
    // while the missing language data ends the request with 503.
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: m.id, mapperKeys: ['nosuch_valence'] });
    expect([503, 422]).toContain(r.status);
    const after = await within(call('GET', '/api/v1/mappers'));
    expect(after).not.toBe(TIMEOUT);
    expect((after as Called).status).toBe(200);
  });

  it('language data: a load started by a text-scores request that fails early still serves the next text request', { timeout: 60_000 }, async () => {
    await uploadEnglish();
    const m = makeModel('shared-lang', { seed: 44 });
    await uploadModel(m);
    await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: m.id, whitelistWords: ['a'] }); // model loaded
    expect((await call('GET', '/api/v1/mappers')).status).toBe(200); // catalog in memory
    // The unknown mapper key fails at once (one small R2 get, the cached catalog) while the
    // English data (3 MB from R2, then parsed) is still loading.
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, { texts: ['the dog'], embeddingModelId: m.id, mapperKeys: ['nosuch_valence'] }), 422, 'MAPPER_NOT_FOUND');
    const after = await within(call('POST', `${WS_PATH}/text-scores`, { texts: ['the dog'], embeddingModelId: m.id }));
    expect(after).not.toBe(TIMEOUT);
    expect((after as Called).status).toBe(200);
  });

  it('mapper bundle: a load started by a text-scores request that fails early still serves word-scores with that mapper', { timeout: 60_000 }, async () => {
    const m = makeModel('shared-bundle', { seed: 45, language: 'yy' }); // no lang/yy.bin
    await uploadModel(m);
    const values = new Float64Array(m.words.length).map((_, i) => i / m.words.length);
    await uploadMapper(m, 'beta', { valence: values });
    await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: m.id, whitelistWords: ['a'] }); // model loaded
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: m.id, mapperKeys: ['beta_valence'] });
    expectProblem(r, 503, 'LANGUAGE_DATA_UNAVAILABLE');
    const after = await within(call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: m.id, whitelistWords: [m.words[3]], mapperKeys: ['beta_valence'] }));
    expect(after).not.toBe(TIMEOUT);
    const ok = after as Called;
    expect(ok.status).toBe(200);
    expect(ok.body.data[0].mapperScores.beta_valence).toBeCloseTo(values[3], 1);
  });
});
