/**
 * Seed expansion of a dimension (extension `expand: N`), as Empath builds its categories from a
 * few seeds (Fast, Chen & Bernstein 2016): the N words nearest to the seed centroid that the
 * shared candidate filter accepts (among the DEFAULT_WORDRANK_LIMIT most frequent words, with a
 * letter, one dictionary word of the language, not a stop word, not a seed) join the seeds. The
 * dimension's query becomes unit(centroid(seeds) + centroid(expansion words)) (common.ts): the
 * user's seeds keep half the weight however large N is (with one seed and N = 20, an equal
 * weight per word would leave the seed 1/21 of the query).
 * Candidates are ranked by cos(c, w) - b . w, with b the mean unit vector of the BACKGROUND_WORDS
 * most frequent words: the candidate's similarity to the seeds minus its mean similarity to the
 * background vocabulary, a hubness correction in the spirit of CSLS (Conneau et al. 2018).
 * Without it, words close to everything (well, way, time, example) crowd the expansion of any
 * abstract seed set ("natural place", "means of transportation"); docs/dimensions.md.
 */
import { COST } from '../cost';
import type { Steps } from './steps';
import { cacheKeyOf, type VectorIndex } from '../types';
import { candidateFilter, type CandidateFilter, type WordLexicon } from './candidates';
import { DEFAULT_WORDRANK_LIMIT } from '../vocab-quality';
import { findCandidates, pickCandidates } from './find';

/** Background sample of the expansion's hubness correction: the most frequent words (as the normalization statistics). */
export const BACKGROUND_WORDS = 20_000;

const backgroundCache = new WeakMap<object, Float32Array>();

/** Mean of the unit vectors of the min(BACKGROUND_WORDS, size) most frequent rows (cached per index). */
export function backgroundMean(index: VectorIndex): Float32Array {
  let b = backgroundCache.get(cacheKeyOf(index));
  if (!b) {
    const n = Math.min(BACKGROUND_WORDS, index.size);
    if (index.prefetch) index.prefetch(Int32Array.from({ length: n }, (_, r) => r));
    const sum = new Float64Array(index.dims);
    for (let r = 0; r < n; r++) {
      const v = index.vector(r);
      for (let j = 0; j < sum.length; j++) sum[j] += v[j];
    }
    b = Float32Array.from(sum, (x) => (n > 0 ? x / n : 0));
    backgroundCache.set(cacheKeyOf(index), b);
  }
  return b;
}

/** How `expand` ranks its candidates (request field `expansion`). */
export type ExpansionMode = 'nearest' | 'contrastive';

/** The candidate filter of a dimension's expansion: not its seeds, the shared rules otherwise. */
function expansionFilter(
  index: VectorIndex,
  seedRowList: readonly number[],
  seedWords: readonly string[],
  lexicon: WordLexicon | undefined,
): CandidateFilter {
  const excludedWords = new Set(seedWords.map((w) => w.trim().toLowerCase()));
  for (const r of seedRowList) excludedWords.add(index.word(r).toLowerCase());
  return candidateFilter(index, {
    cutoff: DEFAULT_WORDRANK_LIMIT,
    excludedRows: new Set(seedRowList),
    excludedWords,
    lexicon,
  });
}

/** Rows of the `n` expansion words of the seeds (best first); [] when n is 0 or there are no seeds. */
export function expansionRows(
  index: VectorIndex,
  seedRowList: readonly number[],
  seedWords: readonly string[],
  n: number,
  lexicon: WordLexicon | undefined,
): number[] {
  if (n <= 0 || seedRowList.length === 0) return [];
  const centroid = index.centroid(seedRowList);
  if (!centroid) return [];
  const b = backgroundMean(index);
  const query = new Float32Array(centroid.length);
  for (let j = 0; j < query.length; j++) query[j] = centroid[j] - b[j];
  const filter = expansionFilter(index, seedRowList, seedWords, lexicon);
  return findCandidates(index, query, n, filter, seedRowList.length);
}

/**
 * `expansion: "contrastive"`: the competitors of every dimension of one request, scored once. A
 * candidate w joins dimension k by its margin cos(c_k, w) - max(b . w, max_{j != k} cos(c_j, w)):
 * how much nearer it is to k's seeds than to the background vocabulary (the hubness correction of
 * "nearest") and to the seeds of every other dimension of the request, as discriminative category
 * mining does (CatE, Meng et al. 2020). With one dimension it ranks exactly as "nearest".
 */
export interface ContrastContext {
  /** Candidate rows 0..m-1 (the frequency cutoff, or the rows present in a model head). */
  m: number;
  /** Per row: the largest of b . w and the competitors' cosines; the competitor it came from (-1: b . w); the largest without it. */
  best: Float32Array;
  bestOwner: Int32Array;
  second: Float32Array;
  /** Per competitor: its cosines over the rows. */
  cosines: Float32Array[];
}

/** The candidate rows 0..m-1 and b . w over them, per index (the same for every request). */
const candidateCache = new WeakMap<object, { rows: Int32Array; background: Float32Array }>();

function candidateRows(index: VectorIndex): { rows: Int32Array; background: Float32Array } {
  let c = candidateCache.get(cacheKeyOf(index));
  if (!c) {
    const m = Math.min(DEFAULT_WORDRANK_LIMIT, index.rows ?? index.size);
    const rows = new Int32Array(m);
    for (let r = 0; r < m; r++) rows[r] = r;
    c = { rows, background: index.scores(backgroundMean(index), rows) };
    candidateCache.set(cacheKeyOf(index), c);
  }
  return c;
}

/**
 * Scores the competitors' seed centroids (one kernel call each) and keeps per row the best two;
 * yields after each competitor's scan (its units).
 */
export function* contrastContextSteps(
  index: VectorIndex,
  competitors: ReadonlyArray<Float32Array | null>,
): Steps<ContrastContext> {
  const { rows, background } = candidateRows(index);
  const m = rows.length;
  const best = Float32Array.from(background);
  const bestOwner = new Int32Array(m).fill(-1);
  const second = Float32Array.from(background);
  const cosines: Float32Array[] = [];
  for (let k = 0; k < competitors.length; k++) {
    const c = competitors[k];
    if (!c) {
      cosines.push(new Float32Array(0));
      continue;
    }
    const s = index.scores(c, rows);
    for (let r = 0; r < m; r++) {
      const v = s[r];
      if (v > best[r]) {
        second[r] = best[r];
        best[r] = v;
        bestOwner[r] = k;
      } else if (v > second[r]) second[r] = v;
    }
    cosines.push(s);
    yield COST.contrastScan;
  }
  return { m, best, bestOwner, second, cosines };
}

/** Rows of the `n` contrastive expansion words of competitor k's seeds (best first). */
export function contrastiveExpansionRows(
  index: VectorIndex,
  context: ContrastContext,
  k: number,
  seedRowList: readonly number[],
  seedWords: readonly string[],
  n: number,
  lexicon: WordLexicon | undefined,
): number[] {
  const own = context.cosines[k];
  if (n <= 0 || seedRowList.length === 0 || own.length === 0) return [];
  const { m, best, bestOwner, second } = context;
  const margin = new Float32Array(m);
  for (let r = 0; r < m; r++) margin[r] = own[r] - (bestOwner[r] === k ? second[r] : best[r]);
  const filter = expansionFilter(index, seedRowList, seedWords, lexicon);
  for (let take = Math.min(m, n + seedRowList.length + 32); ; take = Math.min(m, 4 * take)) {
    const picked = pickCandidates(index, topRows(margin, take), n, filter);
    if (picked.length >= n || take >= m) return picked;
  }
}

/** The `k` rows with the largest values, largest first (ties: lower row first); a bounded min-heap. */
function topRows(values: Float32Array, k: number): number[] {
  const heap: number[] = [];
  // a is "smaller" than b: lower value, or the same value and a later row.
  const less = (a: number, b: number) => values[a] < values[b] || (values[a] === values[b] && a > b);
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let s = i;
      if (l < heap.length && less(heap[l], heap[s])) s = l;
      if (r < heap.length && less(heap[r], heap[s])) s = r;
      if (s === i) return;
      [heap[i], heap[s]] = [heap[s], heap[i]];
      i = s;
    }
  };
  for (let row = 0; row < values.length; row++) {
    // Most rows fall below the heap's smallest value: one comparison rejects them.
    if (heap.length === k && k > 0 && values[row] < values[heap[0]]) continue;
    if (heap.length < k) {
      heap.push(row);
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (!less(heap[i], heap[p])) break;
        [heap[i], heap[p]] = [heap[p], heap[i]];
        i = p;
      }
    } else if (k > 0 && less(heap[0], row)) {
      heap[0] = row;
      down(0);
    }
  }
  return heap.sort((a, b) => (less(a, b) ? 1 : -1));
}
