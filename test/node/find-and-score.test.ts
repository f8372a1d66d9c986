/**
 * Find-and-score candidate selection (core/scoring/words.ts) on small cased vocabularies, against
 * a brute-force reference: every eligible row scored with the same kernels, one entry per
 * lower-cased word (the closest casing), best first, `limit` of them.
 * Casings of one word get nearly the same vector, so they crowd the top of the ranking and
 * exercise the path where the kernel's first top-k has too little headroom.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { EmbeddingModel } from '../../core/model';
import { prng } from '../../core/prng';
import { hasLetter, scoreWords } from '../../core/scoring';
import { modelFromVectors } from './support/model-fixture';

const DIMS = 8;
const CASINGS = [(w: string) => w, (w: string) => w[0].toUpperCase() + w.slice(1), (w: string) => w.toUpperCase()];

interface Vocab {
  words: string[];
  vectors: Float32Array;
}

/** `bases` words in 1..3 casings each (near-identical vectors), plus entries without a letter. */
function casedVocabulary(bases: number, casingsOf: number[], nonLetters: number, seed: number): Vocab {
  const rand = prng(seed);
  const words: string[] = [];
  const vecs: number[][] = [];
  for (let b = 0; b < bases; b++) {
    const base = Array.from({ length: DIMS }, () => rand() * 2 - 1);
    for (let c = 0; c < casingsOf[b % casingsOf.length]; c++) {
      words.push(CASINGS[c](`w${String.fromCharCode(97 + (b % 26))}${b}`));
      vecs.push(base.map((x) => x + (rand() - 0.5) * 0.05));
    }
  }
  for (let i = 0; i < nonLetters; i++) {
    words.push(`${1000 + i}`);
    vecs.push(Array.from({ length: DIMS }, () => rand() * 2 - 1));
  }
  // Shuffle rows (frequency order is arbitrary here), keeping words and vectors together.
  const order = words.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return { words: order.map((i) => words[i]), vectors: Float32Array.from(order.flatMap((i) => vecs[i])) };
}

function buildModel({ words, vectors }: Vocab): EmbeddingModel {
  return modelFromVectors(words, vectors, DIMS).model;
}

/** The documented rule, by brute force: rows in the answer's order. */
function reference(model: EmbeddingModel, seedWords: string[], limit: number, cutoff: number | undefined): number[] {
  const seedRowSet = new Set(seedWords.map((w) => model.rowOf(w)).filter((r) => r >= 0));
  const centroid = model.centroid([...seedRowSet]);
  if (!centroid) return [];
  const excluded = new Set(seedWords.map((w) => w.toLowerCase()));
  const n = Math.min(cutoff ?? model.size, model.size);
  const all = Int32Array.from({ length: n }, (_, i) => i);
  const scores = model.scores(centroid, all);
  const better = (a: number, b: number) => scores[a] > scores[b] || (scores[a] === scores[b] && a < b);
  const bestOf = new Map<string, number>();
  for (let r = 0; r < n; r++) {
    const w = model.word(r);
    if (seedRowSet.has(r) || excluded.has(w.toLowerCase()) || !hasLetter(w)) continue;
    const prev = bestOf.get(w.toLowerCase());
    if (prev === undefined || better(r, prev)) bestOf.set(w.toLowerCase(), r);
  }
  return [...bestOf.values()].sort((a, b) => (better(a, b) ? -1 : 1)).slice(0, limit);
}

describe('find-and-score on cased vocabularies', () => {
  it('returns `limit` distinct lower-cased words, the closest casing of each, as the brute-force reference', () => {
    fc.assert(
      fc.property(
        fc.record({
          bases: fc.integer({ min: 3, max: 70 }),
          casingsOf: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 5 }),
          nonLetters: fc.integer({ min: 0, max: 30 }),
          seed: fc.integer({ min: 1, max: 2 ** 30 }),
          seedCount: fc.integer({ min: 1, max: 3 }),
          limit: fc.integer({ min: 1, max: 120 }),
          cutoff: fc.option(fc.integer({ min: 1, max: 250 }), { nil: undefined }),
        }),
        ({ bases, casingsOf, nonLetters, seed, seedCount, limit, cutoff }) => {
          const vocab = casedVocabulary(bases, casingsOf, nonLetters, seed);
          const model = buildModel(vocab);
          const letterWords = vocab.words.filter(hasLetter);
          const seedWords = letterWords.slice(0, seedCount);
          const res = scoreWords(
            { seedWords, embeddingModelId: 'cased', limit, ...(cutoff !== undefined ? { wordrankLimit: cutoff } : {}) },
            { index: model, mappers: [], storedDimensions: new Map() },
          );
          const expected = reference(model, seedWords, limit, cutoff);
          expect(res.data.map((d) => d.modelRank - 1)).toEqual(expected);
          const lower = res.data.map((d) => d.word);
          expect(new Set(lower).size).toBe(lower.length);
        },
      ),
      { numRuns: 200, seed: 20261126 },
    );
  });

  it('fills the limit even when every word comes in three casings', () => {
    const vocab = casedVocabulary(60, [3], 0, 7);
    const model = buildModel(vocab);
    const res = scoreWords(
      { seedWords: [vocab.words[0]], embeddingModelId: 'cased', limit: 50 },
      { index: model, mappers: [], storedDimensions: new Map() },
    );
    expect(res.data).toHaveLength(50);
    expect(new Set(res.data.map((d) => d.word)).size).toBe(50);
    expect(res.data.map((d) => d.word)).not.toContain(vocab.words[0].toLowerCase());
  });
});
