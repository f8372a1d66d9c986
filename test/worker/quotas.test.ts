/** GET /api/usage-service/v1/workspaces/{workspaceId}/quotas and GET /api/usage-service/v1/usage-types. */
import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { consume } from '../../worker/quotas/meter-client';
import type { UsageTypeKey } from '../../worker/quotas/charge';
import {
  addBonus,
  adminToken,
  call,
  createWorkspace,
  listQuotas,
  problemOf,
  resetClock,
  standOn,
  uniqueWorkspaceId,
  workspaceToken,
  type PageJson,
  type QuotaJson,
} from './support/quotas';

afterEach(resetClock);

interface UsageTypeJson {
  id: string;
  key: string;
  displayName: string;
  fairUsePolicyLimit: number | null;
  permissionKeyDailyLimit: string;
  permissionKeyMonthlyLimit: string;
}

async function usageTypes(query = ''): Promise<{ data: UsageTypeJson[]; page: PageJson }> {
  const res = await call('GET', `/api/usage-service/v1/usage-types${query}`, { token: await workspaceToken('anyone') });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

async function use(workspaceId: string, usageTypeKey: UsageTypeKey, amount: number, atMs: number): Promise<void> {
  await consume(
    env,
    { workspaceId, usageTypeKey, amount, requestId: crypto.randomUUID(), idempotencyKey: null, atMs },
    1,
  );
}

describe('usage types', () => {
  it('lists the three seeded usage types with display names, permission keys and fair-use limits', async () => {
    const { data, page } = await usageTypes();
    expect(page).toEqual({ size: 20, totalElements: 3, totalPages: 1, currentPage: 1 });
    expect(data.map((t) => t.key)).toEqual(['images', 'plagiarismChecks', 'tokens']);
    for (const t of data) {
      expect(typeof t.id).toBe('string');
      expect(t.displayName.length).toBeGreaterThan(0);
      expect(t.permissionKeyDailyLimit).toBe(`usage.${t.key}.dailyLimit`);
      expect(t.permissionKeyMonthlyLimit).toBe(`usage.${t.key}.monthlyLimit`);
    }
    const byKey = Object.fromEntries(data.map((t) => [t.key, t]));
    expect(byKey.tokens.fairUsePolicyLimit).toBeTypeOf('number');
    expect(byKey.plagiarismChecks.fairUsePolicyLimit).toBeNull();
  });

  it('paginates and sorts', async () => {
    const p1 = await usageTypes('?size=2');
    const p2 = await usageTypes('?size=2&page=2');
    const p3 = await usageTypes('?size=2&page=3');
    expect(p1.page).toEqual({ size: 2, totalElements: 3, totalPages: 2, currentPage: 1 });
    expect(p2.page).toEqual({ size: 2, totalElements: 3, totalPages: 2, currentPage: 2 });
    expect(p3.page).toEqual({ size: 2, totalElements: 3, totalPages: 2, currentPage: 3 });
    expect([...p1.data, ...p2.data].map((t) => t.key)).toEqual(['images', 'plagiarismChecks', 'tokens']);
    expect(p3.data).toEqual([]);
    const desc = await usageTypes('?sort=displayName&order=desc');
    const names = desc.data.map((t) => t.displayName);
    expect(names).toEqual([...names].sort().reverse());
  });

  it('needs a token but no workspace; rejects bad paging', async () => {
    expect((await call('GET', '/api/usage-service/v1/usage-types')).status).toBe(401);
    const token = await workspaceToken('whoever');
    for (const q of ['?page=0', '?size=0', '?size=201', '?size=1.5', '?page=x', '?sort=id', '?order=up']) {
      const res = await call('GET', `/api/usage-service/v1/usage-types${q}`, { token });
      expect(res.status, q).toBe(422);
      expect((await problemOf(res)).code).toBe('VALIDATION_FAILED');
    }
    expect((await call('GET', '/api/usage-service/v1/usage-types?size=200', { token })).status).toBe(200);
  });
});

describe('quotas listing', () => {
  it('computes every field truthfully', async () => {
    const types = Object.fromEntries((await usageTypes()).data.map((t) => [t.key, t]));
    const fairTokens = types.tokens.fairUsePolicyLimit as number;
    const ws = uniqueWorkspaceId('fields');
    const created = standOn('2024-08-10T09:00:00.000Z');
    await createWorkspace(ws, 10, [
      { usageTypeKey: 'tokens', limitAmount: fairTokens + 1000, limitAmountDaily: fairTokens + 1000 },
      { usageTypeKey: 'images', limitAmount: 40, limitAmountDaily: 30 },
      { usageTypeKey: 'plagiarismChecks', limitAmount: 10, limitAmountDaily: 3 },
    ]);
    const initial = await listQuotas(ws);
    const ids = Object.fromEntries(initial.data.map((q) => [q.usageTypeKey, q.id]));
    expect(new Set(Object.values(ids)).size).toBe(3);

    // Cycle of Aug 10: images used 30 of 40 (spillover 10 at the change).
    await use(ws, 'images', 30, created);
    // Sep 12 (cycle from Sep 10): tokens just below the fair-use limit, images with bonus, plagiarism daily use.
    const t = standOn('2024-09-12T15:30:00.000Z');
    await use(ws, 'tokens', fairTokens - 1, t - 86_400_000); // yesterday
    await use(ws, 'images', 12, t - 3_600_000); // today
    await use(ws, 'images', 5, t);
    expect((await addBonus(ws, 'images', 8)).status).toBe(200);
    await use(ws, 'plagiarismChecks', 3, t);

    const { data, page } = await listQuotas(ws);
    expect(page).toEqual({ size: 20, totalElements: 3, totalPages: 1, currentPage: 1 });
    const by = Object.fromEntries(data.map((q) => [q.usageTypeKey, q])) as Record<string, QuotaJson>;
    const base = (key: string) => ({ id: ids[key], workspaceId: ws, usageTypeKey: key, dailyRefreshed: '2024-09-12' });
    expect(by.tokens).toEqual({
      ...base('tokens'),
      limitAmount: fairTokens + 1000,
      limitAmountDaily: fairTokens + 1000,
      usedAmount: fairTokens - 1,
      usedAmountDaily: 0,
      bonusAmount: 0,
      // The Aug cycle left the whole limit unused; capped at limitAmount.
      spilloverAmount: fairTokens + 1000,
      availableAmount: fairTokens + 1000 + (fairTokens + 1000) - (fairTokens - 1),
      fairUseLimitReached: false,
    });
    expect(by.images).toEqual({
      ...base('images'),
      limitAmount: 40,
      limitAmountDaily: 30,
      usedAmount: 17,
      usedAmountDaily: 17,
      bonusAmount: 8,
      spilloverAmount: 40 - 30,
      availableAmount: 40 + 8 + 10 - 17,
      fairUseLimitReached: false,
    });
    expect(by.plagiarismChecks).toEqual({
      ...base('plagiarismChecks'),
      limitAmount: 10,
      limitAmountDaily: 3,
      usedAmount: 3,
      usedAmountDaily: 3,
      bonusAmount: 0,
      spilloverAmount: 10,
      availableAmount: 10 + 10 - 3,
      fairUseLimitReached: false, // no fair-use limit for this type
    });

    // One more token reaches the fair-use limit.
    await use(ws, 'tokens', 1, t);
    const tokens = (await listQuotas(ws, '?usageTypeKey=tokens')).data[0];
    expect(tokens.usedAmount).toBe(fairTokens);
    expect(tokens.fairUseLimitReached).toBe(true);
  });

  it('availableAmount never goes below 0', async () => {
    const ws = uniqueWorkspaceId('neg');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }]);
    await use(ws, 'tokens', 10, Date.now());
    const res = await call('PUT', `/api/admin/v1/workspaces/${ws}/quotas/tokens`, {
      token: await adminToken(),
      body: { limitAmount: 4, limitAmountDaily: 10 },
    });
    expect(res.status).toBe(200);
    const q = (await listQuotas(ws, '?usageTypeKey=tokens')).data[0];
    expect([q.usedAmount, q.limitAmount, q.availableAmount]).toEqual([10, 4, 0]);
  });

  it('filters by usageTypeKey (an unknown key matches nothing)', async () => {
    const ws = uniqueWorkspaceId('filter');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'images', limitAmount: 5, limitAmountDaily: 5 }]);
    const images = await listQuotas(ws, '?usageTypeKey=images');
    expect(images.data.map((q) => [q.usageTypeKey, q.limitAmount])).toEqual([['images', 5]]);
    expect(images.page).toEqual({ size: 20, totalElements: 1, totalPages: 1, currentPage: 1 });
    const none = await listQuotas(ws, '?usageTypeKey=videos');
    expect(none).toEqual({ data: [], page: { size: 20, totalElements: 0, totalPages: 0, currentPage: 1 } });
  });

  it('paginates: size echoed, pages beyond the last are empty with a correct page object', async () => {
    const ws = uniqueWorkspaceId('pages');
    await createWorkspace(ws, 1, []);
    const all = (await listQuotas(ws)).data.map((q) => q.usageTypeKey);
    expect(all).toEqual(['images', 'plagiarismChecks', 'tokens']);
    const pages = await Promise.all([1, 2, 3, 4].map((p) => listQuotas(ws, `?size=1&page=${p}`)));
    expect(pages.map((p) => p.data.map((q) => q.usageTypeKey))).toEqual([
      ['images'],
      ['plagiarismChecks'],
      ['tokens'],
      [],
    ]);
    pages.forEach((p, i) => expect(p.page).toEqual({ size: 1, totalElements: 3, totalPages: 3, currentPage: i + 1 }));
    const big = await listQuotas(ws, '?size=200&page=1');
    expect(big.page).toEqual({ size: 200, totalElements: 3, totalPages: 1, currentPage: 1 });
  });

  it('sorts by every allowed field in both directions, ties by usageTypeKey', async () => {
    const ws = uniqueWorkspaceId('sort');
    const at = standOn('2024-10-02T00:00:00.000Z');
    await createWorkspace(ws, 1, [
      { usageTypeKey: 'tokens', limitAmount: 300, limitAmountDaily: 50 },
      { usageTypeKey: 'images', limitAmount: 100, limitAmountDaily: 70 },
      { usageTypeKey: 'plagiarismChecks', limitAmount: 200, limitAmountDaily: 70 },
    ]);
    await use(ws, 'tokens', 40, at);
    await use(ws, 'images', 60, at);
    await use(ws, 'plagiarismChecks', 5, at);
    expect((await addBonus(ws, 'images', 500)).status).toBe(200);
    const all = (await listQuotas(ws)).data;
    const fields = [
      'usageTypeKey',
      'limitAmount',
      'limitAmountDaily',
      'usedAmount',
      'usedAmountDaily',
      'availableAmount',
      'bonusAmount',
      'spilloverAmount',
    ] as const;
    for (const field of fields) {
      for (const order of ['asc', 'desc'] as const) {
        const got = (await listQuotas(ws, `?sort=${field}&order=${order}`)).data.map((q) => q.usageTypeKey);
        const expected = [...all]
          .sort((a, b) => {
            const va = a[field];
            const vb = b[field];
            const c = typeof va === 'number' && typeof vb === 'number' ? va - vb : String(va).localeCompare(String(vb));
            return (order === 'desc' ? -c : c) || a.usageTypeKey.localeCompare(b.usageTypeKey);
          })
          .map((q) => q.usageTypeKey);
        expect(got, `${field} ${order}`).toEqual(expected);
      }
    }
    // Sort + pagination: the top quota by availableAmount alone on page 1.
    const top = await listQuotas(ws, '?sort=availableAmount&order=desc&size=1');
    expect(top.data[0].usageTypeKey).toBe('images');
  });

  it('rejects invalid query parameters with 422', async () => {
    const ws = uniqueWorkspaceId('q422');
    await createWorkspace(ws, 1, []);
    const token = await workspaceToken(ws);
    for (const q of [
      '?page=0',
      '?page=-1',
      '?size=201',
      '?size=0',
      '?page=1.5',
      '?size=abc',
      '?sort=name',
      '?order=sideways',
    ]) {
      const res = await call('GET', `/api/usage-service/v1/workspaces/${ws}/quotas${q}`, { token });
      expect(res.status, q).toBe(422);
      const p = await problemOf(res);
      expect(p.code).toBe('VALIDATION_FAILED');
    }
  });

  it('needs a token of the same workspace; an unknown workspace is 404', async () => {
    const ws = uniqueWorkspaceId('authq');
    await createWorkspace(ws, 1, []);
    expect((await call('GET', `/api/usage-service/v1/workspaces/${ws}/quotas`)).status).toBe(401);
    const other = await call('GET', `/api/usage-service/v1/workspaces/${ws}/quotas`, {
      token: await workspaceToken('ws_other'),
    });
    expect(other.status).toBe(403);
    expect((await problemOf(other)).code).toBe('WORKSPACE_FORBIDDEN');
    // An admin token does not open another workspace's listing either.
    expect(
      (await call('GET', `/api/usage-service/v1/workspaces/${ws}/quotas`, { token: await adminToken() })).status,
    ).toBe(403);
    const ghost = uniqueWorkspaceId('ghost');
    const missing = await call('GET', `/api/usage-service/v1/workspaces/${ghost}/quotas`, {
      token: await workspaceToken(ghost),
    });
    expect(missing.status).toBe(404);
    expect((await problemOf(missing)).code).toBe('NOT_FOUND');
  });

  it('the listing is read-only: reading at a later instant and then at an earlier one gives the earlier state', async () => {
    const ws = uniqueWorkspaceId('ro');
    const at = standOn('2024-11-20T12:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    await use(ws, 'tokens', 30, at);
    standOn('2025-01-05T00:00:00.000Z');
    expect((await listQuotas(ws, '?usageTypeKey=tokens')).data[0].usedAmount).toBe(0);
    standOn('2024-11-20T13:00:00.000Z');
    const q = (await listQuotas(ws, '?usageTypeKey=tokens')).data[0];
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([30, 30]);
  });
});

describe('seed and documentation', () => {
  it('a fresh database has the demo workspace ws_demo with generous limits', async () => {
    const res = await call('GET', '/api/admin/v1/workspaces/ws_demo', { token: await adminToken() });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { anchorDay: number; quotas: QuotaJson[] };
    expect(body.anchorDay).toBe(1);
    const limits = Object.fromEntries(body.quotas.map((q) => [q.usageTypeKey, [q.limitAmount, q.limitAmountDaily]]));
    expect(limits).toEqual({ tokens: [10_000_000, 1_000_000], images: [1_000, 100], plagiarismChecks: [1_000, 100] });
    const listing = await listQuotas('ws_demo');
    expect(listing.data).toHaveLength(3);
  });

  it('the routes are in the OpenAPI document', async () => {
    const doc = (await (await call('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(doc.paths['/api/usage-service/v1/workspaces/{workspaceId}/quotas']).toHaveProperty('get');
    expect(doc.paths['/api/usage-service/v1/usage-types']).toHaveProperty('get');
    expect(doc.paths['/api/admin/v1/workspaces']).toHaveProperty('post');
    expect(doc.paths['/api/admin/v1/workspaces/{workspaceId}']).toHaveProperty('patch');
    expect(doc.paths['/api/admin/v1/workspaces/{workspaceId}/quotas/{usageTypeKey}']).toHaveProperty('put');
    expect(doc.paths['/api/admin/v1/workspaces/{workspaceId}/quotas/{usageTypeKey}/bonus']).toHaveProperty('post');
    expect(doc.paths['/api/admin/v1/workspaces/{workspaceId}/usage-ledger']).toHaveProperty('get');
    expect(doc.paths['/api/admin/v1/workspaces/{workspaceId}/audit-log']).toHaveProperty('get');
  });
});
