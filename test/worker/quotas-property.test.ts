/**
 * Property: for any sequence of consumes, admin changes and clock advances,
 *  (1) every charge has the outcome a plain reference model predicts,
 *  (2) the listing equals the model at every check, and
 *  (3) at the end, the listing's availableAmount (and every counter) equals what the model
 *      computes from the ledger and the audit log alone, replayed in time order, and
 *  (4) the outbox (issue 20): at every check, the D1 ledger plus the meter's outbox hold exactly
 *      the model's charges; after a flush the D1 ledger alone holds them, in order, and the quota
 *      rows' counter snapshot in D1 equals the meter's counters. Restarts of the meter (its
 *      in-memory state is dropped, storage kept) change nothing.
 */
import { env, runInDurableObject } from 'cloudflare:test';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { consume } from '../../worker/quotas/meter-client';
import { ApiError } from '../../core/problem';
import { setClock } from '../../worker/clock';
import { QuotaModel, nextAnchorDate, type ChargeOutcome, type TypeKey } from './support/quotas-model';
import {
  addBonus,
  createWorkspace,
  flushLedger,
  listQuotas,
  meterOf,
  outboxOf,
  readAudit,
  readLedger,
  resetClock,
  restartMeter,
  setAnchorDay,
  setLimits,
  uniqueWorkspaceId,
} from './support/quotas';

async function d1LedgerOf(ws: string): Promise<Array<{ usage_type_key: string; amount: number }>> {
  const { results } = await env.DB.prepare(
    'SELECT usage_type_key, amount FROM usage_ledger WHERE workspace_id = ?1 ORDER BY meter_seq',
  )
    .bind(ws)
    .all<{ usage_type_key: string; amount: number }>();
  return results.map((r) => ({ usage_type_key: r.usage_type_key, amount: r.amount }));
}

afterEach(resetClock);

const DAY = 86_400_000;
const TYPES: TypeKey[] = ['tokens', 'plagiarismChecks'];

type Op =
  | { op: 'consume'; type: TypeKey; amount: number; key: string | null }
  | { op: 'limits'; type: TypeKey; limit: number; daily: number }
  | { op: 'bonus'; type: TypeKey; amount: number }
  | { op: 'anchor'; day: number }
  | { op: 'advance'; kind: 'ms'; ms: number }
  | { op: 'advance'; kind: 'midnight' | 'anchorDate'; offset: -1 | 0 }
  | { op: 'advance'; kind: 'days'; days: number }
  | { op: 'check' }
  | { op: 'flush' }
  | { op: 'restart' };

const typeArb = fc.constantFrom<TypeKey>(...TYPES);
const anchorArb = fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constantFrom(1, 28, 29, 30, 31));
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('consume' as const),
      type: typeArb,
      amount: fc.integer({ min: 0, max: 15 }),
      key: fc.option(fc.constantFrom('k1', 'k2', 'k3'), { freq: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('limits' as const),
      type: typeArb,
      limit: fc.integer({ min: 0, max: 60 }),
      daily: fc.integer({ min: 0, max: 40 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('bonus' as const), type: typeArb, amount: fc.integer({ min: 1, max: 25 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('anchor' as const), day: anchorArb }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      kind: fc.constant('ms' as const),
      ms: fc.integer({ min: 1, max: 8 * 3_600_000 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      kind: fc.constantFrom('midnight' as const, 'anchorDate' as const),
      offset: fc.constantFrom<-1 | 0>(-1, 0),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('advance' as const),
      kind: fc.constant('days' as const),
      days: fc.integer({ min: 1, max: 70 }),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ op: 'check' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'flush' as const }) },
  { weight: 1, arbitrary: fc.constant({ op: 'restart' as const }) },
);

const startArb = fc.oneof(
  fc
    .constantFrom(
      '2024-01-31T23:59:59.999Z',
      '2024-02-28T23:59:59.999Z',
      '2024-02-29T00:00:00.000Z',
      '2023-02-28T23:59:59.999Z',
      '2023-12-31T23:59:59.999Z',
      '2024-04-30T23:59:59.999Z',
    )
    .map((s) => Date.parse(s)),
  fc.integer({ min: Date.parse('2023-01-01T00:00:00.000Z'), max: Date.parse('2025-12-31T00:00:00.000Z') }),
);

const limitsArb = fc.record({ limit: fc.integer({ min: 0, max: 60 }), daily: fc.integer({ min: 0, max: 40 }) });

function outcomeOf(err: unknown): ChargeOutcome {
  if (!(err instanceof ApiError)) throw err;
  if (err.code === 'ERROR_NO_REMAINING_QUOTA' || err.code === 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS') return 'monthly';
  if (err.code === 'DAILY_LIMIT_REACHED') return 'daily';
  if (err.code === 'CONFLICT') return 'conflict';
  throw err;
}

async function expectListingMatches(ws: string, model: QuotaModel, t: number, context: string): Promise<void> {
  const { data } = await listQuotas(ws);
  for (const type of TYPES) {
    const got = data.find((q) => q.usageTypeKey === type)!;
    const {
      limitAmount,
      limitAmountDaily,
      usedAmount,
      usedAmountDaily,
      bonusAmount,
      spilloverAmount,
      availableAmount,
      dailyRefreshed,
    } = got;
    expect(
      {
        limitAmount,
        limitAmountDaily,
        usedAmount,
        usedAmountDaily,
        bonusAmount,
        spilloverAmount,
        availableAmount,
        dailyRefreshed,
      },
      `${context} ${type} at ${new Date(t).toISOString()}`,
    ).toEqual(model.view(t, type));
  }
}

describe('quota property', () => {
  it('charges, listing and ledger replay agree with the reference model', async () => {
    await fc.assert(
      fc.asyncProperty(
        startArb,
        anchorArb,
        limitsArb,
        limitsArb,
        fc.array(opArb, { minLength: 1, maxLength: 30 }),
        async (start, anchor, tokLimits, plagLimits, ops) => {
          let t = start;
          setClock(() => t);
          const ws = uniqueWorkspaceId('prop');
          const initial = [
            { type: 'tokens' as const, ...tokLimits },
            { type: 'plagiarismChecks' as const, ...plagLimits },
          ];
          await createWorkspace(
            ws,
            anchor,
            initial.map((l) => ({ usageTypeKey: l.type, limitAmount: l.limit, limitAmountDaily: l.daily })),
          );
          const model = new QuotaModel(t, anchor, initial);
          // The reference of the outbox: every charge the model accepted, in order.
          const charged: Array<{ usage_type_key: string; amount: number }> = [];
          t += 1;

          for (const [i, op] of ops.entries()) {
            const ctx = `op ${i} ${JSON.stringify(op)}`;
            switch (op.op) {
              case 'consume': {
                const expected = model.charge(t, op.type, op.amount, op.key);
                let got: ChargeOutcome;
                try {
                  got = (
                    await consume(
                      env,
                      {
                        workspaceId: ws,
                        usageTypeKey: op.type,
                        amount: op.amount,
                        requestId: `p${i}`,
                        idempotencyKey: op.key,
                        atMs: t,
                      },
                      1,
                    )
                  ).status;
                } catch (err) {
                  got = outcomeOf(err);
                }
                expect(got, ctx).toBe(expected);
                if (expected === 'charged') charged.push({ usage_type_key: op.type, amount: op.amount });
                break;
              }
              case 'flush': {
                await flushLedger(ws);
                expect(await d1LedgerOf(ws), ctx).toEqual(charged);
                expect(await outboxOf(ws), ctx).toEqual([]);
                break;
              }
              case 'restart':
                await restartMeter(ws);
                break;
              case 'limits':
                expect((await setLimits(ws, op.type, op.limit, op.daily)).status, ctx).toBe(200);
                model.setLimits(t, op.type, op.limit, op.daily);
                break;
              case 'bonus':
                expect((await addBonus(ws, op.type, op.amount)).status, ctx).toBe(200);
                model.addBonus(t, op.type, op.amount);
                break;
              case 'anchor':
                expect((await setAnchorDay(ws, op.day)).status, ctx).toBe(200);
                model.setAnchor(t, op.day);
                break;
              case 'advance': {
                if (op.kind === 'ms') t += op.ms;
                else if (op.kind === 'days') t += op.days * DAY;
                else {
                  const boundary =
                    op.kind === 'midnight' ? Math.floor(t / DAY) * DAY + DAY : nextAnchorDate(t, model.anchor);
                  t = Math.max(t, boundary + op.offset);
                }
                continue; // the clock stands on the boundary for the next op
              }
              case 'check': {
                await expectListingMatches(ws, model, t, ctx);
                // Not yet flushed events are in the outbox; none is in both, none is missing.
                expect([...(await d1LedgerOf(ws)), ...(await outboxOf(ws))], ctx).toEqual(charged);
                break;
              }
            }
            t += 1; // strictly increasing timestamps order the ledger and the audit log
          }
          await expectListingMatches(ws, model, t, 'end');
          await flushLedger(ws);
          expect(await d1LedgerOf(ws), 'end ledger').toEqual(charged);
          // The counter snapshot the flush wrote into D1 equals the meter's rows.
          const meterRows = await runInDurableObject(meterOf(ws), (_, state) =>
            state.storage.sql
              .exec(
                'SELECT usage_type_key, used_amount, used_amount_daily, bonus_amount, spillover_amount, cycle_start, daily_date FROM quotas ORDER BY usage_type_key',
              )
              .toArray(),
          );
          const { results: d1Rows } = await env.DB.prepare(
            'SELECT usage_type_key, used_amount, used_amount_daily, bonus_amount, spillover_amount, cycle_start, daily_date FROM quotas WHERE workspace_id = ?1 ORDER BY usage_type_key',
          )
            .bind(ws)
            .all();
          expect(d1Rows, 'D1 snapshot').toEqual(meterRows);

          // Replay the ledger and the audit log alone, in time order, into a fresh model.
          const ledger = await readLedger(ws);
          const audit = await readAudit(ws);
          const events = [
            ...ledger.map((e) => ({ at: Date.parse(e.createdAt), kind: 'ledger' as const, e })),
            ...audit.map((a) => ({ at: Date.parse(a.createdAt), kind: 'audit' as const, a })),
          ].sort((x, y) => x.at - y.at);
          const created = audit[0];
          expect(created.action).toBe('workspace.created');
          const createdLimits = (
            created.details.quotas as Array<{ usageTypeKey: string; limitAmount: number; limitAmountDaily: number }>
          )
            .filter((q) => (TYPES as string[]).includes(q.usageTypeKey))
            .map((q) => ({ type: q.usageTypeKey as TypeKey, limit: q.limitAmount, daily: q.limitAmountDaily }));
          const replay = new QuotaModel(
            Date.parse(created.createdAt),
            created.details.anchorDay as number,
            createdLimits,
          );
          for (const ev of events) {
            if (ev.kind === 'ledger') {
              replay.applyCharged(ev.at, ev.e.usageTypeKey as TypeKey, ev.e.amount);
              continue;
            }
            const a = ev.a;
            if (a.action === 'quota.limits_set') {
              const after = a.details.after as { limitAmount: number; limitAmountDaily: number };
              replay.setLimits(ev.at, a.usageTypeKey as TypeKey, after.limitAmount, after.limitAmountDaily);
            } else if (a.action === 'quota.bonus_added') {
              replay.addBonus(ev.at, a.usageTypeKey as TypeKey, a.details.amount as number);
            } else if (a.action === 'workspace.updated' && a.details.anchorDay) {
              replay.setAnchor(ev.at, (a.details.anchorDay as { after: number }).after);
            }
          }
          const { data } = await listQuotas(ws);
          for (const type of TYPES) {
            const got = data.find((q) => q.usageTypeKey === type)!;
            const fromLedger = replay.view(t, type);
            expect(got.availableAmount, `ledger replay ${type}`).toBe(fromLedger.availableAmount);
            expect([got.usedAmount, got.usedAmountDaily, got.spilloverAmount, got.bonusAmount]).toEqual([
              fromLedger.usedAmount,
              fromLedger.usedAmountDaily,
              fromLedger.spilloverAmount,
              fromLedger.bonusAmount,
            ]);
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
