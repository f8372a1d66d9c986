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
import { consume, probeMeter } from './meter-client';
import { benchProbeOf, isBenchTwin } from './bench-twin';
import type { ConsumeOutcome } from './repository';

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

export type UsageTypeKey = 'tokens' | 'images' | 'plagiarismChecks';

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
  const idempotencyKey = idempotencyKeyOf(c);
  const atMs = nowMs();
  // bench:api's unmetered twin (a bench build only; bench-twin.ts): everything but the meter call.
  if (isBenchTwin(c)) return { status: 'free' };
  // bench:api's meter probes (a bench build only): the call to the meter without the charge.
  const probe = benchProbeOf(c);
  if (probe !== null) {
    await probeMeter(c.env, workspaceId, probe, atMs);
    return { status: 'free' };
  }
  const outcome = await consume(
    c.env,
    {
      workspaceId,
      usageTypeKey: req.usageTypeKey,
      amount: req.amount,
      requestId: c.get('requestId') ?? crypto.randomUUID(),
      idempotencyKey,
      atMs,
    },
    secondsUntilNextUtcMidnight(atMs),
  );
  if (outcome.status === 'replayed') c.header('Idempotent-Replayed', 'true');
  return outcome;
}

/**
 * Checks, without deducting, that the request's workspace exists and has room for `usageTypeKey`
 * (404 / 403 / 429 as a charge would answer). For routes that must not start paid work, such as
 * an upstream plagiarism call, for a workspace that could not pay for it.
 */
export async function requireAllowance(c: Context<AppEnv>, usageTypeKey: UsageTypeKey): Promise<void> {
  await charge(c, { usageTypeKey, amount: 0 });
}
