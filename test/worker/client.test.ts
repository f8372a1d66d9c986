/**
 * The typed client (client/src) against the real Worker in workerd (SELF.fetch as its fetch):
 * typed calls of each interface endpoint, problem+json mapped to ApiProblem, a lost answer
 * retried with the same Idempotency-Key and charged once, a daily limit's long Retry-After not
 * waited for, and the OpenAPI document the Worker serves equal to the one the client's types
 * were generated from (client/openapi.json).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SELF } from 'cloudflare:test';
import { ApiProblem, createClient, type EmbeddingEdgeClient, type RetryInfo } from '../../client/src/index';
import committedOpenApi from '../../client/openapi.json';
import {
  call,
  makeModel,
  mintToken,
  token,
  uploadEnglish,
  uploadMapper,
  uploadModel,
  type SyntheticModel,
} from './support/api';
import { createWorkspace, uniqueWorkspaceId, workspaceToken } from './support/quotas';

const WS = 'ws_demo';
let m: SyntheticModel;
let client: EmbeddingEdgeClient;

const workerFetch = (request: Request): Promise<Response> => SELF.fetch(request);

beforeAll(async () => {
  m = makeModel('client-en', { seed: 21 });
  await uploadModel(m);
  await uploadEnglish();
  await uploadMapper(m, 'emo', { valence: Float64Array.from({ length: m.words.length }, (_, r) => Math.sin(r)) });
  client = createClient({
    baseUrl: 'http://x',
    token: await token(),
    workspaceId: WS,
    fetch: workerFetch,
    backoffMs: 1,
  });
});

describe('typed calls against the Worker', () => {
  it('text-scores answers what the raw HTTP call answers', async () => {
    const body = {
      texts: ['The cat and the dog were happy.', 'Terrible food, awful bread.'],
      embeddingModelId: m.id,
      dimensions: [{ id: 1, type: 'manual' as const, name: 'animals', words: ['cat', 'dog'] }],
      mapperKeys: ['emo_valence'],
      goalConfig: { dimensions: [{ id: 1, weight: 2 }], mappers: [{ id: 'emo_valence', weight: -1 }] },
    };
    const typed = await client.textScores(body);
    const raw = await call('POST', `/api/v1/workspaces/${WS}/text-scores`, body);
    expect(raw.status).toBe(200);
    expect(typed).toEqual(raw.body);
    expect(Object.keys(typed.data[0].dimensionScores)).toEqual(['1']);
    expect(typeof typed.data[1].mapperScores.emo_valence).toBe('number');
  });

  it('every other endpoint of the interface answers through its typed method', async () => {
    const words = await client.wordScores({
      seedWords: ['good'],
      whitelistWords: ['happy', 'cat'],
      embeddingModelId: m.id,
    });
    expect(words.data.map((w) => w.word)).toEqual(['happy', 'cat']);
    const tokens = await client.tokenize({ language: 'en', text: "Cats don't run." });
    expect(tokens.tokenCount).toBe(tokens.tokens.length);
    expect(tokens.tokens[0].string).toBe('Cats');
    const auto = await client.autocomplete({ word: 'app', embeddingModelId: m.id });
    expect(auto.suggestions[0]).toBe('apple');
    const avail = await client.wordAvailabilities(m.id, { words: ['cat', 'zzzz'] });
    expect(avail.availabilities).toEqual([
      { word: 'cat', isAvailable: true },
      { word: 'zzzz', isAvailable: false },
    ]);
    const matrix = await client.similarityMatrix(m.id, { words: ['cat', 'dog', 'nope'] });
    expect(matrix.words).toEqual(['cat', 'dog']);
    expect(matrix.matrix[0][0]).toBe(1);
    const model = await client.getModel(m.id);
    expect(model.id).toBe(m.id);
    expect(model._embedded.mappers.map((b) => b.key)).toEqual(['emo']);
    const page = await client.listModels({ size: 100 });
    expect(page.data.some((x) => x.id === m.id)).toBe(true);
    const mappers = await client.listMappers({ size: 100 });
    expect(mappers.data.some((x) => x.key === 'emo_valence')).toBe(true);
    const usage = await client.usageTypes();
    expect(usage.data.map((u) => u.key)).toContain('tokens');
    const quotas = await client.quotas({ usageTypeKey: 'tokens' });
    expect(quotas.data.every((q) => q.usageTypeKey === 'tokens')).toBe(true);
    expect(await client.health()).toEqual({ status: 'ok' });
  });

  it('any path through call() with the raw typed client (admin API)', async () => {
    const admin = createClient({
      baseUrl: 'http://x',
      token: await mintToken({ workspaceId: 'ops', scope: 'admin' }),
      fetch: workerFetch,
    });
    const ws = uniqueWorkspaceId('cli');
    const created = await admin.call(
      (raw, init) =>
        raw.POST('/api/admin/v1/workspaces', {
          ...init,
          body: { id: ws, anchorDay: 1, quotas: [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }] },
        }),
      'POST',
    );
    expect(created.id).toBe(ws);
  });
});

describe('errors', () => {
  it('problem+json becomes ApiProblem with status, code, errors and the request id', async () => {
    const err = await client
      .textScores({ texts: [42 as unknown as string], embeddingModelId: m.id })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiProblem);
    const p = err as ApiProblem;
    expect([p.status, p.code, p.translationKey]).toEqual([422, 'VALIDATION_FAILED', 'validationFailed']);
    expect(p.errors.map((e) => e.path)).toEqual(['texts.0']);
    expect(p.requestId).toMatch(/\S/);
    expect(p.attempts).toBe(1);

    const missing = (await client.getModel('no-such-model').catch((e: unknown) => e)) as ApiProblem;
    expect([missing.status, missing.code]).toEqual([404, 'EMBEDDING_MODEL_NOT_FOUND']);
    const mapper = (await client
      .textScores({ texts: ['x'], embeddingModelId: m.id, mapperKeys: ['nope_x'] })
      .catch((e: unknown) => e)) as ApiProblem;
    expect([mapper.status, mapper.code, mapper.errors[0]?.path]).toEqual([422, 'MAPPER_NOT_FOUND', 'mapperKeys.0']);
    const anon = createClient({ baseUrl: 'http://x', workspaceId: WS, fetch: workerFetch });
    const unauthorized = (await anon.listModels().catch((e: unknown) => e)) as ApiProblem;
    expect([unauthorized.status, unauthorized.code]).toEqual([401, 'UNAUTHORIZED']);
    const other = createClient({
      baseUrl: 'http://x',
      token: await token(),
      workspaceId: 'ws_other',
      fetch: workerFetch,
    });
    const forbidden = (await other.tokenize({ language: 'en', text: 'x' }).catch((e: unknown) => e)) as ApiProblem;
    expect([forbidden.status, forbidden.code]).toEqual([403, 'WORKSPACE_FORBIDDEN']);
  });

  it('a daily limit (429 with Retry-After until midnight) is thrown at once with retryAfter, not waited for', async () => {
    const ws = uniqueWorkspaceId('cday');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 3 }]);
    const retries: RetryInfo[] = [];
    const c = createClient({
      baseUrl: 'http://x',
      token: await workspaceToken(ws),
      workspaceId: ws,
      fetch: workerFetch,
      onRetry: (r) => retries.push(r),
    });
    const p = (await c
      .tokenize({ language: 'en', text: 'one two three four five' })
      .catch((e: unknown) => e)) as ApiProblem;
    expect(p).toBeInstanceOf(ApiProblem);
    expect([p.status, p.code, p.attempts]).toEqual([429, 'DAILY_LIMIT_REACHED', 1]);
    expect(p.retryAfter).toBeGreaterThan(0);
    expect(p.retryAfter).toBeLessThanOrEqual(86_400);
    expect(retries).toEqual([]);
  });
});

describe('retries with one Idempotency-Key', () => {
  it('an answer lost on the way back is retried with the same key: replayed, charged once', async () => {
    const ws = uniqueWorkspaceId('cidem');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    const keys: string[] = [];
    const replayed: Array<string | null> = [];
    let dropped = 0;
    // The transport loses the first answer after the Worker has handled (and charged) the request.
    const lossy = async (request: Request): Promise<Response> => {
      keys.push(request.headers.get('idempotency-key') ?? '');
      const res = await SELF.fetch(request);
      replayed.push(res.headers.get('idempotent-replayed'));
      if (dropped++ === 0) {
        await res.arrayBuffer();
        throw new TypeError('fetch failed: connection reset');
      }
      return res;
    };
    const tok = await workspaceToken(ws);
    const c = createClient({ baseUrl: 'http://x', token: tok, workspaceId: ws, fetch: lossy, backoffMs: 1 });
    const res = await c.tokenize({ language: 'en', text: 'cats and dogs' });
    expect(res.tokenCount).toBe(3);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    expect(replayed).toEqual([null, 'true']);
    const quotas = await createClient({ baseUrl: 'http://x', token: tok, workspaceId: ws, fetch: workerFetch }).quotas({
      usageTypeKey: 'tokens',
    });
    expect(quotas.data[0].usedAmount).toBe(3);
    // A second logical call gets a key of its own.
    await c.tokenize({ language: 'en', text: 'cats' });
    expect(keys[2]).not.toBe(keys[0]);
  });
});

describe('generated types', () => {
  it('the OpenAPI document the Worker serves is the one client/src/openapi.generated.ts was generated from', async () => {
    const res = await SELF.fetch('http://x/api/openapi.json');
    expect(res.status).toBe(200);
    // A difference: run `npm run generate -w client` and commit (test/node/client-openapi.test.ts checks the types).
    expect(await res.json()).toEqual(committedOpenApi);
  });
});
