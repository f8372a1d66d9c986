/**
 * Issue 12, defect 7 (the smaller items): X-Request-Id always the service's own (the client's
 * echoed in X-Client-Request-Id, never stored); page URLs http/https only; invalid UTF-8 bodies
 * 422; tokens issued more than 5 minutes in the future refused; a plagiarism check verifies the
 * allowance before calling the upstream; a Content-Length over the limit is refused (413) before the
 * body is read when it is larger than what is drained (issue 31 #6), and drained otherwise.
 */
import { createExecutionContext, env, waitOnExecutionContext } from 'cloudflare:test';
import { SignJWT } from 'jose';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import worker from '../../worker/index';
import type { Env } from '../../worker/env';
import { DRAIN_BYTES } from '../../worker/request-guards';
import { uploadEnglish } from './support/api';
import { adminToken, createWorkspace, quotaOf, readLedger, uniqueWorkspaceId, workspaceToken } from './support/quotas';

beforeAll(async () => {
  await uploadEnglish();
});
afterEach(() => vi.restoreAllMocks());

async function send(
  path: string,
  init: RequestInit & { headers?: Record<string, string> },
  bindings: Env = env as unknown as Env,
): Promise<Response> {
  const exec = createExecutionContext();
  const res = await worker.fetch(new Request(`http://x${path}`, init), bindings as never, exec);
  await waitOnExecutionContext(exec);
  return res;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('smaller hardening items (defect 7)', () => {
  it("X-Request-Id is the service's own; the client's is echoed in X-Client-Request-Id and never stored", async () => {
    const ws = uniqueWorkspaceId('rid');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const res = await send(`/api/v1/workspaces/${ws}/tokenizations`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${await workspaceToken(ws)}`,
        'content-type': 'application/json',
        'x-request-id': 'client-chosen-id',
      },
      body: JSON.stringify({ language: 'en', text: 'cat dog' }),
    });
    expect(res.status).toBe(200);
    const rid = res.headers.get('x-request-id')!;
    expect(rid).toMatch(UUID);
    expect(res.headers.get('x-client-request-id')).toBe('client-chosen-id');
    const ledger = await readLedger(ws);
    expect(ledger.map((e) => e.requestId)).toEqual([rid]);
    // Problems carry the service's id too; a client value that is not printable ASCII is not echoed.
    const bad = await send('/api/health-nope', { headers: { 'x-request-id': 'x'.repeat(500) } });
    expect(bad.status).toBe(404);
    expect(bad.headers.get('x-request-id')).toMatch(UUID);
    expect(bad.headers.get('x-client-request-id')).toBeNull();
    expect(((await bad.json()) as { instance: string }).instance).toBe(
      `urn:request:${bad.headers.get('x-request-id')}`,
    );
  });

  it('page URLs: only http and https', async () => {
    const admin = await adminToken();
    for (const url of [
      'javascript:alert(1)',
      'data:text/html,<p>x</p>',
      'ftp://files.example/x',
      'file:///etc/passwd',
      'mailto:a@b.example',
    ]) {
      const res = await send('/api/admin/v1/plagiarism/pages', {
        method: 'POST',
        headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
        body: JSON.stringify({ url, text: 'some words' }),
      });
      expect(res.status, url).toBe(422);
    }
    const ok = await send('/api/admin/v1/plagiarism/pages', {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `HTTPS://ok.example/${crypto.randomUUID()}`, text: 'some words' }),
    });
    expect(ok.status).toBe(201);
  });

  it('a body that is not valid UTF-8 is 422 VALIDATION_FAILED and consumes nothing', async () => {
    const ws = uniqueWorkspaceId('utf');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const prefix = new TextEncoder().encode('{"language":"en","text":"caf');
    const suffix = new TextEncoder().encode(' dog"}');
    for (const bad of [[0xff], [0xc3], [0xe2, 0x82], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const body = new Uint8Array([...prefix, ...bad, ...suffix]);
      const res = await send(`/api/v1/workspaces/${ws}/tokenizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${await workspaceToken(ws)}`, 'content-type': 'application/json' },
        body,
      });
      expect(res.status, bad.join(',')).toBe(422);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
    }
    const batch = await send('/api/admin/v1/plagiarism/pages:batch', {
      method: 'POST',
      headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/x-ndjson' },
      body: new Uint8Array([
        ...new TextEncoder().encode('{"url":"https://u.example/1","text":"a'),
        0xfe,
        ...new TextEncoder().encode('"}'),
      ]),
    });
    expect(batch.status).toBe(422);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
  });

  it('a token issued more than 5 minutes in the future is refused; within the skew it is accepted', async () => {
    const key = new TextEncoder().encode(env.JWT_SECRET);
    const now = Math.floor(Date.now() / 1000);
    const mint = (iat: number) =>
      new SignJWT({ workspaceId: 'ws_demo' })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt(iat)
        .setExpirationTime(now + 3600)
        .sign(key);
    const get = async (tok: string) =>
      (await send('/api/v1/embedding-models', { headers: { authorization: `Bearer ${tok}` } })).status;
    expect(await get(await mint(now + 600))).toBe(401);
    expect(await get(await mint(now + 86400))).toBe(401);
    expect(await get(await mint(now + 240))).toBe(200);
    expect(await get(await mint(now - 60))).toBe(200);
  });

  it('a plagiarism check of an exhausted or unknown workspace never calls the upstream', async () => {
    const calls: string[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input) => {
      calls.push(String(input instanceof Request ? input.url : input));
      return new Response(JSON.stringify({ matches: [] }), { headers: { 'content-type': 'application/json' } });
    });
    const httpEnv: Env = {
      ...(env as unknown as Env),
      PLAGIARISM_PROVIDER: 'http',
      PLAGIARISM_HTTP_URL: 'https://upstream.test/v1/check',
      PLAGIARISM_HTTP_API_KEY: 'k',
    };
    const text = Array.from({ length: 20 }, (_, i) => `word${i}`).join(' ');
    const ws = uniqueWorkspaceId('plg');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 1, limitAmountDaily: 10 }]);
    const post = async (w: string) =>
      send(
        `/api/v1/workspaces/${w}/plagiarism-checks`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${await workspaceToken(w)}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text }),
        },
        httpEnv,
      );
    expect((await post(ws)).status).toBe(200);
    expect(calls).toHaveLength(1);
    const exhausted = await post(ws);
    expect(exhausted.status).toBe(403);
    expect(((await exhausted.json()) as { code: string }).code).toBe('ERROR_NO_REMAINING_PLAGIARISM_CHECKS');
    const ghost = await post(uniqueWorkspaceId('ghost'));
    expect(ghost.status).toBe(404);
    expect(calls).toHaveLength(1);
  });

  it('a Content-Length over what is drained is refused with 413 before any byte is read; a smaller one is drained, never buffered past the limit', async () => {
    async function declare(declared: number): Promise<{ res: Response; pulls: number }> {
      let pulls = 0;
      const body = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            pulls++;
            controller.enqueue(new Uint8Array(64 * 1024));
          },
        },
        { highWaterMark: 0 },
      );
      const res = await send(`/api/v1/workspaces/ws_demo/tokenizations`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await workspaceToken('ws_demo')}`,
          'content-type': 'application/json',
          'content-length': String(declared),
          'transfer-encoding': 'chunked',
        },
        body,
        // @ts-expect-error workerd needs duplex for a stream body in some versions
        duplex: 'half',
      });
      return { res, pulls };
    }
    // Beyond DRAIN_BYTES: refused unread (the runtime then closes the connection).
    const far = await declare(DRAIN_BYTES + 1);
    expect(far.res.status).toBe(413);
    expect(((await far.res.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    expect(far.pulls).toBe(0);
    // Within it: read and discarded so the connection stays usable (issue 31 #6), here an endless
    // body, of which no more than DRAIN_BYTES are read.
    const near = await declare(3 * 1024 * 1024);
    expect(near.res.status).toBe(413);
    expect(((await near.res.json()) as { code: string }).code).toBe('PAYLOAD_TOO_LARGE');
    expect(near.pulls).toBeGreaterThan(0);
    expect(near.pulls).toBeLessThanOrEqual(DRAIN_BYTES / (64 * 1024) + 1);
  });
});
