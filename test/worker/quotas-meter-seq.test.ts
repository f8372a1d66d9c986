/**
 * Issue 20, the meter's outbox sequence (worker/quotas/meter-do.ts): a charge keeps the next
 * sequence number in memory only (its outbox row carries it across a restart), and a flush that
 * deletes outbox rows stores it. Whatever the order of charges, flushes and restarts, every charge
 * gets a new number: the D1 ledger ignores a repeated (workspace, meter_seq), so a repeat would
 * lose the charge. Also: the quota rows the meter keeps in memory follow admin changes and restarts.
 * Real workerd, real SQLite storage and D1; restarts drop the object's in-memory state only.
 */
import { env, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import type { Env } from '../../worker/env';
import { consume } from '../../worker/quotas/meter-client';
import {
  call,
  adminToken,
  createWorkspace,
  flushLedger,
  meterOf,
  quotaOf,
  resetClock,
  restartMeter,
  uniqueWorkspaceId,
} from './support/quotas';

const realEnv = env as unknown as Env;

afterEach(() => resetClock());

async function chargeN(ws: string, n: number, amount = 1): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await consume(
      realEnv,
      {
        workspaceId: ws,
        usageTypeKey: 'tokens',
        amount,
        requestId: crypto.randomUUID(),
        idempotencyKey: null,
        atMs: Date.now(),
      },
      1,
    );
    expect(r.status).toBe('charged');
  }
}

async function ledgerSeqs(ws: string): Promise<Array<number | null>> {
  const { results } = await realEnv.DB.prepare(
    'SELECT meter_seq FROM usage_ledger WHERE workspace_id = ?1 ORDER BY meter_seq',
  )
    .bind(ws)
    .all<{ meter_seq: number | null }>();
  return results.map((r) => r.meter_seq);
}

const outboxSeqs = (ws: string): Promise<number[]> =>
  runInDurableObject(meterOf(ws), (_, state) =>
    state.storage.sql
      .exec<{ seq: number }>('SELECT seq FROM outbox ORDER BY seq')
      .toArray()
      .map((r) => r.seq),
  );

const storedNextSeq = (ws: string): Promise<number | null> =>
  runInDurableObject(meterOf(ws), (_, state) => {
    const row = state.storage.sql.exec<{ v: number }>("SELECT v FROM meta WHERE k = 'next_seq'").toArray()[0];
    return row ? Number(row.v) : null;
  });

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('outbox sequence: never repeated across flushes and restarts', () => {
  it('charges do not store next_seq; the outbox carries it across a restart', async () => {
    const ws = uniqueWorkspaceId('sq1');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    await chargeN(ws, 1); // seeds (stores next_seq 1), then charges seq 1
    const stored = await storedNextSeq(ws);
    await chargeN(ws, 4);
    expect(await storedNextSeq(ws)).toBe(stored); // the hot path wrote no meta
    expect(await outboxSeqs(ws)).toEqual(range(1, 5));
    await restartMeter(ws);
    await chargeN(ws, 3);
    expect(await outboxSeqs(ws)).toEqual(range(1, 8));
    expect(await flushLedger(ws)).toBe(8);
    expect(await ledgerSeqs(ws)).toEqual(range(1, 8));
  });

  it('a flush that empties the outbox stores next_seq: after a restart the numbers go on, no charge is lost', async () => {
    const ws = uniqueWorkspaceId('sq2');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    await chargeN(ws, 5);
    expect(await flushLedger(ws)).toBe(5);
    expect(await outboxSeqs(ws)).toEqual([]);
    expect(await storedNextSeq(ws)).toBe(6);
    await restartMeter(ws);
    await chargeN(ws, 3);
    expect(await outboxSeqs(ws)).toEqual(range(6, 8));
    expect(await flushLedger(ws)).toBe(3);
    expect(await ledgerSeqs(ws)).toEqual(range(1, 8));
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(8);
  });

  it('flush, charges, restart, charges, restart, flush: one ledger row per charge, numbered 1..n', async () => {
    const ws = uniqueWorkspaceId('sq3');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    await chargeN(ws, 4, 2);
    await flushLedger(ws);
    await chargeN(ws, 3, 2); // 5..7 in the outbox, next_seq stored as 5
    await restartMeter(ws);
    await chargeN(ws, 2, 2); // 8, 9
    await restartMeter(ws);
    expect(await outboxSeqs(ws)).toEqual(range(5, 9));
    await flushLedger(ws);
    await restartMeter(ws);
    await chargeN(ws, 1, 2); // 10
    await flushLedger(ws);
    expect(await ledgerSeqs(ws)).toEqual(range(1, 10));
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([20, 20]);
  });
});

describe('the quota rows held in memory', () => {
  it('follow an admin change, a restart and charges in between exactly', async () => {
    const ws = uniqueWorkspaceId('sqc');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }]);
    await chargeN(ws, 10);
    await expect(chargeN(ws, 1)).rejects.toMatchObject({ code: 'ERROR_NO_REMAINING_QUOTA' });
    const res = await call('PUT', `/api/admin/v1/workspaces/${ws}/quotas/tokens`, {
      token: await adminToken(),
      body: { limitAmount: 15, limitAmountDaily: 15 },
    });
    expect(res.status).toBe(200);
    await chargeN(ws, 5);
    await expect(chargeN(ws, 1)).rejects.toMatchObject({ code: 'ERROR_NO_REMAINING_QUOTA' });
    await restartMeter(ws);
    await expect(chargeN(ws, 1)).rejects.toMatchObject({ code: 'ERROR_NO_REMAINING_QUOTA' });
    const q = await quotaOf(ws, 'tokens');
    expect([q.limitAmount, q.usedAmount, q.availableAmount]).toEqual([15, 15, 0]);
    await flushLedger(ws);
    expect(await ledgerSeqs(ws)).toEqual(range(1, 15));
  });
});
