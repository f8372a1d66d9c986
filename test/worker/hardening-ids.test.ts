/**
 * Issue 12, defect 4: every identifier is validated (pattern, at most 128 characters) before any
 * storage call; unknown ids leave no per-id state in the isolate; logs cut long values; long
 * asset paths are 404. Requests go to the Worker's fetch handler directly, so the test sees the
 * same module state (model registry) the handler uses.
 */
import { env } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadingStatus, registrySize } from '../../worker/sources/models';
import type { Env } from '../../worker/env';
import { adminToken, fetchWorker, makeModel, mintToken, uploadEnglish, uploadMapper, uploadModel } from './support/api';

const MODEL = 'ids-en';
let token = '';

beforeAll(async () => {
  const m = makeModel(MODEL, { seed: 9 });
  await uploadModel(m);
  await uploadMapper(m, 'idm', { alpha: Float64Array.from(m.words, (_, r) => r / 100) });
  await uploadEnglish();
  token = await mintToken({ workspaceId: 'ws_demo' });
});

afterEach(() => vi.restoreAllMocks());

function send(
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string; bindings?: Env } = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  return fetchWorker(opts.bindings ?? env, method, path, body, { authorization: `Bearer ${opts.token ?? token}` });
}

const LONG_IDS = [
  'm'.repeat(129),
  'm'.repeat(1013),
  'm'.repeat(1100),
  `${'a'.repeat(200)}/../x`,
  'a b',
  '-leading',
  'ü'.repeat(10),
];

function modelRequests(id: string): Array<[string, string, unknown?]> {
  const enc = encodeURIComponent(id);
  return [
    ['POST', '/api/v1/workspaces/ws_demo/text-scores', { texts: ['cat'], embeddingModelId: id }],
    ['POST', '/api/v1/workspaces/ws_demo/word-scores', { seedWords: ['cat'], embeddingModelId: id }],
    ['POST', '/api/v1/workspaces/ws_demo/autocomplete-suggestions', { word: 'ca', embeddingModelId: id }],
    ['GET', `/api/v1/embedding-models/${enc}`],
    ['POST', `/api/v1/embedding-models/${enc}/word-availabilities`, { words: ['cat'] }],
    ['POST', `/api/v1/embedding-models/${enc}/word-similarity-matrices`, { words: ['cat', 'dog'] }],
    ['GET', `/api/v1/artifacts/models/${enc}`],
    ['GET', `/api/v1/artifacts/mappers/${enc}/idm`],
    ['GET', `/api/v1/artifacts/mappers/${MODEL}/${enc}`],
  ];
}

/** Bindings whose R2 bucket records every key it is asked for. */
function recordingEnv(keys: string[]): Env {
  const bucket = env.ARTIFACTS;
  const ARTIFACTS = new Proxy(bucket, {
    get(target, prop) {
      const v = Reflect.get(target, prop);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) => {
        if (typeof args[0] === 'string') keys.push(args[0]);
        return (v as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { ...(env as unknown as Env), ARTIFACTS };
}

describe('identifiers are validated before storage (defect 4)', () => {
  it('model ids: over 128 characters or outside the pattern -> 422 VALIDATION_FAILED on every endpoint, no R2 call, no registry entry', async () => {
    const before = registrySize();
    for (const id of LONG_IDS) {
      for (const [method, path, body] of modelRequests(id)) {
        const keys: string[] = [];
        const r = await send(method, path, body, { bindings: recordingEnv(keys) });
        expect(r.status, `${method} ${path.slice(0, 80)} ${JSON.stringify(r.body).slice(0, 200)}`).toBe(422);
        expect(r.body.code).toBe('VALIDATION_FAILED');
        expect(r.headers.get('retry-after')).toBeNull();
        expect(
          keys.filter((k) => k.includes('mmmm') || k.includes('aaaa') || k.includes('ü')),
          path.slice(0, 60),
        ).toEqual([]);
      }
      expect(loadingStatus(id)).toBe('not loaded');
    }
    expect(registrySize()).toBe(before);
  });

  it('an id of exactly 128 characters is valid: unknown -> 404, and leaves no registry entry', async () => {
    const before = registrySize();
    for (let i = 0; i < 20; i++) {
      const id = `${i}`.padEnd(128, 'z');
      const r = await send('POST', '/api/v1/workspaces/ws_demo/text-scores', { texts: ['cat'], embeddingModelId: id });
      expect(r.status).toBe(404);
      expect(r.body.code).toBe('EMBEDDING_MODEL_NOT_FOUND');
      expect((await send('GET', `/api/v1/embedding-models/${id}`)).status).toBe(404);
    }
    expect(registrySize()).toBe(before);
  });

  it('an unknown id while R2 fails: 503 without an entry kept; the log line cuts the long values', async () => {
    const errors: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
      errors.push(args.map(String).join(' '));
    });
    const failing: Env = {
      ...(env as unknown as Env),
      ARTIFACTS: new Proxy(env.ARTIFACTS, {
        get(target, prop) {
          if (prop === 'get' || prop === 'head')
            return async (key: string) => Promise.reject(new Error(`R2 failed for ${key} ${'x'.repeat(5000)}`));
          return Reflect.get(target, prop);
        },
      }),
    };
    const before = registrySize();
    const id = 'q'.repeat(128);
    const r = await send(
      'POST',
      '/api/v1/workspaces/ws_demo/text-scores',
      { texts: ['cat'], embeddingModelId: id },
      { bindings: failing },
    );
    expect(r.status).toBe(503);
    expect(r.body.code).toBe('EMBEDDING_MODEL_UNAVAILABLE');
    expect(registrySize()).toBe(before);
    expect(loadingStatus(id)).toBe('not loaded');
    expect(errors.length).toBeGreaterThan(0);
    for (const line of errors) expect(line.length, line.slice(0, 100)).toBeLessThan(1000);
  });

  it('mapper keys, workspace ids and page refs: 422 when malformed or too long, never 5xx', async () => {
    for (const key of ['k'.repeat(129), 'a b_c', 'x'.repeat(2000)]) {
      const r = await send('POST', '/api/v1/workspaces/ws_demo/text-scores', {
        texts: ['cat'],
        embeddingModelId: MODEL,
        mapperKeys: [key],
      });
      expect(r.status, key.slice(0, 20)).toBe(422);
      expect(r.body.code).toBe('VALIDATION_FAILED');
      const g = await send('POST', '/api/v1/workspaces/ws_demo/text-scores', {
        texts: ['cat'],
        embeddingModelId: MODEL,
        mapperKeys: ['idm_alpha'],
        goalConfig: { mappers: [{ id: key, weight: 1 }] },
      });
      expect(g.status).toBe(422);
    }
    const longWs = 'w'.repeat(1013);
    const wsToken = await mintToken({ workspaceId: longWs });
    for (const endpoint of ['tokenizations', 'text-scores', 'plagiarism-checks']) {
      const r = await send(
        'POST',
        `/api/v1/workspaces/${longWs}/${endpoint}`,
        { language: 'en', text: 'cat', texts: ['cat'], embeddingModelId: MODEL },
        { token: wsToken },
      );
      expect(r.status, `${endpoint} ${JSON.stringify(r.body).slice(0, 200)}`).toBe(422);
    }
    expect(
      (await send('GET', `/api/usage-service/v1/workspaces/${longWs}/quotas`, undefined, { token: wsToken })).status,
    ).toBe(422);
    const admin = await adminToken();
    const ref = await send(
      'GET',
      `/api/admin/v1/plagiarism/pages/${encodeURIComponent(`https://x/${'p'.repeat(3000)}`)}`,
      undefined,
      { token: admin },
    );
    expect(ref.status).toBe(422);
    expect((await send('GET', `/api/admin/v1/workspaces/${longWs}`, undefined, { token: admin })).status).toBe(422);
  });

  it('GET /assets/<long name> is 404 (no R2 key over 1,024 bytes)', async () => {
    for (const name of ['a'.repeat(1100), `${'b'.repeat(300)}.js`, 'x/'.repeat(600)]) {
      const r = await send('GET', `/assets/${name}`);
      expect(r.status, name.slice(0, 20)).toBe(404);
    }
  });
});
