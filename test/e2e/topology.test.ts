/**
 * Model hosts (issue 32, docs/architecture.md "Model hosts"): the local server as `npm start` runs
 * it (build/serve.ts: the API Worker and the hosts of build/generated/placement.json in one
 * workerd), with the one-Worker deployment of the same bundle beside it (--single-port, every
 * model in-process, sharing storage and meters).
 *   - parity: every scoring endpoint's routed answer equals the in-process answer byte for byte,
 *     for every model of the catalog (seeds the aligned models lack come from the English
 *     companion's host; a translation between two hosts fetches the source's rows);
 *   - loadingStatus is what each model's host answers; diagnostics report every host's memory;
 *   - a host that fails (a model artifact missing in R2) or answers late (HOST_TIMEOUT_MS=1)
 *     gives a 503 problem+json with Retry-After, and the quota is unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Placement } from '../../core/placement';
import { R2_KEYS } from '../../core/storage-keys';
import { PLACEMENT_FILE } from '../../build/placement';
import { withLocalStorage } from '../../build/local-storage';
import { ROOT } from '../../build/wrangler';
import { createWorkspace, forgetSeeded, startLocalWorker, stopWranglerDev } from './support/dev-server';
import { sampleDimensions, storeSampleDimension, texts, words } from './support/samples';

const PORT = 8791;
const SINGLE_PORT = 8792;
const STATE = path.join(ROOT, '.wrangler', 'e2e-topology-state');
const routed = `http://127.0.0.1:${PORT}`;
const single = `http://127.0.0.1:${SINGLE_PORT}`;

let child: ChildProcess | null = null;
let admin: string;
let token: string;
const workspace = `ws_topology_${Date.now()}`;
let storedId: number;

async function start(extra: string[] = []): Promise<void> {
  await stopWranglerDev(child);
  child = await startLocalWorker(PORT, STATE, ['--log-level', 'warn', '--single-port', String(SINGLE_PORT), ...extra]);
}

async function call(base: string, method: string, url: string, body?: unknown, bearer = token): Promise<Response> {
  return fetch(`${base}${url}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** The same request to both deployments: status, content type and body bytes. */
async function both(method: string, url: string, body?: unknown) {
  const [a, b] = await Promise.all([call(routed, method, url, body), call(single, method, url, body)]);
  return {
    routed: { status: a.status, type: a.headers.get('content-type'), body: await a.text() },
    single: { status: b.status, type: b.headers.get('content-type'), body: await b.text() },
  };
}

async function tokensUsed(): Promise<number> {
  const r = await call(routed, 'GET', `/api/usage-service/v1/workspaces/${workspace}/quotas`);
  const body = (await r.json()) as { data: Array<{ usageTypeKey: string; usedAmount: number }> };
  return body.data.find((q) => q.usageTypeKey === 'tokens')!.usedAmount;
}

const placement = (): Placement => JSON.parse(fs.readFileSync(PLACEMENT_FILE, 'utf8')) as Placement;

beforeAll(async () => {
  await start();
  ({ admin, token } = await createWorkspace(routed, workspace, 'e2e-topology', 100_000_000));
  storedId = await storeSampleDimension(routed, admin);
}, 900_000);

/** The model whose artifact a test removes from R2; put back by the next run's seeding. */
let victim: string | undefined;

afterAll(async () => {
  await stopWranglerDev(child);
  if (victim) forgetSeeded(STATE, R2_KEYS.model(victim));
});

describe('placement', () => {
  it('places every model on a host within the budget, a projected model beside none but itself', () => {
    const p = placement();
    expect(p.hosts.length).toBeGreaterThan(1);
    for (const h of p.hosts) expect(h.bytes).toBeLessThanOrEqual(p.budgetBytes);
    const models = Object.keys(p.models);
    expect(models.length).toBeGreaterThanOrEqual(4);
    for (const id of models)
      expect(p.hosts.some((h) => h.binding === p.models[id] && h.models.includes(id))).toBe(true);
  });
});

describe('routed answers equal the in-process ones', () => {
  const models = (): Array<{ id: string; language: string }> =>
    Object.keys(placement().models).map((id) => ({ id, language: id.slice(0, 2) }));
  const ws = `/api/v1/workspaces/${workspace}`;
  const dimensions = (language: string) => sampleDimensions(language, storedId);

  it('text-scores, word-scores (whitelist and find-and-score) and autocomplete of every model', async () => {
    for (const m of models()) {
      const requests: Array<[string, unknown]> = [
        [
          'text-scores',
          {
            embeddingModelId: m.id,
            texts: texts[m.language],
            dimensions: dimensions(m.language),
            mapperKeys: m.language === 'en' ? ['sentiment_valence'] : undefined,
            goalConfig: { dimensions: [{ id: 2, weight: 1 }], normalization: 'zscore' },
          },
        ],
        [
          'word-scores',
          {
            embeddingModelId: m.id,
            seedWords: ['joy', ...words[m.language]!.slice(1, 2)],
            whitelistWords: words[m.language],
            dimensions: dimensions(m.language),
          },
        ],
        [
          'word-scores',
          {
            embeddingModelId: m.id,
            seedWords: words[m.language]!.slice(0, 2),
            limit: 20,
            dimensions: dimensions(m.language).slice(0, 1),
          },
        ],
        ['autocomplete-suggestions', { embeddingModelId: m.id, word: words[m.language]![0]!.slice(0, 2) }],
      ];
      for (const [endpoint, body] of requests) {
        const r = await both('POST', `${ws}/${endpoint}`, body);
        expect(r.routed.status, `${m.id} ${endpoint}: ${r.routed.body.slice(0, 300)}`).toBe(r.single.status);
        expect(r.routed.status, `${m.id} ${endpoint}: ${r.routed.body.slice(0, 300)}`).toBe(200);
        expect(r.routed.body, `${m.id} ${endpoint}`).toBe(r.single.body);
      }
    }
  });

  it('word-availabilities and similarity matrices of every model', async () => {
    for (const m of models()) {
      const base = `/api/v1/embedding-models/${m.id}`;
      for (const [endpoint, body] of [
        ['word-availabilities', { words: words[m.language] }],
        ['word-similarity-matrices', { words: words[m.language]!.slice(0, 3) }],
      ] as const) {
        const r = await both('POST', `${base}/${endpoint}`, body);
        expect(r.routed.status, `${m.id} ${endpoint}: ${r.routed.body.slice(0, 300)}`).toBe(200);
        expect(r.routed.body).toBe(r.single.body);
      }
    }
  });

  it('tokenizations of every language', async () => {
    for (const language of Object.keys(placement().languages)) {
      const r = await both('POST', `${ws}/tokenizations`, { language, text: texts[language]![0] });
      expect(r.routed.status, r.routed.body.slice(0, 300)).toBe(200);
      expect(r.routed.body).toBe(r.single.body);
    }
  });

  it('translations within a host and across two hosts (the source rows fetched by RPC)', async () => {
    const p = placement();
    const aligned = Object.keys(p.models).filter((id) => !id.startsWith('en-'));
    const pairs: Array<[string, string | undefined]> = [];
    // Each aligned model to its companion (by default) and back, and to the models sharing its space.
    for (const a of aligned) {
      pairs.push([a, undefined], [p.companions[a]!, a]);
      for (const b of aligned) if (a !== b && p.companions[b] === p.companions[a]) pairs.push([a, b]);
    }
    // At least one pair's models live on different hosts.
    expect(pairs.some(([a, b]) => b && p.models[a] !== p.models[b])).toBe(true);
    for (const [source, target] of pairs) {
      const language = source.slice(0, 2);
      const r = await both('POST', `/api/v1/embedding-models/${source}/word-translations`, {
        words: words[language],
        limit: 5,
        ...(target ? { targetModelId: target } : {}),
      });
      expect(r.routed.status, `${source} -> ${target}: ${r.routed.body.slice(0, 300)}`).toBe(200);
      expect(r.routed.body, `${source} -> ${target}`).toBe(r.single.body);
    }
  });

  it('refusals are the same problem, byte for byte', async () => {
    for (const [url, body] of [
      [`${ws}/text-scores`, { embeddingModelId: 'xx-none', texts: ['a'] }],
      [
        `${ws}/word-scores`,
        {
          embeddingModelId: 'de-aligned-glove-6b-100d',
          mapperKeys: ['nope_valence'],
          seedWords: ['a'],
          whitelistWords: ['a'],
        },
      ],
      [`${ws}/tokenizations`, { language: 'xx', text: 'a' }],
      ['/api/v1/embedding-models/en-glove-6b-100d/word-translations', { words: ['a'] }],
      // Models projected onto different English models share no space.
      [
        '/api/v1/embedding-models/de-aligned-glove-6b-100d/word-translations',
        { words: ['Hund'], targetModelId: 'fr-aligned-distilled-100d' },
      ],
    ] as const) {
      const r = await both('POST', url, body);
      expect(r.routed.status).toBeGreaterThanOrEqual(400);
      expect(r.routed.type).toBe('application/problem+json');
      // The problem's instance names the request: compare the rest.
      const strip = (s: string) => JSON.stringify({ ...JSON.parse(s), instance: undefined });
      expect(r.routed.status).toBe(r.single.status);
      expect(strip(r.routed.body)).toBe(strip(r.single.body));
    }
  });
});

describe('status and diagnostics per host', () => {
  it("loadingStatus is each model's host's answer; diagnostics list every host within its budget", async () => {
    const p = placement();
    const list = await call(routed, 'GET', '/api/v1/embedding-models?size=100');
    const models = ((await list.json()) as { data: Array<{ id: string; loadingStatus: string }> }).data;
    // Every placed model was scored above: its host holds it.
    for (const id of Object.keys(p.models)) expect(models.find((m) => m.id === id)?.loadingStatus).toBe('loaded');
    // The one-Worker deployment's isolate answers for itself: the models it holds (it scored every
    // model in turn, so its budget evicted some) are the ones its catalog calls loaded.
    const one = await call(single, 'GET', '/api/v1/embedding-models?size=100');
    const oneModels = ((await one.json()) as { data: Array<{ id: string; loadingStatus: string }> }).data;
    const loaded = oneModels.filter((m) => m.loadingStatus === 'loaded').map((m) => m.id);
    expect(loaded.length).toBeGreaterThan(0);
    const oneDiag = await call(single, 'GET', '/api/admin/v1/diagnostics/memory', undefined, admin);
    const held = ((await oneDiag.json()) as { models: Array<{ id: string }> }).models.map((m) => m.id);
    expect([...held].sort()).toEqual([...loaded].sort());

    const diag = await call(routed, 'GET', '/api/admin/v1/diagnostics/memory', undefined, admin);
    const body = (await diag.json()) as {
      models: unknown[];
      hosts: Array<{
        binding: string;
        placedModels: string[];
        memory: { models: Array<{ id: string }>; totalBytes: number; budgetBytes: number; evictions: number } | null;
      }>;
    };
    // The API Worker itself holds no model: the hosts do.
    expect(body.models).toEqual([]);
    expect(body.hosts.map((h) => h.binding)).toEqual(p.hosts.map((h) => h.binding));
    for (const h of body.hosts) {
      expect(h.memory).not.toBeNull();
      expect(h.memory!.totalBytes).toBeLessThanOrEqual(h.memory!.budgetBytes);
      expect(h.memory!.evictions).toBe(0);
      for (const m of h.memory!.models) expect(h.placedModels).toContain(m.id);
    }
  });
});

describe('a host that fails or is late', () => {
  const ws = () => `/api/v1/workspaces/${workspace}`;
  const request = (id: string) => ({ embeddingModelId: id, texts: ['a quiet day by the sea'] });

  it('an artifact missing in R2: 503 with Retry-After from the host, nothing charged', async () => {
    const p = placement();
    victim = Object.keys(p.models).find((id) => id.startsWith('fr-'))!;
    await stopWranglerDev(child);
    child = null;
    // Its seeding stamp stays until afterAll, so the restart does not put it back.
    await withLocalStorage(STATE, (s) => s.deleteObject(R2_KEYS.model(victim!)));
    await start();
    const before = await tokensUsed();
    const r = await call(routed, 'POST', `${ws()}/text-scores`, request(victim));
    expect(r.status).toBe(503);
    expect(r.headers.get('content-type')).toBe('application/problem+json');
    expect(r.headers.get('retry-after')).toBeTruthy();
    // The same refusal as the in-process path's.
    const one = await call(single, 'POST', `${ws()}/text-scores`, request(victim));
    expect(one.status).toBe(503);
    expect(((await r.json()) as { detail: string }).detail).toBe(((await one.json()) as { detail: string }).detail);
    expect(await tokensUsed()).toBe(before);
    // Its host reports the failed load.
    const status = await call(routed, 'GET', `/api/v1/embedding-models/${victim}`);
    expect(((await status.json()) as { loadingStatus: string }).loadingStatus).toBe('error');
  });

  it('HOST_TIMEOUT_MS=1: 503 with Retry-After, nothing charged', async () => {
    await start(['--var', 'HOST_TIMEOUT_MS=1']);
    const before = await tokensUsed();
    const r = await call(routed, 'POST', `${ws()}/text-scores`, request('en-glove-6b-100d'));
    expect(r.status).toBe(503);
    expect(r.headers.get('retry-after')).toBe('1');
    const problem = (await r.json()) as { code: string; detail: string };
    expect(problem.code).toBe('EMBEDDING_MODEL_UNAVAILABLE');
    expect(problem.detail).toMatch(/did not answer/);
    expect(await tokensUsed()).toBe(before);
  });
});
