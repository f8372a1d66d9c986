/**
 * Seed expansion of a dimension (extension `expand: N`), as Empath builds its categories from a
 * few seeds (Fast, Chen & Bernstein 2016): the N words nearest to the seed centroid that the
 * shared candidate filter accepts (among the CANDIDATE_RANK_CUTOFF most frequent words, with a
 * letter, one dictionary word of the language, not a stop word, not a seed) join the seeds. The
 * dimension's query becomes unit(centroid(seeds) + centroid(expansion words)) (common.ts): the
 * user's seeds keep half the weight however large N is (with one seed and N = 20, an equal
 * weight per word would leave the seed 1/21 of the query).
 */
import type { VectorIndex } from '../types';
import { CANDIDATE_RANK_CUTOFF, candidateFilter, type WordLexicon } from './candidates';
import { findCandidates } from './words';

export const EXPAND_MAX = 50;

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
  const excludedWords = new Set(seedWords.map((w) => w.trim().toLowerCase()));
  for (const r of seedRowList) excludedWords.add(index.word(r).toLowerCase());
  const filter = candidateFilter(index, {
    cutoff: CANDIDATE_RANK_CUTOFF,
    excludedRows: new Set(seedRowList),
    excludedWords,
    lexicon,
  });
  return findCandidates(index, centroid, n, filter, seedRowList.length);
}
