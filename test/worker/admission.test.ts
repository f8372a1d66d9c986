/**
 * Admission (decisions.md "Admission and cost") through the real app in workerd, with real D1,
 * R2 and the workspace meters: requests are validated, their workspace checked and priced before
 * any model work, refused above the cap (413) or the workspace's rate (429), computed in slices
 * by the isolate's gate, and shed with 503 HOST_BUSY when the gate cannot finish them in time.
 *
 * "No model work happened" is read from the isolate's own diagnostics: the gate's count of
 * admitted requests (worker/hosts/gate.ts), through which every engine call passes, and the
 * Server-Timing phases (load, compute, host) that only model work sets. The tests run the app
 * with createApp().fetch so that a test can give it other settings (cap, rate, host deadline).
 */
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app';
import { estimateUnits } from '../../core/cost';
import { REQUEST_COST_CAP_UNITS_DEFAULT } from '../../core/cost';
import { LIMITS } from '../../core/limits';
import { createClient, type ApiProblem, type RetryInfo } from '../../client/src/index';
import { makeModel, mintToken, uploadEnglish, uploadMapper, uploadModel, type SyntheticModel } from './support/api';
import { adminToken, createWorkspace, quotaOf, uniqueWorkspaceId } from './support/quotas';

const app = createApp();

interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

async function send(
  method: string,
  path: string,
  body: unknown,
  opts: { token?: string; vars?: Record<string, string>; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const ctx = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://x${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
    { ...env, ...(opts.vars ?? {}) },
    ctx,
  );
  const text = await res.text();
  await waitOnExecutionContext(ctx);
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed };
}

/** The isolate's gate counters, from the admin diagnostics. */
async function gate(): Promise<{ queuedUnits: number; admitted: number; refused: number }> {
  const r = await send('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
  expect(r.status).toBe(200);
  return r.body.gate;
}

/** Server-Timing phases that only model work sets. */
function modelPhases(h: Headers): string[] {
  return (h.get('server-timing') ?? '')
    .split(',')
    .map((p) => p.trim().split(';')[0])
    .filter((name) => ['load', 'compute', 'host'].includes(name));
}

let en: SyntheticModel;
let de: SyntheticModel;
const BIG = 1e9;

/** A text of about `chars` characters from the synthetic model's words. */
function textOf(chars: number): string {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += `${en.words[(i * 7) % en.words.length]} `;
  return s.slice(0, chars);
}

beforeAll(async () => {
  en = makeModel('adm-en', { seed: 31 });
  de = makeModel('adm-de', { seed: 32, language: 'de' });
  // adm-de lives in adm-en's space (an aligned model): translations between them are valid requests.
  de.manifest = { ...de.manifest, features: ['aligned-en'], englishModelId: en.id } as typeof de.manifest;
  await uploadModel(en);
  await uploadModel(de);
  await uploadEnglish();
  await uploadMapper(en, 'adm', { valence: Float64Array.from({ length: en.words.length }, (_, r) => Math.sin(r)) });
});

/** The largest body the schemas allow for text-scores, within the 2 MB body limit. */
function largestTextScores(): Record<string, unknown> {
  const dims = Array.from({ length: LIMITS.dimensionsPerRequest }, (_, i) => ({
    id: i + 1,
    type: 'manual',
    words: ['cat', 'dog'],
    expand: LIMITS.expandMax,
  }));
  return {
    texts: Array.from({ length: LIMITS.textsPerRequest }, () => textOf(19_000)),
    embeddingModelId: en.id,
    dimensions: dims,
    expansion: 'contrastive',
    mapperKeys: ['adm_valence'],
    explain: true,
    subwordFallback: true,
    normalization: 'batchZscore',
  };
}

/** Every computing route with a valid request of its own. */
function computingRoutes(ws: string): Array<{ name: string; path: string; body: unknown; metered: boolean }> {
  return [
    { name: 'text-scores', path: `/api/v1/workspaces/${ws}/text-scores`, body: largestTextScores(), metered: true },
    {
      name: 'word-scores (find)',
      path: `/api/v1/workspaces/${ws}/word-scores`,
      body: { seedWords: ['cat'], embeddingModelId: en.id, limit: 1000 },
      metered: true,
    },
    {
      name: 'word-scores (whitelist)',
      path: `/api/v1/workspaces/${ws}/word-scores`,
      body: { seedWords: ['cat'], whitelistWords: Array(10_000).fill('dog'), embeddingModelId: en.id },
      metered: true,
    },
    {
      name: 'tokenizations',
      path: `/api/v1/workspaces/${ws}/tokenizations`,
      body: { language: 'en', text: textOf(100_000) },
      metered: true,
    },
    {
      name: 'word-translations',
      path: `/api/v1/embedding-models/${en.id}/word-translations`,
      body: { words: ['cat', 'dog'], targetModelId: de.id },
      metered: true,
    },
    {
      name: 'plagiarism-checks',
      path: `/api/v1/workspaces/${ws}/plagiarism-checks`,
      body: { text: textOf(2000) },
      metered: true,
    },
    {
      name: 'autocomplete-suggestions',
      path: `/api/v1/workspaces/${ws}/autocomplete-suggestions`,
      body: { word: 'ca', embeddingModelId: en.id },
      metered: false,
    },
    {
      name: 'word-availabilities',
      path: `/api/v1/embedding-models/${en.id}/word-availabilities`,
      body: { words: ['cat'] },
      metered: false,
    },
    {
      name: 'word-similarity-matrices',
      path: `/api/v1/embedding-models/${en.id}/word-similarity-matrices`,
      body: { words: ['cat', 'dog'] },
      metered: false,
    },
  ];
}

describe('refusal before work', () => {
  it('an exhausted workspace is refused on every metered route with no model work, and is charged nothing', async () => {
    const ws = uniqueWorkspaceId('adm-empty');
    await createWorkspace(ws, 1, [
      { usageTypeKey: 'tokens', limitAmount: 0, limitAmountDaily: 0 },
      { usageTypeKey: 'plagiarismChecks', limitAmount: 0, limitAmountDaily: 0 },
    ]);
    const token = await mintToken({ workspaceId: ws });
    for (const r of computingRoutes(ws).filter((x) => x.metered)) {
      const before = await gate();
      const a = await send('POST', r.path, r.body, { token });
      expect(a.status, `${r.name}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(403);
      expect(a.body.code).toMatch(/^ERROR_NO_REMAINING_(QUOTA|PLAGIARISM_CHECKS)$/);
      expect(modelPhases(a.headers), r.name).toEqual([]);
      expect((await gate()).admitted, `${r.name} reached model work`).toBe(before.admitted);
      // The estimate is priced and answered with the refusal too.
      expect(Number(a.headers.get('x-cost-units')), r.name).toBeGreaterThan(0);
    }
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
  });

  it('an unknown workspace gets its 404 on every computing route with no model work', async () => {
    const ws = uniqueWorkspaceId('adm-nobody');
    const token = await mintToken({ workspaceId: ws });
    for (const r of computingRoutes(ws)) {
      const before = await gate();
      const a = await send('POST', r.path, r.body, { token });
      expect(a.status, `${r.name}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(404);
      expect(a.body.code).toBe('NOT_FOUND');
      expect(modelPhases(a.headers), r.name).toEqual([]);
      expect((await gate()).admitted, `${r.name} reached model work`).toBe(before.admitted);
    }
  });

  it('every refusal the request alone decides is a 422 (or 404 for a model) before any model work, even for an exhausted workspace', async () => {
    const ws = uniqueWorkspaceId('adm-422');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 0, limitAmountDaily: 0 }]);
    const token = await mintToken({ workspaceId: ws });
    const ts = `/api/v1/workspaces/${ws}/text-scores`;
    const dim = (id: number, extra: Record<string, unknown> = {}) => ({ id, type: 'manual', words: ['cat'], ...extra });
    const cases: Array<[string, string, unknown, number, string]> = [
      [
        'goalConfig dimension not among the dimensions',
        ts,
        {
          texts: ['a cat'],
          embeddingModelId: en.id,
          dimensions: [dim(1)],
          goalConfig: { dimensions: [{ id: 2, weight: 1 }] },
        },
        422,
        'VALIDATION_FAILED',
      ],
      [
        'goalConfig mapper not among the mapperKeys',
        ts,
        { texts: ['a cat'], embeddingModelId: en.id, goalConfig: { mappers: [{ id: 'adm_valence', weight: 1 }] } },
        422,
        'VALIDATION_FAILED',
      ],
      [
        'a repeated dimension id',
        ts,
        { texts: ['a'], embeddingModelId: en.id, dimensions: [dim(1), dim(1)] },
        422,
        'VALIDATION_FAILED',
      ],
      [
        'expand on an axis',
        ts,
        {
          texts: ['a'],
          embeddingModelId: en.id,
          dimensions: [{ id: 1, type: 'axis', words: ['cat'], oppositeWords: ['dog'], expand: 3 }],
        },
        422,
        'VALIDATION_FAILED',
      ],
      [
        'an unknown stored dimension',
        ts,
        { texts: ['a'], embeddingModelId: en.id, dimensions: [{ id: 987_654, type: 'dimension' }] },
        422,
        'DIMENSION_NOT_FOUND',
      ],
      [
        'an unknown mapper key',
        ts,
        { texts: ['a'], embeddingModelId: en.id, mapperKeys: ['nope_valence'] },
        422,
        'MAPPER_NOT_FOUND',
      ],
      ['an unknown model', ts, { texts: ['a'], embeddingModelId: 'adm-none' }, 404, 'EMBEDDING_MODEL_NOT_FOUND'],
      [
        'word-scores: an unknown mapper key',
        `/api/v1/workspaces/${ws}/word-scores`,
        { seedWords: ['cat'], embeddingModelId: en.id, mapperKeys: ['adm_nothing'] },
        422,
        'MAPPER_NOT_FOUND',
      ],
      [
        'translations: a target outside the source space',
        `/api/v1/embedding-models/${de.id}/word-translations`,
        { words: ['cat'], targetModelId: de.id },
        422,
        'VALIDATION_FAILED',
      ],
      [
        'translations: an English source without a target',
        `/api/v1/embedding-models/${en.id}/word-translations`,
        { words: ['cat'] },
        422,
        'VALIDATION_FAILED',
      ],
      [
        'tokenizations: an unsupported language',
        `/api/v1/workspaces/${ws}/tokenizations`,
        { language: 'xx', text: 'a' },
        422,
        'UNSUPPORTED_LANGUAGE',
      ],
    ];
    for (const [name, path, body, status, code] of cases) {
      const before = await gate();
      const a = await send('POST', path, body, { token });
      expect(a.status, `${name}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(status);
      expect(a.body.code, name).toBe(code);
      expect((await gate()).admitted, `${name} reached model work`).toBe(before.admitted);
      // Priced all the same: the answer carries the estimate of a request of this shape.
      expect(Number(a.headers.get('x-cost-units')), name).toBeGreaterThan(0);
    }
  });
});

describe('the cap', () => {
  it('just over the cap is 413 with estimatedUnits and capUnits; at the cap it is computed', async () => {
    const ws = uniqueWorkspaceId('adm-cap');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const token = await mintToken({ workspaceId: ws });
    const body = {
      texts: [textOf(5000), textOf(3000)],
      embeddingModelId: en.id,
      dimensions: [{ id: 1, type: 'manual', words: ['cat'] }],
    };
    const units = estimateUnits('textScores', body);
    const path = `/api/v1/workspaces/${ws}/text-scores`;
    const at = await send('POST', path, body, { token, vars: { REQUEST_COST_CAP_UNITS: String(units) } });
    expect(at.status, JSON.stringify(at.body).slice(0, 300)).toBe(200);
    expect(Number(at.headers.get('x-cost-units'))).toBe(units);
    const over = await send('POST', path, body, { token, vars: { REQUEST_COST_CAP_UNITS: String(units - 1) } });
    expect(over.status).toBe(413);
    expect(over.body.code).toBe('REQUEST_TOO_EXPENSIVE');
    expect(over.body.estimatedUnits).toBe(units);
    expect(over.body.capUnits).toBe(units - 1);
    expect(over.body.detail).toMatch(/split/);
    expect(Number(over.headers.get('x-cost-units'))).toBe(units);
  });

  it("X-Cost-Units is docs/api.md's formula", async () => {
    const ws = uniqueWorkspaceId('adm-docs');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const token = await mintToken({ workspaceId: ws });
    // tokenizations: 1 + characters x 0.0011.
    const text = textOf(40_000);
    const t = await send('POST', `/api/v1/workspaces/${ws}/tokenizations`, { language: 'en', text }, { token });
    expect(t.status).toBe(200);
    expect(Number(t.headers.get('x-cost-units'))).toBe(Math.ceil(1 + text.length * 0.0011));
    // text-scores, one manual dimension of two seeds, no mapper or goal: 1 + C x (0.00015 + 0.0000035)
    // + seeds x 0.002 + the answer (n x (64 + 2 x 32) bytes x 0.00002).
    const texts = [textOf(30_000), textOf(20_000)];
    const body = { texts, embeddingModelId: en.id, dimensions: [{ id: 1, type: 'manual', words: ['cat', 'dog'] }] };
    const a = await send('POST', `/api/v1/workspaces/${ws}/text-scores`, body, { token });
    expect(a.status).toBe(200);
    const C = 50_000;
    expect(Number(a.headers.get('x-cost-units'))).toBe(
      Math.ceil(1 + C * (0.00015 + 0.0000035) + 2 * 0.002 + 2 * (64 + 2 * 32) * 0.00002),
    );
  });

  it('the estimate is the same for the same body, and the largest allowed request is over the default cap', async () => {
    const ws = uniqueWorkspaceId('adm-cap2');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const token = await mintToken({ workspaceId: ws });
    const path = `/api/v1/workspaces/${ws}/text-scores`;
    const body = largestTextScores();
    const before = await gate();
    const a = await send('POST', path, body, { token });
    const b = await send('POST', path, body, { token });
    expect(a.status).toBe(413);
    expect(a.body.capUnits).toBe(REQUEST_COST_CAP_UNITS_DEFAULT);
    expect(a.headers.get('x-cost-units')).toBe(b.headers.get('x-cost-units'));
    expect(Number(a.headers.get('x-cost-units'))).toBe(estimateUnits('textScores', body as never));
    expect((await gate()).admitted).toBe(before.admitted);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
  });
});

describe('the rate', () => {
  it("a workspace over its bucket gets 429 RATE_LIMITED with Retry-After; another workspace's requests still run", async () => {
    const [busy, calm] = [uniqueWorkspaceId('adm-rate'), uniqueWorkspaceId('adm-calm')];
    for (const ws of [busy, calm])
      await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const body = { texts: [textOf(60_000)], embeddingModelId: en.id };
    const units = estimateUnits('textScores', body);
    // Room for two of these requests; the bucket then fills at one unit a second.
    const vars = { WORKSPACE_COST_RATE_UNITS_PER_S: '1', WORKSPACE_COST_BURST_UNITS: String(2.5 * units) };
    const busyToken = await mintToken({ workspaceId: busy });
    const statuses: number[] = [];
    let limited: Answer | null = null;
    for (let i = 0; i < 4 && !limited; i++) {
      const a = await send('POST', `/api/v1/workspaces/${busy}/text-scores`, body, { token: busyToken, vars });
      statuses.push(a.status);
      if (a.status === 429) limited = a;
    }
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(limited, `statuses ${statuses}`).not.toBeNull();
    expect(limited!.body.code).toBe('RATE_LIMITED');
    expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const other = await send('POST', `/api/v1/workspaces/${calm}/text-scores`, body, {
      token: await mintToken({ workspaceId: calm }),
      vars,
    });
    expect(other.status).toBe(200);
  });
});

describe('the typed client', () => {
  it('retries 429 RATE_LIMITED after its Retry-After with the same Idempotency-Key, and gets the answer', async () => {
    const ws = uniqueWorkspaceId('adm-client');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const body = { texts: [textOf(60_000)], embeddingModelId: en.id };
    const units = estimateUnits('textScores', body);
    // Room for one request; the next fits again a second later.
    const vars = { WORKSPACE_COST_RATE_UNITS_PER_S: String(units), WORKSPACE_COST_BURST_UNITS: String(units) };
    const retries: RetryInfo[] = [];
    const client = createClient({
      baseUrl: 'http://x',
      token: await mintToken({ workspaceId: ws }),
      workspaceId: ws,
      fetch: async (request: Request) => {
        const ctx = createExecutionContext();
        const res = await app.fetch(request, { ...env, ...vars }, ctx);
        await waitOnExecutionContext(ctx);
        return res;
      },
      onRetry: (info) => retries.push(info),
    });
    await client.textScores(body as never);
    const second = await client.textScores(body as never);
    expect(second.data).toHaveLength(1);
    expect(retries.map((r) => r.status)).toEqual([429]);
    expect((retries[0].error as ApiProblem).code).toBe('RATE_LIMITED');
    expect(retries[0].delayMs).toBeGreaterThanOrEqual(1000);
  });
});

describe('the gate', () => {
  /** A request of about 400 units on the synthetic model: many slices of work. */
  const heavyBody = () => ({
    texts: Array.from({ length: 50 }, () => textOf(16_000)),
    embeddingModelId: en.id,
    dimensions: Array.from({ length: 60 }, (_, i) => ({ id: i + 1, type: 'manual', words: [en.words[i + 10]] })),
  });

  it('while a heavy request computes, a small request to the same isolate answers first', async () => {
    const ws = uniqueWorkspaceId('adm-slice');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const token = await mintToken({ workspaceId: ws });
    const body = heavyBody();
    const units = estimateUnits('textScores', body);
    expect(units).toBeGreaterThan(250);
    expect(units).toBeLessThanOrEqual(REQUEST_COST_CAP_UNITS_DEFAULT);
    // Warm: the model and the language data are loaded, so the heavy request starts computing at once.
    expect(
      (
        await send(
          'POST',
          `/api/v1/workspaces/${ws}/text-scores`,
          { texts: ['cat'], embeddingModelId: en.id },
          { token },
        )
      ).status,
    ).toBe(200);
    const order: string[] = [];
    const start = (await gate()).admitted;
    const heavy = send('POST', `/api/v1/workspaces/${ws}/text-scores`, body, { token }).then((a) => {
      order.push('heavy');
      return a;
    });
    // Once the heavy request is admitted to model work, the small one is sent.
    for (let i = 0; i < 10_000 && (await gate()).admitted === start; i++) await new Promise((r) => setTimeout(r, 0));
    const small = send(
      'POST',
      `/api/v1/workspaces/${ws}/autocomplete-suggestions`,
      { word: 'ca', embeddingModelId: en.id },
      { token },
    ).then((a) => {
      order.push('small');
      return a;
    });
    const [h, s] = await Promise.all([heavy, small]);
    expect(h.status).toBe(200);
    expect(s.status).toBe(200);
    expect(order).toEqual(['small', 'heavy']);
  });

  it('a saturated isolate answers 503 HOST_BUSY with Retry-After at once, charges nothing and drops nothing', async () => {
    const ws = uniqueWorkspaceId('adm-shed');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const token = await mintToken({ workspaceId: ws });
    const body = heavyBody();
    const units = estimateUnits('textScores', body);
    // The gate admits work for half the deadline: room for one of these requests, not two.
    const vars = { HOST_TIMEOUT_MS: String(Math.ceil(units * 3.5)) };
    const path = `/api/v1/workspaces/${ws}/text-scores`;
    const before = await gate();
    const first = send('POST', path, body, { token, vars });
    for (let i = 0; i < 10_000 && (await gate()).admitted === before.admitted; i++)
      await new Promise((r) => setTimeout(r, 0));
    const second = await send('POST', path, body, { token, vars });
    expect(second.status, JSON.stringify(second.body).slice(0, 300)).toBe(503);
    expect(second.body.code).toBe('HOST_BUSY');
    expect(Number(second.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const done = await first;
    expect(done.status).toBe(200);
    const after = await gate();
    expect(after.refused).toBe(before.refused + 1);
    expect(after.queuedUnits).toBe(0);
    // Only the answered request was charged.
    const tokens = (await quotaOf(ws, 'tokens')).usedAmount;
    const alone = await send('POST', path, body, { token, vars });
    expect(alone.status).toBe(200);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2 * tokens);
  });
});

describe('replays', () => {
  it('an idempotent replay is answered from its record without the allowance, the cap or the rate', async () => {
    const ws = uniqueWorkspaceId('adm-replay');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: BIG, limitAmountDaily: BIG }]);
    const token = await mintToken({ workspaceId: ws });
    const path = `/api/v1/workspaces/${ws}/text-scores`;
    const body = { texts: [textOf(3000)], embeddingModelId: en.id };
    const headers = { 'idempotency-key': 'adm-replay-1' };
    const first = await send('POST', path, body, { token, headers });
    expect(first.status).toBe(200);
    // Now the allowance is gone, the cap is below the request and the bucket is empty.
    const used = (await quotaOf(ws, 'tokens')).usedAmount;
    const res = await send(
      'PUT',
      `/api/admin/v1/workspaces/${ws}/quotas/tokens`,
      { limitAmount: used, limitAmountDaily: used },
      { token: await adminToken() },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const vars = {
      REQUEST_COST_CAP_UNITS: '1',
      WORKSPACE_COST_RATE_UNITS_PER_S: '0.001',
      WORKSPACE_COST_BURST_UNITS: '1',
    };
    const replay = await send('POST', path, body, { token, headers, vars });
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toEqual(first.body);
    // A new request is refused by the same settings.
    const fresh = await send('POST', path, body, { token, vars });
    expect(fresh.status).toBe(403);
  });
});
