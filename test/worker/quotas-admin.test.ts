/** Admin workspace routes: scope enforcement, validation, changes and their audit trail, the ledger. */
import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { consume } from '../../worker/quotas/meter-client';
import {
  flushLedger,
  adminToken,
  call,
  createWorkspace,
  mintToken,
  problemOf,
  quotaOf,
  readAudit,
  resetClock,
  standOn,
  uniqueWorkspaceId,
  workspaceToken,
  type LedgerJson,
  type PageJson,
} from './support/quotas';

afterEach(resetClock);

describe('admin scope', () => {
  it('every admin route refuses a token without scope admin (403) and a missing token (401), and changes nothing', async () => {
    const ws = uniqueWorkspaceId('scope');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }]);
    const newWs = uniqueWorkspaceId('never');
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/api/admin/v1/workspaces', { id: newWs, quotas: [] }],
      ['GET', `/api/admin/v1/workspaces/${ws}`],
      ['PATCH', `/api/admin/v1/workspaces/${ws}`, { anchorDay: 5 }],
      ['PUT', `/api/admin/v1/workspaces/${ws}/quotas/tokens`, { limitAmount: 999, limitAmountDaily: 999 }],
      ['POST', `/api/admin/v1/workspaces/${ws}/quotas/tokens/bonus`, { amount: 999 }],
      ['GET', `/api/admin/v1/workspaces/${ws}/usage-ledger`],
      ['GET', `/api/admin/v1/workspaces/${ws}/audit-log`],
    ];
    const tokens = [
      await workspaceToken(ws), // the workspace's own token
      await mintToken({ workspaceId: ws, scope: 'read write' }),
      await mintToken({ workspaceId: ws, scope: 'administrator' }),
    ];
    for (const [method, path, body] of routes) {
      const none = await call(method, path, { body });
      expect(none.status, `${method} ${path}`).toBe(401);
      for (const token of tokens) {
        const res = await call(method, path, { token, body });
        expect(res.status, `${method} ${path}`).toBe(403);
        expect((await problemOf(res)).code).toBe('ADMIN_SCOPE_REQUIRED');
      }
    }
    const q = await quotaOf(ws, 'tokens');
    expect([q.limitAmount, q.limitAmountDaily, q.bonusAmount]).toEqual([10, 10, 0]);
    const created = await call('GET', `/api/admin/v1/workspaces/${newWs}`, { token: await adminToken() });
    expect(created.status).toBe(404);
    expect((await readAudit(ws)).map((e) => e.action)).toEqual(['workspace.created']);
  });

  it('accepts scope as a space-separated list or an array', async () => {
    const ws = uniqueWorkspaceId('scopes');
    await createWorkspace(ws, 1, []);
    for (const scope of ['read admin', ['admin']]) {
      const res = await call('GET', `/api/admin/v1/workspaces/${ws}`, { token: await mintToken({ scope }) });
      expect(res.status).toBe(200);
    }
  });
});

describe('create workspace', () => {
  it('creates every quota row (missing types at 0), starts the cycle on the anchor date, and audits', async () => {
    const ws = uniqueWorkspaceId('create');
    standOn('2024-02-10T08:00:00.000Z');
    const res = await call('POST', '/api/admin/v1/workspaces', {
      token: await adminToken(),
      body: {
        id: ws,
        name: 'Acme',
        anchorDay: 31,
        quotas: [{ usageTypeKey: 'tokens', limitAmount: 5000, limitAmountDaily: 500 }],
      },
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as {
      id: string;
      name: string;
      anchorDay: number;
      cycleStart: string;
      nextCycleStart: string;
      createdAt: string;
      quotas: Array<{ usageTypeKey: string; limitAmount: number; limitAmountDaily: number; availableAmount: number }>;
    };
    expect(body).toMatchObject({
      id: ws,
      name: 'Acme',
      anchorDay: 31,
      cycleStart: '2024-01-31',
      nextCycleStart: '2024-02-29',
    });
    expect(body.createdAt).toBe('2024-02-10T08:00:00.000Z');
    expect(body.quotas.map((q) => [q.usageTypeKey, q.limitAmount, q.limitAmountDaily, q.availableAmount])).toEqual([
      ['images', 0, 0, 0],
      ['plagiarismChecks', 0, 0, 0],
      ['tokens', 5000, 500, 5000],
    ]);
    const audit = await readAudit(ws);
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({
      action: 'workspace.created',
      actor: 'test-admin',
      createdAt: '2024-02-10T08:00:00.000Z',
    });
    expect(audit[0].details).toMatchObject({ name: 'Acme', anchorDay: 31 });
  });

  it('defaults: name = id, anchor day 1', async () => {
    const ws = uniqueWorkspaceId('defaults');
    standOn('2024-05-17T00:00:00.000Z');
    const res = await call('POST', '/api/admin/v1/workspaces', { token: await adminToken(), body: { id: ws } });
    expect(res.status).toBe(201);
    expect(await res.json()).toMatchObject({
      name: ws,
      anchorDay: 1,
      cycleStart: '2024-05-01',
      nextCycleStart: '2024-06-01',
    });
  });

  it('409 for an existing id; 422 for invalid bodies, with nothing written', async () => {
    const ws = uniqueWorkspaceId('dup');
    await createWorkspace(ws, 1, []);
    const token = await adminToken();
    const dup = await call('POST', '/api/admin/v1/workspaces', { token, body: { id: ws } });
    expect(dup.status).toBe(409);
    expect((await problemOf(dup)).code).toBe('CONFLICT');
    const bad = uniqueWorkspaceId('bad');
    const bodies: unknown[] = [
      { id: bad, anchorDay: 0 },
      { id: bad, anchorDay: 32 },
      { id: bad, anchorDay: 1.5 },
      { id: 'has space' },
      { id: '' },
      { id: bad, quotas: [{ usageTypeKey: 'tokens', limitAmount: -1, limitAmountDaily: 1 }] },
      { id: bad, quotas: [{ usageTypeKey: 'tokens', limitAmount: 1.5, limitAmountDaily: 1 }] },
      { id: bad, quotas: [{ usageTypeKey: 'videos', limitAmount: 1, limitAmountDaily: 1 }] },
      {
        id: bad,
        quotas: [
          { usageTypeKey: 'tokens', limitAmount: 1, limitAmountDaily: 1 },
          { usageTypeKey: 'tokens', limitAmount: 2, limitAmountDaily: 2 },
        ],
      },
      '{not json',
      { id: bad, name: 'lone \ud800 surrogate' },
    ];
    for (const body of bodies) {
      const res = await call('POST', '/api/admin/v1/workspaces', { token, body });
      expect(res.status, JSON.stringify(body)).toBe(422);
      expect((await problemOf(res)).code).toBe('VALIDATION_FAILED');
    }
    expect((await call('GET', `/api/admin/v1/workspaces/${bad}`, { token })).status).toBe(404);
  });
});

describe('changes', () => {
  it('limits, bonus and anchor day: effective at once and recorded with before/after, actor and request id', async () => {
    const ws = uniqueWorkspaceId('chg');
    standOn('2024-03-03T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'images', limitAmount: 10, limitAmountDaily: 5 }]);
    const token = await adminToken();
    standOn('2024-03-04T00:00:00.000Z');
    const put = await call('PUT', `/api/admin/v1/workspaces/${ws}/quotas/images`, {
      token,
      body: { limitAmount: 20, limitAmountDaily: 8 },
      headers: { 'x-request-id': 'req-put-1' },
    });
    expect(put.status).toBe(200);
    // The service's own request id is recorded; the client's is only echoed (decisions.md "Idempotency").
    expect(put.headers.get('x-client-request-id')).toBe('req-put-1');
    const putRequestId = put.headers.get('x-request-id');
    expect(await put.json()).toMatchObject({
      usageTypeKey: 'images',
      limitAmount: 20,
      limitAmountDaily: 8,
      availableAmount: 20,
    });
    standOn('2024-03-05T00:00:00.000Z');
    const bonus = await call('POST', `/api/admin/v1/workspaces/${ws}/quotas/images/bonus`, {
      token,
      body: { amount: 7, reason: 'goodwill' },
    });
    expect(bonus.status).toBe(200);
    expect(await bonus.json()).toMatchObject({ bonusAmount: 7, availableAmount: 27 });
    expect(
      (await call('POST', `/api/admin/v1/workspaces/${ws}/quotas/images/bonus`, { token, body: { amount: 3 } })).status,
    ).toBe(200);
    expect((await quotaOf(ws, 'images')).bonusAmount).toBe(10);
    standOn('2024-03-06T00:00:00.000Z');
    const patch = await call('PATCH', `/api/admin/v1/workspaces/${ws}`, {
      token,
      body: { anchorDay: 20, name: 'Renamed' },
    });
    expect(patch.status).toBe(200);
    expect(await patch.json()).toMatchObject({
      name: 'Renamed',
      anchorDay: 20,
      cycleStart: '2024-03-01',
      nextCycleStart: '2024-03-20',
    });

    const audit = await readAudit(ws);
    expect(audit.map((e) => [e.action, e.usageTypeKey, e.createdAt])).toEqual([
      ['workspace.created', null, '2024-03-03T00:00:00.000Z'],
      ['quota.limits_set', 'images', '2024-03-04T00:00:00.000Z'],
      ['quota.bonus_added', 'images', '2024-03-05T00:00:00.000Z'],
      ['quota.bonus_added', 'images', '2024-03-05T00:00:00.000Z'],
      ['workspace.updated', null, '2024-03-06T00:00:00.000Z'],
    ]);
    expect(audit[1].details).toEqual({
      before: { limitAmount: 10, limitAmountDaily: 5 },
      after: { limitAmount: 20, limitAmountDaily: 8 },
    });
    expect(audit[1].requestId).toBe(putRequestId);
    expect(audit[2].details).toEqual({ amount: 7, reason: 'goodwill' });
    expect(audit[3].details).toEqual({ amount: 3, reason: null });
    expect(audit[4].details).toEqual({ name: { before: ws, after: 'Renamed' }, anchorDay: { before: 1, after: 20 } });
    expect(audit.every((e) => e.actor === 'test-admin')).toBe(true);

    // The audit log pages.
    const page2 = await call('GET', `/api/admin/v1/workspaces/${ws}/audit-log?size=2&page=2&order=desc`, { token });
    const p2 = (await page2.json()) as { data: Array<{ action: string }>; page: PageJson };
    expect(p2.page).toEqual({ size: 2, totalElements: 5, totalPages: 3, currentPage: 2 });
    expect(p2.data.map((e) => e.action)).toEqual(['quota.bonus_added', 'quota.limits_set']);
  });

  it('404 for unknown workspaces and usage types; 422 for invalid bodies', async () => {
    const ws = uniqueWorkspaceId('c404');
    await createWorkspace(ws, 1, []);
    const token = await adminToken();
    const ghost = uniqueWorkspaceId('ghost');
    const cases: Array<[string, string, unknown, number]> = [
      ['PUT', `/api/admin/v1/workspaces/${ghost}/quotas/tokens`, { limitAmount: 1, limitAmountDaily: 1 }, 404],
      ['PUT', `/api/admin/v1/workspaces/${ws}/quotas/videos`, { limitAmount: 1, limitAmountDaily: 1 }, 404],
      ['POST', `/api/admin/v1/workspaces/${ghost}/quotas/tokens/bonus`, { amount: 1 }, 404],
      ['POST', `/api/admin/v1/workspaces/${ws}/quotas/videos/bonus`, { amount: 1 }, 404],
      ['PATCH', `/api/admin/v1/workspaces/${ghost}`, { anchorDay: 2 }, 404],
      ['GET', `/api/admin/v1/workspaces/${ghost}/usage-ledger`, undefined, 404],
      ['GET', `/api/admin/v1/workspaces/${ghost}/audit-log`, undefined, 404],
      ['PUT', `/api/admin/v1/workspaces/${ws}/quotas/tokens`, { limitAmount: -5, limitAmountDaily: 1 }, 422],
      ['PUT', `/api/admin/v1/workspaces/${ws}/quotas/tokens`, { limitAmount: 5 }, 422],
      ['POST', `/api/admin/v1/workspaces/${ws}/quotas/tokens/bonus`, { amount: 0 }, 422],
      ['POST', `/api/admin/v1/workspaces/${ws}/quotas/tokens/bonus`, { amount: -3 }, 422],
      ['PATCH', `/api/admin/v1/workspaces/${ws}`, {}, 422],
      ['PATCH', `/api/admin/v1/workspaces/${ws}`, { anchorDay: 40 }, 422],
      ['PATCH', `/api/admin/v1/workspaces/${ws}`, { name: 'lone \udc00' }, 422],
      ['GET', `/api/admin/v1/workspaces/${ws}/usage-ledger?size=500`, undefined, 422],
    ];
    for (const [method, path, body, status] of cases) {
      const res = await call(method, path, { token, body });
      expect(res.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
    }
    expect((await readAudit(ws)).map((e) => e.action)).toEqual(['workspace.created']);
  });

  it('PUT limits creates a missing quota row', async () => {
    const ws = uniqueWorkspaceId('mk');
    await createWorkspace(ws, 1, []);
    await env.DB.prepare("DELETE FROM quotas WHERE workspace_id = ?1 AND usage_type_key = 'images'").bind(ws).run();
    const res = await call('PUT', `/api/admin/v1/workspaces/${ws}/quotas/images`, {
      token: await adminToken(),
      body: { limitAmount: 3, limitAmountDaily: 2 },
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      usageTypeKey: 'images',
      limitAmount: 3,
      limitAmountDaily: 2,
      usedAmount: 0,
      availableAmount: 3,
    });
    const audit = await readAudit(ws);
    expect(audit.at(-1)?.details).toEqual({ before: null, after: { limitAmount: 3, limitAmountDaily: 2 } });
  });
});

describe('usage ledger', () => {
  it('records what was consumed, by which request, when and in which cycle; filters, orders and pages', async () => {
    const ws = uniqueWorkspaceId('ledger');
    standOn('2024-01-01T00:00:00.000Z');
    await createWorkspace(ws, 1, [
      { usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 },
      { usageTypeKey: 'plagiarismChecks', limitAmount: 10, limitAmountDaily: 10 },
    ]);
    const charges: Array<[string, 'tokens' | 'plagiarismChecks', number, string | null]> = [
      ['2024-01-02T10:00:00.000Z', 'tokens', 12, null],
      ['2024-01-31T23:59:59.999Z', 'plagiarismChecks', 1, 'key-a'],
      ['2024-02-01T00:00:00.000Z', 'tokens', 30, 'key-b'],
    ];
    for (const [iso, type, amount, key] of charges) {
      await consume(
        env,
        {
          workspaceId: ws,
          usageTypeKey: type,
          amount,
          requestId: `rq-${amount}`,
          idempotencyKey: key,
          atMs: standOn(iso),
        },
        1,
      );
    }
    // The ledger lags the meter by one flush (about a second; docs/quotas.md): flush it now.
    expect(await flushLedger(ws)).toBe(3);
    const token = await adminToken();
    const res = await call('GET', `/api/admin/v1/workspaces/${ws}/usage-ledger`, { token });
    const all = (await res.json()) as { data: LedgerJson[]; page: PageJson };
    expect(all.page).toEqual({ size: 20, totalElements: 3, totalPages: 1, currentPage: 1 });
    expect(
      all.data.map((e) => [
        e.createdAt,
        e.usageTypeKey,
        e.amount,
        e.requestId,
        e.idempotencyKey,
        e.cycleStart,
        e.workspaceId,
      ]),
    ).toEqual([
      ['2024-01-02T10:00:00.000Z', 'tokens', 12, 'rq-12', null, '2024-01-01', ws],
      ['2024-01-31T23:59:59.999Z', 'plagiarismChecks', 1, 'rq-1', 'key-a', '2024-01-01', ws],
      ['2024-02-01T00:00:00.000Z', 'tokens', 30, 'rq-30', 'key-b', '2024-02-01', ws],
    ]);
    const tokensDesc = (await (
      await call('GET', `/api/admin/v1/workspaces/${ws}/usage-ledger?usageTypeKey=tokens&order=desc`, { token })
    ).json()) as {
      data: LedgerJson[];
      page: PageJson;
    };
    expect(tokensDesc.data.map((e) => e.amount)).toEqual([30, 12]);
    expect(tokensDesc.page.totalElements).toBe(2);
    const p2 = (await (
      await call('GET', `/api/admin/v1/workspaces/${ws}/usage-ledger?size=2&page=2`, { token })
    ).json()) as { data: LedgerJson[]; page: PageJson };
    expect(p2.data.map((e) => e.amount)).toEqual([30]);
    expect(p2.page).toEqual({ size: 2, totalElements: 3, totalPages: 2, currentPage: 2 });
  });
});
