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
import { ApiError, excerpt } from '../../core/problem';
import { secondsUntilNextUtcMidnight } from './cycle';
import { consume, meterHasWorkspace } from './meter-client';
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

/**
 * The workspace routes that charge nothing (the path segment after /api/v1/workspaces/{id}/).
 * An Idempotency-Key on them is ignored (issue 31 #9, docs/quotas.md): a free answer is as cheap
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

/**
 * Workspaces this isolate has seen exist. No route deletes a workspace, so an entry never goes
 * stale; filled by accepted charges, Idempotency-Key claims and requireWorkspaceExists, cleared
 * when full. An unknown workspace is never remembered (it may be created at any time).
 */
const knownWorkspaces = new Set<string>();
const KNOWN_WORKSPACES_MAX = 10_000;

export function rememberWorkspace(workspaceId: string): void {
  if (knownWorkspaces.size >= KNOWN_WORKSPACES_MAX) knownWorkspaces.clear();
  knownWorkspaces.add(workspaceId);
}

/**
 * The rule for an unknown workspace on a free workspace route (issue 31 #14): 404 NOT_FOUND, as
 * the charge of a metered route answers. A workspace this isolate knows costs no storage call;
 * another is looked up once in its meter (which holds or seeds it, as for a charge).
 */
export async function requireWorkspaceExists(c: Context<AppEnv>): Promise<void> {
  const workspaceId = c.req.param('workspaceId');
  if (!workspaceId)
    throw new ApiError('INTERNAL_ERROR', 'requireWorkspaceExists() was called on a route without a workspaceId');
  if (knownWorkspaces.has(workspaceId)) return;
  if (!(await meterHasWorkspace(c.env, workspaceId, nowMs())))
    throw new ApiError('NOT_FOUND', `Workspace '${excerpt(workspaceId)}' does not exist`);
  rememberWorkspace(workspaceId);
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
    },
    secondsUntilNextUtcMidnight(atMs),
  );
  if (outcome.status === 'replayed') c.header('Idempotent-Replayed', 'true');
  rememberWorkspace(workspaceId);
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
