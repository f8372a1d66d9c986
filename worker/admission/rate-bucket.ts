/**
 * A token bucket in work units (decisions.md "Admission and cost"): each workspace's meter keeps
 * one, debited with a request's estimated cost at admission. It fills at `ratePerS` up to `burst`;
 * a request that finds fewer units than it costs is refused with the time until it would fit. A
 * debit made after the work (a request admitted from an isolate's copy) may take the level below
 * zero: the requests after it then wait longer, so the rate holds over time.
 */
export interface BucketSettings {
  ratePerS: number;
  burst: number;
}

export class RateBucket {
  /** Full until the first call (its burst is the caller's setting). */
  private level = Infinity;
  private at = 0;

  /** The units in the bucket now, under the caller's settings (the API Worker's env decides them). */
  levelAt(settings: BucketSettings, nowMs: number): number {
    const { ratePerS, burst } = settings;
    if (this.level > burst) this.level = burst;
    if (nowMs > this.at) {
      this.level = Math.min(burst, this.level + ((nowMs - this.at) * ratePerS) / 1000);
      this.at = nowMs;
    }
    return this.level;
  }

  /** Takes `units` when they are there (0); otherwise takes nothing and answers the ms until they would be. */
  take(settings: BucketSettings, units: number, nowMs: number): number {
    const level = this.levelAt(settings, nowMs);
    // A request larger than the bucket waits for a full one (else it could never run).
    const need = Math.min(units, settings.burst);
    if (level >= need) {
      this.level = level - units;
      return 0;
    }
    return Math.ceil(((need - level) * 1000) / settings.ratePerS);
  }

  /** Takes `units` whatever the level (work already admitted). */
  owe(settings: BucketSettings, units: number, nowMs: number): void {
    this.level = this.levelAt(settings, nowMs) - units;
  }
}

/** The defaults of WORKSPACE_COST_RATE_UNITS_PER_S and WORKSPACE_COST_BURST_UNITS: about one core's work a second, and ten capped requests at once. */
export const WORKSPACE_COST_RATE_UNITS_PER_S_DEFAULT = 1000;
export const WORKSPACE_COST_BURST_UNITS_DEFAULT = 10_000;

function positive(raw: string | undefined, fallback: number): number {
  const n = Number(raw);
  return raw !== undefined && raw !== '' && Number.isFinite(n) && n > 0 ? n : fallback;
}

export function bucketSettings(env: {
  WORKSPACE_COST_RATE_UNITS_PER_S?: string;
  WORKSPACE_COST_BURST_UNITS?: string;
}): BucketSettings {
  return {
    ratePerS: positive(env.WORKSPACE_COST_RATE_UNITS_PER_S, WORKSPACE_COST_RATE_UNITS_PER_S_DEFAULT),
    burst: positive(env.WORKSPACE_COST_BURST_UNITS, WORKSPACE_COST_BURST_UNITS_DEFAULT),
  };
}
