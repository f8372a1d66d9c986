-- Metering moves to one WorkspaceMeter Durable Object per workspace (worker/quotas/meter-do.ts;
-- docs/quotas.md "Metering authority"). D1 stays the system of record: the object flushes its
-- outbox into the ledger keyed by (workspace_id, meter_seq), so a repeated flush inserts nothing
-- twice, and writes a snapshot of its counters into the quota rows (meter_seq: the last event the
-- snapshot includes). Ledger rows of the D1-metering era keep meter_seq NULL (NULLs never collide).
ALTER TABLE usage_ledger ADD COLUMN meter_seq INTEGER;
CREATE UNIQUE INDEX usage_ledger_meter_seq ON usage_ledger (workspace_id, meter_seq);
ALTER TABLE quotas ADD COLUMN meter_seq INTEGER NOT NULL DEFAULT 0;
