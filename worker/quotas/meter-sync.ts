/**
 * What the workspace's meter (meter-do.ts) reads from D1, the system of record:
 * - seeding: a cold object (no storage yet: the workspace's first use) takes over, in one D1
 *   batch, the anchor day, the quota rows with their counters, the keyed charges of the last 24
 *   hours in the ledger, the audit log's watermark and the ledger's last meter_seq;
 * - admin changes: written to D1 with their audit row by the admin routes, then applied by the
 *   meter in audit order, each at its own instant (on `sync` and before every flush).
 */
import { cycleParams, isoDate } from './cycle';
import { roll, runningCycleStart, type QuotaRow } from './quota-rules';
import type { Meta, MeterStore } from './meter-store';
import { isoTimestamp, quotaId } from './repository';
import { LIMITS } from '../../core/limits';

/** Seeds a cold meter from D1; null (nothing stored) when there is no such workspace. */
export async function seedFromD1(
  db: D1Database,
  store: MeterStore,
  workspaceId: string,
  atMs: number,
): Promise<Meta | null> {
  const [ws, quotas, audit, ledger, chargeKeys] = await db.batch<Record<string, unknown>>([
    db.prepare('SELECT anchor_day FROM workspaces WHERE id = ?1').bind(workspaceId),
    db
      .prepare(
        'SELECT q.id AS quota_id, q.usage_type_key, q.limit_amount, q.limit_amount_daily, q.used_amount, q.used_amount_daily, q.bonus_amount, ' +
          'q.spillover_amount, q.cycle_start, q.daily_date, ut.fair_use_policy_limit FROM quotas q JOIN usage_types ut ON ut.key = q.usage_type_key WHERE q.workspace_id = ?1',
      )
      .bind(workspaceId),
    db.prepare('SELECT COALESCE(MAX(id), 0) AS id FROM admin_audit_log WHERE workspace_id = ?1').bind(workspaceId),
    db.prepare('SELECT COALESCE(MAX(meter_seq), 0) AS seq FROM usage_ledger WHERE workspace_id = ?1').bind(workspaceId),
    db
      .prepare(
        'SELECT idempotency_key, usage_type_key, amount, created_at FROM usage_ledger WHERE workspace_id = ?1 AND idempotency_key IS NOT NULL AND created_at >= ?2 ORDER BY id',
      )
      .bind(workspaceId, isoTimestamp(atMs - LIMITS.idempotencyKeyTtlMs)),
  ]);
  const wsRow = ws.results[0] as { anchor_day: number } | undefined;
  if (!wsRow) return null; // nothing stored: an unknown workspace stays cold
  // Another call may have seeded while this one waited for D1 (after a reset of the in-memory state).
  const existing = store.readMeta();
  if (existing) return (store.meta = existing);
  const meta: Meta = {
    workspaceId,
    anchorDay: wsRow.anchor_day,
    auditId: Number(audit.results[0].id),
    nextSeq: Number(ledger.results[0].seq) + 1,
  };
  store.forgetRows();
  store.transaction(() => {
    for (const r of quotas.results as unknown as QuotaRow[]) store.writeRow(r);
    for (const k of chargeKeys.results) {
      store.writeChargeKey(
        k.idempotency_key as string,
        k.usage_type_key as string,
        Number(k.amount),
        Date.parse(String(k.created_at)),
      );
    }
    store.writeMeta(meta);
  });
  return meta;
}

/** D1's id and fair-use limit of each quota row of the workspace, by usage type. */
type D1Quotas = Map<string, { id: string; fair: number | null }>;

/**
 * Applies the admin changes (audit rows) D1 holds beyond the watermark. Read in one batch,
 * applied in one transaction that re-checks the watermark, so two overlapping pulls never apply
 * a row twice.
 */
export async function pullAdminChanges(db: D1Database, store: MeterStore): Promise<void> {
  const meta = store.meta;
  if (!meta) return;
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
  const d1Quotas: D1Quotas = new Map(
    types.results.map((t) => [
      String(t.usage_type_key),
      { id: String(t.id), fair: t.fair_use_policy_limit as number | null },
    ]),
  );
  store.transaction(() => {
    const m = { ...store.meta! };
    // Each at its own instant, in time order.
    const changes = audit.results
      .filter((a) => Number(a.id) > m.auditId)
      .map((a) => ({ at: Date.parse(String(a.created_at)), audit: a }))
      .sort((x, y) => x.at - y.at);
    for (const { at, audit: a } of changes) {
      applyAudit(store, m, a, at, d1Quotas);
      m.auditId = Math.max(m.auditId, Number(a.id));
    }
    store.writeMeta(m);
  });
  // Rows were rewritten at their own instants: read them back rather than trust the cache.
  store.forgetRows();
}

/** One admin change, at its instant: the rollover up to then with the old settings, then the change. */
function applyAudit(store: MeterStore, m: Meta, a: Record<string, unknown>, at: number, d1Quotas: D1Quotas): void {
  const details = JSON.parse(String(a.details)) as Record<string, unknown>;
  const p = cycleParams(at, m.anchorDay);
  const type = a.usage_type_key === null ? null : String(a.usage_type_key);
  const current = store.rows();
  if (a.action === 'workspace.updated') {
    const anchor = details.anchorDay as { after: number } | undefined;
    if (!anchor) return;
    for (const r of current) store.writeRow(roll(r, p));
    m.anchorDay = anchor.after;
    return;
  }
  if (type === null) return;
  const stored = current.find((r) => r.usage_type_key === type);
  if (a.action === 'quota.limits_set') {
    const after = details.after as { limitAmount: number; limitAmountDaily: number };
    if (stored) {
      store.writeRow({
        ...roll(stored, p),
        limit_amount: after.limitAmount,
        limit_amount_daily: after.limitAmountDaily,
      });
    } else {
      // A new row joins the running cycle of the workspace's other rows.
      const running = runningCycleStart(
        current.map((r) => roll(r, p)),
        p,
      );
      const d1 = d1Quotas.get(type);
      store.writeRow({
        usage_type_key: type,
        quota_id: d1?.id ?? quotaId(),
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
    store.writeRow({ ...q, bonus_amount: q.bonus_amount + Number(details.amount) });
  }
}
