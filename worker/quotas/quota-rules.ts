/**
 * The quota rules of decisions.md ("Quotas and usage") on one stored quota row, written once: the
 * rollover is a table of terms (ROLLOVER) that each evaluate in TypeScript (`roll`, applied by the
 * workspace's meter inside its synchronous transactions, and to the rows D1 reads) and render as
 * SQL (`rolledSql`, folded into the D1 statements of repository.ts that write rolled-over rows).
 *
 * A row stores its counters as of `cycle_start` and `daily_date`; the rollover brings it to the
 * cycle and day of an instant and only ever moves forward (an older instant never rewinds a newer
 * row). Nothing runs on a schedule.
 */
import type { CycleParams } from './cycle';
import type { Quota } from './repository';

/** A quota row as stored (the meter's table; D1's quotas row with its usage type's fair-use limit). */
export interface QuotaRow {
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
 * Where a term's SQL finds its values: the row's columns (`prefix` + name: '' or 'q.') and the
 * dates of the instant as the statement's parameters (such as '?1'). A term that needs a date the
 * scope lacks fails when its SQL is built.
 */
export interface SqlScope {
  prefix: string;
  params: Partial<Record<keyof CycleParams, string>>;
}

/** One value of the rules: of a stored row at the instant of `p`, or the same as SQL. */
interface Term<T> {
  of(r: QuotaRow, p?: CycleParams): T;
  sql(s: SqlScope): string;
}

type Column = Exclude<keyof QuotaRow, 'usage_type_key' | 'quota_id' | 'fair_use_policy_limit'>;

const col = <C extends Column>(c: C): Term<QuotaRow[C]> => ({ of: (r) => r[c], sql: (s) => `${s.prefix}${c}` });

const date = (k: keyof CycleParams): Term<string> => ({
  of: (_, p) => {
    if (!p) throw new Error(`quota rule: ${k} needs the instant's cycle parameters`);
    return p[k];
  },
  sql: (s) => {
    const param = s.params[k];
    if (param === undefined) throw new Error(`quota rule: no SQL parameter for ${k}`);
    return param;
  },
});

const num = (n: number): Term<number> => ({ of: () => n, sql: () => String(n) });

const plus = (...ts: Term<number>[]): Term<number> => ({
  of: (r, p) => ts.reduce((sum, t) => sum + t.of(r, p), 0),
  sql: (s) => `(${ts.map((t) => t.sql(s)).join(' + ')})`,
});

const minus = (a: Term<number>, b: Term<number>): Term<number> => ({
  of: (r, p) => a.of(r, p) - b.of(r, p),
  sql: (s) => `(${a.sql(s)} - ${b.sql(s)})`,
});

const least = (a: Term<number>, b: Term<number>): Term<number> => ({
  of: (r, p) => Math.min(a.of(r, p), b.of(r, p)),
  sql: (s) => `MIN(${a.sql(s)}, ${b.sql(s)})`,
});

const greatest = (a: Term<number>, b: Term<number>): Term<number> => ({
  of: (r, p) => Math.max(a.of(r, p), b.of(r, p)),
  sql: (s) => `MAX(${a.sql(s)}, ${b.sql(s)})`,
});

/** ISO dates order as text, in TypeScript as in SQLite. */
const atLeast = (a: Term<string>, b: Term<string>): Term<boolean> => ({
  of: (r, p) => a.of(r, p) >= b.of(r, p),
  sql: (s) => `${a.sql(s)} >= ${b.sql(s)}`,
});

/** The first branch whose condition holds, else `otherwise` (SQL CASE). */
const when = <T>(branches: Array<[Term<boolean>, Term<T>]>, otherwise: Term<T>): Term<T> => ({
  of: (r, p) => {
    for (const [cond, value] of branches) if (cond.of(r, p)) return value.of(r, p);
    return otherwise.of(r, p);
  },
  sql: (s) =>
    `(CASE ${branches.map(([cond, value]) => `WHEN ${cond.sql(s)} THEN ${value.sql(s)}`).join(' ')} ELSE ${otherwise.sql(s)} END)`,
});

/** What the row's cycle leaves unused: max(0, limit + bonus + spillover - used). */
const UNUSED = greatest(
  num(0),
  minus(plus(col('limit_amount'), col('bonus_amount'), col('spillover_amount')), col('used_amount')),
);

/** The row's counters belong to the instant's cycle (or a later one already written). */
const SAME_CYCLE = atLeast(col('cycle_start'), date('cycleStart'));
/** The row is exactly one cycle change behind. */
const PREVIOUS_CYCLE = atLeast(col('cycle_start'), date('previousCycleStart'));
/**
 * The daily counter belongs to the instant's day. `>=`: a request whose instant was taken just
 * before midnight but that writes after one of the new day never wipes the new day's counter.
 */
const SAME_DAY = atLeast(col('daily_date'), date('today'));

/**
 * The rollover, column by column (the other columns never roll over):
 * - same cycle: counters unchanged;
 * - one cycle change: the unused part of the old cycle, capped at limitAmount, becomes the
 *   spillover; used and bonus return to 0;
 * - two or more: the idle cycles left their full limit unused, so the spillover is limitAmount;
 * - daily counter: kept on the same UTC day (or a later one already written), 0 on a later day.
 */
const ROLLOVER = {
  used_amount: when([[SAME_CYCLE, col('used_amount')]], num(0)),
  used_amount_daily: when([[SAME_DAY, col('used_amount_daily')]], num(0)),
  bonus_amount: when([[SAME_CYCLE, col('bonus_amount')]], num(0)),
  spillover_amount: when(
    [
      [SAME_CYCLE, col('spillover_amount')],
      [PREVIOUS_CYCLE, least(col('limit_amount'), UNUSED)],
    ],
    col('limit_amount'),
  ),
  cycle_start: when([[SAME_CYCLE, col('cycle_start')]], date('cycleStart')),
  daily_date: when([[SAME_DAY, col('daily_date')]], date('today')),
} satisfies { [C in Column]?: Term<QuotaRow[C]> };

export type RolledColumn = keyof typeof ROLLOVER;

/** The columns the rollover changes, which are also the ones a charge changes. */
export const ROLLED_COLUMNS = Object.keys(ROLLOVER) as RolledColumn[];

/** The row brought to the cycle and day of `p` (a copy; the stored row is not changed). */
export function roll(r: QuotaRow, p: CycleParams): QuotaRow {
  // The common case on the charge path: a row of this cycle and day, which every rule keeps as it is.
  if (SAME_CYCLE.of(r, p) && SAME_DAY.of(r, p)) return { ...r };
  const out = { ...r };
  for (const c of ROLLED_COLUMNS) (out as Record<RolledColumn, number | string>)[c] = ROLLOVER[c].of(r, p);
  return out;
}

/** The rolled value of `column` as SQL over a stored row. */
export function rolledSql(column: RolledColumn, s: SqlScope): string {
  return ROLLOVER[column].sql(s);
}

/** What is left to charge this cycle (of a rolled row). */
export function available(r: QuotaRow): number {
  return UNUSED.of(r);
}

/**
 * The workspace's running cycle: the latest cycle start of its rolled rows (after an anchor-day
 * change it can be later than the anchor's), or the cycle of `p` when it has none.
 */
export function runningCycleStart(rolled: QuotaRow[], p: CycleParams): string {
  return rolled.reduce((m, r) => (r.cycle_start > m ? r.cycle_start : m), p.cycleStart);
}

/** The Quota resource of a rolled row (`p` must be the params the row was rolled to). */
export function quotaView(r: QuotaRow, workspaceId: string, p: CycleParams): Quota {
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
