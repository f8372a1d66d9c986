/**
 * What a local first start is still building (building.json in R2, core/building.ts) as the
 * Worker answers it: a model being built is listed as loading (vocabularySize 0) and every request
 * for it is 503 MODEL_LOADING with Retry-After; so are a mapper, the sub-word table and the head of
 * a model whose derived artifacts are still being built, and language data being built. Without
 * building.json the same requests get their usual 404, 422 or 503.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { BUILDING_KEY } from '../../core/storage-keys';
import type { BuildingState } from '../../core/building';
import { invalidateCatalog } from '../../worker/catalog/store';
import { call, expectProblem, makeModel, uploadEnglish, uploadModel, WS, type Called } from './support/api';

const ready = makeModel('bld-ready', { seed: 31, country: 'QB', language: 'en' });
const STATE: BuildingState = {
  models: [{ id: 'bld-planned', language: 'de', country: 'QB', tag: 'planned', version: '3-int8.3' }],
  languages: ['ja'],
  derived: ['bld-ready'],
};

async function setBuilding(state: BuildingState | null): Promise<void> {
  if (state) await env.ARTIFACTS.put(BUILDING_KEY, JSON.stringify(state));
  else await env.ARTIFACTS.delete(BUILDING_KEY);
  await invalidateCatalog(env);
}

function expectLoading(r: Called): void {
  expectProblem(r, 503, 'MODEL_LOADING');
  expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
}

const wordScores = (model: string, extra: Record<string, unknown> = {}) =>
  call('POST', `/api/v1/workspaces/${WS}/word-scores`, {
    seedWords: ['cat'],
    embeddingModelId: model,
    limit: 3,
    ...extra,
  });
const mapped = () =>
  call('POST', `/api/v1/workspaces/${WS}/text-scores`, {
    texts: ['the cat'],
    embeddingModelId: ready.id,
    mapperKeys: ['sentiment_compound'],
  });
const tokenizeJa = () => call('POST', `/api/v1/workspaces/${WS}/tokenizations`, { language: 'ja', text: '猫' });

beforeAll(async () => {
  await uploadEnglish();
  await uploadModel(ready);
});

describe('while a first start is building', () => {
  beforeAll(() => setBuilding(STATE));

  it('lists the model being built as loading, with the fields known before its build', async () => {
    const list = await call('GET', '/api/v1/embedding-models?country=QB');
    expect(list.status).toBe(200);
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual(['bld-planned', 'bld-ready']);
    const planned = list.body.data[0];
    expect(planned).toMatchObject({ loadingStatus: 'loading', vocabularySize: 0, tag: 'planned', language: 'de' });
    expect(list.body.data[1].loadingStatus).not.toBe('loading');
    const one = await call('GET', '/api/v1/embedding-models/bld-planned');
    expect(one.status).toBe(200);
    expect(one.body.loadingStatus).toBe('loading');
  });

  it('refuses the model being built with 503 MODEL_LOADING: scoring, vocabulary and its artifact', async () => {
    expectLoading(await wordScores('bld-planned'));
    expectLoading(await call('POST', '/api/v1/embedding-models/bld-planned/word-availabilities', { words: ['cat'] }));
    expectLoading(await call('GET', '/api/v1/artifacts/models/bld-planned'));
  });

  it('refuses what the ready model still lacks: a mapper, the sub-word table, the head', async () => {
    expect((await wordScores(ready.id)).status).toBe(200);
    expectLoading(await mapped());
    expectLoading(await wordScores(ready.id, { whitelistWords: ['zzqx'], subwordFallback: true }));
    expectLoading(await call('GET', `/api/v1/artifacts/models/${ready.id}/head`));
  });

  it('refuses language data being built', async () => {
    expectLoading(await tokenizeJa());
    expectLoading(await call('GET', '/api/v1/artifacts/languages/ja'));
  });
});

describe('once nothing is being built', () => {
  beforeAll(() => setBuilding(null));

  it('answers as without a first start: not listed, 404, 422, and 503 for missing language data', async () => {
    const list = await call('GET', '/api/v1/embedding-models?country=QB');
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual(['bld-ready']);
    expectProblem(await wordScores('bld-planned'), 404, 'EMBEDDING_MODEL_NOT_FOUND');
    expectProblem(await mapped(), 422, 'MAPPER_NOT_FOUND');
    expect((await wordScores(ready.id, { whitelistWords: ['zzqx'], subwordFallback: true })).status).toBe(200);
    expectProblem(await call('GET', `/api/v1/artifacts/models/${ready.id}/head`), 404, 'NOT_FOUND');
    expectProblem(await tokenizeJa(), 503, 'LANGUAGE_DATA_UNAVAILABLE');
  });
});
