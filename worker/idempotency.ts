/**
 * Idempotency-Key (decisions.md "Idempotency"): a key is bound to its first request, that is the
 * workspace, method, path and SHA-256 of the body. Middleware of the workspace-scoped POST routes:
 *
 * - The first request claims the key (a D1 row in state in_progress, with a lease) and runs.
 *   A 2xx answer is stored (status, content type, body); any other answer releases the key, so
 *   the client may retry it once the cause is fixed (a failed request consumes nothing).
 * - A retry with the same key and the same request replays the stored answer
 *   (Idempotent-Replayed: true) without running the route or charging again.
 * - The same key with another request (other path, method or body): 422 IDEMPOTENCY_KEY_REUSED.
 * - A retry while the first still runs: 409 IDEMPOTENCY_KEY_IN_PROGRESS (Retry-After: 1). If the
 *   first never finished (its isolate died), the lease ends after LEASE_MS and a retry of the same
 *   request takes the key over; its charge is then recognized by the ledger (worker/quotas) and
 *   not made twice.
 * - Keys expire after 24 hours; the Cron Trigger (wrangler.toml) deletes expired rows
 *   (purgeExpiredIdempotencyKeys, called from worker/index.ts `scheduled`).
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env';
import { nowMs } from './clock';
import { toHex } from '../core/digest';
import { ApiError } from '../core/problem';
import { idempotencyKeyOf } from './quotas/charge';
import { WORKSPACE_ID } from './ids';
import { IDEMPOTENCY_TTL_MS, isoTimestamp } from './quotas/repository';

/** How long a running request holds its key before a retry may take it over. */
export const LEASE_MS = 60_000;

interface KeyRow {
  method: string;
  path: string;
  body_sha256: string;
  state: 'in_progress' | 'done';
  locked_until: number | null;
  status: number | null;
  content_type: string | null;
  response_body: string | null;
  expires_at: number;
}

// Claims the key: a new row, or takes over an expired one (any request) or an abandoned one
// (lease over, same request). Otherwise changes nothing, and the caller reads the row.
const CLAIM =
  'INSERT INTO idempotency_keys (workspace_id, idempotency_key, method, path, body_sha256, state, lock_token, locked_until, created_at, expires_at) ' +
  "VALUES (?1, ?2, ?3, ?4, ?5, 'in_progress', ?6, ?7, ?8, ?9) " +
  'ON CONFLICT (workspace_id, idempotency_key) DO UPDATE SET method = excluded.method, path = excluded.path, body_sha256 = excluded.body_sha256, ' +
  "state = 'in_progress', lock_token = excluded.lock_token, locked_until = excluded.locked_until, status = NULL, content_type = NULL, response_body = NULL, " +
  'created_at = CASE WHEN idempotency_keys.expires_at <= ?10 THEN excluded.created_at ELSE idempotency_keys.created_at END, ' +
  'expires_at = CASE WHEN idempotency_keys.expires_at <= ?10 THEN excluded.expires_at ELSE idempotency_keys.expires_at END ' +
  'WHERE idempotency_keys.expires_at <= ?10 ' +
  "OR (idempotency_keys.state = 'in_progress' AND idempotency_keys.locked_until <= ?10 AND idempotency_keys.method = excluded.method " +
  'AND idempotency_keys.path = excluded.path AND idempotency_keys.body_sha256 = excluded.body_sha256)';

const READ =
  'SELECT method, path, body_sha256, state, locked_until, status, content_type, response_body, expires_at FROM idempotency_keys WHERE workspace_id = ?1 AND idempotency_key = ?2';

export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method !== 'POST') return next();
  const key = idempotencyKeyOf(c);
  if (key === null) return next();
  const workspaceId = c.req.param('workspaceId');
  // A malformed workspace id touches no storage: the route's validation answers 422.
  if (!workspaceId || !WORKSPACE_ID.test(workspaceId)) return next();
  const db = c.env.DB;
  const url = new URL(c.req.url);
  const path = url.pathname + url.search;
  // The raw bytes (Hono caches them, so the route's JSON validator reads the same body).
  const bodyHash = toHex(await crypto.subtle.digest('SHA-256', await c.req.arrayBuffer()));
  const lock = crypto.randomUUID();

  for (let attempt = 0; attempt < 3; attempt++) {
    const at = nowMs();
    const claimed = await db
      .prepare(CLAIM)
      .bind(workspaceId, key, c.req.method, path, bodyHash, lock, at + LEASE_MS, isoTimestamp(at), at + IDEMPOTENCY_TTL_MS, at)
      .run();
    if (claimed.meta.changes === 1) return runAndStore(c, next, workspaceId, key, lock);

    const row = await db.prepare(READ).bind(workspaceId, key).first<KeyRow>();
    if (!row || row.expires_at <= at) continue; // removed or expired in between: claim again
    if (row.method !== c.req.method || row.path !== path || row.body_sha256 !== bodyHash) {
      throw new ApiError(
        'IDEMPOTENCY_KEY_REUSED',
        `Idempotency-Key '${key.slice(0, 64)}' was used for another request (${row.method} ${row.path.slice(0, 200)}, another body or path); use a new key for a new request`,
        { errors: [{ path: 'headers.Idempotency-Key', message: 'bound to another request' }] },
      );
    }
    if (row.state === 'done' && row.status !== null) {
      return new Response(row.response_body ?? '', {
        status: row.status,
        headers: { 'content-type': row.content_type ?? 'application/json', 'idempotent-replayed': 'true' },
      });
    }
    if (row.state === 'in_progress' && (row.locked_until ?? 0) > at) {
      throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS', `A request with Idempotency-Key '${key.slice(0, 64)}' is still running; retry it later`, {
        headers: { 'retry-after': String(Math.max(1, Math.ceil(((row.locked_until ?? at) - at) / 1000))) },
      });
    }
    // An abandoned lease of the same request: the next CLAIM takes it over.
  }
  throw new ApiError('IDEMPOTENCY_KEY_IN_PROGRESS', `The Idempotency-Key '${key.slice(0, 64)}' changed hands repeatedly; retry the request`, {
    headers: { 'retry-after': '1' },
  });
};

async function runAndStore(c: Parameters<MiddlewareHandler<AppEnv>>[0], next: () => Promise<void>, workspaceId: string, key: string, lock: string): Promise<void> {
  const db = c.env.DB;
  await next();
  const res = c.res;
  try {
    if (res.status >= 200 && res.status < 300) {
      const body = await res.clone().text();
      await db
        .prepare(
          "UPDATE idempotency_keys SET state = 'done', status = ?4, content_type = ?5, response_body = ?6, lock_token = NULL, locked_until = NULL " +
            'WHERE workspace_id = ?1 AND idempotency_key = ?2 AND lock_token = ?3',
        )
        .bind(workspaceId, key, lock, res.status, res.headers.get('content-type'), body)
        .run();
    } else {
      // Not a success: nothing was consumed, so the key is released for a retry.
      await db.prepare('DELETE FROM idempotency_keys WHERE workspace_id = ?1 AND idempotency_key = ?2 AND lock_token = ?3').bind(workspaceId, key, lock).run();
    }
  } catch (err) {
    // The answer stands; the key stays in progress until its lease ends, then a retry takes it
    // over (and its charge is recognized by the ledger, so nothing is charged twice).
    console.error(`[idempotency] could not record the outcome of key ${key.slice(0, 64)}: ${(err as Error).message.slice(0, 200)}`);
  }
}

/** Deletes the keys whose 24 hours are over (the Cron Trigger's job); returns how many. */
export async function purgeExpiredIdempotencyKeys(db: D1Database, atMs: number = nowMs()): Promise<number> {
  const r = await db.prepare('DELETE FROM idempotency_keys WHERE expires_at <= ?1').bind(atMs).run();
  return r.meta.changes ?? 0;
}
