/**
 * The WorkspaceMeter's SQLite storage (meter-do.ts): the schema, the meta row (workspace, anchor
 * day, watermark, next outbox sequence), the quota rows with their in-memory cache and the charge
 * keys. The other tables belong to their concerns: the outbox is appended to by a charge
 * (meter-charge.ts) and emptied by the flush (meter-flush.ts), request_keys is meter-keys.ts's.
 */
import { ROLLED_COLUMNS, type QuotaRow } from './quota-rules';

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

export interface Meta {
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

export type MeterTable = 'outbox' | 'request_keys' | 'charge_keys';

/** A row's counters: the values of ROLLED_COLUMNS (what a charge or a rollover changes), in that order. */
export const countersOf = (r: QuotaRow): SqlStorageValue[] => ROLLED_COLUMNS.map((c) => r[c]);

/** `c1 = ?, c2 = ?, ...` over ROLLED_COLUMNS, for countersOf's values. */
export const COUNTERS_SET = ROLLED_COLUMNS.map((c) => `${c} = ?`).join(', ');

const UPDATE_COUNTERS = `UPDATE quotas SET ${COUNTERS_SET} WHERE usage_type_key = ?`;

export class MeterStore {
  readonly sql: SqlStorage;
  /** The seeded state; null while the object is cold (nothing stored yet). */
  meta: Meta | null = null;
  /**
   * The quota rows as stored, by usage type (write-through: writeRow updates both), so a charge
   * reads no row from SQLite; null until loaded, and dropped whenever a transaction throws (its
   * writes were rolled back) or a seed or pull rewrote rows.
   */
  private rowCache: Map<string, QuotaRow> | null = null;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
  }

  /** Creates the tables (once per object) and loads the meta. */
  open(): void {
    this.sql.exec(SCHEMA);
    this.meta = this.readMeta();
  }

  /**
   * transactionSync that keeps the in-memory state true to storage: when `fn` throws, SQLite rolls
   * its writes back, so the rows cached and the meta (which may have been moved) are reloaded.
   */
  transaction<T>(fn: () => T): T {
    try {
      return this.storage.transactionSync(fn);
    } catch (err) {
      this.rowCache = null;
      this.meta = this.readMeta();
      throw err;
    }
  }

  count(table: MeterTable): number {
    return Number(this.sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`).one().n);
  }

  readMeta(): Meta | null {
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

  writeMeta(m: Meta): void {
    const set = (k: string, v: SqlStorageValue) =>
      this.sql.exec('INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)', k, v);
    set('workspace_id', m.workspaceId);
    set('anchor_day', m.anchorDay);
    set('audit_id', m.auditId);
    set('next_seq', m.nextSeq);
    this.meta = m;
  }

  /** Stores next_seq alone (a flush that deleted the outbox rows that carried it). */
  writeNextSeq(nextSeq: number): void {
    this.sql.exec("INSERT OR REPLACE INTO meta (k, v) VALUES ('next_seq', ?)", nextSeq);
  }

  /** The stored rows by usage type (loaded once; callers must not mutate them: roll() copies). */
  rowMap(): Map<string, QuotaRow> {
    if (this.rowCache === null) {
      const rows = this.sql
        .exec<Record<string, SqlStorageValue>>(`SELECT ${ROW_COLUMNS} FROM quotas ORDER BY usage_type_key`)
        .toArray() as unknown as QuotaRow[];
      this.rowCache = new Map(rows.map((r) => [r.usage_type_key, r]));
    }
    return this.rowCache;
  }

  /** The stored rows in usage-type order. */
  rows(): QuotaRow[] {
    return [...this.rowMap().values()].sort((a, b) =>
      a.usage_type_key < b.usage_type_key ? -1 : a.usage_type_key > b.usage_type_key ? 1 : 0,
    );
  }

  /** Rows were rewritten outside writeRow (a seed or a pull): read them back on next use. */
  forgetRows(): void {
    this.rowCache = null;
  }

  writeRow(r: QuotaRow): void {
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

  /**
   * Writes what a charge or its rollover changes: an UPDATE in place of writeRow's REPLACE (which
   * deletes and reinserts the row and its key). The row must be loaded (rowMap) first.
   */
  writeCounters(q: QuotaRow): void {
    this.sql.exec(UPDATE_COUNTERS, ...countersOf(q), q.usage_type_key);
    this.rowCache!.set(q.usage_type_key, q);
  }

  /** A keyed charge, remembered for 24 hours so a retry with the key is not charged again. */
  writeChargeKey(key: string, usageTypeKey: string, amount: number, atMs: number): void {
    this.sql.exec(
      'INSERT OR REPLACE INTO charge_keys (idempotency_key, usage_type_key, amount, at_ms) VALUES (?, ?, ?, ?)',
      key,
      usageTypeKey,
      amount,
      atMs,
    );
  }
}
