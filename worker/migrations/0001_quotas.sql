-- Workspaces, usage types, quotas, the usage ledger and the admin audit log
-- (decisions.md "Quotas and usage"; README "Quotas and metering").
-- Dates are ISO `YYYY-MM-DD` (UTC) and timestamps ISO `YYYY-MM-DDTHH:MM:SS.sssZ`: both order as text.

CREATE TABLE workspaces (
  id          TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  -- Day of the month (1..31) on which the billing cycle starts; clamped to the month's last day.
  anchor_day  INTEGER NOT NULL CHECK (anchor_day BETWEEN 1 AND 31),
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

CREATE TABLE usage_types (
  id                            TEXT PRIMARY KEY,
  key                           TEXT NOT NULL UNIQUE,
  display_name                  TEXT NOT NULL,
  -- Informational threshold: Quota.fairUseLimitReached = usedAmount >= this (NULL: none).
  fair_use_policy_limit         INTEGER,
  permission_key_daily_limit    TEXT NOT NULL,
  permission_key_monthly_limit  TEXT NOT NULL
);

-- One row per workspace and usage type. The counters are stored as of (cycle_start, daily_date);
-- readers and writers fold the rollovers to "now" into their statement (worker/quotas/repository.ts).
CREATE TABLE quotas (
  id                  TEXT PRIMARY KEY,
  workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
  usage_type_key      TEXT NOT NULL REFERENCES usage_types(key),
  limit_amount        INTEGER NOT NULL CHECK (limit_amount >= 0),
  limit_amount_daily  INTEGER NOT NULL CHECK (limit_amount_daily >= 0),
  used_amount         INTEGER NOT NULL DEFAULT 0 CHECK (used_amount >= 0),
  used_amount_daily   INTEGER NOT NULL DEFAULT 0 CHECK (used_amount_daily >= 0),
  bonus_amount        INTEGER NOT NULL DEFAULT 0 CHECK (bonus_amount >= 0),
  spillover_amount    INTEGER NOT NULL DEFAULT 0 CHECK (spillover_amount >= 0),
  -- First day of the cycle the counters above belong to.
  cycle_start         TEXT NOT NULL,
  -- Day used_amount_daily belongs to.
  daily_date          TEXT NOT NULL,
  -- Random token written by the last successful charge; the ledger insert of the same batch
  -- is conditioned on it, so a refused charge writes no ledger row.
  charge_token        TEXT,
  created_at          TEXT NOT NULL,
  updated_at          TEXT NOT NULL,
  UNIQUE (workspace_id, usage_type_key)
);

-- Append-only: one row per successful charge.
CREATE TABLE usage_ledger (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id     TEXT NOT NULL REFERENCES workspaces(id),
  usage_type_key   TEXT NOT NULL REFERENCES usage_types(key),
  amount           INTEGER NOT NULL CHECK (amount > 0),
  request_id       TEXT NOT NULL,
  idempotency_key  TEXT,
  cycle_start      TEXT NOT NULL,
  created_at       TEXT NOT NULL,
  UNIQUE (workspace_id, idempotency_key)
);
CREATE INDEX usage_ledger_workspace ON usage_ledger (workspace_id, id);

-- Append-only: every admin change (workspace creation, limits, bonus, anchor day).
CREATE TABLE admin_audit_log (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id    TEXT NOT NULL,
  action          TEXT NOT NULL,
  usage_type_key  TEXT,
  details         TEXT NOT NULL,
  actor           TEXT,
  request_id      TEXT,
  created_at      TEXT NOT NULL
);
CREATE INDEX admin_audit_log_workspace ON admin_audit_log (workspace_id, id);

INSERT INTO usage_types (id, key, display_name, fair_use_policy_limit, permission_key_daily_limit, permission_key_monthly_limit) VALUES
  ('ut_tokens', 'tokens', 'Tokens', 50000000, 'usage.tokens.dailyLimit', 'usage.tokens.monthlyLimit'),
  ('ut_images', 'images', 'Images', 5000, 'usage.images.dailyLimit', 'usage.images.monthlyLimit'),
  ('ut_plagiarism_checks', 'plagiarismChecks', 'Plagiarism checks', NULL, 'usage.plagiarismChecks.dailyLimit', 'usage.plagiarismChecks.monthlyLimit');

-- The demo workspace of a fresh local start (README): calendar-month cycles, generous limits.
INSERT INTO workspaces (id, name, anchor_day, created_at, updated_at) VALUES
  ('ws_demo', 'Demo workspace', 1, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

INSERT INTO quotas (id, workspace_id, usage_type_key, limit_amount, limit_amount_daily, cycle_start, daily_date, created_at, updated_at) VALUES
  ('qt_ws_demo_tokens', 'ws_demo', 'tokens', 10000000, 1000000, date('now', 'start of month'), date('now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ('qt_ws_demo_images', 'ws_demo', 'images', 1000, 100, date('now', 'start of month'), date('now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
  ('qt_ws_demo_plagiarismChecks', 'ws_demo', 'plagiarismChecks', 1000, 100, date('now', 'start of month'), date('now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));

INSERT INTO admin_audit_log (workspace_id, action, details, actor, created_at) VALUES
  ('ws_demo', 'workspace.created', '{"anchorDay":1,"seededBy":"migration 0001_quotas"}', 'migration', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
