/**
 * Admission (decisions.md "Admission and cost"): after the request is authenticated and
 * everything it decides alone is validated, and before any model, language-data or scoring
 * work, the request is priced (core/cost.ts) and admitted in one call to its workspace's meter:
 * the workspace exists, its allowance for the route's usage type is not exhausted (monthly and
 * daily; free routes: existence only), the estimate is within the cap (413
 * REQUEST_TOO_EXPENSIVE) and the workspace's token bucket has the units (429 RATE_LIMITED with
 * Retry-After), which are then taken. Host capacity is the host's own decision (worker/hosts/gate.ts).
 *
 * The per-isolate shortcut the decision allows: a route that charges after its work may be
 * admitted from this isolate's copy of the meter's answer for at most COPY_TTL_MS, and only while
 * the monthly and daily amounts available are at least 100 times the largest charge the cap
 * admits and the copy's bucket holds the units. The charge after the work then debits the
 * bucket with them (worker/quotas/charge.ts) and refreshes the copy; the charge itself stays
 * exact (ledger = counters).
 */
import type { Context, MiddlewareHandler } from 'hono';
import type { AppEnv, Env } from '../env';
import { nowMs } from '../clock';
import { ApiError } from '../../core/problem';
import { estimateUnits, REQUEST_COST_CAP_UNITS_DEFAULT, type CostedRoute, COST_OF } from '../../core/cost';
import type { UsageTypeKey } from '../quotas/usage-types';
import { secondsUntilNextUtcMidnight } from '../quotas/cycle';
import { admitInMeter } from '../quotas/meter-client';
import { bucketSettings } from './rate-bucket';
import { admittedFromCopy, rememberAdmission } from './isolate-copy';

export function capUnitsOf(env: Pick<Env, 'REQUEST_COST_CAP_UNITS'>): number {
  const n = Number(env.REQUEST_COST_CAP_UNITS);
  return env.REQUEST_COST_CAP_UNITS && Number.isFinite(n) && n > 0 ? Math.floor(n) : REQUEST_COST_CAP_UNITS_DEFAULT;
}

function tooExpensive(units: number, capUnits: number): ApiError {
  return new ApiError(
    'REQUEST_TOO_EXPENSIVE',
    `This request is estimated at ${units} work units, above the cap of ${capUnits}: split it into smaller requests (fewer texts or characters, fewer dimensions, expansions or mappers, fewer words), or leave out explain or subwordFallback (docs/api.md "Cost and admission")`,
    { members: { estimatedUnits: units, capUnits } },
  );
}

export interface Admission {
  /** The usage type the route charges after its work; null for a route that charges nothing. */
  usageTypeKey: UsageTypeKey | null;
  /** The workspace to admit against; default the path's workspaceId, else the token's workspace claim. */
  workspaceId?: string | null;
}

/**
 * Prices a request whose body matches its schema: the estimate the answer carries as X-Cost-Units
 * (costHeader), the request's own refusals (422) included.
 */
export function price<R extends CostedRoute>(
  c: Context<AppEnv>,
  route: R,
  body: Parameters<(typeof COST_OF)[R]>[0],
): number {
  const units = estimateUnits(route, body);
  c.set('costUnits', units);
  return units;
}

/**
 * Prices (unless price() did) and admits the request (see above); throws the refusal. Returns the
 * estimate in work units.
 */
export async function admit<R extends CostedRoute>(
  c: Context<AppEnv>,
  route: R,
  body: Parameters<(typeof COST_OF)[R]>[0],
  admission: Admission,
): Promise<number> {
  const units = c.get('costUnits') ?? price(c, route, body);
  const capUnits = capUnitsOf(c.env);
  const workspaceId = admission.workspaceId ?? c.req.param('workspaceId') ?? c.get('auth')?.workspaceId ?? null;
  // An admin token without a workspace claim is not rate limited; the cap still applies.
  if (workspaceId === null) {
    if (units > capUnits) throw tooExpensive(units, capUnits);
    return units;
  }
  const { usageTypeKey } = admission;
  const bucket = bucketSettings(c.env);
  if (
    usageTypeKey !== null &&
    units <= capUnits &&
    admittedFromCopy(workspaceId, usageTypeKey, units, capUnits, bucket)
  ) {
    c.set('rateOwed', { units });
    return units;
  }
  const atMs = nowMs();
  const result = await admitInMeter(c.env, { workspaceId, usageTypeKey, units, capUnits, bucket, atMs });
  switch (result.status) {
    case 'admitted':
      if (usageTypeKey !== null) rememberAdmission(workspaceId, usageTypeKey, result.snapshot);
      return units;
    case 'expired':
      throw new ApiError('STORAGE_UNAVAILABLE', "The workspace's meter did not answer in time; retry the request", {
        headers: { 'retry-after': '1' },
      });
    default:
      switch (result.code) {
        case 'REQUEST_TOO_EXPENSIVE':
          throw tooExpensive(units, capUnits);
        case 'RATE_LIMITED':
          throw new ApiError('RATE_LIMITED', result.detail, {
            headers: { 'retry-after': String(Math.max(1, Math.ceil(result.retryAfterMs / 1000))) },
          });
        case 'DAILY_LIMIT_REACHED':
          throw new ApiError('DAILY_LIMIT_REACHED', result.detail, {
            headers: { 'retry-after': String(secondsUntilNextUtcMidnight(atMs)) },
          });
        default:
          throw new ApiError(result.code, result.detail);
      }
  }
}

/** Every answer of a priced route carries its estimate (set by admit), refusals and errors included. */
export const costHeader: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const units = c.get('costUnits');
  if (units === undefined) return;
  try {
    c.res.headers.set('X-Cost-Units', String(units));
  } catch {
    const res = new Response(c.res.body, c.res);
    res.headers.set('X-Cost-Units', String(units));
    c.res = res;
  }
};
