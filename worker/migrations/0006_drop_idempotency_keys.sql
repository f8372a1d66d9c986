-- Idempotency-Key records live in each workspace's meter (worker/quotas/meter-do.ts, table
-- request_keys), which purges its own: the D1 table of 0004 is read and written by no code.
DROP TABLE IF EXISTS idempotency_keys;
