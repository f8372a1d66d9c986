/**
 * Fault injection in workerd (issue 12): the real app with the real D1/R2/KV bindings, each
 * wrapped by the test so that it fails, hangs or returns damaged bytes. Every fault is answered
 * with a documented problem+json (503 storage or artifact unavailable, 502/504 upstream), consumes
 * no quota, leaves no partial rows, and the next request after recovery succeeds.
 * Our own modules are not mocked; only the platform bindings and the outbound network are.
 */
import { env } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../worker/env';
import { flushMeter, meterQuotas } from '../../worker/quotas/meter-client';
import { fetchWorker, makeModel, uploadEnglish, uploadModel } from './support/api';
import { adminToken, createWorkspace, uniqueWorkspaceId, workspaceToken } from './support/quotas';

const realEnv = env as unknown as Env;

type Fault = 'throw' | 'hang';
/** A binding whose methods named in `methods` throw or never answer; `when` picks the calls (by key/SQL). */
function faulty<T extends object>(
  real: T,
  methods: string[],
  fault: Fault,
  when: (args: unknown[]) => boolean = () => true,
): T {
  return new Proxy(real, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof v !== 'function') return v;
      if (methods.includes(String(prop))) {
        return (...args: unknown[]) => {
          if (!when(args)) return (v as (...a: unknown[]) => unknown).apply(target, args);
          if (fault === 'hang') return new Promise(() => {});
          return Promise.reject(new Error(`injected ${String(prop)} failure`));
        };
      }
      return (v as (...a: unknown[]) => unknown).bind(target);
    },
  });
}

/** D1 with every statement execution and batch failing (prepare/bind still work, as on a lost connection). */
function faultyDb(real: D1Database, fault: Fault, only: 'all' | 'batch' = 'all'): D1Database {
  const failing = () =>
    fault === 'hang' ? new Promise(() => {}) : Promise.reject(new Error('D1_ERROR: injected failure'));
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'batch') return () => failing();
      if (prop === 'exec' && only === 'all') return () => failing();
      if (prop === 'prepare' && only === 'all') {
        return (sql: string) => {
          const wrap = (stmt: D1PreparedStatement): D1PreparedStatement =>
            new Proxy(stmt, {
              get(t, p) {
                if (p === 'bind') return (...a: unknown[]) => wrap(t.bind(...a));
                if (p === 'first' || p === 'run' || p === 'all' || p === 'raw') return () => failing();
                const v = Reflect.get(t, p, t);
                return typeof v === 'function' ? v.bind(t) : v;
              },
            });
          return wrap(target.prepare(sql));
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

function send(
  bindings: Env,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  return fetchWorker(bindings, method, path, body, headers);
}

function expectProblem(r: { status: number; body: any; headers: Headers }, statuses: number[], code?: string): void {
  expect(statuses, JSON.stringify(r.body).slice(0, 300)).toContain(r.status);
  expect(r.headers.get('content-type')).toContain('application/problem+json');
  expect(typeof r.body.code).toBe('string');
  if (code) expect(r.body.code).toBe(code);
}

/** The meter's counters (the authority) and the D1 ledger after a flush of the meter's outbox. */
async function usage(ws: string): Promise<{ used: Record<string, number>; ledger: number }> {
  const { quotas } = await meterQuotas(realEnv, ws, Date.now());
  await flushMeter(realEnv, ws);
  const ledger = await realEnv.DB.prepare('SELECT COUNT(*) AS n FROM usage_ledger WHERE workspace_id = ?1')
    .bind(ws)
    .first<{ n: number }>();
  return { used: Object.fromEntries(quotas.map((q) => [q.usageTypeKey, q.usedAmount])), ledger: ledger?.n ?? 0 };
}

/** The METER namespace with every stub's calls failing (a thrown error, `retryable` as given) or never answering. */
function faultyMeter(real: Env['METER'], fault: Fault, retryable = false): Env['METER'] {
  return new Proxy(real, {
    get(target, prop) {
      if (prop === 'get') {
        return () =>
          new Proxy(
            {},
            {
              get: () => () => {
                if (fault === 'hang') return new Promise(() => {});
                return Promise.reject(
                  Object.assign(new Error('Durable Object reset because its code was updated (injected)'), {
                    retryable,
                  }),
                );
              },
            },
          );
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

const FAST: Partial<Env> = { STORAGE_TIMEOUT_MS: '200' };
const withEnv = (over: Partial<Env>): Env => ({ ...realEnv, ...FAST, ...over });

let ws = '';
let auth: Record<string, string> = {};
beforeAll(async () => {
  await uploadEnglish();
  ws = uniqueWorkspaceId('fault');
  await createWorkspace(ws, 1, [
    { usageTypeKey: 'tokens', limitAmount: 1_000_000, limitAmountDaily: 1_000_000 },
    { usageTypeKey: 'plagiarismChecks', limitAmount: 100, limitAmountDaily: 100 },
  ]);
  auth = { authorization: `Bearer ${await workspaceToken(ws)}` };
});
afterEach(() => vi.restoreAllMocks());

const quiet = () => vi.spyOn(console, 'error').mockImplementation(() => {});

describe('storage faults', () => {
  for (const fault of ['throw', 'hang'] as const) {
    it(`R2 get ${fault === 'throw' ? 'failing' : 'timing out'} while a model loads: 503, nothing charged; recovery loads it`, async () => {
      quiet();
      const m = makeModel(`fault-r2-${fault}`, { seed: 21 });
      await uploadModel(m);
      const before = await usage(ws);
      const broken = withEnv({
        ARTIFACTS: faulty(realEnv.ARTIFACTS, ['get'], fault, (a) => String(a[0]).startsWith('models/')),
      });
      const r = await send(
        broken,
        'POST',
        `/api/v1/workspaces/${ws}/text-scores`,
        { texts: ['cat dog'], embeddingModelId: m.id },
        auth,
      );
      expectProblem(r, [503]);
      expect(r.headers.get('retry-after')).toMatch(/^\d+$/);
      expect(await usage(ws)).toEqual(before);
      const ok = await send(
        realEnv,
        'POST',
        `/api/v1/workspaces/${ws}/text-scores`,
        { texts: ['cat dog'], embeddingModelId: m.id },
        auth,
      );
      expect(ok.status, JSON.stringify(ok.body).slice(0, 200)).toBe(200);
    });
  }

  it('R2 get failing for language data: 503 LANGUAGE_DATA_UNAVAILABLE; recovery: 200', async () => {
    quiet();
    const res = await env.FIXTURES.fetch('http://f/lang/de.bin');
    await env.ARTIFACTS.put('lang/de.bin', await res.arrayBuffer());
    const before = await usage(ws);
    const broken = withEnv({
      ARTIFACTS: faulty(realEnv.ARTIFACTS, ['get'], 'throw', (a) => String(a[0]).startsWith('lang/')),
    });
    expectProblem(
      await send(
        broken,
        'POST',
        `/api/v1/workspaces/${ws}/tokenizations`,
        { language: 'de', text: 'Die Kinder' },
        auth,
      ),
      [503],
      'LANGUAGE_DATA_UNAVAILABLE',
    );
    expect(await usage(ws)).toEqual(before);
    expect(
      (
        await send(
          realEnv,
          'POST',
          `/api/v1/workspaces/${ws}/tokenizations`,
          { language: 'de', text: 'Die Kinder' },
          auth,
        )
      ).status,
    ).toBe(200);
  });

  for (const fault of ['throw', 'hang'] as const) {
    it(`R2 put ${fault === 'throw' ? 'failing' : 'timing out'} during page ingestion: 503, no page row; recovery: 201`, async () => {
      quiet();
      const admin = { authorization: `Bearer ${await adminToken()}` };
      const url = `https://fault.example/${crypto.randomUUID()}`;
      const broken = withEnv({ ARTIFACTS: faulty(realEnv.ARTIFACTS, ['put'], fault) });
      const r = await send(
        broken,
        'POST',
        '/api/admin/v1/plagiarism/pages',
        { url, text: 'one two three four five six seven eight nine ten' },
        admin,
      );
      expectProblem(r, [503], 'STORAGE_UNAVAILABLE');
      const rows = await realEnv.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_pages WHERE url = ?1')
        .bind(url)
        .first<{ n: number }>();
      expect(rows?.n).toBe(0);
      const ok = await send(
        realEnv,
        'POST',
        '/api/admin/v1/plagiarism/pages',
        { url, text: 'one two three four five six seven eight nine ten' },
        admin,
      );
      expect(ok.status).toBe(201);
    });
  }

  for (const fault of ['throw', 'hang'] as const) {
    it(`the workspace meter ${fault === 'throw' ? 'throwing' : 'timing out'} on a metered request (with and without Idempotency-Key): 503 with Retry-After, nothing charged; recovery: 200`, async () => {
      quiet();
      const before = await usage(ws);
      const broken = withEnv({ METER: faultyMeter(realEnv.METER, fault), METER_TIMEOUT_MS: '200' });
      const body = { language: 'en', text: 'cat dog bird' };
      const plain = await send(broken, 'POST', `/api/v1/workspaces/${ws}/tokenizations`, body, auth);
      expectProblem(plain, [503], 'STORAGE_UNAVAILABLE');
      expect(Number(plain.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const key = { ...auth, 'idempotency-key': `fault-meter-${fault}` };
      expectProblem(
        await send(broken, 'POST', `/api/v1/workspaces/${ws}/tokenizations`, body, key),
        [503],
        'STORAGE_UNAVAILABLE',
      );
      // The listing has no other source than the meter either (no stale D1 answer).
      expectProblem(
        await send(broken, 'GET', `/api/usage-service/v1/workspaces/${ws}/quotas`, undefined, auth),
        [503],
        'STORAGE_UNAVAILABLE',
      );
      expect(await usage(ws)).toEqual(before);
      expect((await send(realEnv, 'POST', `/api/v1/workspaces/${ws}/tokenizations`, body, auth)).status).toBe(200);
      const retried = await send(realEnv, 'POST', `/api/v1/workspaces/${ws}/tokenizations`, body, key);
      expect(retried.status).toBe(200);
      const after = await usage(ws);
      expect(after.used.tokens).toBe(before.used.tokens + 6);
      expect(after.ledger).toBe(before.ledger + 2);
    });
  }

  it('D1 failing for the Worker does not stop metering: the meter charges once, and its flush writes the ledger row', async () => {
    quiet();
    const before = await usage(ws);
    const broken = withEnv({ DB: faultyDb(realEnv.DB, 'throw') });
    const r = await send(
      broken,
      'POST',
      `/api/v1/workspaces/${ws}/tokenizations`,
      { language: 'en', text: 'cat dog bird' },
      auth,
    );
    expect(r.status).toBe(200);
    const after = await usage(ws);
    expect(after.used.tokens).toBe(before.used.tokens + 3);
    expect(after.ledger).toBe(before.ledger + 1);
  });

  it('KV errors: the catalog falls back to R2 (200); the artifact download too', async () => {
    quiet();
    const broken = withEnv({
      CACHE: faulty(realEnv.CACHE, ['get', 'put', 'delete', 'list', 'getWithMetadata'], 'throw'),
    });
    const catalog = await send(broken, 'GET', '/api/v1/embedding-models', undefined, auth);
    expect(catalog.status, JSON.stringify(catalog.body).slice(0, 200)).toBe(200);
    const hanging = withEnv({ CACHE: faulty(realEnv.CACHE, ['get', 'put', 'getWithMetadata'], 'hang') });
    const again = await send(hanging, 'GET', '/api/v1/mappers', undefined, auth);
    expect([200, 503]).toContain(again.status);
    if (again.status !== 200) expectProblem(again, [503]);
    expect((await send(realEnv, 'GET', '/api/v1/mappers', undefined, auth)).status).toBe(200);
  });
});

describe('damaged artifacts', () => {
  for (const damage of ['truncated', 'corrupted'] as const) {
    it(`a ${damage} model artifact: 503 EMBEDDING_MODEL_UNAVAILABLE, nothing charged; a fixed upload loads on the next request`, async () => {
      quiet();
      const m = makeModel(`fault-${damage}`, { seed: 23 });
      const bad = damage === 'truncated' ? m.bytes.slice(0, Math.floor(m.bytes.length * 0.6)) : m.bytes.slice();
      if (damage === 'corrupted') for (let i = 64; i < bad.length; i += 97) bad[i] ^= 0x5a;
      await realEnv.ARTIFACTS.put(`models/${m.id}.emb`, bad);
      await realEnv.ARTIFACTS.put(`models/${m.id}.json`, JSON.stringify(m.manifest));
      const before = await usage(ws);
      const r = await send(
        realEnv,
        'POST',
        `/api/v1/workspaces/${ws}/word-scores`,
        { seedWords: ['cat'], whitelistWords: ['dog'], embeddingModelId: m.id },
        auth,
      );
      expectProblem(r, [503], 'EMBEDDING_MODEL_UNAVAILABLE');
      expect(await usage(ws)).toEqual(before);
      await uploadModel(m);
      const ok = await send(
        realEnv,
        'POST',
        `/api/v1/workspaces/${ws}/word-scores`,
        { seedWords: ['cat'], whitelistWords: ['dog'], embeddingModelId: m.id },
        auth,
      );
      expect(ok.status, JSON.stringify(ok.body).slice(0, 200)).toBe(200);
    });
  }

  it('truncated language data: 503 LANGUAGE_DATA_UNAVAILABLE; a fixed upload works on the next request', async () => {
    quiet();
    const good = await (await env.FIXTURES.fetch('http://f/lang/fr.bin')).arrayBuffer();
    await realEnv.ARTIFACTS.put('lang/fr.bin', good.slice(0, 1000));
    expectProblem(
      await send(realEnv, 'POST', `/api/v1/workspaces/${ws}/tokenizations`, { language: 'fr', text: "L'homme" }, auth),
      [503],
      'LANGUAGE_DATA_UNAVAILABLE',
    );
    await realEnv.ARTIFACTS.put('lang/fr.bin', good);
    expect(
      (await send(realEnv, 'POST', `/api/v1/workspaces/${ws}/tokenizations`, { language: 'fr', text: "L'homme" }, auth))
        .status,
    ).toBe(200);
  });
});

describe('upstream plagiarism service faults', () => {
  const text = Array.from({ length: 20 }, (_, i) => `fault${i}`).join(' ');
  const httpEnv: Partial<Env> = {
    PLAGIARISM_PROVIDER: 'http',
    PLAGIARISM_HTTP_URL: 'https://upstream.test/v1/check',
    PLAGIARISM_HTTP_API_KEY: 'k',
    PLAGIARISM_HTTP_TIMEOUT_MS: '100',
    PLAGIARISM_HTTP_RETRIES: '0',
  };
  const cases: Array<[string, (init?: RequestInit) => Promise<Response>, number]> = [
    [
      'hangs',
      (init) =>
        new Promise<Response>((_, reject) => {
          init?.signal?.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
        }),
      504,
    ],
    ['resets the connection', () => Promise.reject(new TypeError('Network connection lost.')), 502],
    ['answers garbage', async () => new Response('<html>\u0000\u0001 not json', { status: 200 }), 502],
    ['answers JSON of another shape', async () => Response.json({ results: 'nope' }), 502],
    ['answers 500', async () => new Response('boom', { status: 500 }), 502],
  ];
  for (const [name, upstream, status] of cases) {
    it(`upstream ${name}: ${status} UPSTREAM_FAILED, no check consumed; recovery: 200 and one check`, async () => {
      quiet();
      let healthy = false;
      vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
        const url = input instanceof Request ? input.url : String(input);
        if (new URL(url).hostname !== 'upstream.test') throw new TypeError(`unexpected outbound request to ${url}`);
        return healthy ? Response.json({ matches: [] }) : upstream(init as RequestInit | undefined);
      });
      const before = await usage(ws);
      const r = await send(withEnv(httpEnv), 'POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { text }, auth);
      expectProblem(r, [status], 'UPSTREAM_FAILED');
      expect(await usage(ws)).toEqual(before);
      healthy = true;
      const ok = await send(withEnv(httpEnv), 'POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { text }, auth);
      expect(ok.status).toBe(200);
      expect((await usage(ws)).used.plagiarismChecks).toBe(before.used.plagiarismChecks + 1);
    });
  }
});
