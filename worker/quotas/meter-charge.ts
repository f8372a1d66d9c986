/**
 * The charge in the workspace's meter (meter-do.ts): the check and the deduction, which the meter
 * runs inside one synchronous SQLite transaction, so nothing happens between them. A charge made
 * writes its counters, its Idempotency-Key (charge_keys) and an outbox event for the D1 ledger.
 */
import type { UsageTypeKey } from './usage-types';
import type { AdmissionSnapshot } from '../admission/isolate-copy';
import type { BucketSettings } from '../admission/rate-bucket';
import type { CycleParams } from './cycle';
import { available, roll } from './quota-rules';
import type { Meta, MeterStore } from './meter-store';
import { isoTimestamp } from './repository';
import { LIMITS } from '../../core/limits';

export interface MeterChargeRequest {
  workspaceId: string;
  usageTypeKey: UsageTypeKey;
  amount: number;
  requestId: string;
  idempotencyKey: string | null;
  atMs: number;
  /** Real time (Date.now()) after which the caller no longer waits: the charge is then not made. */
  deadlineMs?: number;
  /** Work units admitted from the caller's copy of the meter's state (worker/admission/): taken from the rate bucket now. */
  rate?: { units: number; bucket: BucketSettings };
}

/** Refusals travel as values (an RPC exception keeps only its message). */
export type MeterRefusal =
  | {
      status: 'refused';
      code: 'NOT_FOUND' | 'ERROR_NO_REMAINING_QUOTA' | 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS' | 'CONFLICT';
      detail: string;
    }
  | { status: 'refused'; code: 'DAILY_LIMIT_REACHED'; detail: string; daily: true }
  /** The request arrived after the caller's deadline: nothing was charged. */
  | { status: 'expired' };

export type MeterChargeResult =
  { status: 'charged' | 'replayed' | 'free'; seq?: number; snapshot?: AdmissionSnapshot } | MeterRefusal;

/**
 * The refusal of a workspace without room for `usageTypeKey` as of `p` (monthly before daily:
 * when both apply, waiting for midnight would not help), or null when it has some left.
 */
export function allowanceRefusal(
  store: MeterStore,
  p: CycleParams,
  workspaceId: string,
  usageTypeKey: UsageTypeKey,
): MeterRefusal | null {
  const stored = store.rowMap().get(usageTypeKey);
  const code =
    usageTypeKey === 'plagiarismChecks' ? 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS' : 'ERROR_NO_REMAINING_QUOTA';
  if (!stored) return { status: 'refused', code, detail: `Workspace '${workspaceId}' has no ${usageTypeKey} quota` };
  const q = roll(stored, p);
  if (available(q) <= 0)
    return { status: 'refused', code, detail: `The monthly ${usageTypeKey} allowance is exhausted` };
  if (q.used_amount_daily >= q.limit_amount_daily) {
    return {
      status: 'refused',
      code: 'DAILY_LIMIT_REACHED',
      daily: true,
      detail: `The daily ${usageTypeKey} limit of ${q.limit_amount_daily} is reached; it resets at midnight UTC`,
    };
  }
  return null;
}

/** The monthly and daily amounts of `usageTypeKey` still available as of `p` (0 without a quota). */
export function remaining(
  store: MeterStore,
  p: CycleParams,
  usageTypeKey: UsageTypeKey,
): { monthly: number; daily: number } {
  const stored = store.rowMap().get(usageTypeKey);
  if (!stored) return { monthly: 0, daily: 0 };
  const q = roll(stored, p);
  return { monthly: available(q), daily: q.limit_amount_daily - q.used_amount_daily };
}

/**
 * Checks and deducts `req` as of the cycle `p` (of `meta`'s anchor day); call it inside
 * store.transaction. A charge made returns its outbox sequence number.
 */
export function chargeIn(store: MeterStore, meta: Meta, p: CycleParams, req: MeterChargeRequest): MeterChargeResult {
  const stored = store.rowMap().get(req.usageTypeKey);
  const exhausted = (detail: string): MeterRefusal => ({
    status: 'refused',
    code: req.usageTypeKey === 'plagiarismChecks' ? 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS' : 'ERROR_NO_REMAINING_QUOTA',
    detail,
  });
  if (req.amount === 0) {
    // Deducts nothing but is refused without room (decisions.md "Identifiers, bodies and cost").
    return allowanceRefusal(store, p, req.workspaceId, req.usageTypeKey) ?? { status: 'free' };
  }
  if (req.idempotencyKey !== null) {
    const prior = store.sql
      .exec<{ usage_type_key: string; amount: number; at_ms: number }>(
        'SELECT usage_type_key, amount, at_ms FROM charge_keys WHERE idempotency_key = ?',
        req.idempotencyKey,
      )
      .toArray()[0];
    // Keys count for 24 hours; afterwards the key may be used again.
    if (prior && prior.at_ms >= req.atMs - LIMITS.idempotencyKeyTtlMs) {
      if (prior.usage_type_key === req.usageTypeKey && prior.amount === req.amount) return { status: 'replayed' };
      return {
        status: 'refused',
        code: 'CONFLICT',
        detail:
          `Idempotency-Key '${req.idempotencyKey}' was already used for a charge of ${prior.amount} ${prior.usage_type_key}; ` +
          `this request would charge ${req.amount} ${req.usageTypeKey}. Use a new key for a different request.`,
      };
    }
  }
  if (!stored) return exhausted(`Workspace '${req.workspaceId}' has no ${req.usageTypeKey} quota`);
  const q = roll(stored, p);
  // Monthly before daily: when both apply, waiting for midnight would not help.
  if (available(q) < req.amount) {
    return exhausted(
      `The monthly ${req.usageTypeKey} allowance is exhausted: ${available(q)} available, ${req.amount} requested`,
    );
  }
  if (q.used_amount_daily + req.amount > q.limit_amount_daily) {
    return {
      status: 'refused',
      code: 'DAILY_LIMIT_REACHED',
      daily: true,
      detail:
        `The daily ${req.usageTypeKey} limit of ${q.limit_amount_daily} is reached: ${q.used_amount_daily} used today, ` +
        `${req.amount} requested; it resets at midnight UTC`,
    };
  }
  q.used_amount += req.amount;
  q.used_amount_daily += req.amount;
  store.writeCounters(q);
  if (req.idempotencyKey !== null) store.writeChargeKey(req.idempotencyKey, req.usageTypeKey, req.amount, req.atMs);
  const seq = meta.nextSeq;
  store.sql.exec(
    'INSERT INTO outbox (seq, usage_type_key, amount, request_id, idempotency_key, cycle_start, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
    seq,
    req.usageTypeKey,
    req.amount,
    req.requestId,
    req.idempotencyKey,
    q.cycle_start,
    isoTimestamp(req.atMs),
  );
  // In memory only: the outbox row just written carries it across a restart (readMeta).
  meta.nextSeq = seq + 1;
  return { status: 'charged', seq };
}
