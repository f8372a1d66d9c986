/**
 * Idempotency-Key (decisions.md "Idempotency"): a key is bound to its first request, that is the
 * workspace, method, path and SHA-256 of the body. Middleware of the workspace-scoped POST routes.
 * The records live in the workspace's meter (worker/quotas/meter-do.ts, one Durable Object per
 * workspace), next to the counters, so a claim is one synchronous transaction there:
 *
 * - The first request claims the key (state in_progress, with a lease) and runs. A 2xx answer is
 *   stored (status, content type, body); any other answer releases the key, so the client may
 *   retry it once the cause is fixed (a failed request consumes nothing).
 * - A retry with the same key and the same request replays the stored answer
 *   (Idempotent-Replayed: true) without running the route or charging again.
 * - The same key with another request (other path, method or body): 422 IDEMPOTENCY_KEY_REUSED.
 * - A retry while the first still runs: 409 IDEMPOTENCY_KEY_IN_PROGRESS (Retry-After). If the
 *   first never finished (its isolate died), the lease ends after LEASE_MS and a retry of the same
 *   request takes the key over; its charge is then recognized by the meter and not made twice.
 * - Free routes (FREE_WORKSPACE_ROUTES: autocomplete) ignore the key; an answer is stored only
 *   when the request was charged (or checked) by the meter.
 * - Keys expire after 24 hours; the meter's alarm deletes expired records.
 * - A meter that cannot be reached: 503 STORAGE_UNAVAILABLE with Retry-After, nothing run or charged.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env';
import { nowMs } from './clock';
import { toHex } from '../core/digest';
import { ApiError, excerpt } from '../core/problem';
import { idempotencyKeyOf, isFreeWorkspaceRoute, wasMetered } from './quotas/charge';
import { WORKSPACE_ID } from './ids';
import { claimKey, completeKey, releaseKey } from './quotas/meter-client';

/** How long a running request holds its key before a retry may take it over. */
export const LEASE_MS = 60_000;

export const idempotency: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (c.req.method !== 'POST') return next();
  // A free route ignores the key, unread: nothing to charge twice, nothing stored.
  if (isFreeWorkspaceRoute(c)) return next();
  const key = idempotencyKeyOf(c);
  if (key === null) return next();
  const workspaceId = c.req.param('workspaceId');
  // A malformed workspace id touches no storage: the route's validation answers 422.
  if (!workspaceId || !WORKSPACE_ID.test(workspaceId)) return next();
  const url = new URL(c.req.url);
  const path = url.pathname + url.search;
  // The raw bytes (Hono caches them, so the route's JSON validator reads the same body).
  const bodySha256 = toHex(await crypto.subtle.digest('SHA-256', await c.req.arrayBuffer()));
  const lock = crypto.randomUUID();
  const claim = await claimKey(c.env, workspaceId, key, {
    method: c.req.method,
    path,
    bodySha256,
    lock,
    atMs: nowMs(),
    leaseMs: LEASE_MS,
  });
  switch (claim.kind) {
    case 'claimed':
      return runAndStore(c, next, workspaceId, key, lock);
    case 'unknown-workspace':
      // Nothing to bind the key to: the route answers (its charge is 404 for an unknown workspace).
      return next();
    case 'reused':
      throw new ApiError(
        'IDEMPOTENCY_KEY_REUSED',
        `Idempotency-Key '${excerpt(key)}' was used for another request (${claim.method} ${excerpt(claim.path)}, another body or path); use a new key for a new request`,
        { errors: [{ path: 'headers.Idempotency-Key', message: 'bound to another request' }] },
      );
    case 'replay':
      return new Response(claim.body, {
        status: claim.status,
        headers: { 'content-type': claim.contentType ?? 'application/json', 'idempotent-replayed': 'true' },
      });
    case 'in-progress':
      throw new ApiError(
        'IDEMPOTENCY_KEY_IN_PROGRESS',
        `A request with Idempotency-Key '${excerpt(key)}' is still running; retry it later`,
        {
          headers: { 'retry-after': String(claim.retryAfterSeconds) },
        },
      );
  }
};

async function runAndStore(
  c: Parameters<MiddlewareHandler<AppEnv>>[0],
  next: () => Promise<void>,
  workspaceId: string,
  key: string,
  lock: string,
): Promise<void> {
  await next();
  const res = c.res;
  try {
    // Only an answer the meter saw is stored: a route that never charged (however it was
    // mounted) leaves no record behind, so the key costs storage only with a charge.
    if (res.status >= 200 && res.status < 300 && wasMetered(c)) {
      await completeKey(
        c.env,
        workspaceId,
        key,
        lock,
        res.status,
        res.headers.get('content-type'),
        await res.clone().text(),
      );
    } else {
      // Not a success (nothing was consumed) or not metered: the key is released.
      await releaseKey(c.env, workspaceId, key, lock);
    }
  } catch (err) {
    // The answer stands; the key stays in progress until its lease ends, then a retry takes it
    // over (and its charge is recognized by the meter, so nothing is charged twice).
    console.error(
      `[idempotency] could not record the outcome of key ${key.slice(0, 64)}: ${(err as Error).message.slice(0, 200)}`,
    );
  }
}
