/**
 * Issue 12, defect 2: an Idempotency-Key is bound to workspace, method, path and body SHA-256;
 * a retry of the same request replays the stored status and body; another request with the key
 * is 422 IDEMPOTENCY_KEY_REUSED; a retry while the first runs is 409 IDEMPOTENCY_KEY_IN_PROGRESS;
 * keys expire after 24 hours and the workspace meter's alarm removes them (issue 20: the records
 * live in the meter, worker/quotas/meter-do.ts).
 */
import {
  createExecutionContext,
  env,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from 'cloudflare:test';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import worker from '../../worker/index';
import { createApp } from '../../worker/app';
import { charge } from '../../worker/quotas/charge';
import { uploadEnglish } from './support/api';
import {
  addBonus,
  createWorkspace,
  problemOf,
  quotaOf,
  readLedger,
  resetClock,
  standOn,
  uniqueWorkspaceId,
  workspaceToken,
} from './support/quotas';

beforeAll(async () => {
  await uploadEnglish();
});
afterEach(resetClock);

async function send(
  app: { fetch: (r: Request, e: never, x: ExecutionContext) => Response | Promise<Response> },
  ws: string,
  endpoint: string,
  body: unknown,
  key?: string,
): Promise<Response> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${await workspaceToken(ws)}`,
    'content-type': 'application/json',
  };
  if (key !== undefined) headers['idempotency-key'] = key;
  const exec = createExecutionContext();
  const res = await app.fetch(
    new Request(`http://x/api/v1/workspaces/${ws}/${endpoint}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
    }),
    env as never,
    exec,
  );
  await waitOnExecutionContext(exec);
  return res;
}

const tokenize = (ws: string, text: string, key?: string) =>
  send(worker, ws, 'tokenizations', { language: 'en', text }, key);

const meterOf = (ws: string) => env.METER.get(env.METER.idFromName(ws));

/** Idempotency-Key records in the workspace's meter. */
async function keyRows(ws: string): Promise<number> {
  return runInDurableObject(meterOf(ws), (_, state) =>
    Number(state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM request_keys').one().n),
  );
}

describe('Idempotency-Key bound to the request (defect 2)', () => {
  it('the same key with another body is 422 IDEMPOTENCY_KEY_REUSED and computes and charges nothing', async () => {
    const ws = uniqueWorkspaceId('idb');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const first = await tokenize(ws, 'cat dog', 'k1');
    expect(first.status).toBe(200);
    // Same amount (2 tokens), other text: before, this was answered (free work) as a "replay".
    const other = await tokenize(ws, 'bad sad', 'k1');
    expect(other.status).toBe(422);
    expect(other.headers.get('content-type')).toContain('application/problem+json');
    expect((await problemOf(other)).code).toBe('IDEMPOTENCY_KEY_REUSED');
    // Another path with the same key and body.
    const otherPath = await send(worker, ws, 'text-scores', { language: 'en', text: 'cat dog' }, 'k1');
    expect(otherPath.status).toBe(422);
    expect((await problemOf(otherPath)).code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
    expect(await readLedger(ws)).toHaveLength(1);
  });

  it('a retry of the same request replays the stored status and body without charging', async () => {
    const ws = uniqueWorkspaceId('idr');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const first = await tokenize(ws, 'The children ran home.', 'k2');
    const firstBody = await first.text();
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    for (let i = 0; i < 3; i++) {
      const again = await tokenize(ws, 'The children ran home.', 'k2');
      expect(again.status).toBe(200);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      expect(await again.text()).toBe(firstBody);
    }
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(4);
    // The same key in another workspace is another key.
    const ws2 = uniqueWorkspaceId('idr2');
    await createWorkspace(ws2, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const elsewhere = await tokenize(ws2, 'other words here', 'k2');
    expect(elsewhere.status).toBe(200);
    expect(elsewhere.headers.get('idempotent-replayed')).toBeNull();
  });

  it('a failed first request releases the key: after a bonus the same request with the key succeeds', async () => {
    const ws = uniqueWorkspaceId('idf');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1, limitAmountDaily: 100 }]);
    const refused = await tokenize(ws, 'cat dog', 'k3');
    expect(refused.status).toBe(403);
    expect(await keyRows(ws)).toBe(0);
    expect((await addBonus(ws, 'tokens', 10)).status).toBe(200);
    const ok = await tokenize(ws, 'cat dog', 'k3');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('idempotent-replayed')).toBeNull();
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
  });

  it('a retry while the first request runs is 409 IDEMPOTENCY_KEY_IN_PROGRESS; afterwards it replays', async () => {
    const ws = uniqueWorkspaceId('idp');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    const app = createApp();
    app.post('/api/v1/workspaces/:workspaceId/harness-slow', async (c) => {
      started();
      await gate;
      await charge(c, { usageTypeKey: 'tokens', amount: 3 });
      return c.json({ done: true });
    });
    const first = send(app, ws, 'harness-slow', { n: 1 }, 'k4');
    await running;
    const during = await send(app, ws, 'harness-slow', { n: 1 }, 'k4');
    expect(during.status).toBe(409);
    expect((await problemOf(during)).code).toBe('IDEMPOTENCY_KEY_IN_PROGRESS');
    expect(Number(during.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    const otherBody = await send(app, ws, 'harness-slow', { n: 2 }, 'k4');
    expect(otherBody.status).toBe(422);
    release();
    expect((await first).status).toBe(200);
    const after = await send(app, ws, 'harness-slow', { n: 1 }, 'k4');
    expect(after.status).toBe(200);
    expect(after.headers.get('idempotent-replayed')).toBe('true');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(3);
  });

  it('50 concurrent requests with one key: one runs and is charged, the others are 409 or replays', async () => {
    const ws = uniqueWorkspaceId('idc');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    const responses = await Promise.all(Array.from({ length: 50 }, () => tokenize(ws, 'one two three', 'same')));
    const fresh = responses.filter((r) => r.status === 200 && r.headers.get('idempotent-replayed') === null);
    expect(fresh).toHaveLength(1);
    for (const r of responses) expect([200, 409]).toContain(r.status);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(3);
    expect(await readLedger(ws)).toHaveLength(1);
  });

  it("keys expire after 24 hours: the meter's alarm removes them and the key is free again", async () => {
    const ws = uniqueWorkspaceId('ide');
    const t0 = standOn('2031-03-01T10:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    expect((await tokenize(ws, 'cat dog', 'k5')).status).toBe(200);
    expect(await keyRows(ws)).toBe(1);

    // 23 h later: still bound, the alarm keeps it.
    standOn(t0 + 23 * 3600_000);
    expect(await runDurableObjectAlarm(meterOf(ws))).toBe(true);
    expect(await keyRows(ws)).toBe(1);
    expect((await tokenize(ws, 'bad sad', 'k5')).status).toBe(422);

    // 24 h later: the alarm (it stays scheduled while records remain) removes the record.
    standOn(t0 + 24 * 3600_000 + 1);
    expect(await runDurableObjectAlarm(meterOf(ws))).toBe(true);
    expect(await keyRows(ws)).toBe(0);
    const reused = await tokenize(ws, 'bad sad', 'k5');
    expect(reused.status).toBe(200);
    expect(reused.headers.get('idempotent-replayed')).toBeNull();
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(4);
    expect((await readLedger(ws)).map((e) => e.idempotencyKey)).toEqual(['k5', 'k5']);
  });
});
