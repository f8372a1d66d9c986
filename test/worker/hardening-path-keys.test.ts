/**
 * Path segments and query values that are names of Object.prototype members (`__proto__`,
 * `constructor`, `toString`, `valueOf`, `hasOwnProperty`) in every route that looks a path
 * parameter up: each is an ordinary unknown key, answered 404 (or 422 where the parameter's
 * pattern refuses it) as problem+json, never 500. Lookup tables keyed by request strings are
 * Maps or null-prototype objects (worker/pages/docs.ts, worker/pages/playground.ts, core/labels.ts).
 */
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { adminToken, createWorkspace, mintToken, uniqueWorkspaceId } from './support/quotas';
import { uploadScoringFixtures, WS_PATH } from './support/scoring';
import { token as demoToken } from './support/api';

const KEYS = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty'] as const;
/** Refused by the identifier patterns (a letter or digit first): 422 where a route validates one. */
const PATTERN_REFUSED = new Set<string>(['__proto__']);
const MODEL = 'en-glove-6b-100d';

interface Answer {
  status: number;
  type: string;
  body: { code?: string; status?: number } | string;
}

async function send(method: string, path: string, token?: string, body?: unknown): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await SELF.fetch(`http://x${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: Answer['body'] = text;
  try {
    parsed = JSON.parse(text) as Answer['body'];
  } catch {
    // not JSON
  }
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: parsed };
}

/** A problem+json answer with this status (the body's status agrees), never a 5xx. */
function expectProblem(what: string, a: Answer, status: number): void {
  expect(a.status, `${what}: ${JSON.stringify(a.body).slice(0, 300)}`).toBe(status);
  expect(a.type, what).toContain('application/problem+json');
  expect(typeof a.body === 'object' && a.body.status, what).toBe(status);
}

const notFoundOr422 = (key: string): number => (PATTERN_REFUSED.has(key) ? 422 : 404);

let admin = '';
let user = '';
let ws = '';

beforeAll(async () => {
  admin = await adminToken();
  ws = uniqueWorkspaceId('keys');
  await createWorkspace(ws, 1, [
    { usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 },
    { usageTypeKey: 'plagiarismChecks', limitAmount: 10, limitAmountDaily: 10 },
  ]);
  user = await mintToken({ workspaceId: ws });
  // A synthetic model 'score-en' with the mapper bundle 'emo' (variables valence, arousal).
  await uploadScoringFixtures();
});

describe('Object.prototype names in paths and queries are unknown keys: 404 or 422, never 500', () => {
  it('pages without a token: /api/docs/{asset}, /assets/{file}, /{path}, /api/{path}', async () => {
    for (const key of KEYS) {
      expectProblem(`GET /api/docs/${key}`, await send('GET', `/api/docs/${key}`), 404);
      expectProblem(`GET /assets/${key}`, await send('GET', `/assets/${key}`), 404);
      expectProblem(`GET /assets/x.${key}`, await send('GET', `/assets/x.${key}`), 404);
      expectProblem(`GET /${key}`, await send('GET', `/${key}`), 404);
      expectProblem(`GET /api/${key}`, await send('GET', `/api/${key}`), 404);
    }
    // The docs assets themselves are still found.
    expect((await send('GET', '/api/docs/init.js')).status).toBe(200);
    expect((await send('GET', '/api/docs/swagger-ui.css')).status).toBe(200);
  });

  it('the catalog: /api/v1/embedding-models/{id}; language, country and sort query values', async () => {
    for (const key of KEYS) {
      const one = await send('GET', `/api/v1/embedding-models/${key}`, user);
      expectProblem(`GET embedding-models/${key}`, one, notFoundOr422(key));
      if (!PATTERN_REFUSED.has(key)) expect((one.body as { code: string }).code).toBe('EMBEDDING_MODEL_NOT_FOUND');
      for (const list of ['/api/v1/embedding-models', '/api/v1/mappers']) {
        for (const param of ['language', 'country']) {
          const a = await send('GET', `${list}?${param}=${key}`, user);
          expect(a.status, `${list}?${param}=${key}: ${JSON.stringify(a.body).slice(0, 200)}`).toBeLessThan(500);
          if (a.status === 200) expect((a.body as unknown as { data: unknown[] }).data).toEqual([]);
          else expectProblem(`${list}?${param}=${key}`, a, 422);
        }
        // A sort field is one of a list (422 otherwise), where the route sorts at all.
        const sorted = await send('GET', `${list}?sort=${key}`, user);
        expect(sorted.status, `${list}?sort=${key}`).toBeLessThan(500);
        if (sorted.status !== 200) expectProblem(`${list}?sort=${key}`, sorted, 422);
      }
    }
  });

  it('model routes: /api/v1/embedding-models/{embeddingModelId}/word-availabilities, -similarity-matrices, -translations', async () => {
    for (const key of KEYS) {
      for (const [route, body] of [
        ['word-availabilities', { words: ['cat'] }],
        ['word-similarity-matrices', { words: ['cat', 'dog'] }],
        ['word-translations', { words: ['cat'] }],
      ] as const) {
        const a = await send('POST', `/api/v1/embedding-models/${key}/${route}`, user, body);
        expectProblem(`POST embedding-models/${key}/${route}`, a, notFoundOr422(key));
      }
    }
  });

  it('body values that name a model, a mapper or one of its variables', async () => {
    const demo = await demoToken();
    for (const key of KEYS) {
      for (const [route, base] of [
        ['text-scores', { texts: ['good cat'] }],
        ['word-scores', { seedWords: ['good'], whitelistWords: ['cat'] }],
      ] as const) {
        const path = `${WS_PATH}/${route}`;
        const model = await send('POST', path, demo, { ...base, embeddingModelId: key });
        expectProblem(`${route} embeddingModelId ${key}`, model, notFoundOr422(key));
        for (const mapperKey of [key, `emo_${key}`, `${key}_valence`]) {
          const a = await send('POST', path, demo, { ...base, embeddingModelId: 'score-en', mapperKeys: [mapperKey] });
          expectProblem(`${route} mapperKeys ${mapperKey}`, a, 422);
        }
      }
      // A goal factor must name one of the request's mapperKeys (text-scores has the goal).
      for (const mapperKey of [key, `emo_${key}`]) {
        const goal = await send('POST', `${WS_PATH}/text-scores`, demo, {
          texts: ['good cat'],
          embeddingModelId: 'score-en',
          mapperKeys: ['emo_valence'],
          goalConfig: { mappers: [{ id: mapperKey, weight: 1 }] },
        });
        expectProblem(`text-scores goalConfig mapper ${mapperKey}`, goal, 422);
      }
      const autocomplete = await send('POST', `${WS_PATH}/autocomplete-suggestions`, demo, {
        word: 'ca',
        embeddingModelId: key,
      });
      expectProblem(`autocomplete embeddingModelId ${key}`, autocomplete, notFoundOr422(key));
    }
  });

  it('artifact downloads: models, heads, sub-word tables, languages, mapper bundles and their heads', async () => {
    for (const key of KEYS) {
      const expected = notFoundOr422(key);
      for (const path of [
        `/api/v1/artifacts/models/${key}`,
        `/api/v1/artifacts/models/${key}/head`,
        `/api/v1/artifacts/models/${key}/subword-table`,
        `/api/v1/artifacts/mappers/${key}/sentiment_valence`,
        `/api/v1/artifacts/mappers/${MODEL}/${key}`,
        `/api/v1/artifacts/mappers/${key}/sentiment_valence/head`,
        `/api/v1/artifacts/mappers/${MODEL}/${key}/head`,
        `/api/v1/artifacts/mappers/score-en/${key}`,
      ])
        expectProblem(`GET ${path}`, await send('GET', path, user), expected);
      // The language is one of the supported codes: anything else fails the schema.
      expectProblem(`GET languages/${key}`, await send('GET', `/api/v1/artifacts/languages/${key}`, user), 422);
    }
  });

  it('workspace routes whose workspace id is such a name (a token for that workspace)', async () => {
    for (const key of KEYS) {
      const tok = await mintToken({ workspaceId: key });
      const expected = PATTERN_REFUSED.has(key) ? 422 : 404;
      const quotas = await send('GET', `/api/usage-service/v1/workspaces/${key}/quotas`, tok);
      expectProblem(`GET usage-service workspaces/${key}/quotas`, quotas, expected);
      const tokens = await send('POST', `/api/v1/workspaces/${key}/tokenizations`, tok, {
        language: 'en',
        text: 'cat dog',
      });
      expect(tokens.status, `tokenizations of ${key}: ${JSON.stringify(tokens.body).slice(0, 200)}`).toBeLessThan(500);
      expect(tokens.type).toContain('application/problem+json');
      const plagiarism = await send('POST', `/api/v1/workspaces/${key}/plagiarism-checks`, tok, {
        text: Array.from({ length: 16 }, (_, i) => `word${i}`).join(' '),
      });
      expect(plagiarism.status, `plagiarism of ${key}: ${JSON.stringify(plagiarism.body).slice(0, 200)}`).toBeLessThan(
        500,
      );
      expect(plagiarism.type).toContain('application/problem+json');
    }
  });

  it('admin: workspaces, their quotas, bonus, ledger and audit log; usage types', async () => {
    for (const key of KEYS) {
      const expected = notFoundOr422(key);
      for (const [method, path, body] of [
        ['GET', `/api/admin/v1/workspaces/${key}`, undefined],
        ['PATCH', `/api/admin/v1/workspaces/${key}`, { name: 'x' }],
        ['GET', `/api/admin/v1/workspaces/${key}/usage-ledger`, undefined],
        ['GET', `/api/admin/v1/workspaces/${key}/audit-log`, undefined],
        ['PUT', `/api/admin/v1/workspaces/${key}/quotas/tokens`, { limitAmount: 5, limitAmountDaily: 5 }],
      ] as const)
        expectProblem(`${method} ${path}`, await send(method, path, admin, body), expected);
      // A usage type key that is such a name, on a workspace that exists.
      for (const [method, path, body] of [
        ['PUT', `/api/admin/v1/workspaces/${ws}/quotas/${key}`, { limitAmount: 5, limitAmountDaily: 5 }],
        ['POST', `/api/admin/v1/workspaces/${ws}/quotas/${key}/bonus`, { amount: 5, reason: 'test' }],
      ] as const) {
        const a = await send(method, path, admin, body);
        expect(a.status, `${method} ${path}: ${JSON.stringify(a.body).slice(0, 300)}`).toBeGreaterThanOrEqual(404);
        expect(a.status, `${method} ${path}`).toBeLessThan(500);
        expect(a.type).toContain('application/problem+json');
      }
      const ledger = await send('GET', `/api/admin/v1/workspaces/${ws}/usage-ledger?usageTypeKey=${key}`, admin);
      expect(ledger.status, `ledger ?usageTypeKey=${key}`).toBeLessThan(500);
      const quotas = await send('GET', `/api/usage-service/v1/workspaces/${ws}/quotas?usageTypeKey=${key}`, user);
      expect(quotas.status, `quotas ?usageTypeKey=${key}: ${JSON.stringify(quotas.body)}`).toBe(200);
      expect((quotas.body as unknown as { data: unknown[] }).data).toEqual([]);
      const types = await send('GET', `/api/usage-service/v1/usage-types?sort=${key}`, user);
      expectProblem(`usage-types?sort=${key}`, types, 422);
    }
  });

  it('admin: plagiarism pages by ref, stored dimensions by id, diagnostics', async () => {
    for (const key of KEYS) {
      for (const method of ['GET', 'DELETE']) {
        const a = await send(method, `/api/admin/v1/plagiarism/pages/${key}`, admin);
        expectProblem(`${method} plagiarism/pages/${key}`, a, 404);
        expect((a.body as { code: string }).code).toBe('NOT_FOUND');
      }
      // A URL-shaped ref ending in such a name.
      const url = encodeURIComponent(`https://ref.example/${key}`);
      expectProblem(`GET pages/${url}`, await send('GET', `/api/admin/v1/plagiarism/pages/${url}`, admin), 404);
      const listed = await send('GET', `/api/admin/v1/plagiarism/pages?url=${key}`, admin);
      expect(listed.status, `pages?url=${key}: ${JSON.stringify(listed.body).slice(0, 200)}`).toBeLessThan(500);
      if (listed.status === 200) expect((listed.body as unknown as { data: unknown[] }).data).toEqual([]);
      else expectProblem(`pages?url=${key}`, listed, 422);
      // Stored dimension ids are decimal integers.
      expectProblem(`GET dimensions/${key}`, await send('GET', `/api/admin/v1/dimensions/${key}`, admin), 422);
      expectProblem(`GET diagnostics/${key}`, await send('GET', `/api/admin/v1/diagnostics/${key}`, admin), 404);
    }
  });
});
