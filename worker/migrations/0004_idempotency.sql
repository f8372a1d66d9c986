-- Idempotency keys bound to their first request (decisions.md "Idempotency"; worker/idempotency.ts).
-- One row per (workspace, key): the request's method, path and body SHA-256, its state, and once
-- it succeeded the stored response (status, content type, body) that retries replay. Rows expire
-- after 24 hours; the Cron Trigger of wrangler.toml removes them (worker/index.ts `scheduled`).
CREATE TABLE idempotency_keys (
  workspace_id     TEXT NOT NULL,
  idempotency_key  TEXT NOT NULL,
  method           TEXT NOT NULL,
  path             TEXT NOT NULL,
  body_sha256      TEXT NOT NULL,
  state            TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
  -- Random token of the request that holds the key while it runs; its lease ends at locked_until
  -- (epoch ms), after which a retry of the same request may take the key over.
  lock_token       TEXT,
  locked_until     INTEGER,
  status           INTEGER,
  content_type     TEXT,
  response_body    TEXT,
  created_at       TEXT NOT NULL,
  expires_at       INTEGER NOT NULL,
  PRIMARY KEY (workspace_id, idempotency_key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- The ledger no longer makes a key unique forever: once its record expired, a key may be used
-- again (a charge checks only the keys of the last 24 hours). Rebuilt without the UNIQUE constraint.
CREATE TABLE usage_ledger_v2 (
  id               INTEGER PRIMARY KEY AUTOINCREMENT,
  workspace_id     TEXT NOT NULL REFERENCES workspaces(id),
  usage_type_key   TEXT NOT NULL REFERENCES usage_types(key),
  amount           INTEGER NOT NULL CHECK (amount > 0),
  request_id       TEXT NOT NULL,
  idempotency_key  TEXT,
  cycle_start      TEXT NOT NULL,
  created_at       TEXT NOT NULL
);
INSERT INTO usage_ledger_v2 (id, workspace_id, usage_type_key, amount, request_id, idempotency_key, cycle_start, created_at)
  SELECT id, workspace_id, usage_type_key, amount, request_id, idempotency_key, cycle_start, created_at FROM usage_ledger;
DROP TABLE usage_ledger;
ALTER TABLE usage_ledger_v2 RENAME TO usage_ledger;
CREATE INDEX usage_ledger_workspace ON usage_ledger (workspace_id, id);
CREATE INDEX usage_ledger_idempotency ON usage_ledger (workspace_id, idempotency_key, created_at);
