/**
 * The quota rules of decisions.md ("Quotas and usage") on one stored quota row, as plain
 * functions: the same rollover the D1 statements of repository.ts fold into SQL, applied by the
 * WorkspaceMeter Durable Object (meter-do.ts) inside its synchronous transactions.
 *
 * A row stores its counters as of `cycle_start` and `daily_date`; `roll` brings it to the cycle and
 * day of `p` and only ever moves forward (an older instant never rewinds a newer row).
 */
import type { CycleParams } from './cycle';
import type { Quota } from './repository';

export interface MeterRow {
  usage_type_key: string;
  quota_id: string;
  limit_amount: number;
  limit_amount_daily: number;
  used_amount: number;
  used_amount_daily: number;
  bonus_amount: number;
  spillover_amount: number;
  cycle_start: string;
  daily_date: string;
  fair_use_policy_limit: number | null;
}

/**
 * - Same cycle: counters unchanged.
 * - One cycle change: the unused part of the old cycle, capped at limitAmount, becomes the
 *   spillover; used and bonus return to 0.
 * - Two or more: the idle cycles left their full limit unused, so the spillover is limitAmount.
 * - Daily counter: kept on the same UTC day (or a later one already written), 0 on a later day.
 */
export function roll(r: MeterRow, p: CycleParams): MeterRow {
  const out = { ...r };
  if (r.cycle_start < p.cycleStart) {
    out.spillover_amount =
      r.cycle_start >= p.previousCycleStart
        ? Math.min(r.limit_amount, Math.max(0, r.limit_amount + r.bonus_amount + r.spillover_amount - r.used_amount))
        : r.limit_amount;
    out.used_amount = 0;
    out.bonus_amount = 0;
    out.cycle_start = p.cycleStart;
  }
  if (r.daily_date < p.today) {
    out.used_amount_daily = 0;
    out.daily_date = p.today;
  }
  return out;
}

export function available(r: MeterRow): number {
  return Math.max(0, r.limit_amount + r.bonus_amount + r.spillover_amount - r.used_amount);
}

/** The Quota resource of a rolled row (`p` must be the params the row was rolled to). */
export function quotaView(r: MeterRow, workspaceId: string, p: CycleParams): Quota {
  return {
    id: r.quota_id,
    workspaceId,
    usageTypeKey: r.usage_type_key,
    limitAmount: r.limit_amount,
    limitAmountDaily: r.limit_amount_daily,
    usedAmount: r.used_amount,
    usedAmountDaily: r.used_amount_daily,
    availableAmount: available(r),
    bonusAmount: r.bonus_amount,
    spilloverAmount: r.spillover_amount,
    fairUseLimitReached: r.fair_use_policy_limit !== null && r.used_amount >= r.fair_use_policy_limit,
    // The daily counter resets at every midnight UTC, so the last reset is today's midnight.
    dailyRefreshed: p.today,
  };
}
