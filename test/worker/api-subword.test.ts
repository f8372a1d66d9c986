/**
 * subwordFallback through the Worker's HTTP API (docs/api.md "Sub-word fallback"): the default
 * model and its sub-word table in R2, the table loaded on the first request that opts in and
 * counted in the memory the diagnostics report; the artifact download of the table; a model
 * without a table accepts the option and composes nothing; a non-boolean option is a 422
 * problem. Cross-runtime identity and the scoring rules are the EngineSource suite's.
 */
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { R2_KEYS } from '../../core/storage-keys';
import { invalidateCatalog } from '../../worker/catalog/store';
import { adminToken, call, expectProblem, makeModel, token, uploadEnglish, uploadModel } from './support/api';
import { WS_PATH } from './support/scoring';
import { SUBWORD_MODEL } from '../support/engine-source-suite';

const MODEL = SUBWORD_MODEL;
const matrixPath = (id: string) => `/api/v1/embedding-models/${id}/word-similarity-matrices`;

async function put(file: string, key: string): Promise<number> {
  const res = await env.FIXTURES.fetch(`http://f/${file}`);
  if (res.status !== 200) throw new Error(`build/generated/${file} is missing (the ensure step builds it)`);
  const bytes = await res.arrayBuffer();
  await env.ARTIFACTS.put(key, bytes);
  return bytes.byteLength;
}

let tableBytes = 0;
const small = makeModel('sw-small', { words: ['good', 'bad', 'cat', 'dog', 'happy', 'sad'], dims: 8 });

beforeAll(async () => {
  await put(`models/${MODEL}.emb`, R2_KEYS.model(MODEL));
  await put(`models/${MODEL}.json`, R2_KEYS.modelManifest(MODEL));
  tableBytes = await put(`subword/${MODEL}.bin`, R2_KEYS.subwordTable(MODEL));
  await uploadEnglish();
  await uploadModel(small);
  await invalidateCatalog(env);
});

async function memoryOf(id: string): Promise<{ cacheBytes: number } | undefined> {
  const r = await call('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
  expect(r.status).toBe(200);
  return (r.body.models as Array<{ id: string; cacheBytes: number }>).find((m) => m.id === id);
}

describe('subwordFallback over HTTP', () => {
  it('composes an unknown whitelist word; the table loads on the first request that opts in and counts in memory', async () => {
    const body = { seedWords: ['beautiful'], whitelistWords: ['lovely', 'beautifull'], embeddingModelId: MODEL };
    const off = await call('POST', `${WS_PATH}/word-scores`, body);
    expect(off.status).toBe(200);
    expect(off.body.data.map((w: { word: string }) => w.word)).toEqual(['lovely']);
    const before = (await memoryOf(MODEL))!.cacheBytes;
    const on = await call('POST', `${WS_PATH}/word-scores`, { ...body, subwordFallback: true });
    expect(on.status).toBe(200);
    expect(on.body.data[1]).toMatchObject({ word: 'beautifull', composed: true, modelRankQuartile: 4 });
    expect((await memoryOf(MODEL))!.cacheBytes - before).toBeGreaterThanOrEqual(tableBytes);
    const availability = await call('POST', `/api/v1/embedding-models/${MODEL}/word-availabilities`, {
      words: ['beautifull'],
    });
    expect(availability.body.availabilities).toEqual([{ word: 'beautifull', isAvailable: false }]);
  });

  it('a model without a table accepts the option and composes no word', async () => {
    const r = await call('POST', matrixPath(small.id), { words: ['good', 'goood', 'cat'], subwordFallback: true });
    expect(r.status).toBe(200);
    expect(r.body.words).toEqual(['good', 'cat']);
    expect(r.body.composedWords).toEqual([]);
  });

  it('a non-boolean subwordFallback is a 422 problem on every endpoint that takes it', async () => {
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: MODEL, subwordFallback: 'true' }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['a'], embeddingModelId: MODEL, subwordFallback: 1 }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', matrixPath(MODEL), { words: ['a'], subwordFallback: null }),
      422,
      'VALIDATION_FAILED',
    );
  });

  it('GET .../models/{id}/subword-table serves the table; 404 for a model without one', async () => {
    const r = await SELF.fetch(`http://x/api/v1/artifacts/models/${MODEL}/subword-table`, {
      headers: { authorization: `Bearer ${await token()}` },
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('x-content-sha256')).toMatch(/^[0-9a-f]{64}$/);
    expect((await r.arrayBuffer()).byteLength).toBe(tableBytes);
    expectProblem(await call('GET', `/api/v1/artifacts/models/${small.id}/subword-table`), 404, 'NOT_FOUND');
  });
});
