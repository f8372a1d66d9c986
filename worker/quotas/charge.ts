/**
 * Metering of every metered route (decisions.md "Quotas and usage"): a route computes its answer
 * first (side-effect free), then charges; the charge deducts the usage from the workspace in the
 * path in the workspace's meter (meter-do.ts, one Durable Object per workspace) or throws the
 * quota problem (403/429), so a failed request consumes nothing. It honors the Idempotency-Key
 * header (a retry is not charged twice).
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { nowMs } from '../clock';
import { ApiError } from '../../core/problem';
import { secondsUntilNextUtcMidnight } from './cycle';
import { consume } from './meter-client';
import type { ConsumeOutcome } from './repository';
import { rememberAdmission } from '../admission/isolate-copy';
import { bucketSettings } from '../admission/rate-bucket';

/** Printable ASCII without spaces at the ends, 1..255 characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

export function idempotencyKeyOf(c: Context<AppEnv>): string | null {
  const raw = c.req.header('idempotency-key');
  if (raw === undefined) return null;
  if (!IDEMPOTENCY_KEY.test(raw)) {
    throw new ApiError('VALIDATION_FAILED', 'The Idempotency-Key header must be 1 to 255 printable ASCII characters', {
      errors: [{ path: 'headers.Idempotency-Key', message: 'Expected 1 to 255 printable ASCII characters' }],
    });
  }
  return raw;
}

import type { UsageTypeKey } from './usage-types';
export type { UsageTypeKey };

/**
 * The workspace routes that charge nothing (the path segment after /api/v1/workspaces/{id}/).
 * An Idempotency-Key on them is ignored (docs/quotas.md): a free answer is as cheap
 * to compute again as to replay, and storing it for 24 hours let any client write to the meter's
 * storage without paying. Every other workspace POST route honours the key.
 */
export const FREE_WORKSPACE_ROUTES: ReadonlySet<string> = new Set(['autocomplete-suggestions']);

/** Whether the request is one of FREE_WORKSPACE_ROUTES (/api/v1/workspaces/{id}/{route}). */
export function isFreeWorkspaceRoute(c: Context<AppEnv>): boolean {
  const segments = c.req.path.split('/');
  return segments.length === 6 && FREE_WORKSPACE_ROUTES.has(segments[5]);
}

/** Whether charge() ran for the request (the idempotency middleware stores only such answers). */
export function wasMetered(c: Context<AppEnv>): boolean {
  return c.get('metered') === true;
}

export interface ChargeRequest {
  usageTypeKey: UsageTypeKey;
  amount: number;
  /** Routes outside /workspaces/{workspaceId}/ name the workspace (the token's) themselves. */
  workspaceId?: string;
}

/**
 * Charges the request's workspace (path param workspaceId, or req.workspaceId) for usage,
 * atomically. Throws ApiError ERROR_NO_REMAINING_QUOTA / ERROR_NO_REMAINING_PLAGIARISM_CHECKS
 * (403) or DAILY_LIMIT_REACHED (429).
 */
export async function charge(c: Context<AppEnv>, req: ChargeRequest): Promise<ConsumeOutcome> {
  const workspaceId = req.workspaceId ?? c.req.param('workspaceId');
  if (!workspaceId)
    throw new ApiError('INTERNAL_ERROR', 'charge() was called on a route without a workspaceId path parameter');
  c.set('metered', true);
  const idempotencyKey = idempotencyKeyOf(c);
  const atMs = nowMs();
  const outcome = await consume(
    c.env,
    {
      workspaceId,
      usageTypeKey: req.usageTypeKey,
      amount: req.amount,
      requestId: c.get('requestId') ?? crypto.randomUUID(),
      idempotencyKey,
      atMs,
      // Units admitted from the isolate's copy (worker/admission/admit.ts) are taken from the bucket now.
      rate: { units: c.get('rateOwed')?.units ?? 0, bucket: bucketSettings(c.env) },
    },
    secondsUntilNextUtcMidnight(atMs),
  );
  if (outcome.status === 'replayed') c.header('Idempotent-Replayed', 'true');
  if (outcome.snapshot) rememberAdmission(workspaceId, req.usageTypeKey, outcome.snapshot);
  return { status: outcome.status };
}
