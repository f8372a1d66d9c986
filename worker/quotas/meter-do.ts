/**
 * WorkspaceMeter: one Durable Object per workspace (addressed by idFromName(workspaceId)), with
 * SQLite storage, the authority for the workspace's usage counters, its Idempotency-Key records
 * and an outbox of usage events (decisions.md "Metering authority"; docs/quotas.md). This file is
 * its RPC methods and its alarm; the work is done by:
 * - meter-store.ts: the SQLite schema, the meta row and the quota rows with their cache;
 * - meter-charge.ts: a charge, one synchronous SQLite transaction (no await between check and
 *   deduction); the object runs one event at a time, so N concurrent charges against a remaining
 *   L succeed exactly min(N, L) times. The answer leaves only once the write is durable (output gate);
 * - meter-keys.ts: the Idempotency-Key records (claim, answer, release, purge);
 * - meter-sync.ts: seeding a cold object from D1, and applying the admin changes written to D1
 *   (on `sync` and before every flush, so a change whose notification was lost takes effect with
 *   the next flush);
 * - meter-flush.ts: the alarm's flush of the outbox into the D1 ledger, with a counter snapshot.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import { nowMs } from '../clock';
import { cycleParams, DAY_MS, type CycleParams } from './cycle';
import { allowanceRefusal, chargeIn, remaining, type MeterChargeRequest, type MeterChargeResult } from './meter-charge';
import type { UsageTypeKey } from './usage-types';
import type { AdmissionSnapshot } from '../admission/isolate-copy';
import { RateBucket, type BucketSettings } from '../admission/rate-bucket';
import { flushOutbox } from './meter-flush';
import { claimIn, completeIn, purgeExpiredKeys, releaseIn, type ClaimResult } from './meter-keys';
import { quotaView, roll, runningCycleStart } from './quota-rules';
import { MeterStore, type Meta } from './meter-store';
import { pullAdminChanges, seedFromD1 } from './meter-sync';
import type { Quota } from './repository';
import { excerpt } from '../../core/problem';

/**
 * Default delay between a charge and the flush of the outbox (the ledger lags by about this plus
 * the D1 write); the env var METER_FLUSH_DELAY_MS overrides it. Every flush costs durable writes
 * (alarm set and fired, the D1 batch, the outbox delete) on top of the charges' own, so under
 * sustained load a longer delay means fewer of them per charge (docs/quotas.md "What the meter costs").
 */
export const METER_FLUSH_DELAY_MS = 2_000;

export function meterFlushDelayMs(env: Pick<Env, 'METER_FLUSH_DELAY_MS'>): number {
  const raw = Number(env.METER_FLUSH_DELAY_MS);
  return Number.isFinite(raw) && raw > 0 ? raw : METER_FLUSH_DELAY_MS;
}
/** After the outbox is empty: hourly, while Idempotency-Key records remain, purge the expired ones. */
const PURGE_INTERVAL_MS = 3_600_000;
/** Backoff of a failed flush (the outbox is kept; nothing is lost). */
const FLUSH_BACKOFF_MS = [1_000, 2_000, 5_000, 10_000, 30_000, 60_000];

/** What admission asks the meter before any work (worker/admission/admit.ts). */
export interface MeterAdmitRequest {
  workspaceId: string;
  /** The usage type the route charges after the work; null: a free route (existence only). */
  usageTypeKey: UsageTypeKey | null;
  /** The request's estimated cost and the cap, in work units. */
  units: number;
  capUnits: number;
  /** The workspace's bucket settings (the API Worker's env: WORKSPACE_COST_RATE_UNITS_PER_S, WORKSPACE_COST_BURST_UNITS). */
  bucket: BucketSettings;
  atMs: number;
}

export type MeterAdmitResult =
  | { status: 'admitted'; snapshot: AdmissionSnapshot }
  | Exclude<MeterChargeResult, { status: 'charged' | 'replayed' | 'free' }>
  | { status: 'refused'; code: 'REQUEST_TOO_EXPENSIVE'; detail: string }
  | { status: 'refused'; code: 'RATE_LIMITED'; detail: string; retryAfterMs: number };

export interface MeterQuotas {
  anchorDay: number;
  /** First day of the running cycle (after an anchor change it can be later than the anchor's). */
  cycleStart: string;
  quotas: Quota[];
}

export class WorkspaceMeter extends DurableObject<Env> {
  private readonly store: MeterStore;
  private seeding: Promise<Meta | null> | null = null;
  private alarmAt: number | null = null;
  private flushChain: Promise<unknown> = Promise.resolve();
  private flushFailures = 0;
  /** The latest service instant a call carried (the purge's "now" when the service clock is injected). */
  private lastAtMs = 0;
  private readonly flushDelayMs: number;
  /** cycleParams of the last UTC day and anchor seen (they depend on the instant only through its day). */
  private params: { day: number; anchorDay: number; p: CycleParams } | null = null;
  /** The workspace's rate bucket in work units: in memory (a restarted object starts with a full one). */
  private readonly bucket: RateBucket;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new MeterStore(ctx.storage);
    this.flushDelayMs = meterFlushDelayMs(env);
    this.bucket = new RateBucket();
    void ctx.blockConcurrencyWhile(async () => {
      this.store.open();
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  // ---------------------------------------------------------------------------------------
  // RPC methods
  // ---------------------------------------------------------------------------------------

  /** Checks and deducts in one synchronous transaction; refusals are returned, not thrown. */
  async charge(req: MeterChargeRequest): Promise<MeterChargeResult> {
    // A seeded object answers without awaiting ready() (the hot path).
    if (!this.seededFor(req.workspaceId) && !(await this.ready(req.workspaceId, req.atMs)))
      return { status: 'refused', code: 'NOT_FOUND', detail: `Workspace '${excerpt(req.workspaceId)}' does not exist` };
    // The caller gave up (timeout): making the charge now would consume for a failed request.
    if (req.deadlineMs !== undefined && Date.now() > req.deadlineMs) return { status: 'expired' };
    this.see(req.atMs);
    const store = this.store;
    const result = store.transaction(() => {
      // The meta as of now (not as of before the await): other calls may have moved it meanwhile.
      const meta = store.meta!;
      return chargeIn(store, meta, this.paramsAt(req.atMs, meta.anchorDay), req);
    });
    if (result.status === 'charged' && result.seq !== undefined) this.scheduleFlush(this.flushDelayMs);
    // Work admitted from the caller's copy is debited now; the answer refreshes that copy.
    if (req.rate?.units) this.bucket.owe(req.rate.bucket, req.rate.units, Date.now());
    if (req.rate && (result.status === 'charged' || result.status === 'free'))
      result.snapshot = this.snapshot(req.usageTypeKey, req.atMs, req.rate.bucket);
    return result;
  }

  /**
   * Admission before any work (decisions.md "Admission and cost"): the workspace exists, its
   * allowance for the route's usage type is not exhausted, the request is within the cap, and the
   * rate bucket has its units, which are then taken. Nothing else is written.
   */
  async admit(req: MeterAdmitRequest): Promise<MeterAdmitResult> {
    if (!this.seededFor(req.workspaceId) && !(await this.ready(req.workspaceId, req.atMs)))
      return { status: 'refused', code: 'NOT_FOUND', detail: `Workspace '${excerpt(req.workspaceId)}' does not exist` };
    this.see(req.atMs);
    if (req.usageTypeKey !== null) {
      const meta = this.store.meta!;
      const refusal = allowanceRefusal(
        this.store,
        this.paramsAt(req.atMs, meta.anchorDay),
        req.workspaceId,
        req.usageTypeKey,
      );
      if (refusal) return refusal;
    }
    if (req.units > req.capUnits)
      return {
        status: 'refused',
        code: 'REQUEST_TOO_EXPENSIVE',
        detail: `This request is estimated at ${req.units} work units, above the cap of ${req.capUnits}`,
      };
    const waitMs = this.bucket.take(req.bucket, req.units, Date.now());
    if (waitMs > 0)
      return {
        status: 'refused',
        code: 'RATE_LIMITED',
        retryAfterMs: waitMs,
        detail: `Workspace '${excerpt(req.workspaceId)}' is sending work faster than its rate allows: this request needs ${req.units} work units`,
      };
    return { status: 'admitted', snapshot: this.snapshot(req.usageTypeKey, req.atMs, req.bucket) };
  }

  /** Whether the workspace exists: the readiness check of a charge, without the charge (free routes). */
  async exists(workspaceId: string, atMs: number): Promise<boolean> {
    return this.seededFor(workspaceId) || (await this.ready(workspaceId, atMs)) !== null;
  }

  /** The workspace's quotas as of `atMs` (rollovers applied, nothing written); null: no such workspace. */
  async quotas(workspaceId: string, atMs: number, usageTypeKey?: string): Promise<MeterQuotas | null> {
    if (!(await this.ready(workspaceId, atMs))) return null;
    const meta = this.store.meta!;
    this.see(atMs);
    const p = this.paramsAt(atMs, meta.anchorDay);
    const rows = this.store.rows().map((r) => roll(r, p));
    return {
      anchorDay: meta.anchorDay,
      cycleStart: runningCycleStart(rows, p),
      quotas: rows
        .filter((r) => usageTypeKey === undefined || r.usage_type_key === usageTypeKey)
        .map((r) => quotaView(r, workspaceId, p)),
    };
  }

  /** An admin change was written to D1: apply the audit rows after the watermark, then answer the quotas. */
  async sync(workspaceId: string, atMs: number): Promise<MeterQuotas | null> {
    const meta = await this.ready(workspaceId, atMs);
    if (!meta) return null;
    await pullAdminChanges(this.env.DB, this.store);
    return this.quotas(workspaceId, atMs);
  }

  /** Claims an Idempotency-Key for a request (worker/idempotency.ts), one synchronous transaction. */
  async claimKey(
    workspaceId: string,
    key: string,
    method: string,
    path: string,
    bodySha256: string,
    lock: string,
    atMs: number,
    leaseMs: number,
  ): Promise<ClaimResult> {
    const meta = await this.ready(workspaceId, atMs);
    if (!meta) return { kind: 'unknown-workspace' };
    this.see(atMs);
    const claim = { key, method, path, bodySha256, lock, atMs, leaseMs };
    const result = this.store.transaction(() => claimIn(this.store.sql, claim));
    this.scheduleFlush(PURGE_INTERVAL_MS);
    return result;
  }

  /** Stores the 2xx answer of the request holding the key. */
  async completeKey(
    key: string,
    lock: string,
    status: number,
    contentType: string | null,
    body: string,
  ): Promise<void> {
    completeIn(this.store.sql, key, lock, status, contentType, body);
  }

  /** Not a success: nothing was consumed, the key is free for a retry. */
  async releaseKey(key: string, lock: string): Promise<void> {
    releaseIn(this.store.sql, key, lock);
  }

  /**
   * Flushes the whole outbox to D1 now and purges expired keys (the alarm's work; also for
   * operators and tests that need the ledger up to date). Returns the number of events written.
   */
  async flush(atMs?: number): Promise<number> {
    if (atMs !== undefined) this.see(atMs);
    const run = this.flushChain.then(() => this.flushAll());
    this.flushChain = run.catch(() => undefined);
    return run;
  }

  override async alarm(): Promise<void> {
    this.alarmAt = null;
    try {
      await this.flush();
      this.flushFailures = 0;
    } catch (err) {
      // D1 unreachable: the events stay in the outbox and the flush is tried again later.
      const delay = FLUSH_BACKOFF_MS[Math.min(this.flushFailures, FLUSH_BACKOFF_MS.length - 1)];
      this.flushFailures++;
      console.error(
        `[meter] flush of ${this.store.meta?.workspaceId ?? '?'} failed (${this.flushFailures}x), retry in ${delay} ms: ${(err as Error).message.slice(0, 200)}`,
      );
      this.scheduleFlush(delay, true);
      return;
    }
    const store = this.store;
    if (store.count('outbox') > 0) this.scheduleFlush(this.flushDelayMs);
    else if (store.count('request_keys') + store.count('charge_keys') > 0) this.scheduleFlush(PURGE_INTERVAL_MS);
  }

  // ---------------------------------------------------------------------------------------
  // Internals
  // ---------------------------------------------------------------------------------------

  /** Admin changes first (the flush's counter snapshot must include them), then the outbox, then the purge. */
  private async flushAll(): Promise<number> {
    if (!this.store.meta) return 0;
    await pullAdminChanges(this.env.DB, this.store);
    const written = await flushOutbox(this.env.DB, this.store);
    purgeExpiredKeys(this.store.sql, this.serviceNow());
    return written;
  }

  private snapshot(usageTypeKey: UsageTypeKey | null, atMs: number, settings: BucketSettings): AdmissionSnapshot {
    const bucket = this.bucket.levelAt(settings, Date.now());
    if (usageTypeKey === null || !this.store.meta) return { monthly: null, daily: null, bucket };
    const left = remaining(this.store, this.paramsAt(atMs, this.store.meta.anchorDay), usageTypeKey);
    return { ...left, bucket };
  }

  private seededFor(workspaceId: string): boolean {
    const meta = this.store.meta;
    return meta !== null && meta.workspaceId === workspaceId;
  }

  /** The seeded state; seeds a cold object from D1 first (once, however many calls wait for it). */
  private async ready(workspaceId: string, atMs: number): Promise<Meta | null> {
    const meta = this.store.meta;
    if (meta) {
      if (meta.workspaceId !== workspaceId) throw new Error(`meter of ${meta.workspaceId} called for ${workspaceId}`);
      return meta;
    }
    this.seeding ??= seedFromD1(this.env.DB, this.store, workspaceId, atMs).finally(() => (this.seeding = null));
    return this.seeding;
  }

  private see(atMs: number): void {
    if (atMs > this.lastAtMs) this.lastAtMs = atMs;
  }

  private serviceNow(): number {
    return Math.max(nowMs(), this.lastAtMs);
  }

  private paramsAt(atMs: number, anchorDay: number): CycleParams {
    const day = Math.floor(atMs / DAY_MS);
    const c = this.params;
    if (c !== null && c.day === day && c.anchorDay === anchorDay) return c.p;
    const p = cycleParams(atMs, anchorDay);
    this.params = { day, anchorDay, p };
    return p;
  }

  /** Sets the alarm `delayMs` from now unless one is due earlier (`force`: replace it). */
  private scheduleFlush(delayMs: number, force = false): void {
    const at = Date.now() + delayMs;
    if (!force && this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }
}
