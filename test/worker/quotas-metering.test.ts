/**
 * Metering through the real `charge` (worker/quotas/charge.ts) inside the real app (auth, request
 * id, problem rendering), against real D1. The harness adds one route that charges what its
 * body says, so every outcome of the charge can be driven precisely; routes of the product
 * that charge are tested in quotas-routes.test.ts.
 */
import { env } from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app';
import { charge, type UsageTypeKey } from '../../worker/quotas/charge';
import { ApiError } from '../../core/problem';
import { consume } from '../../worker/quotas/meter-client';
import {
  adminToken,
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

const harness = createApp();
harness.post('/api/v1/workspaces/:workspaceId/harness-metered', async (c) => {
  const body = (await c.req.json()) as { usageTypeKey: UsageTypeKey; amount: number; failAfterCompute?: boolean };
  if (body.failAfterCompute) throw new ApiError('UPSTREAM_FAILED', 'simulated upstream failure before the charge');
  await charge(c, { usageTypeKey: body.usageTypeKey, amount: body.amount });
  return c.json({ ok: true });
});

async function metered(
  workspaceId: string,
  usageTypeKey: UsageTypeKey,
  amount: number,
  opts: { token?: string | null; idempotencyKey?: string; failAfterCompute?: boolean } = {},
): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  const token = opts.token === undefined ? await workspaceToken(workspaceId) : opts.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (opts.idempotencyKey !== undefined) headers['idempotency-key'] = opts.idempotencyKey;
  return harness.fetch(
    new Request(`http://x/api/v1/workspaces/${workspaceId}/harness-metered`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ usageTypeKey, amount, failAfterCompute: opts.failAfterCompute }),
    }),
    env,
  );
}

const statusCounts = (responses: Response[]): Record<number, number> =>
  responses.reduce<Record<number, number>>((acc, r) => ({ ...acc, [r.status]: (acc[r.status] ?? 0) + 1 }), {});

afterEach(resetClock);

describe('concurrency: N parallel charges against a remaining allowance L succeed min(N, L) times', () => {
  beforeAll(() => {
    // Real clock: these tests are about ordering, not dates.
    resetClock();
  });

  it('200 parallel requests against a monthly allowance of 50: 50 succeed, 150 get 403, ledger has 50 rows', async () => {
    const ws = uniqueWorkspaceId('conc');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 50, limitAmountDaily: 1_000_000 }]);
    const token = await workspaceToken(ws);
    const responses = await Promise.all(Array.from({ length: 200 }, () => metered(ws, 'tokens', 1, { token })));
    expect(statusCounts(responses)).toEqual({ 200: 50, 403: 150 });
    for (const r of responses.filter((r) => r.status === 403))
      expect((await problemOf(r)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    const q = await quotaOf(ws, 'tokens');
    expect(q.usedAmount).toBe(50);
    expect(q.usedAmountDaily).toBe(50);
    expect(q.availableAmount).toBe(0);
    const ledger = await readLedger(ws);
    expect(ledger).toHaveLength(50);
    const okIds = responses.filter((r) => r.status === 200).map((r) => r.headers.get('x-request-id'));
    expect(new Set(ledger.map((e) => e.requestId))).toEqual(new Set(okIds));
  });

  it('200 parallel requests against a daily limit of 50 with a large monthly allowance: 50 succeed, 150 get 429', async () => {
    const ws = uniqueWorkspaceId('concd');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'images', limitAmount: 100_000, limitAmountDaily: 50 }]);
    const token = await workspaceToken(ws);
    const responses = await Promise.all(Array.from({ length: 200 }, () => metered(ws, 'images', 1, { token })));
    expect(statusCounts(responses)).toEqual({ 200: 50, 429: 150 });
    const q = await quotaOf(ws, 'images');
    expect(q.usedAmountDaily).toBe(50);
    expect(q.availableAmount).toBe(100_000 - 50);
  });

  it('240 parallel charges of 3 against 50 (limit 20 + bonus 30): floor(50/3) succeed, nothing is over-drawn', async () => {
    const ws = uniqueWorkspaceId('conc3');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 20, limitAmountDaily: 1000 }]);
    const bonus = await call('POST', `/api/admin/v1/workspaces/${ws}/quotas/tokens/bonus`, {
      token: await adminToken(),
      body: { amount: 30 },
    });
    expect(bonus.status).toBe(200);
    const token = await workspaceToken(ws);
    const responses = await Promise.all(Array.from({ length: 240 }, () => metered(ws, 'tokens', 3, { token })));
    const ok = responses.filter((r) => r.status === 200).length;
    expect(ok).toBe(Math.floor(50 / 3));
    const q = await quotaOf(ws, 'tokens');
    expect(q.usedAmount).toBe(ok * 3);
    expect(q.availableAmount).toBe(50 - ok * 3);
  });

  it('200 parallel calls of the repository consume (no HTTP) against 50: exactly 50 charged', async () => {
    const ws = uniqueWorkspaceId('concr');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 50, limitAmountDaily: 50 }]);
    const atMs = Date.now();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 200 }, (_, i) =>
        consume(
          env,
          {
            workspaceId: ws,
            usageTypeKey: 'plagiarismChecks',
            amount: 1,
            requestId: `r${i}`,
            idempotencyKey: null,
            atMs,
          },
          60,
        ),
      ),
    );
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(50);
    const rejected = outcomes.filter((o): o is PromiseRejectedResult => o.status === 'rejected');
    // Monthly and daily are both exhausted: the monthly refusal takes precedence.
    expect(new Set(rejected.map((o) => (o.reason as ApiError).code))).toEqual(
      new Set(['ERROR_NO_REMAINING_PLAGIARISM_CHECKS']),
    );
    expect(await readLedger(ws)).toHaveLength(50);
  });
});

describe('refusals', () => {
  it('monthly plagiarismChecks exhausted: 403 ERROR_NO_REMAINING_PLAGIARISM_CHECKS; other types: ERROR_NO_REMAINING_QUOTA', async () => {
    const ws = uniqueWorkspaceId('mon');
    standOn('2024-05-10T10:00:00.000Z');
    await createWorkspace(ws, 1, [
      { usageTypeKey: 'plagiarismChecks', limitAmount: 2, limitAmountDaily: 10 },
      { usageTypeKey: 'images', limitAmount: 1, limitAmountDaily: 10 },
    ]);
    expect((await metered(ws, 'plagiarismChecks', 1)).status).toBe(200);
    expect((await metered(ws, 'plagiarismChecks', 1)).status).toBe(200);
    const refused = await metered(ws, 'plagiarismChecks', 1);
    expect(refused.status).toBe(403);
    const p = await problemOf(refused);
    expect(p.code).toBe('ERROR_NO_REMAINING_PLAGIARISM_CHECKS');
    expect(refused.headers.get('retry-after')).toBeNull();
    expect((await metered(ws, 'images', 1)).status).toBe(200);
    const img = await metered(ws, 'images', 1);
    expect(img.status).toBe(403);
    expect((await problemOf(img)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    // A type with limits 0 (not given at creation) refuses at once.
    const tok = await metered(ws, 'tokens', 1);
    expect(tok.status).toBe(403);
    expect((await problemOf(tok)).code).toBe('ERROR_NO_REMAINING_QUOTA');
  });

  it('daily limit reached: 429 with Retry-After to midnight UTC although availableAmount is positive; succeeds at 00:00:00.000', async () => {
    const ws = uniqueWorkspaceId('day');
    standOn('2024-02-29T22:00:00.000Z');
    await createWorkspace(ws, 15, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 10 }]);
    expect((await metered(ws, 'tokens', 10)).status).toBe(200);
    const refused = await metered(ws, 'tokens', 1);
    expect(refused.status).toBe(429);
    expect((await problemOf(refused)).code).toBe('DAILY_LIMIT_REACHED');
    expect(refused.headers.get('retry-after')).toBe('7200');
    expect((await quotaOf(ws, 'tokens')).availableAmount).toBe(990);

    standOn('2024-02-29T23:59:59.999Z');
    const last = await metered(ws, 'tokens', 1);
    expect(last.status).toBe(429);
    expect(last.headers.get('retry-after')).toBe('1');

    standOn('2024-03-01T00:00:00.000Z');
    expect((await metered(ws, 'tokens', 10)).status).toBe(200);
    const q = await quotaOf(ws, 'tokens');
    expect(q.usedAmountDaily).toBe(10);
    expect(q.usedAmount).toBe(20); // the cycle (anchor day 15) runs on over the day boundary
    expect(q.availableAmount).toBe(980);
  });

  it('a request larger than what is left is refused whole, and charges nothing', async () => {
    const ws = uniqueWorkspaceId('whole');
    standOn('2024-06-15T12:00:00.000Z');
    await createWorkspace(ws, 15, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 60 }]);
    expect((await metered(ws, 'tokens', 40)).status).toBe(200);
    // 60 left monthly, 20 left today: 30 exceeds the daily rest.
    expect((await metered(ws, 'tokens', 30)).status).toBe(429);
    // 70 exceeds the monthly rest: monthly takes precedence over daily.
    const both = await metered(ws, 'tokens', 70);
    expect(both.status).toBe(403);
    expect((await problemOf(both)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    expect((await metered(ws, 'tokens', 20)).status).toBe(200);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily, q.availableAmount]).toEqual([60, 60, 40]);
    expect((await readLedger(ws)).map((e) => e.amount)).toEqual([40, 20]);
  });

  it('a charge of 0 deducts nothing and writes no ledger row, but is refused on an exhausted quota (decisions.md "Identifiers, bodies and cost")', async () => {
    const ws = uniqueWorkspaceId('zero');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 0, limitAmountDaily: 0 }]);
    expect((await metered(ws, 'tokens', 0)).status).toBe(403);
    expect((await metered(ws, 'tokens', 1)).status).toBe(403);
    const room = uniqueWorkspaceId('zeror');
    await createWorkspace(room, 1, [{ usageTypeKey: 'tokens', limitAmount: 5, limitAmountDaily: 5 }]);
    expect((await metered(room, 'tokens', 0)).status).toBe(200);
    expect((await quotaOf(room, 'tokens')).usedAmount).toBe(0);
    expect(await readLedger(ws)).toEqual([]);
    expect(await readLedger(room)).toEqual([]);
  });

  it('an unknown workspace is 404; a workspace with no quota row for the usage type is refused with 403', async () => {
    const ghost = uniqueWorkspaceId('ghost');
    const res = await metered(ghost, 'plagiarismChecks', 1);
    expect(res.status).toBe(404);
    expect((await problemOf(res)).code).toBe('NOT_FOUND');
    const ws = uniqueWorkspaceId('norow');
    await createWorkspace(ws, 1, []);
    await env.DB.prepare("DELETE FROM quotas WHERE workspace_id = ?1 AND usage_type_key = 'images'").bind(ws).run();
    const r2 = await metered(ws, 'images', 1);
    expect(r2.status).toBe(403);
    expect((await problemOf(r2)).code).toBe('ERROR_NO_REMAINING_QUOTA');
  });
});

describe('a failed request consumes nothing', () => {
  it('auth failures (no token, token of another workspace, expired token) charge nothing', async () => {
    const ws = uniqueWorkspaceId('auth');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    expect((await metered(ws, 'tokens', 5, { token: null })).status).toBe(401);
    expect((await metered(ws, 'tokens', 5, { token: await workspaceToken('someone_else') })).status).toBe(403);
    const { mintToken } = await import('./support/quotas');
    expect((await metered(ws, 'tokens', 5, { token: await mintToken({ workspaceId: ws }, -60) })).status).toBe(401);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([0, 0]);
    expect(await readLedger(ws)).toEqual([]);
  });

  it('a failure of the route before its charge, an invalid Idempotency-Key and refused charges leave every counter unchanged', async () => {
    const ws = uniqueWorkspaceId('fail');
    standOn('2024-07-01T08:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 5 }]);
    expect((await metered(ws, 'tokens', 3, { failAfterCompute: true })).status).toBe(502);
    const badKey = await metered(ws, 'tokens', 3, { idempotencyKey: 'x'.repeat(256) });
    expect(badKey.status).toBe(422);
    expect((await problemOf(badKey)).code).toBe('VALIDATION_FAILED');
    expect((await metered(ws, 'tokens', 6)).status).toBe(429);
    expect((await metered(ws, 'tokens', 11)).status).toBe(403);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily, q.availableAmount]).toEqual([0, 0, 10]);
    expect(await readLedger(ws)).toEqual([]);
  });
});

describe('Idempotency-Key', () => {
  it('a retry with the same key is answered without a second charge and marked Idempotent-Replayed', async () => {
    const ws = uniqueWorkspaceId('idem');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const first = await metered(ws, 'tokens', 7, { idempotencyKey: 'req-1' });
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const retry = await metered(ws, 'tokens', 7, { idempotencyKey: 'req-1' });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await metered(ws, 'tokens', 7, { idempotencyKey: 'req-2' })).status).toBe(200);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(14);
    const ledger = await readLedger(ws);
    expect(ledger.map((e) => [e.idempotencyKey, e.amount])).toEqual([
      ['req-1', 7],
      ['req-2', 7],
    ]);
  });

  it('50 concurrent requests with one key charge once (the others: 409 IDEMPOTENCY_KEY_IN_PROGRESS or a replay)', async () => {
    const ws = uniqueWorkspaceId('idemc');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const token = await workspaceToken(ws);
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => metered(ws, 'tokens', 9, { token, idempotencyKey: 'same' })),
    );
    for (const r of responses) expect([200, 409]).toContain(r.status);
    expect(responses.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(9);
    expect(await readLedger(ws)).toHaveLength(1);
  });

  it('a retry succeeds even after the allowance ran out; the same key with another request is 422 and charges nothing', async () => {
    const ws = uniqueWorkspaceId('idemx');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 5, limitAmountDaily: 5 }]);
    expect((await metered(ws, 'tokens', 5, { idempotencyKey: 'k' })).status).toBe(200);
    expect((await metered(ws, 'tokens', 1)).status).toBe(403);
    expect((await metered(ws, 'tokens', 5, { idempotencyKey: 'k' })).status).toBe(200);
    // Bound to the first request's body (decisions.md "Idempotency").
    const other = await metered(ws, 'tokens', 4, { idempotencyKey: 'k' });
    expect(other.status).toBe(422);
    expect((await problemOf(other)).code).toBe('IDEMPOTENCY_KEY_REUSED');
    const otherType = await metered(ws, 'images', 5, { idempotencyKey: 'k' });
    expect(otherType.status).toBe(422);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(5);
    expect(await readLedger(ws)).toHaveLength(1);
  });

  it('keys are scoped per workspace', async () => {
    const a = uniqueWorkspaceId('ida');
    const b = uniqueWorkspaceId('idb');
    for (const ws of [a, b])
      await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }]);
    expect((await metered(a, 'tokens', 2, { idempotencyKey: 'shared' })).status).toBe(200);
    const rb = await metered(b, 'tokens', 2, { idempotencyKey: 'shared' });
    expect(rb.status).toBe(200);
    expect(rb.headers.get('idempotent-replayed')).toBeNull();
    expect((await quotaOf(a, 'tokens')).usedAmount).toBe(2);
    expect((await quotaOf(b, 'tokens')).usedAmount).toBe(2);
  });
});
