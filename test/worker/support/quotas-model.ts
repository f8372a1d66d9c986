/**
 * A plain reference model of the quota rules of decisions.md, for the property test. It is
 * written independently of worker/quotas/: no SQL, no closed forms; it walks the calendar
 * one UTC day at a time and applies the rules literally.
 */
const DAY = 86_400_000;

export type TypeKey = 'tokens' | 'plagiarismChecks';

export interface ModelQuota {
  limit: number;
  daily: number;
  used: number;
  usedDaily: number;
  bonus: number;
  spill: number;
  /** 00:00 UTC of the first day of the cycle the counters belong to. */
  cycleStart: number;
  /** 00:00 UTC of the day usedDaily belongs to. */
  day: number;
}

export type ChargeOutcome = 'charged' | 'replayed' | 'free' | 'monthly' | 'daily' | 'conflict';

const dayOf = (t: number): number => t - (((t % DAY) + DAY) % DAY);

function lastDayOfMonth(d: Date): number {
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
}

/** Is the UTC day starting at `day` the anchor date of its month? */
export function isAnchorDate(day: number, anchor: number): boolean {
  const d = new Date(day);
  return d.getUTCDate() === Math.min(anchor, lastDayOfMonth(d));
}

/** First anchor date (00:00 UTC) strictly after the day of `t`. */
export function nextAnchorDate(t: number, anchor: number): number {
  let d = dayOf(t) + DAY;
  while (!isAnchorDate(d, anchor)) d += DAY;
  return d;
}

export function isoDay(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

export class QuotaModel {
  anchor: number;
  quotas = new Map<TypeKey, ModelQuota>();
  /** Idempotency keys with the instant of their charge: a key binds for 24 hours (decisions.md "Idempotency"). */
  private keys = new Map<string, { type: TypeKey; amount: number; at: number }>();

  constructor(t: number, anchor: number, limits: Array<{ type: TypeKey; limit: number; daily: number }>) {
    this.anchor = anchor;
    let start = dayOf(t);
    while (!isAnchorDate(start, anchor)) start -= DAY;
    for (const l of limits) {
      this.quotas.set(l.type, {
        limit: l.limit,
        daily: l.daily,
        used: 0,
        usedDaily: 0,
        bonus: 0,
        spill: 0,
        cycleStart: start,
        day: dayOf(t),
      });
    }
  }

  /** Brings every quota to the instant t: each anchor date after the cycle start is a cycle change. */
  advance(t: number): void {
    const today = dayOf(t);
    for (const q of this.quotas.values()) {
      for (let d = q.cycleStart + DAY; d <= today; d += DAY) {
        if (!isAnchorDate(d, this.anchor)) continue;
        q.spill = Math.min(q.limit, Math.max(0, q.limit + q.bonus + q.spill - q.used));
        q.used = 0;
        q.bonus = 0;
        q.cycleStart = d;
      }
      if (q.day !== today) {
        q.usedDaily = 0;
        q.day = today;
      }
    }
  }

  charge(t: number, type: TypeKey, amount: number, key: string | null): ChargeOutcome {
    this.advance(t);
    const q = this.quotas.get(type)!;
    // Amount 0 deducts nothing but is still refused without room (decisions.md "Identifiers, bodies and cost").
    if (amount === 0) {
      if (q.limit + q.bonus + q.spill - q.used <= 0) return 'monthly';
      if (q.usedDaily >= q.daily) return 'daily';
      return 'free';
    }
    const prior = key !== null ? this.keys.get(key) : undefined;
    if (prior && prior.at >= t - 24 * 3_600_000) {
      return prior.type === type && prior.amount === amount ? 'replayed' : 'conflict';
    }
    if (q.limit + q.bonus + q.spill - q.used < amount) return 'monthly';
    if (q.usedDaily + amount > q.daily) return 'daily';
    q.used += amount;
    q.usedDaily += amount;
    if (key !== null) this.keys.set(key, { type, amount, at: t });
    return 'charged';
  }

  /** Replays a ledger row: the charge happened, no checks. */
  applyCharged(t: number, type: TypeKey, amount: number): void {
    this.advance(t);
    const q = this.quotas.get(type)!;
    q.used += amount;
    q.usedDaily += amount;
  }

  setLimits(t: number, type: TypeKey, limit: number, daily: number): void {
    this.advance(t);
    const q = this.quotas.get(type)!;
    q.limit = limit;
    q.daily = daily;
  }

  addBonus(t: number, type: TypeKey, amount: number): void {
    this.advance(t);
    this.quotas.get(type)!.bonus += amount;
  }

  setAnchor(t: number, anchor: number): void {
    this.advance(t);
    this.anchor = anchor;
  }

  /** What the listing should show at t (the model itself is not changed). */
  view(t: number, type: TypeKey) {
    const copy = new QuotaModel(t, this.anchor, []);
    for (const [k, q] of this.quotas) copy.quotas.set(k, { ...q });
    copy.advance(t);
    const q = copy.quotas.get(type)!;
    return {
      limitAmount: q.limit,
      limitAmountDaily: q.daily,
      usedAmount: q.used,
      usedAmountDaily: q.usedDaily,
      bonusAmount: q.bonus,
      spilloverAmount: q.spill,
      availableAmount: Math.max(0, q.limit + q.bonus + q.spill - q.used),
      dailyRefreshed: isoDay(t),
    };
  }
}
