/**
 * The isolate's copy of its workspaces' admission state (decisions.md "Admission and cost": the
 * allowance check may be answered from a per-isolate copy for at most 1 s, and only while the
 * monthly and daily amounts available are at least 100 times the largest charge the cap admits).
 * Filled by the meter's answers to admissions and charges; a leaf module, so the charge can
 * refresh it without importing admission.
 */
import { largestChargeWithin } from '../../core/cost';
import type { UsageTypeKey } from '../quotas/usage-types';
import type { BucketSettings } from './rate-bucket';

/** What the meter answers of a workspace's state with an admission or a charge. */
export interface AdmissionSnapshot {
  /** Monthly and daily amounts still available of the usage type; null: the route charges none. */
  monthly: number | null;
  daily: number | null;
  /** The rate bucket's level after this call. */
  bucket: number;
}

/** How long the isolate's copy of a workspace's admission state may answer (decision: at most 1 s). */
const COPY_TTL_MS = 1_000;
/** The copy is answered from only while this many of the largest admitted charge are still available. */
const COPY_HEADROOM = 100;
const COPIES_MAX = 10_000;

interface Copy {
  monthly: number;
  daily: number;
  /** The bucket's level as the meter answered it, at `atMs`, minus what was admitted here since. */
  level: number;
  atMs: number;
  /** When the meter answered (real time). */
  fetchedMs: number;
}

/** The isolate's copies, by workspace and usage type. */
const copies = new Map<string, Copy>();

const copyKey = (workspaceId: string, usageTypeKey: UsageTypeKey) => `${usageTypeKey}\u0000${workspaceId}`;

/** Keeps the meter's answer as this isolate's copy (an admission, or a charge's answer). */
export function rememberAdmission(workspaceId: string, usageTypeKey: UsageTypeKey, s: AdmissionSnapshot): void {
  if (s.monthly === null || s.daily === null) return;
  if (copies.size >= COPIES_MAX) copies.clear();
  const now = Date.now();
  copies.set(copyKey(workspaceId, usageTypeKey), {
    monthly: s.monthly,
    daily: s.daily,
    level: s.bucket,
    atMs: now,
    fetchedMs: now,
  });
}

/** Admits from the copy when the decision's bounds allow it (the units are taken from the copy's bucket). */
export function admittedFromCopy(
  workspaceId: string,
  usageTypeKey: UsageTypeKey,
  units: number,
  capUnits: number,
  bucket: BucketSettings,
): boolean {
  const copy = copies.get(copyKey(workspaceId, usageTypeKey));
  if (!copy) return false;
  const now = Date.now();
  if (now - copy.fetchedMs > COPY_TTL_MS) {
    copies.delete(copyKey(workspaceId, usageTypeKey));
    return false;
  }
  const headroom = COPY_HEADROOM * largestChargeWithin(capUnits);
  if (copy.monthly < headroom || copy.daily < headroom) return false;
  const level = Math.min(bucket.burst, copy.level + ((now - copy.atMs) * bucket.ratePerS) / 1000);
  if (level < units) return false;
  copy.level = level - units;
  copy.atMs = now;
  return true;
}
