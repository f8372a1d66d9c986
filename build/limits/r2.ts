/**
 * The largest R2 object the deployment uploads (the artifacts the build produces, the parts of
 * row-sharded models included) against R2's single-part upload limit and the cap of `wrangler r2
 * object put`, which build/wrangler.ts r2Put uploads with. Over either the upload fails: hard.
 */
import fs from 'node:fs';
import type { R2Artifact } from '../ensure';
import { R2_LIMITS_URL, R2_SINGLE_UPLOAD_BYTES, WRANGLER_R2_PUT_BYTES, WRANGLER_R2_PUT_SOURCE } from './figures';
import { row, type LimitRow } from './table';

/** The largest of `artifacts` (by file size), null when there is none. */
export function largestObject(artifacts: readonly R2Artifact[]): { key: string; bytes: number } | null {
  let best: { key: string; bytes: number } | null = null;
  for (const a of artifacts) {
    const bytes = fs.statSync(a.file).size;
    if (!best || bytes > best.bytes) best = { key: a.key, bytes };
  }
  return best;
}

export function r2Rows(artifacts: readonly R2Artifact[]): LimitRow[] {
  const largest = largestObject(artifacts);
  if (!largest) return [];
  const note = `largest of ${new Set(artifacts.map((a) => a.key)).size} R2 objects`;
  return [
    row({
      check: 'r2 object (single upload)',
      subject: largest.key,
      value: largest.bytes,
      unit: 'bytes',
      measured: true,
      limit: R2_SINGLE_UPLOAD_BYTES,
      source: R2_LIMITS_URL,
      hard: true,
      note,
    }),
    row({
      check: 'r2 object (wrangler r2 object put)',
      subject: largest.key,
      value: largest.bytes,
      unit: 'bytes',
      measured: true,
      limit: WRANGLER_R2_PUT_BYTES,
      source: WRANGLER_R2_PUT_SOURCE,
      hard: true,
      note,
    }),
  ];
}
