/**
 * Idempotency-Key records in the workspace's meter (table request_keys; worker/idempotency.ts is
 * the middleware that uses them): a key bound to its first request (method, path, body SHA-256),
 * held by a lease while the request runs and then holding its 2xx answer for 24 hours. A claim is
 * one synchronous transaction in the meter, so two requests never both hold a key.
 */
import { isoTimestamp } from './repository';
import { LIMITS } from '../../core/limits';

export type ClaimResult =
  | { kind: 'claimed' }
  | { kind: 'unknown-workspace' }
  | { kind: 'replay'; status: number; contentType: string | null; body: string }
  | { kind: 'reused'; method: string; path: string }
  | { kind: 'in-progress'; retryAfterSeconds: number };

export interface KeyClaim {
  key: string;
  method: string;
  path: string;
  bodySha256: string;
  lock: string;
  atMs: number;
  leaseMs: number;
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

/** Claims `c.key` for the request; call it inside the store's transaction. */
export function claimIn(sql: SqlStorage, c: KeyClaim): ClaimResult {
  const row = sql
    .exec<Record<string, SqlStorageValue>>('SELECT * FROM request_keys WHERE idempotency_key = ?', c.key)
    .toArray()[0] as unknown as RequestKeyRow | undefined;
  const same = row !== undefined && row.method === c.method && row.path === c.path && row.body_sha256 === c.bodySha256;
  if (!row || row.expires_at <= c.atMs) {
    sql.exec(
      "INSERT OR REPLACE INTO request_keys (idempotency_key, method, path, body_sha256, state, lock_token, locked_until, created_at, expires_at) VALUES (?, ?, ?, ?, 'in_progress', ?, ?, ?, ?)",
      c.key,
      c.method,
      c.path,
      c.bodySha256,
      c.lock,
      c.atMs + c.leaseMs,
      isoTimestamp(c.atMs),
      c.atMs + LIMITS.idempotencyKeyTtlMs,
    );
    return { kind: 'claimed' };
  }
  if (!same) return { kind: 'reused', method: row.method, path: row.path };
  // A retried claim of this very request (the first answer was lost): it holds the key already.
  if (row.state === 'in_progress' && row.lock_token === c.lock) return { kind: 'claimed' };
  if (row.state === 'done' && row.status !== null) {
    return { kind: 'replay', status: row.status, contentType: row.content_type, body: row.response_body ?? '' };
  }
  if ((row.locked_until ?? 0) > c.atMs) {
    return {
      kind: 'in-progress',
      retryAfterSeconds: Math.max(1, Math.ceil(((row.locked_until ?? c.atMs) - c.atMs) / 1000)),
    };
  }
  // An abandoned lease of the same request: take it over (its charge is recognized by charge_keys).
  sql.exec(
    "UPDATE request_keys SET state = 'in_progress', lock_token = ?, locked_until = ?, status = NULL, content_type = NULL, response_body = NULL WHERE idempotency_key = ?",
    c.lock,
    c.atMs + c.leaseMs,
    c.key,
  );
  return { kind: 'claimed' };
}

/** Stores the 2xx answer of the request holding the key. */
export function completeIn(
  sql: SqlStorage,
  key: string,
  lock: string,
  status: number,
  contentType: string | null,
  body: string,
): void {
  sql.exec(
    "UPDATE request_keys SET state = 'done', status = ?, content_type = ?, response_body = ?, lock_token = NULL, locked_until = NULL WHERE idempotency_key = ? AND lock_token = ?",
    status,
    contentType,
    body,
    key,
    lock,
  );
}

/** Not a success: nothing was consumed, the key is free for a retry. */
export function releaseIn(sql: SqlStorage, key: string, lock: string): void {
  sql.exec('DELETE FROM request_keys WHERE idempotency_key = ? AND lock_token = ?', key, lock);
}

/** Deletes the records whose 24 hours are over, and the charge keys that no longer count. */
export function purgeExpiredKeys(sql: SqlStorage, nowMs: number): void {
  sql.exec('DELETE FROM request_keys WHERE expires_at <= ?', nowMs);
  sql.exec('DELETE FROM charge_keys WHERE at_ms < ?', nowMs - LIMITS.idempotencyKeyTtlMs);
}
