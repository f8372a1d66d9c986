/**
 * WorkspaceMeter: one Durable Object per workspace (addressed by idFromName(workspaceId)), with
 * SQLite storage, the authority for the workspace's usage counters, its Idempotency-Key records
 * and an outbox of usage events (decisions.md "Metering authority"; docs/quotas.md).
 *
 * - A charge is one synchronous SQLite transaction (no await between check and deduction), and
 *   the Durable Object runs one event at a time, so N concurrent charges against a remaining L
 *   succeed exactly min(N, L) times. The answer leaves only once the write is durable (output gate).
 * - Every charge appends an outbox event; an alarm flushes the outbox to D1 (the ledger, the system
 *   of record) with inserts keyed by (workspace, meter_seq), so a flush that is retried after a
 *   lost answer writes nothing twice, and deletes the acknowledged events. The same flush writes a
 *   snapshot of the counters into D1's quota rows and purges expired Idempotency-Key records.
 * - A cold object (no storage yet: the workspace's first use) seeds itself from D1 in one batch:
 *   anchor day, quota rows with their counters, the keyed charges of the last 24 hours in the
 *   ledger, the audit log's watermark and the ledger's last meter_seq.
 * - Admin changes are written to D1 (with their audit row) and the object is told to `sync`: it
 *   applies the audit rows after its watermark in order, each at its own instant. Every flush syncs
 *   too, so a change whose notification was lost takes effect with the next flush.
 */
import { DurableObject } from 'cloudflare:workers';
import type { Env } from '../env';
import { nowMs } from '../clock';
import type { UsageTypeKey } from './charge';
import { cycleParams, cycleStartFor, DAY_MS, isoDate, type CycleParams } from './cycle';
import { available, quotaView, roll, type MeterRow } from './meter-rules';
import { isoTimestamp, type Quota } from './repository';
import { LIMITS } from '../../core/limits';
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
const FLUSH_BATCH = 100;

export interface MeterChargeRequest {
  workspaceId: string;
  usageTypeKey: UsageTypeKey;
  amount: number;
  requestId: string;
  idempotencyKey: string | null;
  atMs: number;
  /** Real time (Date.now()) after which the caller no longer waits: the charge is then not made. */
  deadlineMs?: number;
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

export type MeterChargeResult = { status: 'charged' | 'replayed' | 'free'; seq?: number } | MeterRefusal;

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'unknown-workspace' }
  | { kind: 'replay'; status: number; contentType: string | null; body: string }
  | { kind: 'reused'; method: string; path: string }
  | { kind: 'in-progress'; retryAfterSeconds: number };

export interface MeterQuotas {
  anchorDay: number;
  /** First day of the running cycle (after an anchor change it can be later than the anchor's). */
  cycleStart: string;
  quotas: Quota[];
}

interface RequestKeyRow {
  method: string;
  path: string;
  body_sha256: string;
  state: 'in_progress' | 'done';
  lock_token: string | null;
  locked_until: number | null;
  status: number | null;
  content_type: string | null;
  response_body: string | null;
  expires_at: number;
}

interface OutboxRow {
  seq: number;
  usage_type_key: string;
  amount: number;
  request_id: string;
  idempotency_key: string | null;
  cycle_start: string;
  created_at: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v);
CREATE TABLE IF NOT EXISTS quotas (
  usage_type_key TEXT PRIMARY KEY, quota_id TEXT NOT NULL,
  limit_amount INTEGER NOT NULL, limit_amount_daily INTEGER NOT NULL,
  used_amount INTEGER NOT NULL, used_amount_daily INTEGER NOT NULL,
  bonus_amount INTEGER NOT NULL, spillover_amount INTEGER NOT NULL,
  cycle_start TEXT NOT NULL, daily_date TEXT NOT NULL, fair_use_policy_limit INTEGER);
CREATE TABLE IF NOT EXISTS charge_keys (idempotency_key TEXT PRIMARY KEY, usage_type_key TEXT NOT NULL, amount INTEGER NOT NULL, at_ms INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS request_keys (
  idempotency_key TEXT PRIMARY KEY, method TEXT NOT NULL, path TEXT NOT NULL, body_sha256 TEXT NOT NULL,
  state TEXT NOT NULL, lock_token TEXT, locked_until INTEGER, status INTEGER, content_type TEXT, response_body TEXT,
  created_at TEXT NOT NULL, expires_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS outbox (
  seq INTEGER PRIMARY KEY, usage_type_key TEXT NOT NULL, amount INTEGER NOT NULL, request_id TEXT NOT NULL,
  idempotency_key TEXT, cycle_start TEXT NOT NULL, created_at TEXT NOT NULL);
`;

const ROW_COLUMNS =
  'usage_type_key, quota_id, limit_amount, limit_amount_daily, used_amount, used_amount_daily, bonus_amount, spillover_amount, cycle_start, daily_date, fair_use_policy_limit';

interface Meta {
  workspaceId: string;
  anchorDay: number;
  /** Last admin_audit_log id applied to the counters. */
  auditId: number;
  /**
   * Next outbox sequence number (continues the workspace's meter_seq in D1). Held in memory: a
   * charge does not write it. Stored as `next_seq` only with the rest of the meta and when a flush
   * deletes outbox rows (in the same transaction); on load it is the larger of that and the
   * outbox's highest seq + 1, so a sequence is never handed out twice (D1 ignores a repeated
   * (workspace, meter_seq), which would lose the event).
   */
  nextSeq: number;
}

export class WorkspaceMeter extends DurableObject<Env> {
  private readonly sql: SqlStorage;
  private meta: Meta | null = null;
  private seeding: Promise<Meta | null> | null = null;
  private alarmAt: number | null = null;
  private flushChain: Promise<unknown> = Promise.resolve();
  private flushFailures = 0;
  /** The latest service instant a call carried (the purge's "now" when the service clock is injected). */
  private lastAtMs = 0;
  private readonly flushDelayMs: number;
  /**
   * The quota rows as stored, by usage type (write-through: writeRow updates both), so a charge
   * reads no row from SQLite; null until loaded, and dropped whenever a transaction throws (its
   * writes were rolled back) or a seed or pull rewrote rows.
   */
  private rowCache: Map<string, MeterRow> | null = null;
  /** cycleParams of the last UTC day and anchor seen (they depend on the instant only through its day). */
  private params: { day: number; anchorDay: number; p: CycleParams } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.flushDelayMs = meterFlushDelayMs(env);
    void ctx.blockConcurrencyWhile(async () => {
      this.sql.exec(SCHEMA);
      this.meta = this.readMeta();
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  // ---------------------------------------------------------------------------------------
  // RPC methods
  // ---------------------------------------------------------------------------------------

  /** Checks and deducts in one synchronous transaction; refusals are returned, not thrown. */
  async charge(req: MeterChargeRequest): Promise<MeterChargeResult> {
    // A seeded object answers without awaiting ready() (the hot path).
    const seeded = this.meta !== null && this.meta.workspaceId === req.workspaceId;
    if (!seeded && !(await this.ready(req.workspaceId, req.atMs)))
      return { status: 'refused', code: 'NOT_FOUND', detail: `Workspace '${excerpt(req.workspaceId)}' does not exist` };
    // The caller gave up (timeout): making the charge now would consume for a failed request.
    if (req.deadlineMs !== undefined && Date.now() > req.deadlineMs) return { status: 'expired' };
    this.see(req.atMs);
    // this.meta as of now (not as of before the await): other calls may have moved it meanwhile.
    const result = this.transaction(() => this.chargeSync(this.meta!, req));
    if (result.status === 'charged' && result.seq !== undefined) this.scheduleFlush(this.flushDelayMs);
    return result;
  }

  /** Whether the workspace exists: the readiness check of a charge, without the charge (free routes). */
  async exists(workspaceId: string, atMs: number): Promise<boolean> {
    const seeded = this.meta !== null && this.meta.workspaceId === workspaceId;
    return seeded || (await this.ready(workspaceId, atMs)) !== null;
  }

  /** The workspace's quotas as of `atMs` (rollovers applied, nothing written); null: no such workspace. */
  async quotas(workspaceId: string, atMs: number, usageTypeKey?: string): Promise<MeterQuotas | null> {
    if (!(await this.ready(workspaceId, atMs))) return null;
    const meta = this.meta!;
    this.see(atMs);
    const p = this.paramsAt(atMs, meta.anchorDay);
    const rows = this.rows().map((r) => roll(r, p));
    const cycleStart = rows.reduce((m, r) => (r.cycle_start > m ? r.cycle_start : m), p.cycleStart);
    return {
      anchorDay: meta.anchorDay,
      cycleStart,
      quotas: rows
        .filter((r) => usageTypeKey === undefined || r.usage_type_key === usageTypeKey)
        .map((r) => quotaView(r, workspaceId, p)),
    };
  }

  /** An admin change was written to D1: apply the audit rows after the watermark, then answer the quotas. */
  async sync(workspaceId: string, atMs: number): Promise<MeterQuotas | null> {
    const meta = await this.ready(workspaceId, atMs);
    if (!meta) return null;
    await this.pull();
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
    const result = this.transaction((): ClaimResult => {
      const row = this.sql
        .exec<Record<string, SqlStorageValue>>('SELECT * FROM request_keys WHERE idempotency_key = ?', key)
        .toArray()[0] as unknown as RequestKeyRow | undefined;
      const same = row !== undefined && row.method === method && row.path === path && row.body_sha256 === bodySha256;
      if (!row || row.expires_at <= atMs) {
        this.sql.exec(
          "INSERT OR REPLACE INTO request_keys (idempotency_key, method, path, body_sha256, state, lock_token, locked_until, created_at, expires_at) VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?, ?)",
          key,
          method,
          path,
          bodySha256,
          lock,
          atMs + leaseMs,
          isoTimestamp(atMs),
          atMs + LIMITS.idempotencyKeyTtlMs,
        );
        return { kind: 'claimed' };
      }
      if (!same) return { kind: 'reused', method: row.method, path: row.path };
      // A retried claim of this very request (the first answer was lost): it holds the key already.
      if (row.state === 'in_progress' && row.lock_token === lock) return { kind: 'claimed' };
      if (row.state === 'done' && row.status !== null) {
        return { kind: 'replay', status: row.status, contentType: row.content_type, body: row.response_body ?? '' };
      }
      if ((row.locked_until ?? 0) > atMs) {
        return {
          kind: 'in-progress',
          retryAfterSeconds: Math.max(1, Math.ceil(((row.locked_until ?? atMs) - atMs) / 1000)),
        };
      }
      // An abandoned lease of the same request: take it over (its charge is recognized by charge_keys).
      this.sql.exec(
        "UPDATE request_keys SET state = 'in_progress', lock_token = ?, locked_until = ?, status = NULL, content_type = NULL, response_body = NULL WHERE idempotency_key = ?",
        lock,
        atMs + leaseMs,
        key,
      );
      return { kind: 'claimed' };
    });
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
    this.sql.exec(
      "UPDATE request_keys SET state = 'done', status = ?, content_type = ?, response_body = ?, lock_token = NULL, locked_until = NULL WHERE idempotency_key = ? AND lock_token = ?",
      status,
      contentType,
      body,
      key,
      lock,
    );
  }

  /** Not a success: nothing was consumed, the key is free for a retry. */
  async releaseKey(key: string, lock: string): Promise<void> {
    this.sql.exec('DELETE FROM request_keys WHERE idempotency_key = ? AND lock_token = ?', key, lock);
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
        `[meter] flush of ${this.meta?.workspaceId ?? '?'} failed (${this.flushFailures}x), retry in ${delay} ms: ${(err as Error).message.slice(0, 200)}`,
      );
      this.scheduleFlush(delay, true);
      return;
    }
    if (this.count('outbox') > 0) this.scheduleFlush(this.flushDelayMs);
    else if (this.count('request_keys') + this.count('charge_keys') > 0) this.scheduleFlush(PURGE_INTERVAL_MS);
  }

  // ---------------------------------------------------------------------------------------
  // Internals
  // ---------------------------------------------------------------------------------------

  private see(atMs: number): void {
    if (atMs > this.lastAtMs) this.lastAtMs = atMs;
  }

  private serviceNow(): number {
    return Math.max(nowMs(), this.lastAtMs);
  }

  /**
   * transactionSync that keeps the in-memory state true to storage: when `fn` throws, SQLite rolls
   * its writes back, so the rows cached and the meta (which may have been moved) are reloaded.
   */
  private transaction<T>(fn: () => T): T {
    try {
      return this.ctx.storage.transactionSync(fn);
    } catch (err) {
      this.rowCache = null;
      this.meta = this.readMeta();
      throw err;
    }
  }

  private paramsAt(atMs: number, anchorDay: number): CycleParams {
    const day = Math.floor(atMs / DAY_MS);
    const c = this.params;
    if (c !== null && c.day === day && c.anchorDay === anchorDay) return c.p;
    const p = cycleParams(atMs, anchorDay);
    this.params = { day, anchorDay, p };
    return p;
  }

  private count(table: 'outbox' | 'request_keys' | 'charge_keys'): number {
    return Number(this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n);
  }

  /** Sets the alarm `delayMs` from now unless one is due earlier (`force`: replace it). */
  private scheduleFlush(delayMs: number, force = false): void {
    const at = Date.now() + delayMs;
    if (!force && this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    void this.ctx.storage.setAlarm(at);
  }

  private readMeta(): Meta | null {
    const rows = this.sql.exec<{ k: string; v: SqlStorageValue }>('SELECT k, v FROM meta').toArray();
    if (rows.length === 0) return null;
    const m = new Map(rows.map((r) => [r.k, r.v]));
    // Charges do not store next_seq: the outbox's highest seq + 1 when that is larger.
    const outboxNext = Number(
      this.sql.exec<{ n: number }>('SELECT COALESCE(MAX(seq), 0) + 1 AS n FROM outbox').one().n,
    );
    return {
      workspaceId: String(m.get('workspace_id')),
      anchorDay: Number(m.get('anchor_day')),
      auditId: Number(m.get('audit_id')),
      nextSeq: Math.max(Number(m.get('next_seq')), outboxNext),
    };
  }

  private writeMeta(m: Meta): void {
    const set = (k: string, v: SqlStorageValue) =>
      this.sql.exec('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)', k, v);
    set('workspace_id', m.workspaceId);
    set('anchor_day', m.anchorDay);
    set('audit_id', m.auditId);
    set('next_seq', m.nextSeq);
    this.meta = m;
  }

  /** The stored rows by usage type (loaded once; callers must not mutate them: roll() copies). */
  private rowMap(): Map<string, MeterRow> {
    if (this.rowCache === null) {
      const rows = this.sql
        .exec<Record<string, SqlStorageValue>>(`SELECT ${ROW_COLUMNS} FROM quotas ORDER BY usage_type_key`)
        .toArray() as unknown as MeterRow[];
      this.rowCache = new Map(rows.map((r) => [r.usage_type_key, r]));
    }
    return this.rowCache;
  }

  /** The stored rows in usage-type order. */
  private rows(): MeterRow[] {
    return [...this.rowMap().values()].sort((a, b) =>
      a.usage_type_key < b.usage_type_key ? -1 : a.usage_type_key > b.usage_type_key ? 1 : 0,
    );
  }

  private writeRow(r: MeterRow): void {
    this.sql.exec(
      `INSERT OR REPLACE INTO quotas (${ROW_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      r.usage_type_key,
      r.quota_id,
      r.limit_amount,
      r.limit_amount_daily,
      r.used_amount,
      r.used_amount_daily,
      r.bonus_amount,
      r.spillover_amount,
      r.cycle_start,
      r.daily_date,
      r.fair_use_policy_limit,
    );
    this.rowCache?.set(r.usage_type_key, r);
  }

  /** The seeded state; seeds a cold object from D1 first (once, however many calls wait for it). */
  private async ready(workspaceId: string, atMs: number): Promise<Meta | null> {
    if (this.meta) {
      if (this.meta.workspaceId !== workspaceId)
        throw new Error(`meter of ${this.meta.workspaceId} called for ${workspaceId}`);
      return this.meta;
    }
    this.seeding ??= this.seed(workspaceId, atMs).finally(() => (this.seeding = null));
    return this.seeding;
  }

  private async seed(workspaceId: string, atMs: number): Promise<Meta | null> {
    const db = this.env.DB;
    const [ws, quotas, audit, ledger, chargeKeys] = await db.batch<Record<string, unknown>>([
      db.prepare('SELECT anchor_day FROM workspaces WHERE id = ?1').bind(workspaceId),
      db
        .prepare(
          'SELECT q.id AS quota_id, q.usage_type_key, q.limit_amount, q.limit_amount_daily, q.used_amount, q.used_amount_daily, q.bonus_amount, ' +
            'q.spillover_amount, q.cycle_start, q.daily_date, ut.fair_use_policy_limit FROM quotas q JOIN usage_types ut ON ut.key = q.usage_type_key WHERE q.workspace_id = ?1',
        )
        .bind(workspaceId),
      db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM admin_audit_log WHERE workspace_id = ?1').bind(workspaceId),
      db
        .prepare('SELECT COALESCE(MAX(meter_seq), 0) AS seq FROM usage_ledger WHERE workspace_id = ?1')
        .bind(workspaceId),
      db
        .prepare(
          'SELECT idempotency_key, usage_type_key, amount, created_at FROM usage_ledger WHERE workspace_id = ?1 AND idempotency_key IS NOT NULL AND created_at >= ?2 ORDER BY id',
        )
        .bind(workspaceId, isoTimestamp(atMs - LIMITS.idempotencyKeyTtlMs)),
    ]);
    const wsRow = ws.results[0] as { anchor_day: number } | undefined;
    if (!wsRow) return null; // nothing stored: an unknown workspace stays cold
    // Another call may have seeded while this one waited for D1 (after a reset of the in-memory state).
    const existing = this.readMeta();
    if (existing) return (this.meta = existing);
    const meta: Meta = {
      workspaceId,
      anchorDay: wsRow.anchor_day,
      auditId: Number(audit.results[0].id),
      nextSeq: Number(ledger.results[0].seq) + 1,
    };
    this.rowCache = null;
    this.transaction(() => {
      for (const r of quotas.results as unknown as MeterRow[]) this.writeRow(r);
      for (const k of chargeKeys.results) {
        this.sql.exec(
          'INSERT OR REPLACE INTO charge_keys (idempotency_key, usage_type_key, amount, at_ms) VALUES (?, ?, ?, ?)',
          k.idempotency_key as string,
          k.usage_type_key as string,
          Number(k.amount),
          Date.parse(String(k.created_at)),
        );
      }
      this.writeMeta(meta);
    });
    return meta;
  }

  private chargeSync(meta: Meta, req: MeterChargeRequest): MeterChargeResult {
    const p = this.paramsAt(req.atMs, meta.anchorDay);
    const stored = this.rowMap().get(req.usageTypeKey);
    const exhausted = (detail: string): MeterRefusal => ({
      status: 'refused',
      code:
        req.usageTypeKey === 'plagiarismChecks' ? 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS' : 'ERROR_NO_REMAINING_QUOTA',
      detail,
    });
    if (req.amount === 0) {
      // Deducts nothing but is refused without room (decisions.md "Identifiers, bodies and cost").
      if (!stored) return exhausted(`Workspace '${req.workspaceId}' has no ${req.usageTypeKey} quota`);
      const q = roll(stored, p);
      if (available(q) <= 0) return exhausted(`The monthly ${req.usageTypeKey} allowance is exhausted`);
      if (q.used_amount_daily >= q.limit_amount_daily) {
        return {
          status: 'refused',
          code: 'DAILY_LIMIT_REACHED',
          daily: true,
          detail: `The daily ${req.usageTypeKey} limit of ${q.limit_amount_daily} is reached; it resets at midnight UTC`,
        };
      }
      return { status: 'free' };
    }
    if (req.idempotencyKey !== null) {
      const prior = this.sql
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
    // An UPDATE in place of writeRow's REPLACE (which deletes and reinserts the row and its key):
    // only what a charge or its rollover changes.
    this.sql.exec(
      'UPDATE quotas SET used_amount = ?, used_amount_daily = ?, bonus_amount = ?, spillover_amount = ?, cycle_start = ?, daily_date = ? WHERE usage_type_key = ?',
      q.used_amount,
      q.used_amount_daily,
      q.bonus_amount,
      q.spillover_amount,
      q.cycle_start,
      q.daily_date,
      q.usage_type_key,
    );
    this.rowCache!.set(q.usage_type_key, q);
    if (req.idempotencyKey !== null) {
      this.sql.exec(
        'INSERT OR REPLACE INTO charge_keys (idempotency_key, usage_type_key, amount, at_ms) VALUES (?, ?, ?, ?)',
        req.idempotencyKey,
        req.usageTypeKey,
        req.amount,
        req.atMs,
      );
    }
    const seq = meta.nextSeq;
    this.sql.exec(
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

  /**
   * Applies the admin changes (audit rows) D1 holds beyond the watermark. Read in one batch,
   * applied in one transaction that re-checks the watermark, so two overlapping pulls never apply
   * a row twice.
   */
  private async pull(): Promise<void> {
    const meta = this.meta;
    if (!meta) return;
    const db = this.env.DB;
    const [audit, types] = await db.batch<Record<string, unknown>>([
      db
        .prepare(
          'SELECT id, action, usage_type_key, details, created_at FROM admin_audit_log WHERE workspace_id = ?1 AND id > ?2 ORDER BY id',
        )
        .bind(meta.workspaceId, meta.auditId),
      db
        .prepare(
          'SELECT q.id, q.usage_type_key, ut.fair_use_policy_limit FROM quotas q JOIN usage_types ut ON ut.key = q.usage_type_key WHERE q.workspace_id = ?1',
        )
        .bind(meta.workspaceId),
    ]);
    if (audit.results.length === 0) return;
    const d1Quotas = new Map(
      types.results.map((t) => [
        String(t.usage_type_key),
        { id: String(t.id), fair: t.fair_use_policy_limit as number | null },
      ]),
    );
    this.transaction(() => {
      const m = { ...this.meta! };
      // Each at its own instant, in time order.
      const changes = audit.results
        .filter((a) => Number(a.id) > m.auditId)
        .map((a) => ({ at: Date.parse(String(a.created_at)), audit: a }))
        .sort((x, y) => x.at - y.at);
      for (const { at, audit: a } of changes) {
        this.applyAudit(m, a, at, d1Quotas);
        m.auditId = Math.max(m.auditId, Number(a.id));
      }
      this.writeMeta(m);
    });
    // Rows were rewritten at their own instants: read them back rather than trust the cache.
    this.rowCache = null;
  }

  /** One admin change, at its instant: the rollover up to then with the old settings, then the change. */
  private applyAudit(
    m: Meta,
    a: Record<string, unknown>,
    at: number,
    d1Quotas: Map<string, { id: string; fair: number | null }>,
  ): void {
    const details = JSON.parse(String(a.details)) as Record<string, unknown>;
    const p = cycleParams(at, m.anchorDay);
    const type = a.usage_type_key === null ? null : String(a.usage_type_key);
    const current = this.rows();
    if (a.action === 'workspace.updated') {
      const anchor = details.anchorDay as { after: number } | undefined;
      if (!anchor) return;
      for (const r of current) this.writeRow(roll(r, p));
      m.anchorDay = anchor.after;
      return;
    }
    if (type === null) return;
    const stored = current.find((r) => r.usage_type_key === type);
    if (a.action === 'quota.limits_set') {
      const after = details.after as { limitAmount: number; limitAmountDaily: number };
      if (stored) {
        this.writeRow({
          ...roll(stored, p),
          limit_amount: after.limitAmount,
          limit_amount_daily: after.limitAmountDaily,
        });
      } else {
        // A new row joins the running cycle of the workspace's other rows.
        const running = current
          .map((r) => roll(r, p))
          .reduce((s, r) => (r.cycle_start > s ? r.cycle_start : s), cycleStartFor(at, m.anchorDay));
        const d1 = d1Quotas.get(type);
        this.writeRow({
          usage_type_key: type,
          quota_id: d1?.id ?? `qt_${crypto.randomUUID().replace(/-/g, '')}`,
          limit_amount: after.limitAmount,
          limit_amount_daily: after.limitAmountDaily,
          used_amount: 0,
          used_amount_daily: 0,
          bonus_amount: 0,
          spillover_amount: 0,
          cycle_start: running,
          daily_date: isoDate(at),
          fair_use_policy_limit: d1?.fair ?? null,
        });
      }
    } else if (a.action === 'quota.bonus_added' && stored) {
      const q = roll(stored, p);
      this.writeRow({ ...q, bonus_amount: q.bonus_amount + Number(details.amount) });
    }
  }

  private async flushAll(): Promise<number> {
    if (!this.meta) return 0;
    await this.pull();
    const db = this.env.DB;
    let written = 0;
    for (;;) {
      const meta = this.meta;
      const events = this.sql
        .exec<Record<string, SqlStorageValue>>('SELECT * FROM outbox ORDER BY seq LIMIT ?', FLUSH_BATCH)
        .toArray() as unknown as OutboxRow[];
      const rows = this.rows();
      const lastSeq = events.length > 0 ? events[events.length - 1].seq : meta.nextSeq - 1;
      const statements = events.map((e) =>
        db
          .prepare(
            'INSERT INTO usage_ledger (workspace_id, usage_type_key, amount, request_id, idempotency_key, cycle_start, created_at, meter_seq) ' +
              'VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (workspace_id, meter_seq) DO NOTHING',
          )
          .bind(
            meta.workspaceId,
            e.usage_type_key,
            e.amount,
            e.request_id,
            e.idempotency_key,
            e.cycle_start,
            e.created_at,
            e.seq,
          ),
      );
      // The counters as the object holds them, for D1 readers and a re-seed; skipped while D1 has
      // an admin change this object has not applied yet (the next flush writes it).
      for (const r of rows) {
        statements.push(
          db
            .prepare(
              'UPDATE quotas SET used_amount = ?3, used_amount_daily = ?4, bonus_amount = ?5, spillover_amount = ?6, cycle_start = ?7, daily_date = ?8, meter_seq = ?9 ' +
                'WHERE workspace_id = ?1 AND usage_type_key = ?2 AND meter_seq <= ?9 ' +
                'AND NOT EXISTS (SELECT 1 FROM admin_audit_log WHERE workspace_id = ?1 AND id > ?10)',
            )
            .bind(
              meta.workspaceId,
              r.usage_type_key,
              r.used_amount,
              r.used_amount_daily,
              r.bonus_amount,
              r.spillover_amount,
              r.cycle_start,
              r.daily_date,
              lastSeq,
              meta.auditId,
            ),
        );
      }
      if (statements.length > 0) await db.batch(statements);
      if (events.length > 0) {
        // The deleted rows no longer carry the sequence across a restart: next_seq does, from now on.
        this.transaction(() => {
          this.sql.exec('DELETE FROM outbox WHERE seq <= ?', lastSeq);
          this.sql.exec(
            "INSERT OR REPLACE INTO meta (k, v) VALUES ('next_seq', ?)",
            Math.max(this.meta!.nextSeq, lastSeq + 1),
          );
        });
      }
      written += events.length;
      if (events.length < FLUSH_BATCH) break;
    }
    const now = this.serviceNow();
    this.sql.exec('DELETE FROM request_keys WHERE expires_at <= ?', now);
    this.sql.exec('DELETE FROM charge_keys WHERE at_ms < ?', now - LIMITS.idempotencyKeyTtlMs);
    return written;
  }
}
