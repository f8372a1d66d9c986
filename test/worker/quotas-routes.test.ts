/**
 * Metering through the product's own metered routes, over HTTP (SELF): tokenizations consume
 * `tokens` (= tokenCount), plagiarism-checks consume one `plagiarismChecks` per successful call.
 */
import { env } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../worker/app';
import type { Env } from '../../worker/env';
import {
  call,
  createWorkspace,
  problemOf,
  quotaOf,
  readLedger,
  resetClock,
  standOn,
  uniqueWorkspaceId,
  workspaceToken,
} from './support/quotas';

afterEach(() => {
  resetClock();
  vi.restoreAllMocks();
});

beforeAll(async () => {
  const res = await env.FIXTURES.fetch('http://f/lang/en.bin');
  if (res.status !== 200) throw new Error('build/generated/lang/en.bin is missing: run the tokenizer build');
  await env.ARTIFACTS.put('lang/en.bin', await res.arrayBuffer());
});

const tokenize = async (ws: string, body: unknown, token?: string | null, headers: Record<string, string> = {}) =>
  call('POST', `/api/v1/workspaces/${ws}/tokenizations`, {
    token: token === null ? undefined : (token ?? (await workspaceToken(ws))),
    body,
    headers,
  });

const plagiarismText = (n: number): string => {
  const tag = crypto.randomUUID().replace(/-/g, '').slice(0, 10);
  return Array.from({ length: n }, (_, i) => `q${tag}${i.toString(36)}`).join(' ');
};

const checkPlagiarism = async (ws: string, text: string) =>
  call('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { token: await workspaceToken(ws), body: { text } });

describe('tokenizations consume tokens = tokenCount', () => {
  it('charges the token count of each call; the ledger has one row per call', async () => {
    const ws = uniqueWorkspaceId('tok');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    const counts: number[] = [];
    for (const text of ['The children play.', 'Geese ran across the river yesterday', 'hello']) {
      const res = await tokenize(ws, { language: 'en', text });
      expect(res.status).toBe(200);
      counts.push(((await res.json()) as { tokenCount: number }).tokenCount);
    }
    expect(counts.every((n) => n > 0)).toBe(true);
    const q = await quotaOf(ws, 'tokens');
    expect(q.usedAmount).toBe(counts.reduce((a, b) => a + b, 0));
    expect((await readLedger(ws)).map((e) => e.amount)).toEqual(counts);
  });

  it('200 parallel calls against an allowance of 50 calls: exactly 50 succeed', async () => {
    const probe = uniqueWorkspaceId('tokprobe');
    await createWorkspace(probe, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const body = { language: 'en', text: 'hello' };
    const perCall = ((await (await tokenize(probe, body)).json()) as { tokenCount: number }).tokenCount;
    expect(perCall).toBeGreaterThan(0);

    const ws = uniqueWorkspaceId('tokconc');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 50 * perCall, limitAmountDaily: 1_000_000 }]);
    const token = await workspaceToken(ws);
    const responses = await Promise.all(Array.from({ length: 200 }, () => tokenize(ws, body, token)));
    const byStatus = responses.reduce<Record<number, number>>(
      (a, r) => ({ ...a, [r.status]: (a[r.status] ?? 0) + 1 }),
      {},
    );
    expect(byStatus).toEqual({ 200: 50, 403: 150 });
    const codes = new Set(
      await Promise.all(responses.filter((r) => r.status === 403).map(async (r) => (await problemOf(r)).code)),
    );
    expect(codes).toEqual(new Set(['ERROR_NO_REMAINING_QUOTA']));
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.availableAmount]).toEqual([50 * perCall, 0]);
    expect(await readLedger(ws)).toHaveLength(50);
  });

  it('validation errors, auth errors and unsupported languages consume nothing', async () => {
    const ws = uniqueWorkspaceId('toknone');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    expect((await tokenize(ws, { text: 'no language' })).status).toBe(422);
    expect((await tokenize(ws, { language: 'en', text: 42 })).status).toBe(422);
    expect((await tokenize(ws, '{broken')).status).toBe(422);
    expect((await tokenize(ws, { language: 'xx', text: 'unknown language' })).status).toBe(422);
    expect((await tokenize(ws, { language: 'en', text: 'no token' }, null)).status).toBe(401);
    expect(
      (await tokenize(ws, { language: 'en', text: 'other workspace' }, await workspaceToken('ws_else'))).status,
    ).toBe(403);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([0, 0]);
    expect(await readLedger(ws)).toEqual([]);
  });

  it('a retry with the same Idempotency-Key is not charged twice', async () => {
    const ws = uniqueWorkspaceId('tokidem');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    const body = { language: 'en', text: 'The quick brown fox jumps' };
    const first = await tokenize(ws, body, undefined, { 'idempotency-key': 'tok-42' });
    const second = await tokenize(ws, body, undefined, { 'idempotency-key': 'tok-42' });
    expect([first.status, second.status]).toEqual([200, 200]);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const n = ((await first.json()) as { tokenCount: number }).tokenCount;
    expect(((await second.json()) as { tokenCount: number }).tokenCount).toBe(n);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(n);
  });

  it('daily limit: 429 with Retry-After although the monthly allowance is left', async () => {
    const ws = uniqueWorkspaceId('tokday');
    standOn('2024-09-09T18:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 3 }]);
    const res = await tokenize(ws, { language: 'en', text: 'one two three four five' });
    expect(res.status).toBe(429);
    expect((await problemOf(res)).code).toBe('DAILY_LIMIT_REACHED');
    expect(res.headers.get('retry-after')).toBe(String(6 * 3600));
    expect((await quotaOf(ws, 'tokens')).availableAmount).toBe(1000);
  });
});

describe('plagiarism-checks consume one plagiarismChecks per successful call', () => {
  it('allowance of 2: two checks succeed, the third is 403 ERROR_NO_REMAINING_PLAGIARISM_CHECKS; short texts are free', async () => {
    const ws = uniqueWorkspaceId('plag');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 2, limitAmountDaily: 10 }]);
    const short = await checkPlagiarism(ws, plagiarismText(14));
    expect(short.status).toBe(422);
    expect((await problemOf(short)).code).toBe('PLAGIARISM_TEXT_TOO_SHORT');
    expect((await checkPlagiarism(ws, plagiarismText(20))).status).toBe(200);
    expect((await checkPlagiarism(ws, plagiarismText(20))).status).toBe(200);
    const refused = await checkPlagiarism(ws, plagiarismText(20));
    expect(refused.status).toBe(403);
    expect((await problemOf(refused)).code).toBe('ERROR_NO_REMAINING_PLAGIARISM_CHECKS');
    const q = await quotaOf(ws, 'plagiarismChecks');
    expect([q.usedAmount, q.availableAmount]).toEqual([2, 0]);
    expect((await readLedger(ws)).map((e) => [e.usageTypeKey, e.amount])).toEqual([
      ['plagiarismChecks', 1],
      ['plagiarismChecks', 1],
    ]);
  });

  it('daily limit reached: 429 even with allowance left', async () => {
    const ws = uniqueWorkspaceId('plagday');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 100, limitAmountDaily: 1 }]);
    expect((await checkPlagiarism(ws, plagiarismText(16))).status).toBe(200);
    const refused = await checkPlagiarism(ws, plagiarismText(16));
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await quotaOf(ws, 'plagiarismChecks')).availableAmount).toBe(99);
  });

  it('an upstream failure consumes nothing', async () => {
    const ws = uniqueWorkspaceId('plagup');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 5, limitAmountDaily: 5 }]);
    // The http provider against a fake EXTERNAL upstream that answers 500.
    const failingEnv = {
      ...(env as unknown as Env),
      PLAGIARISM_PROVIDER: 'http',
      PLAGIARISM_HTTP_URL: 'https://upstream.test/v1/check',
      PLAGIARISM_HTTP_TIMEOUT_MS: '2000',
      PLAGIARISM_HTTP_RETRIES: '0',
    };
    const upstreamCalls: string[] = [];
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const req = new Request(input as RequestInfo, init as RequestInit);
      if (new URL(req.url).hostname !== 'upstream.test')
        throw new TypeError(`unexpected outbound request to ${req.url}`);
      upstreamCalls.push(req.url);
      return new Response('boom', { status: 500 });
    });
    const res = await createApp().request(
      `/api/v1/workspaces/${ws}/plagiarism-checks`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${await workspaceToken(ws)}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text: plagiarismText(20) }),
      },
      failingEnv,
    );
    vi.restoreAllMocks();
    expect(upstreamCalls).toHaveLength(1);
    expect(res.status).toBe(502);
    expect((await problemOf(res)).code).toBe('UPSTREAM_FAILED');
    const q = await quotaOf(ws, 'plagiarismChecks');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([0, 0]);
    expect(await readLedger(ws)).toEqual([]);
  });
});
