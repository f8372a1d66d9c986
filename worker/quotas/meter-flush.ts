/**
 * The flush of a workspace meter's outbox (meter-do.ts) into D1, the system of record: every
 * charge's event becomes a ledger row, inserted by (workspace, meter_seq) so a flush repeated after
 * a lost answer writes nothing twice, and the acknowledged events are deleted from the outbox. The
 * same batch writes a snapshot of the counters into D1's quota rows (for D1 readers and a re-seed).
 */
import { COUNTERS_SET, countersOf, type MeterStore } from './meter-store';

/** Outbox events per D1 batch. */
const FLUSH_BATCH = 100;

interface OutboxRow {
  seq: number;
  usage_type_key: string;
  amount: number;
  request_id: string;
  idempotency_key: string | null;
  cycle_start: string;
  created_at: string;
}

/** Writes the whole outbox and the counter snapshot to D1 (the store must be seeded); returns the events written. */
export async function flushOutbox(db: D1Database, store: MeterStore): Promise<number> {
  let written = 0;
  for (;;) {
    const meta = store.meta!;
    const events = store.sql
      .exec<Record<string, SqlStorageValue>>('SELECT * FROM outbox ORDER BY seq LIMIT ?', FLUSH_BATCH)
      .toArray() as unknown as OutboxRow[];
    const rows = store.rows();
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
            `UPDATE quotas SET ${COUNTERS_SET}, meter_seq = ? WHERE workspace_id = ? AND usage_type_key = ? AND meter_seq <= ? ` +
              'AND NOT EXISTS (SELECT 1 FROM admin_audit_log WHERE workspace_id = ? AND id > ?)',
          )
          .bind(...countersOf(r), lastSeq, meta.workspaceId, r.usage_type_key, lastSeq, meta.workspaceId, meta.auditId),
      );
    }
    if (statements.length > 0) await db.batch(statements);
    if (events.length > 0) {
      // The deleted rows no longer carry the sequence across a restart: next_seq does, from now on.
      store.transaction(() => {
        store.sql.exec('DELETE FROM outbox WHERE seq <= ?', lastSeq);
        store.writeNextSeq(Math.max(store.meta!.nextSeq, lastSeq + 1));
      });
    }
    written += events.length;
    if (events.length < FLUSH_BATCH) break;
  }
  return written;
}
