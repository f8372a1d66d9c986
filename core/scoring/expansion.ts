/**
 * Seed expansion of a dimension (extension `expand: N`), as Empath builds its categories from a
 * few seeds (Fast, Chen & Bernstein 2016): the N words nearest to the seed centroid that the
 * shared candidate filter accepts (among the CANDIDATE_RANK_CUTOFF most frequent words, with a
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
import type { VectorIndex } from '../types';
import { CANDIDATE_RANK_CUTOFF, candidateFilter, type WordLexicon } from './candidates';
import { findCandidates } from './words';

/** Background sample of the expansion's hubness correction: the most frequent words (as the normalization statistics). */
export const BACKGROUND_WORDS = 20_000;

const backgroundCache = new WeakMap<VectorIndex, Float32Array>();

/** Mean of the unit vectors of the min(BACKGROUND_WORDS, size) most frequent rows (cached per index). */
export function backgroundMean(index: VectorIndex): Float32Array {
  let b = backgroundCache.get(index);
  if (!b) {
    const n = Math.min(BACKGROUND_WORDS, index.size);
    const sum = new Float64Array(index.dims);
    for (let r = 0; r < n; r++) {
      const v = index.vector(r);
      for (let j = 0; j < sum.length; j++) sum[j] += v[j];
    }
    b = Float32Array.from(sum, (x) => (n > 0 ? x / n : 0));
    backgroundCache.set(index, b);
  }
  return b;
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
  const excludedWords = new Set(seedWords.map((w) => w.trim().toLowerCase()));
  for (const r of seedRowList) excludedWords.add(index.word(r).toLowerCase());
  const filter = candidateFilter(index, {
    cutoff: CANDIDATE_RANK_CUTOFF,
    excludedRows: new Set(seedRowList),
    excludedWords,
    lexicon,
  });
  return findCandidates(index, query, n, filter, seedRowList.length);
}
