/**
 * Metering interface used by every metered route (decisions.md "Quotas and usage").
 * A route computes its answer first (side-effect free), then charges; the charge is one
 * atomic D1 statement that either deducts or throws the quota problem (403/429), so a
 * failed request consumes nothing. Implemented in worker/quotas/ (issue 5).
 */
import type { Context } from 'hono';
import type { AppEnv } from './env';
import { chargeRequest } from './quotas/charge';

export type UsageTypeKey = 'tokens' | 'images' | 'plagiarismChecks';

export interface ChargeRequest {
  usageTypeKey: UsageTypeKey;
  amount: number;
  /** Routes outside /workspaces/{workspaceId}/ name the workspace (the token's) themselves. */
  workspaceId?: string;
}

export type Charger = (c: Context<AppEnv>, charge: ChargeRequest) => Promise<void>;

/**
 * Charges the current request's workspace (path param workspaceId) for usage, atomically.
 * Throws ApiError ERROR_NO_REMAINING_QUOTA / ERROR_NO_REMAINING_PLAGIARISM_CHECKS (403) or
 * DAILY_LIMIT_REACHED (429). Honors the Idempotency-Key header (a retry is not charged twice).
 * Implemented in worker/quotas/charge.ts (one atomic D1 batch per call).
 */
export const charge: Charger = async (c, req) => {
  await chargeRequest(c, req);
};

/**
 * Checks, without deducting, that the request's workspace exists and has room for `usageTypeKey`
 * (404 / 403 / 429 as a charge would answer). For routes that must not start paid work, such as
 * an upstream plagiarism call, for a workspace that could not pay for it.
 */
export async function requireAllowance(c: Parameters<Charger>[0], usageTypeKey: UsageTypeKey): Promise<void> {
  await chargeRequest(c, { usageTypeKey, amount: 0 });
}
