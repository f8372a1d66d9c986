/**
 * Issue 20: the WorkspaceMeter Durable Object (worker/quotas/meter-do.ts) as the metering
 * authority, in workerd with its real SQLite storage and the real D1: exactness under concurrency
 * (also multi-unit, over several workspaces at once and across restarts), the outbox flush into the
 * D1 ledger (failing and recovering: no event lost or doubled), seeding from D1's counters and
 * ledger, admin changes reaching the meter, and a meter that throws, times out or is reset
 * in the middle of charges. Faults are injected into the platform bindings only (the METER
 * namespace seen by the Worker, the D1 binding seen by the object), never into our modules.
 */
import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../worker/env';
import { ApiError } from '../../core/problem';
import { consume, flushMeter, meterQuotas } from '../../worker/quotas/meter-client';
import { setQuotaLimits } from '../../worker/quotas/repository';
import {
  createWorkspace,
  flushLedger,
  meterOf,
  outboxOf,
  quotaOf,
  resetClock,
  restartMeter,
  standOn,
  uniqueWorkspaceId,
} from './support/quotas';

const realEnv = env as unknown as Env;

afterEach(() => {
  resetClock();
  vi.restoreAllMocks();
});
const quiet = () => vi.spyOn(console, 'error').mockImplementation(() => {});

type Outcome = 'charged' | 'replayed' | 'free' | 'monthly' | 'daily' | 'unavailable' | 'other';

async function charge(
  e: Pick<Env, 'METER' | 'METER_TIMEOUT_MS'>,
  ws: string,
  amount: number,
  opts: { type?: 'tokens' | 'plagiarismChecks'; key?: string | null; atMs?: number } = {},
): Promise<Outcome> {
  try {
    const r = await consume(
      e,
      {
        workspaceId: ws,
        usageTypeKey: opts.type ?? 'tokens',
        amount,
        requestId: crypto.randomUUID(),
        idempotencyKey: opts.key ?? null,
        atMs: opts.atMs ?? Date.now(),
      },
      1,
    );
    return r.status;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (err.code === 'ERROR_NO_REMAINING_QUOTA' || err.code === 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS')
      return 'monthly';
    if (err.code === 'DAILY_LIMIT_REACHED') return 'daily';
    if (err.code === 'STORAGE_UNAVAILABLE') return 'unavailable';
    return 'other';
  }
}

const count = (xs: Outcome[], o: Outcome) => xs.filter((x) => x === o).length;

/** The D1 ledger of a workspace (after a flush unless told otherwise). */
async function ledger(
  ws: string,
  flush = true,
): Promise<Array<{ amount: number; meter_seq: number | null; idempotency_key: string | null }>> {
  if (flush) await flushLedger(ws);
  const { results } = await realEnv.DB.prepare(
    'SELECT amount, meter_seq, idempotency_key FROM usage_ledger WHERE workspace_id = ?1 ORDER BY id',
  )
    .bind(ws)
    .all<{
      amount: number;
      meter_seq: number | null;
      idempotency_key: string | null;
    }>();
  return results;
}

const sum = (rows: Array<{ amount: number }>) => rows.reduce((a, r) => a + r.amount, 0);

const outboxSize = async (ws: string): Promise<number> => (await outboxOf(ws)).length;

describe('exactness: N concurrent charges against a remaining L succeed exactly min(N, L) times', () => {
  it('8 workspaces at once, 120 charges of 1 each against L = 50, 80 and 200', async () => {
    const limits = [50, 80, 200, 50, 80, 200, 50, 80];
    const wss = limits.map(() => uniqueWorkspaceId('mx'));
    await Promise.all(
      wss.map((ws, i) =>
        createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: limits[i], limitAmountDaily: 1_000_000 }]),
      ),
    );
    // 960 calls at once on a small test machine: a generous bound, this test is about exactness.
    const patient = { ...realEnv, METER_TIMEOUT_MS: '60000' };
    const outcomes = await Promise.all(
      wss.map((ws) => Promise.all(Array.from({ length: 120 }, () => charge(patient, ws, 1)))),
    );
    for (const [i, ws] of wss.entries()) {
      const n = Math.min(120, limits[i]);
      expect(count(outcomes[i], 'charged'), `${ws} ${JSON.stringify(outcomes[i].slice(0, 5))}`).toBe(n);
      expect(count(outcomes[i], 'monthly'), ws).toBe(120 - n);
      expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(n);
      const rows = await ledger(ws);
      expect(rows).toHaveLength(n);
      expect(rows.map((r) => r.meter_seq)).toEqual(Array.from({ length: n }, (_, k) => k + 1));
    }
  });

  it('multi-unit: 200 concurrent charges of 7 against 100 (daily 60): floor(60/7) succeed, the rest 429', async () => {
    const ws = uniqueWorkspaceId('mu');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 60 }]);
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => charge(realEnv, ws, 7)));
    expect(count(outcomes, 'charged')).toBe(8);
    expect(count(outcomes, 'daily')).toBe(192);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily, q.availableAmount]).toEqual([56, 56, 44]);
    expect(sum(await ledger(ws))).toBe(56);
  });

  it('across a restart: half the charges before, half after; the total stays exactly L and the outbox survives', async () => {
    const ws = uniqueWorkspaceId('mr');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 50, limitAmountDaily: 50 }]);
    const first = await Promise.all(
      Array.from({ length: 30 }, () => charge(realEnv, ws, 1, { type: 'plagiarismChecks' })),
    );
    expect(count(first, 'charged')).toBe(30);
    const mark = (instance: object) => ((instance as { testMark?: string }).testMark ??= crypto.randomUUID());
    const before = await runInDurableObject(meterOf(ws), mark);
    expect(await outboxSize(ws)).toBe(30); // not flushed yet
    await restartMeter(ws);
    const after = await runInDurableObject(meterOf(ws), mark);
    expect(after).not.toBe(before); // a new instance: the in-memory state is gone
    const second = await Promise.all(
      Array.from({ length: 100 }, () => charge(realEnv, ws, 1, { type: 'plagiarismChecks' })),
    );
    expect(count(second, 'charged')).toBe(20);
    expect(count(second, 'monthly')).toBe(80);
    expect((await quotaOf(ws, 'plagiarismChecks')).usedAmount).toBe(50);
    const rows = await ledger(ws);
    expect(rows).toHaveLength(50);
    expect(new Set(rows.map((r) => r.meter_seq)).size).toBe(50);
  });
});

describe('meter faults', () => {
  it('reset in the middle of keyed charges: each request either succeeds or gets 503; retried with its key, every key is charged exactly once', async () => {
    quiet();
    const ws = uniqueWorkspaceId('mreset');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10_000, limitAmountDaily: 10_000 }]);
    await charge(realEnv, ws, 1, { key: 'warm' }); // seeded
    const keys = Array.from({ length: 150 }, (_, i) => `reset-${i}`);
    const storm = Promise.all(keys.map((key) => charge(realEnv, ws, 3, { key })));
    await new Promise((r) => setTimeout(r, 1));
    await restartMeter(ws);
    const outcomes = await storm;
    for (const o of outcomes) expect(['charged', 'unavailable']).toContain(o);
    // The clients retry what failed, with the same key: a charge that was made is recognized.
    const retried = await Promise.all(
      keys.map((key, i) =>
        outcomes[i] === 'unavailable' ? charge(realEnv, ws, 3, { key }) : Promise.resolve(outcomes[i]),
      ),
    );
    for (const o of retried) expect(['charged', 'replayed']).toContain(o);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(1 + 3 * keys.length);
    const rows = await ledger(ws);
    expect(rows.filter((r) => r.idempotency_key?.startsWith('reset-'))).toHaveLength(keys.length);
    expect(new Set(rows.map((r) => r.idempotency_key)).size).toBe(rows.length);
  });

  it('a retryable failure is retried only for a charge with an Idempotency-Key; without one the request gets 503 and nothing is charged', async () => {
    quiet();
    const ws = uniqueWorkspaceId('mretry');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    // The first call of each test run through this namespace fails retryably, the next ones pass.
    const flaky = (): Env['METER'] => {
      let failed = false;
      return new Proxy(realEnv.METER, {
        get(target, prop) {
          if (prop === 'get') {
            return (id: DurableObjectId) => {
              const stub = target.get(id);
              if (failed) return stub;
              failed = true;
              return new Proxy(stub, {
                get: () => () =>
                  Promise.reject(Object.assign(new Error('Network connection lost (injected)'), { retryable: true })),
              });
            };
          }
          const v = Reflect.get(target, prop, target);
          return typeof v === 'function' ? v.bind(target) : v;
        },
      });
    };
    expect(await charge({ METER: flaky() }, ws, 5)).toBe('unavailable');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
    expect(await charge({ METER: flaky() }, ws, 5, { key: 'k-retry' })).toBe('charged');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(5);
    expect(await ledger(ws)).toHaveLength(1);
  });

  it('a call that times out is not charged later: the meter refuses a charge that arrives after the deadline', async () => {
    quiet();
    const ws = uniqueWorkspaceId('mlate');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 100 }]);
    await meterQuotas(realEnv, ws, Date.now()); // seeded
    let late: Promise<unknown> = Promise.resolve();
    // The network holds the call for 300 ms; the Worker stops waiting after 100 ms.
    const slow = new Proxy(realEnv.METER, {
      get(target, prop) {
        if (prop === 'get') {
          return (id: DurableObjectId) =>
            new Proxy(target.get(id), {
              get(stub, method) {
                return (...args: unknown[]) => {
                  // (A stub's method is a remote path: call it on the stub, never via .apply.)
                  late = new Promise((r) => setTimeout(r, 300)).then(() =>
                    (stub as unknown as Record<string | symbol, (...a: unknown[]) => Promise<unknown>>)[method](
                      ...args,
                    ),
                  );
                  return late;
                };
              },
            });
        }
        const v = Reflect.get(target, prop, target);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    expect(await charge({ METER: slow, METER_TIMEOUT_MS: '100' }, ws, 9)).toBe('unavailable');
    expect(await late).toEqual({ status: 'expired' });
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
    expect(await ledger(ws)).toHaveLength(0);
  });
});

/**
 * D1 as seen by the object: batches fail until `heal()`. 'before': nothing is written;
 * 'after-commit': batches that write are committed, but the answer is lost.
 */
function breakObjectD1(mode: 'before' | 'after-commit') {
  let broken = true;
  let failures = 0;
  const writing = new WeakSet<D1PreparedStatement>();
  const db = new Proxy(realEnv.DB, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          const stmt = target.prepare(sql);
          const bind = stmt.bind.bind(stmt);
          stmt.bind = (...values: unknown[]) => {
            const bound = bind(...values);
            if (/^\s*(INSERT|UPDATE|DELETE)/i.test(sql)) writing.add(bound);
            return bound;
          };
          return stmt;
        };
      }
      if (prop === 'batch') {
        return async (stmts: D1PreparedStatement[]) => {
          if (!broken) return target.batch(stmts);
          failures++;
          if (mode === 'after-commit') {
            const result = await target.batch(stmts);
            if (!stmts.some((s) => writing.has(s))) return result; // reads pass
          }
          throw new Error('D1_ERROR: injected network failure');
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { db, heal: () => (broken = false), failures: () => failures };
}

async function setObjectDb(ws: string, db: D1Database): Promise<void> {
  await runInDurableObject(meterOf(ws), (instance) => {
    Object.defineProperty(instance, 'env', { value: { ...realEnv, DB: db }, configurable: true, writable: true });
  });
}

describe('the outbox flush to D1', () => {
  for (const mode of ['before', 'after-commit'] as const) {
    it(`D1 failing ${mode === 'before' ? 'before writing' : 'after committing (answer lost)'}: charges go on, events stay in the outbox; after recovery the ledger has each event exactly once`, async () => {
      quiet();
      const ws = uniqueWorkspaceId(`mflush${mode === 'before' ? 'b' : 'a'}`);
      await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
      await meterQuotas(realEnv, ws, Date.now()); // seeded (seeding reads D1 with a batch too)
      const fault = breakObjectD1(mode);
      await setObjectDb(ws, fault.db);
      const outcomes = await Promise.all(
        Array.from({ length: 40 }, (_, i) => charge(realEnv, ws, 2, { key: i % 2 === 0 ? `f-${i}` : null })),
      );
      expect(count(outcomes, 'charged')).toBe(40);
      // The alarm's flush fails and reschedules itself (the alarm may also have fired on its own
      // already: either way it is pending again afterwards); nothing leaves the outbox.
      await runDurableObjectAlarm(meterOf(ws));
      await expect(flushMeter(realEnv, ws)).rejects.toThrow();
      expect(fault.failures()).toBeGreaterThan(0);
      expect(await outboxSize(ws)).toBe(40);
      expect(await runInDurableObject(meterOf(ws), (_, state) => state.storage.getAlarm())).not.toBeNull();
      const partial = await ledger(ws, false);
      expect(partial.length).toBe(mode === 'before' ? 0 : 40);
      fault.heal();
      await runDurableObjectAlarm(meterOf(ws)); // the retry
      await flushMeter(realEnv, ws);
      expect(await outboxSize(ws)).toBe(0);
      const rows = await ledger(ws);
      expect(rows).toHaveLength(40);
      expect(sum(rows)).toBe(80);
      expect(rows.map((r) => r.meter_seq).sort((a, b) => a! - b!)).toEqual(Array.from({ length: 40 }, (_, k) => k + 1));
      expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(80);
    });
  }
});

describe('seeding from D1', () => {
  it("a cold meter takes over D1's counters and the keyed charges of its ledger, none twice", async () => {
    const ws = uniqueWorkspaceId('mmig');
    const t0 = standOn('2031-05-10T12:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 50 }]);
    // What D1 holds before the meter's first use: counters and ledger rows (one with a key).
    const storedCharge = (amount: number, key: string | null, at: number) =>
      realEnv.DB.batch([
        realEnv.DB.prepare(
          "UPDATE quotas SET used_amount = used_amount + ?2, used_amount_daily = used_amount_daily + ?2 WHERE workspace_id = ?1 AND usage_type_key = 'tokens'",
        ).bind(ws, amount),
        realEnv.DB.prepare(
          "INSERT INTO usage_ledger (workspace_id, usage_type_key, amount, request_id, idempotency_key, cycle_start, created_at) VALUES (?1, 'tokens', ?2, 'stored', ?3, '2031-05-01', ?4)",
        ).bind(ws, amount, key, new Date(at).toISOString()),
      ]);
    await storedCharge(10, 'old-key', t0 - 60_000);
    await storedCharge(4, null, t0 - 30_000);
    // First use: the meter seeds itself.
    const seeded = await quotaOf(ws, 'tokens');
    expect([seeded.usedAmount, seeded.usedAmountDaily]).toEqual([14, 14]);
    // A retry of the keyed charge is recognized.
    expect(await charge(realEnv, ws, 10, { key: 'old-key', atMs: t0 })).toBe('replayed');
    expect(await charge(realEnv, ws, 6, { atMs: t0 + 1 })).toBe('charged');
    expect(await flushLedger(ws)).toBe(1);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([20, 20]);
    const rows = await ledger(ws);
    expect(sum(rows)).toBe(20);
    expect(rows.map((r) => [r.amount, r.meter_seq])).toEqual([
      [10, null],
      [4, null],
      [6, 1],
    ]);
    // A second flush changes nothing.
    await flushLedger(ws);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(20);
  });

  it('an unknown workspace: 404, and its meter stores nothing', async () => {
    const ws = uniqueWorkspaceId('mnone');
    await expect(
      consume(
        realEnv,
        { workspaceId: ws, usageTypeKey: 'tokens', amount: 1, requestId: 'r', idempotencyKey: null, atMs: Date.now() },
        1,
      ),
    ).rejects.toMatchObject({
      code: 'NOT_FOUND',
    });
    const tables = await runInDurableObject(meterOf(ws), (_, state) =>
      Number(state.storage.sql.exec<{ n: number }>('SELECT COUNT(*) AS n FROM meta').one().n),
    );
    expect(tables).toBe(0);
  });
});

describe('admin changes: D1 first, then the meter', () => {
  it('a change whose notification never reached the meter takes effect with its next flush', async () => {
    const ws = uniqueWorkspaceId('madm');
    const t0 = standOn('2031-06-10T08:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 10, limitAmountDaily: 10 }]);
    expect(await charge(realEnv, ws, 10, { atMs: t0 })).toBe('charged');
    expect(await charge(realEnv, ws, 1, { atMs: t0 + 1 })).toBe('monthly');
    // Written to D1 (with its audit row) by an admin request whose call to the meter was lost.
    await setQuotaLimits(
      realEnv.DB,
      ws,
      { usageTypeKey: 'tokens', limitAmount: 30, limitAmountDaily: 30 },
      { actor: 'test', requestId: null, atMs: t0 + 2 },
    );
    expect(await charge(realEnv, ws, 1, { atMs: t0 + 3 })).toBe('monthly');
    await flushLedger(ws);
    expect(await charge(realEnv, ws, 20, { atMs: t0 + 4 })).toBe('charged');
    const q = await quotaOf(ws, 'tokens');
    expect([q.limitAmount, q.usedAmount, q.availableAmount]).toEqual([30, 30, 0]);
  });
});
