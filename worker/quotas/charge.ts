/**
 * The real `charge` behind worker/metering.ts: deducts a metered request's usage from the
 * workspace in the path, in the workspace's meter (meter-do.ts, one Durable Object per
 * workspace), honoring the Idempotency-Key header.
 */
import type { Context } from 'hono';
import type { AppEnv } from '../env';
import type { ChargeRequest } from '../metering';
import { nowMs } from '../clock';
import { ApiError } from '../problem';
import { secondsUntilNextUtcMidnight } from './cycle';
import { consume } from './meter-client';
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

export async function chargeRequest(c: Context<AppEnv>, req: ChargeRequest): Promise<ConsumeOutcome> {
  const workspaceId = req.workspaceId ?? c.req.param('workspaceId');
  if (!workspaceId) throw new ApiError('INTERNAL_ERROR', 'charge() was called on a route without a workspaceId path parameter');
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
    },
    secondsUntilNextUtcMidnight(atMs),
  );
  if (outcome.status === 'replayed') c.header('Idempotent-Replayed', 'true');
  return outcome;
}
