/**
 * find-and-score `excludeAntonyms: true` (docs/vocabulary.md "Antonyms"): which rows are not
 * offered. WordNet's antonym links reach only part of what a person calls an opposite (cozy is
 * linked with uncomfortable, not with cramped or dingy), so two steps:
 *
 *   1. the seeds' own links (artifact section ANTO: direct "!" pointers, antonymous adjective
 *      clusters with their satellites, derivationally related forms; build/vocab-flags.ts);
 *   2. among the seeds' nearest words (the first NEIGHBOURHOOD candidates), a pair of words linked
 *      as antonyms of each other is an opposition the seeds' neighbourhood contains (spacious <->
 *      cramped, cheerful <-> dingy). When the pair lies along the seeds' own axis (from the seeds
 *      to the centroid of their step-1 links; see neighbourhoodAntonyms), one word is dropped:
 *      for evaluative seeds (POSITIVE / NEGATIVE flags, the sign of their sum) and a pair of
 *      opposite polarities, the one whose polarity opposes the seeds' (cozy +: cheerful + <->
 *      dingy -, so dingy); otherwise the one on the far side of the axis (cozy: spacious <->
 *      cramped, so cramped). Seeds without links of their own have no axis: step 2 is skipped.
 */
import type { VectorIndex } from '../types';
import { VOCAB_FLAG } from '../vocab-quality';

/** +1 positive, -1 negative, 0 unknown (artifact flags). */
function polarityOf(index: VectorIndex, row: number): number {
  const f = index.flags(row);
  return f & VOCAB_FLAG.POSITIVE ? 1 : f & VOCAB_FLAG.NEGATIVE ? -1 : 0;
}

/** How many nearest candidates step 2 looks at (beyond the request's own limit). */
export const NEIGHBOURHOOD = 150;

/** Step 1: the antonym rows of the seed rows. */
export function seedAntonyms(index: VectorIndex, seedRows: readonly number[]): Set<number> {
  const out = new Set<number>();
  for (const r of seedRows) for (const a of index.antonyms(r)) out.add(a);
  return out;
}

/** Word pairs of the neighbourhood that give the alignment's null distribution (the nearest this many). */
export const NULL_SAMPLE = 200;
/** An antonym pair counts when its alignment is beyond this quantile of the neighbourhood's word pairs. */
export const ALIGNMENT_QUANTILE = 0.9;

/**
 * Step 2: the rows of `nearest` (best first, seeds and step-1 rows already removed) that lose an
 * antonym pair inside `nearest`. A word's side is p(w) = cos(w, seeds) - cos(w, pole), with the
 * pole the centroid of `seedAnts` (the step-1 rows; empty: nothing is dropped). A pair (x, y)
 * counts only when its difference lies along the seeds' axis: |p(x) - p(y)| / (|x - y| |seeds - pole|)
 * (the cosine of x - y with the axis) at least the ALIGNMENT_QUANTILE of the same figure over all
 * word pairs among the nearest NULL_SAMPLE rows; WordNet's clusters link many pairs that are
 * opposites along some other axis (safe <-> dangerous for "cheap"). Of a counted pair, the word
 * of the polarity opposite to the seeds' is dropped (both polarities known and opposite, the
 * seeds' known), else the word with the lower p.
 */
export function neighbourhoodAntonyms(
  index: VectorIndex,
  centroid: Float32Array,
  seedRows: readonly number[],
  seedAnts: ReadonlySet<number>,
  nearest: readonly number[],
): Set<number> {
  const dropped = new Set<number>();
  if (seedAnts.size === 0 || nearest.length < 3) return dropped;
  const pole = index.centroid([...seedAnts]);
  if (!pole) return dropped;
  let axis2 = 0;
  for (let i = 0; i < pole.length; i++) axis2 += (centroid[i]! - pole[i]!) ** 2;
  const axis = Math.sqrt(axis2);
  if (axis === 0) return dropped;
  const near = index.scores(centroid, nearest);
  const far = index.scores(pole, nearest);
  const at = new Map<number, number>();
  nearest.forEach((r, i) => at.set(r, i));
  const side = (i: number) => near[i]! - far[i]!;
  /** |cos(x - y, axis)| of unit vectors with cosine `cos` to each other. */
  const alignment = (i: number, j: number, cos: number) =>
    Math.abs(side(i) - side(j)) / (Math.sqrt(Math.max(1e-12, 2 - 2 * cos)) * axis);
  // Null distribution: every pair among the nearest NULL_SAMPLE rows.
  const n = Math.min(NULL_SAMPLE, nearest.length);
  const sim = index.similarityMatrix(nearest.slice(0, n));
  const all: number[] = [];
  for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) all.push(alignment(i, j, sim[i * n + j]!));
  all.sort((a, b) => a - b);
  const threshold = all[Math.min(all.length - 1, Math.floor(all.length * ALIGNMENT_QUANTILE))]!;
  const seedPolarity = Math.sign(seedRows.reduce((s, r) => s + polarityOf(index, r), 0));
  index.prefetch?.(nearest);
  for (let i = 0; i < nearest.length; i++) {
    const x = nearest[i]!;
    for (const y of index.antonyms(x)) {
      const j = at.get(y);
      if (j === undefined || j <= i) continue; // each pair once (links are stored both ways)
      const cos = index.scores(index.vector(x), [y])[0]!;
      if (alignment(i, j, cos) < threshold) continue;
      const px = polarityOf(index, x);
      if (seedPolarity !== 0 && px !== 0 && polarityOf(index, y) === -px) dropped.add(px === seedPolarity ? y : x);
      else dropped.add(side(i) < side(j) ? x : y);
    }
  }
  return dropped;
}
