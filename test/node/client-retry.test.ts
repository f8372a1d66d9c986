/**
 * The typed client's transport behaviour against injected answers: a tiny HTTP server in this
 * test answers each request with the next scripted status (503, 429 with Retry-After, 502 with
 * an HTML body, a hang), and records what the client sent. Checks retries and their waits,
 * the Idempotency-Key reused across one call's retries, timeouts, AbortSignal and error mapping.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiProblem, createClient, retryAfterSeconds, type RetryInfo } from '../../client/src/index';

interface Scripted {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Never answer (the client's timeout must fire). */
  hang?: boolean;
}

let server: http.Server;
let base: string;
let script: Scripted[] = [];
let seen: Array<{ method: string; url: string; key: string | undefined; auth: string | undefined; body: string }> = [];

const problem = (status: number, code: string, extra: Record<string, unknown> = {}): string =>
  JSON.stringify({
    type: `https://embedding-edge.dev/problems/${code}`,
    title: code,
    status,
    detail: `detail of ${code}`,
    code,
    translationKey: code.toLowerCase(),
    ...extra,
  });
const ok = (body: unknown): Scripted => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(body),
});
const fail = (
  status: number,
  code: string,
  headers: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Scripted => ({
  status,
  headers: { 'content-type': 'application/problem+json', ...headers },
  body: problem(status, code, extra),
});

beforeAll(async () => {
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        key: req.headers['idempotency-key'] as string | undefined,
        auth: req.headers.authorization,
        body,
      });
      const next = script.shift() ?? { status: 500, body: 'script exhausted' };
      if (next.hang) return; // the socket stays open until the client gives up
      res.writeHead(next.status, next.headers ?? {});
      res.end(next.body ?? '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

beforeEach(() => {
  script = [];
  seen = [];
});

const tokenizeBody = { language: 'en', text: 'cats' };
const tokenized = {
  tokenCount: 1,
  tokens: [{ string: 'cats', token: 'cat', indexStart: 0, indexEnd: 4, isStop: false, synonyms: [] }],
};

describe('retries', () => {
  it('503, 503, then 200: three attempts with one Idempotency-Key and the same body', async () => {
    script = [fail(503, 'EMBEDDING_MODEL_UNAVAILABLE'), fail(503, 'EMBEDDING_MODEL_UNAVAILABLE'), ok(tokenized)];
    const retries: RetryInfo[] = [];
    const c = createClient({
      baseUrl: base,
      token: 't0k',
      workspaceId: 'ws_a',
      backoffMs: 5,
      onRetry: (r) => retries.push(r),
    });
    expect(await c.tokenize(tokenizeBody)).toEqual(tokenized);
    expect(seen.map((s) => s.url)).toEqual(Array(3).fill('/api/v1/workspaces/ws_a/tokenizations'));
    expect(new Set(seen.map((s) => s.key)).size).toBe(1);
    expect(seen[0].key).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen.every((s) => s.auth === 'Bearer t0k' && JSON.parse(s.body).text === 'cats')).toBe(true);
    expect(retries.map((r) => [r.attempt, r.status, r.idempotencyKey])).toEqual([
      [1, 503, seen[0].key],
      [2, 503, seen[0].key],
    ]);
    // Exponential backoff with jitter: attempt k waits between half and all of 5 * 2^(k-1) ms.
    expect(retries[0].delayMs).toBeGreaterThanOrEqual(2);
    expect(retries[0].delayMs).toBeLessThanOrEqual(5);
    expect(retries[1].delayMs).toBeGreaterThanOrEqual(5);
    expect(retries[1].delayMs).toBeLessThanOrEqual(10);
  });

  it('each logical call has its own key; an explicit key is sent as given', async () => {
    script = [ok(tokenized), ok(tokenized)];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a' });
    await c.tokenize(tokenizeBody);
    await c.tokenize(tokenizeBody, { idempotencyKey: 'batch-7' });
    expect(seen[0].key).not.toBe(seen[1].key);
    expect(seen[1].key).toBe('batch-7');
  });

  it('429 with Retry-After: 1 waits the given second (seconds or HTTP date)', async () => {
    script = [fail(429, 'RATE_LIMITED', { 'retry-after': '1' }), ok(tokenized)];
    const retries: RetryInfo[] = [];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', onRetry: (r) => retries.push(r) });
    expect(await c.tokenize(tokenizeBody)).toEqual(tokenized);
    expect(retries.map((r) => [r.status, r.delayMs])).toEqual([[429, 1000]]);
    expect(seen[0].key).toBe(seen[1].key);
    expect(retryAfterSeconds('Wed, 21 Oct 2015 07:28:30 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(30);
    expect(retryAfterSeconds('soon')).toBeNull();
  });

  it('a Retry-After beyond maxRetryAfterMs is not waited for: ApiProblem with retryAfter', async () => {
    script = [fail(429, 'DAILY_LIMIT_REACHED', { 'retry-after': '3600' })];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', maxRetryAfterMs: 60_000 });
    const p = (await c.tokenize(tokenizeBody).catch((e: unknown) => e)) as ApiProblem;
    expect(p).toBeInstanceOf(ApiProblem);
    expect([p.status, p.code, p.retryAfter, p.attempts]).toEqual([429, 'DAILY_LIMIT_REACHED', 3600, 1]);
    expect(seen).toHaveLength(1);
  });

  it('gives up after `retries` retries with the last answer as ApiProblem; a non-problem body becomes HTTP_<status>', async () => {
    script = [
      fail(504, 'UPSTREAM_FAILED'),
      fail(503, 'X'),
      { status: 502, headers: { 'content-type': 'text/html' }, body: '<h1>Bad gateway</h1>' },
    ];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', retries: 2, backoffMs: 1 });
    const p = (await c.tokenize(tokenizeBody).catch((e: unknown) => e)) as ApiProblem;
    expect([p.status, p.code, p.attempts, p.detail]).toEqual([502, 'HTTP_502', 3, '<h1>Bad gateway</h1>']);
    expect(seen).toHaveLength(3);
  });

  it('422 and 404 are not retried and keep code, errors and translationKey', async () => {
    script = [fail(422, 'VALIDATION_FAILED', {}, { errors: [{ path: 'texts.0', message: 'Expected string' }] })];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', backoffMs: 1 });
    const p = (await c.textScores({ texts: ['x'], embeddingModelId: 'm' }).catch((e: unknown) => e)) as ApiProblem;
    expect([p.status, p.code, p.translationKey, p.errors]).toEqual([
      422,
      'VALIDATION_FAILED',
      'validation_failed',
      [{ path: 'texts.0', message: 'Expected string' }],
    ]);
    expect(p.message).toBe('422 VALIDATION_FAILED: detail of VALIDATION_FAILED');
    expect(seen).toHaveLength(1);
  });

  it('GET calls carry no Idempotency-Key', async () => {
    script = [fail(503, 'X'), ok({ page: { size: 20, totalElements: 0, totalPages: 0, currentPage: 1 }, data: [] })];
    const c = createClient({ baseUrl: base, backoffMs: 1 });
    await c.listModels({ language: 'en' });
    expect(seen.map((s) => [s.method, s.url, s.key])).toEqual([
      ['GET', '/api/v1/embedding-models?language=en', undefined],
      ['GET', '/api/v1/embedding-models?language=en', undefined],
    ]);
  });
});

describe('timeouts, abort, network failures', () => {
  it('an attempt without an answer times out and is retried; the last one is TIMEOUT', async () => {
    script = [
      { status: 0, hang: true },
      { status: 0, hang: true },
    ];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', timeoutMs: 100, retries: 1, backoffMs: 1 });
    const p = (await c.tokenize(tokenizeBody).catch((e: unknown) => e)) as ApiProblem;
    expect([p.status, p.code, p.attempts]).toEqual([0, 'TIMEOUT', 2]);
    expect(seen).toHaveLength(2);
    expect(seen[0].key).toBe(seen[1].key);
  });

  it('a timeout then an answer: the answer wins', async () => {
    script = [{ status: 0, hang: true }, ok(tokenized)];
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', timeoutMs: 100, backoffMs: 1 });
    expect(await c.tokenize(tokenizeBody)).toEqual(tokenized);
  });

  it("the caller's AbortSignal stops the call during a backoff wait, with the signal's reason", async () => {
    script = [fail(503, 'X', { 'retry-after': '30' })];
    const ctrl = new AbortController();
    const c = createClient({
      baseUrl: base,
      workspaceId: 'ws_a',
      onRetry: () => ctrl.abort(new Error('user cancelled')),
    });
    const err = await c.tokenize(tokenizeBody, { signal: ctrl.signal }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).message).toBe('user cancelled');
    expect(seen).toHaveLength(1);
  });

  it('an AbortSignal aborted during a request ends it without retry', async () => {
    script = [{ status: 0, hang: true }];
    const ctrl = new AbortController();
    const c = createClient({ baseUrl: base, workspaceId: 'ws_a', backoffMs: 1 });
    const p = c.tokenize(tokenizeBody, { signal: ctrl.signal }).catch((e: unknown) => e);
    while (seen.length === 0) await new Promise((r) => setTimeout(r, 5));
    ctrl.abort();
    const err = (await p) as Error;
    expect(err.name).toBe('AbortError');
    expect(seen).toHaveLength(1);
  });

  it('a refused connection is retried and ends as NETWORK_ERROR', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const retries: RetryInfo[] = [];
    const c = createClient({
      baseUrl: `http://127.0.0.1:${port}`,
      workspaceId: 'ws_a',
      retries: 2,
      backoffMs: 1,
      onRetry: (r) => retries.push(r),
    });
    const p = (await c.tokenize(tokenizeBody).catch((e: unknown) => e)) as ApiProblem;
    expect([p.status, p.code, p.attempts]).toEqual([0, 'NETWORK_ERROR', 3]);
    expect(retries.map((r) => r.status)).toEqual([0, 0]);
  });
});
