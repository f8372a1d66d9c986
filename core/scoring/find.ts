/**
 * The candidate words nearest a query (find-and-score, seed expansion): the kernel's top-k, with
 * the candidate filter and one entry per lower-cased word. Split from words.ts so seed expansion
 * (expansion.ts) reaches it without importing the word-scores endpoint.
 */
import { MAX_K } from '../kernels';
import { cacheKeyOf, type VectorIndex } from '../types';
import type { CandidateFilter } from './candidates';
import { hasLetter } from './common';

/** Per index (models are immutable): the rows that contain a letter, for the find-and-score fallback. */
const letterRowsByIndex = new WeakMap<object, Int32Array>();

/** Rows of the vocabulary whose entry contains a letter, in frequency order (computed once per index). */
function letterRowsOf(index: VectorIndex): Int32Array {
  let rows = letterRowsByIndex.get(cacheKeyOf(index));
  if (!rows) {
    const out = new Int32Array(index.size);
    let n = 0;
    for (let r = 0; r < index.size; r++) if (hasLetter(index.word(r))) out[n++] = r;
    rows = out.slice(0, n);
    letterRowsByIndex.set(cacheKeyOf(index), rows);
  }
  return rows;
}

/**
 * The first row of each new lower-cased word in `rows` (best first) that `filter` accepts (every
 * row when null), up to `limit`: how ranked rows become candidate words (find-and-score, expansion).
 */
export function pickCandidates(
  index: VectorIndex,
  rows: ArrayLike<number>,
  limit: number,
  filter: CandidateFilter | null,
): number[] {
  const seen = new Set<string>();
  const picked: number[] = [];
  for (let i = 0; i < rows.length && picked.length < limit; i++) {
    const r = rows[i];
    const lower = index.word(r).toLowerCase();
    if (seen.has(lower) || (filter && !filter.accept(r))) continue;
    seen.add(lower);
    picked.push(r);
  }
  return picked;
}

/**
 * Find-and-score candidates (also seed expansion's): the `limit` distinct lower-cased words
 * closest to the centroid that the candidate filter (core/scoring/candidates.ts, with the
 * vocabulary quality rules of core/vocab-quality.ts) accepts. A cased vocabulary may hold
 * one word in several casings; the closest entry stands for the word and the others do not use
 * up the limit. The fast path takes the kernel's top-k with headroom for skipped rows, widening
 * k while rows are skipped; when that is not enough, it ranks the accepted rows explicitly,
 * widening k until `limit` distinct words are found or every accepted row is ranked (at most
 * MAX_K rows).
 */
export function findCandidates(
  index: VectorIndex,
  centroid: Float32Array,
  limit: number,
  filter: CandidateFilter,
  excludedCount = 0,
): number[] {
  const pick = (rows: ArrayLike<number>, checkEligible: boolean): number[] =>
    pickCandidates(index, rows, limit, checkEligible ? filter : null);
  const { available, cutoff } = filter;
  let k = Math.min(MAX_K, available, limit + excludedCount + 32);
  if (k <= 0) return [];
  for (;;) {
    const first = index.topK(centroid, k, cutoff !== undefined ? { rankCutoff: cutoff } : undefined);
    const picked = pick(first.rows, true);
    if (picked.length >= limit || first.rows.length < k) return picked;
    if (k >= MAX_K || k >= available) break;
    k = Math.min(MAX_K, available, 4 * k);
  }
  // Too many skipped rows or casings: rank the eligible rows explicitly.
  const letters = letterRowsOf(index);
  const rows: number[] = [];
  for (let i = 0; i < letters.length; i++) {
    const r = letters[i];
    if (r >= available) break;
    if (filter.accept(r)) rows.push(r);
  }
  if (rows.length === 0) return [];
  const eligible = Int32Array.from(rows);
  for (let kk = Math.min(limit, eligible.length, MAX_K); ; kk = Math.min(2 * kk, eligible.length, MAX_K)) {
    const ranked = pick(index.topK(centroid, kk, { rows: eligible }).rows, false);
    if (ranked.length >= limit || kk >= eligible.length || kk >= MAX_K) return ranked;
  }
}
