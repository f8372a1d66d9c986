/**
 * Issue 12, defect 3 in workerd: the hostile texts of the issue are answered (the work is done,
 * the isolate keeps answering), and a request whose texts yield no token still goes through the
 * workspace and quota checks. Linearity itself: test/node/tokenizer-linear.test.ts (structure)
 * and bench/hostile-text.ts (timings).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call as apiCall, makeModel, uploadEnglish, uploadModel } from './support/api';
import { createWorkspace, quotaOf, readLedger, uniqueWorkspaceId, workspaceToken } from './support/quotas';

const MODEL = 'hostile-en';

beforeAll(async () => {
  await uploadEnglish();
  await uploadModel(makeModel(MODEL, { seed: 5 }));
});

const post = (ws: string, endpoint: string, body: unknown, token: string) =>
  apiCall('POST', `/api/v1/workspaces/${ws}/${endpoint}`, body, { token });

describe('hostile texts are answered (defect 3)', () => {
  it('"." x 100,000 and 40,000 CJK characters with language en: 200 with the right token counts, health still answers', async () => {
    const ws = uniqueWorkspaceId('hostile');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1_000_000, limitAmountDaily: 1_000_000 }]);
    const token = await workspaceToken(ws);
    const cjk = '漢字かな'.repeat(10_000);
    const [dots, cjkTok, scores, health] = await Promise.all([
      post(ws, 'tokenizations', { language: 'en', text: '.'.repeat(100_000) }, token),
      post(ws, 'tokenizations', { language: 'en', text: cjk }, token),
      post(
        ws,
        'text-scores',
        { texts: ['.'.repeat(100_000), cjk, 'a@'.repeat(50_000)], embeddingModelId: MODEL },
        token,
      ),
      apiCall('GET', '/api/health'),
    ]);
    expect(dots.status, JSON.stringify(dots.body).slice(0, 300)).toBe(200);
    expect(dots.body.tokenCount).toBe(0);
    expect(cjkTok.status).toBe(200);
    expect(cjkTok.body.tokenCount).toBeGreaterThan(0);
    expect(cjkTok.body.tokens.reduce((n: number, t: any) => n + t.indexEnd - t.indexStart, 0)).toBe(cjk.length);
    expect(scores.status, JSON.stringify(scores.body).slice(0, 300)).toBe(200);
    expect(scores.body.data).toHaveLength(3);
    expect(health.status).toBe(200);
    // Charged exactly the tokens counted: the CJK tokens twice (tokenizations + text-scores) and 50,000 for the "a@" text.
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2 * cjkTok.body.tokenCount + 50_000);
  });
});

describe('zero-token requests still pass the workspace and quota checks (defect 3)', () => {
  const zeroRequests: Array<[string, unknown]> = [
    ['tokenizations', { language: 'en', text: '... !!! ???' }],
    ['text-scores', { texts: ['...', ''], embeddingModelId: MODEL }],
    ['text-scores', { texts: [], embeddingModelId: MODEL }],
    ['word-scores', { seedWords: ['zzzunknown'], whitelistWords: ['zzznothing'], embeddingModelId: MODEL }],
  ];

  it('unknown workspace: 404 NOT_FOUND', async () => {
    const ghost = uniqueWorkspaceId('ghost');
    const token = await workspaceToken(ghost);
    for (const [endpoint, body] of zeroRequests) {
      const r = await post(ghost, endpoint, body, token);
      expect(r.status, `${endpoint} ${JSON.stringify(r.body)}`).toBe(404);
      expect(r.body.code).toBe('NOT_FOUND');
    }
    // A request with tokens is refused the same way.
    expect((await post(ghost, 'tokenizations', { language: 'en', text: 'cat' }, token)).status).toBe(404);
  });

  it('exhausted monthly allowance: 403; daily limit reached: 429; nothing written', async () => {
    const monthly = uniqueWorkspaceId('zero');
    await createWorkspace(monthly, 1, [{ usageTypeKey: 'tokens', limitAmount: 2, limitAmountDaily: 100 }]);
    const daily = uniqueWorkspaceId('zerod');
    await createWorkspace(daily, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 2 }]);
    const none = uniqueWorkspaceId('zeron');
    await createWorkspace(none, 1, []);
    for (const ws of [monthly, daily]) {
      const use = await post(ws, 'tokenizations', { language: 'en', text: 'cat dog' }, await workspaceToken(ws));
      expect(use.status).toBe(200);
    }
    for (const [endpoint, body] of zeroRequests) {
      const m = await post(monthly, endpoint, body, await workspaceToken(monthly));
      expect(m.status, `${endpoint} ${JSON.stringify(m.body)}`).toBe(403);
      expect(m.body.code).toBe('ERROR_NO_REMAINING_QUOTA');
      const d = await post(daily, endpoint, body, await workspaceToken(daily));
      expect(d.status, `${endpoint} ${JSON.stringify(d.body)}`).toBe(429);
      expect(d.headers.get('retry-after')).toMatch(/^\d+$/);
      const n = await post(none, endpoint, body, await workspaceToken(none));
      expect(n.status).toBe(403);
    }
    expect((await quotaOf(monthly, 'tokens')).usedAmount).toBe(2);
    expect(await readLedger(monthly)).toHaveLength(1);
  });

  it('a workspace with room answers zero-token requests with 200 and charges nothing', async () => {
    const ws = uniqueWorkspaceId('zerook');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }]);
    for (const [endpoint, body] of zeroRequests)
      expect((await post(ws, endpoint, body, await workspaceToken(ws))).status, endpoint).toBe(200);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
    expect(await readLedger(ws)).toEqual([]);
  });
});
