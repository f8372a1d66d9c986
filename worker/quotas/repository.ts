/**
 * D1 access for workspaces, usage types, quotas, the usage ledger and the admin audit log.
 *
 * Rollovers are never run by a scheduler: a quota row stores its counters as of its
 * `cycle_start` and `daily_date`. A read applies the rollover to the rows it reads (`roll`), and an
 * admin change folds it into its own UPDATE (`rolledSql`), both from the one table of rules in
 * quota-rules.ts, with the three dates of `cycleParams()` bound as ?1 (current cycle start), ?2
 * (previous cycle start) and ?3 (today).
 *
 * Charges are not made here: the workspace's meter (meter-do.ts) is the authority for the
 * counters and writes the ledger and a counter snapshot into these tables (one writer, so
 * concurrent charges cannot race). D1 never
 * deducts on its own.
 */
import type { z } from '@hono/zod-openapi';
import { ApiError, excerpt } from '../../core/problem';
import { listSort, sqlOrderBy, type ListSort, type SortOrder } from '../http/openapi';
import { cycleParams, cycleStartFor, isoDate, type CycleParams } from './cycle';
import { quotaView, roll, rolledSql, ROLLED_COLUMNS, runningCycleStart, type QuotaRow } from './quota-rules';
import type { AuditEntrySchema, LedgerEntrySchema, QuotaSchema, UsageTypeSchema, WorkspaceSchema } from './schemas';

/** The rolled-over value of every column the rollover changes, as an UPDATE's SET clause (dates ?1-?3). */
const ROLLED_OVER_SET = ROLLED_COLUMNS.map(
  (c) => `${c} = ${rolledSql(c, { prefix: '', params: { cycleStart: '?1', previousCycleStart: '?2', today: '?3' } })}`,
).join(', ');

const cycleBinds = (p: CycleParams): [string, string, string] => [p.cycleStart, p.previousCycleStart, p.today];

/**
 * The running cycle of workspace `workspace` (SQL parameters such as '?4'): the latest rolled
 * cycle start of its quota rows, or `start`, the current cycle start of its anchor day, when it
 * has none (runningCycleStart of quota-rules.ts, as SQL over the stored rows).
 */
const runningCycleStartSql = (workspace: string, start: string) =>
  `COALESCE((SELECT MAX(${rolledSql('cycle_start', { prefix: '', params: { cycleStart: start } })}) FROM quotas WHERE workspace_id = ${workspace}), ${start})`;

/**
 * "Workspace `id` still has anchor day `anchorDay`" (both SQL parameters such as '?1'): the guard
 * that keeps a statement computed for one anchor day from writing after a concurrent anchor change.
 */
const anchorGuard = (id: string, anchorDay: string) =>
  `EXISTS (SELECT 1 FROM workspaces w WHERE w.id = ${id} AND w.anchor_day = ${anchorDay})`;

export function isoTimestamp(ms: number): string {
  return new Date(ms).toISOString();
}

// ---------------------------------------------------------------------------------------
// Types
// ---------------------------------------------------------------------------------------
/** A workspace as stored (the admin answer adds its cycle and quotas). */
export type Workspace = Omit<z.infer<typeof WorkspaceSchema>, 'cycleStart' | 'nextCycleStart' | 'quotas'>;

export type UsageType = z.infer<typeof UsageTypeSchema>;

/** The Quota resource of the interface, as of a given instant. */
export type Quota = z.infer<typeof QuotaSchema>;

export type LedgerEntry = z.infer<typeof LedgerEntrySchema>;

export type AuditEntry = z.infer<typeof AuditEntrySchema>;

/** Who made an admin change, for the audit log. */
export interface AuditContext {
  actor: string | null;
  requestId: string | null;
  atMs: number;
}

// ---------------------------------------------------------------------------------------
// Reads
// ---------------------------------------------------------------------------------------
interface WorkspaceRow {
  id: string;
  name: string;
  anchor_day: number;
  created_at: string;
  updated_at: string;
}

const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  anchorDay: r.anchor_day,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const WORKSPACE_SELECT = 'SELECT id, name, anchor_day, created_at, updated_at FROM workspaces WHERE id = ?1';

export async function getWorkspace(db: D1Database, id: string): Promise<Workspace | null> {
  const row = await db.prepare(WORKSPACE_SELECT).bind(id).first<WorkspaceRow>();
  return row ? toWorkspace(row) : null;
}

/** The workspace; 404 NOT_FOUND when there is none. */
export async function requireWorkspaceRow(db: D1Database, id: string): Promise<Workspace> {
  const ws = await getWorkspace(db, id);
  if (!ws) throw new ApiError('NOT_FOUND', `Workspace '${excerpt(id)}' does not exist`);
  return ws;
}

interface UsageTypeRow {
  id: string;
  key: string;
  display_name: string;
  fair_use_policy_limit: number | null;
  permission_key_daily_limit: string;
  permission_key_monthly_limit: string;
}

export async function listUsageTypes(db: D1Database): Promise<UsageType[]> {
  const { results } = await db.prepare('SELECT * FROM usage_types ORDER BY key').all<UsageTypeRow>();
  return results.map((r) => ({
    id: r.id,
    key: r.key,
    displayName: r.display_name,
    fairUsePolicyLimit: r.fair_use_policy_limit,
    permissionKeyDailyLimit: r.permission_key_daily_limit,
    permissionKeyMonthlyLimit: r.permission_key_monthly_limit,
  }));
}

/** The workspace's quota rows as stored (of one usage type), in usage-type order. */
async function quotaRows(db: D1Database, workspaceId: string, usageTypeKey?: string): Promise<QuotaRow[]> {
  const filter = usageTypeKey === undefined ? '' : ' AND q.usage_type_key = ?2';
  const binds: unknown[] = [workspaceId];
  if (usageTypeKey !== undefined) binds.push(usageTypeKey);
  const { results } = await db
    .prepare(
      'SELECT q.id AS quota_id, q.usage_type_key, q.limit_amount, q.limit_amount_daily, q.used_amount, q.used_amount_daily, q.bonus_amount, ' +
        'q.spillover_amount, q.cycle_start, q.daily_date, ut.fair_use_policy_limit FROM quotas q JOIN usage_types ut ON ut.key = q.usage_type_key ' +
        `WHERE q.workspace_id = ?1${filter} ORDER BY q.usage_type_key`,
    )
    .bind(...binds)
    .all<QuotaRow>();
  return results;
}

/** The workspace's quotas as of `atMs` (rollovers applied, nothing written). */
export async function listQuotas(
  db: D1Database,
  workspace: Workspace,
  atMs: number,
  usageTypeKey?: string,
): Promise<Quota[]> {
  const p = cycleParams(atMs, workspace.anchorDay);
  return (await quotaRows(db, workspace.id, usageTypeKey)).map((r) => quotaView(roll(r, p), workspace.id, p));
}

/**
 * First day of the workspace's running cycle. Usually cycleStartFor(now, anchorDay); after an
 * anchor-day change the running cycle keeps its (later) start until the new day's next anchor date.
 */
export async function currentCycleStart(db: D1Database, workspace: Workspace, atMs: number): Promise<string> {
  const p = cycleParams(atMs, workspace.anchorDay);
  return runningCycleStart(
    (await quotaRows(db, workspace.id)).map((r) => roll(r, p)),
    p,
  );
}

// ---------------------------------------------------------------------------------------
// The charge
// ---------------------------------------------------------------------------------------
export type ConsumeOutcome =
  /** Deducted; one ledger row written. */
  | { status: 'charged' }
  /** Same Idempotency-Key, usage type and amount were charged before: nothing deducted. */
  | { status: 'replayed' }
  /** Amount 0 (e.g. texts without a token): nothing deducted, no ledger row; the workspace and its allowance were checked. */
  | { status: 'free' };

// ---------------------------------------------------------------------------------------
// Admin changes. Each one first writes the rolled-over state with the settings in force
// until now (so a new limit or anchor day never acts retroactively on a passed boundary),
// then applies the change and appends the audit entry, all in one batch.
// ---------------------------------------------------------------------------------------
export interface QuotaLimits {
  usageTypeKey: string;
  limitAmount: number;
  limitAmountDaily: number;
}

const AUDIT_INSERT =
  'INSERT INTO admin_audit_log (workspace_id, action, usage_type_key, details, actor, request_id, created_at)';

/**
 * The audit row of an admin change. With `anchorDay`, it is written only while the workspace
 * still has the anchor day the batch was computed for.
 */
function auditInsert(
  db: D1Database,
  workspaceId: string,
  action: string,
  usageTypeKey: string | null,
  details: unknown,
  audit: AuditContext,
  anchorDay?: number,
): D1PreparedStatement {
  const binds: unknown[] = [
    workspaceId,
    action,
    usageTypeKey,
    JSON.stringify(details),
    audit.actor,
    audit.requestId,
    isoTimestamp(audit.atMs),
  ];
  let sql = `${AUDIT_INSERT} SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7`;
  if (anchorDay !== undefined) {
    sql += ` WHERE ${anchorGuard('?1', '?8')}`;
    binds.push(anchorDay);
  }
  return db.prepare(sql).bind(...binds);
}

function materialize(
  db: D1Database,
  ws: Workspace,
  p: CycleParams,
  at: string,
  usageTypeKey?: string,
): D1PreparedStatement {
  const filter = usageTypeKey === undefined ? '' : ' AND usage_type_key = ?7';
  const binds: unknown[] = [...cycleBinds(p), at, ws.id, ws.anchorDay];
  if (usageTypeKey !== undefined) binds.push(usageTypeKey);
  return db
    .prepare(
      `UPDATE quotas SET ${ROLLED_OVER_SET}, updated_at = ?4 WHERE workspace_id = ?5` +
        ` AND ${anchorGuard('?5', '?6')}${filter}`,
    )
    .bind(...binds);
}

export function quotaId(): string {
  return `qt_${crypto.randomUUID().replace(/-/g, '')}`;
}

/** Creates the workspace with its quota rows; returns it as stored. */
export async function createWorkspace(
  db: D1Database,
  input: { id: string; name: string; anchorDay: number; quotas: QuotaLimits[] },
  audit: AuditContext,
): Promise<Workspace> {
  const at = isoTimestamp(audit.atMs);
  const cycleStart = cycleStartFor(audit.atMs, input.anchorDay);
  const today = isoDate(audit.atMs);
  const statements = [
    db
      .prepare('INSERT INTO workspaces (id, name, anchor_day, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)')
      .bind(input.id, input.name, input.anchorDay, at),
    ...input.quotas.map((q) =>
      db
        .prepare(
          'INSERT INTO quotas (id, workspace_id, usage_type_key, limit_amount, limit_amount_daily, cycle_start, daily_date, created_at, updated_at) ' +
            'VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?8)',
        )
        .bind(quotaId(), input.id, q.usageTypeKey, q.limitAmount, q.limitAmountDaily, cycleStart, today, at),
    ),
    auditInsert(
      db,
      input.id,
      'workspace.created',
      null,
      { name: input.name, anchorDay: input.anchorDay, quotas: input.quotas },
      audit,
    ),
  ];
  try {
    await db.batch(statements);
  } catch (err) {
    if (err instanceof Error && /UNIQUE constraint failed: workspaces\.id/.test(err.message)) {
      throw new ApiError('CONFLICT', `Workspace '${excerpt(input.id)}' already exists`);
    }
    throw err;
  }
  return { id: input.id, name: input.name, anchorDay: input.anchorDay, createdAt: at, updatedAt: at };
}

/** Retries an admin batch whose anchor-day guard lost a race with another anchor change. */
async function withWorkspace<T>(
  db: D1Database,
  workspaceId: string,
  fn: (ws: Workspace) => Promise<T | undefined>,
): Promise<T> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const out = await fn(await requireWorkspaceRow(db, workspaceId));
    if (out !== undefined) return out;
  }
  throw new ApiError('CONFLICT', `Workspace '${excerpt(workspaceId)}' changed concurrently; retry`);
}

/**
 * Sets monthly and daily limits of one usage type (creates the quota row when missing); returns
 * the workspace the change was made for.
 */
export async function setQuotaLimits(
  db: D1Database,
  workspaceId: string,
  limits: QuotaLimits,
  audit: AuditContext,
): Promise<Workspace> {
  const at = isoTimestamp(audit.atMs);
  return withWorkspace(db, workspaceId, async (ws) => {
    const p = cycleParams(audit.atMs, ws.anchorDay);
    const guard = anchorGuard('?1', '?2');
    const results = await db.batch([
      materialize(db, ws, p, at, limits.usageTypeKey),
      // Audit first, so `before` holds the old limits.
      db
        .prepare(
          `${AUDIT_INSERT} SELECT ?1, 'quota.limits_set', ?3, json_object('before', ` +
            `(SELECT json_object('limitAmount', limit_amount, 'limitAmountDaily', limit_amount_daily) FROM quotas WHERE workspace_id = ?1 AND usage_type_key = ?3), ` +
            `'after', json_object('limitAmount', ?4, 'limitAmountDaily', ?5)), ?6, ?7, ?8 WHERE ${guard}`,
        )
        .bind(
          ws.id,
          ws.anchorDay,
          limits.usageTypeKey,
          limits.limitAmount,
          limits.limitAmountDaily,
          audit.actor,
          audit.requestId,
          at,
        ),
      db
        .prepare(
          `INSERT INTO quotas (id, workspace_id, usage_type_key, limit_amount, limit_amount_daily, cycle_start, daily_date, created_at, updated_at) ` +
            // A new row joins the running cycle of the workspace's other rows.
            `SELECT ?3, ?1, ?4, ?5, ?6, ${runningCycleStartSql('?1', '?7')}, ?8, ?9, ?9 WHERE ${guard} ` +
            `ON CONFLICT (workspace_id, usage_type_key) DO UPDATE SET limit_amount = excluded.limit_amount, ` +
            `limit_amount_daily = excluded.limit_amount_daily, updated_at = excluded.updated_at`,
        )
        .bind(
          ws.id,
          ws.anchorDay,
          quotaId(),
          limits.usageTypeKey,
          limits.limitAmount,
          limits.limitAmountDaily,
          p.cycleStart,
          p.today,
          at,
        ),
    ]);
    return results[2].meta.changes === 1 ? ws : undefined;
  });
}

/** Adds bonus credits to the current cycle of one usage type; returns the workspace, or null when it has no such quota. */
export async function addBonus(
  db: D1Database,
  workspaceId: string,
  usageTypeKey: string,
  amount: number,
  reason: string | null,
  audit: AuditContext,
): Promise<Workspace | null> {
  const at = isoTimestamp(audit.atMs);
  return withWorkspace<Workspace | null>(db, workspaceId, async (ws) => {
    const p = cycleParams(audit.atMs, ws.anchorDay);
    const exists = await db
      .prepare('SELECT 1 AS one FROM quotas WHERE workspace_id = ?1 AND usage_type_key = ?2')
      .bind(ws.id, usageTypeKey)
      .first();
    if (!exists) return null;
    const results = await db.batch([
      materialize(db, ws, p, at, usageTypeKey),
      auditInsert(db, ws.id, 'quota.bonus_added', usageTypeKey, { amount, reason }, audit, ws.anchorDay),
      db
        .prepare(
          `UPDATE quotas SET bonus_amount = bonus_amount + ?3, updated_at = ?4 WHERE workspace_id = ?1 AND usage_type_key = ?5 AND ${anchorGuard('?1', '?2')}`,
        )
        .bind(ws.id, ws.anchorDay, amount, at, usageTypeKey),
    ]);
    // No change: the anchor day changed since it was read (the guarded audit row was skipped too); retry.
    return results[2].meta.changes === 1 ? ws : undefined;
  });
}

/** Changes name and/or anchor day. The running cycle ends at the first anchor date of the new day after its start. */
export async function updateWorkspace(
  db: D1Database,
  workspaceId: string,
  patch: { name?: string; anchorDay?: number },
  audit: AuditContext,
): Promise<Workspace> {
  const at = isoTimestamp(audit.atMs);
  return withWorkspace(db, workspaceId, async (ws) => {
    const p = cycleParams(audit.atMs, ws.anchorDay);
    const name = patch.name ?? ws.name;
    const anchorDay = patch.anchorDay ?? ws.anchorDay;
    const details: Record<string, unknown> = {};
    if (patch.name !== undefined) details.name = { before: ws.name, after: name };
    if (patch.anchorDay !== undefined) details.anchorDay = { before: ws.anchorDay, after: anchorDay };
    const results = await db.batch([
      materialize(db, ws, p, at),
      auditInsert(db, ws.id, 'workspace.updated', null, details, audit, ws.anchorDay),
      db
        .prepare('UPDATE workspaces SET name = ?3, anchor_day = ?4, updated_at = ?5 WHERE id = ?1 AND anchor_day = ?2')
        .bind(ws.id, ws.anchorDay, name, anchorDay, at),
    ]);
    if (results[2].meta.changes !== 1) return undefined;
    return { ...ws, name, anchorDay, updatedAt: at };
  });
}

// ---------------------------------------------------------------------------------------
// Ledger and audit log
// ---------------------------------------------------------------------------------------
/** Sort fields of the usage ledger (columns; entries are unique by id, their charge order). */
export const LEDGER_SORT = listSort(
  {
    id: 'id',
    usageTypeKey: 'usage_type_key',
    amount: 'amount',
    requestId: 'request_id',
    cycleStart: 'cycle_start',
    createdAt: 'created_at',
  },
  'id',
  'id',
);

/** Sort fields of the audit log (columns; entries are unique by id, their order of change). */
export const AUDIT_SORT = listSort(
  { id: 'id', action: 'action', usageTypeKey: 'usage_type_key', actor: 'actor', createdAt: 'created_at' },
  'id',
  'id',
);

export interface PageQuery<F extends string> {
  offset: number;
  limit: number;
  sort: F;
  order: SortOrder;
}

/** The number of a workspace's rows in `table` and one page of them in the asked order (one batch). */
async function workspacePage<F extends string>(
  db: D1Database,
  table: 'usage_ledger' | 'admin_audit_log',
  spec: ListSort<F, string>,
  workspaceId: string,
  q: PageQuery<F> & { usageTypeKey?: string },
): Promise<{ total: number; rows: Array<Record<string, unknown>> }> {
  const filter = q.usageTypeKey === undefined ? '' : ' AND usage_type_key = ?2';
  const binds: unknown[] = [workspaceId];
  if (q.usageTypeKey !== undefined) binds.push(q.usageTypeKey);
  const orderBy = sqlOrderBy(spec, q.sort, q.order);
  const [count, rows] = await db.batch<Record<string, unknown>>([
    db.prepare(`SELECT COUNT(*) AS n FROM ${table} WHERE workspace_id = ?1${filter}`).bind(...binds),
    db
      .prepare(
        `SELECT * FROM ${table} WHERE workspace_id = ?1${filter} ORDER BY ${orderBy} LIMIT ${q.limit} OFFSET ${q.offset}`,
      )
      .bind(...binds),
  ]);
  return { total: Number(count.results[0].n), rows: rows.results };
}

export async function listLedger(
  db: D1Database,
  workspaceId: string,
  q: PageQuery<(typeof LEDGER_SORT.fields)[number]> & { usageTypeKey?: string },
): Promise<{ total: number; entries: LedgerEntry[] }> {
  const { total, rows } = await workspacePage(db, 'usage_ledger', LEDGER_SORT, workspaceId, q);
  return {
    total,
    entries: rows.map((r) => ({
      id: Number(r.id),
      workspaceId: String(r.workspace_id),
      usageTypeKey: String(r.usage_type_key),
      amount: Number(r.amount),
      requestId: String(r.request_id),
      idempotencyKey: r.idempotency_key === null ? null : String(r.idempotency_key),
      cycleStart: String(r.cycle_start),
      createdAt: String(r.created_at),
    })),
  };
}

export async function listAudit(
  db: D1Database,
  workspaceId: string,
  q: PageQuery<(typeof AUDIT_SORT.fields)[number]>,
): Promise<{ total: number; entries: AuditEntry[] }> {
  const { total, rows } = await workspacePage(db, 'admin_audit_log', AUDIT_SORT, workspaceId, q);
  return {
    total,
    entries: rows.map((r) => ({
      id: Number(r.id),
      workspaceId: String(r.workspace_id),
      action: String(r.action),
      usageTypeKey: r.usage_type_key === null ? null : String(r.usage_type_key),
      details: JSON.parse(String(r.details)) as Record<string, unknown>,
      actor: r.actor === null ? null : String(r.actor),
      requestId: r.request_id === null ? null : String(r.request_id),
      createdAt: String(r.created_at),
    })),
  };
}
