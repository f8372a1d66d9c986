/**
 * Unit test of core/scoring/text.ts (scoreTexts) on a small model with hand-made vectors: which
 * tokens count for which score, the token row lookup, metering and the mean-cosine score.
 */
import { describe, expect, it } from 'vitest';
import { BoundedCache, scoreTexts, tokenRow, type FactorStats, type TokenLike } from '../../core/scoring';
import { modelFromVectors } from './support/model-fixture';

// Vocabulary in frequency order (row r has rank r + 1).
const words = ['the', 'good', 'great', 'bad', 'cat'];
const vectors = new Float32Array([
  0.1,
  0.1,
  1,
  0, // the
  1,
  0.2,
  0,
  0, // good
  0.9,
  0.3,
  0,
  0.1, // great
  -1,
  0.1,
  0,
  0, // bad
  0,
  1,
  0,
  0.5, // cat
]);
const dims = 4;
const { model } = modelFromVectors(words, vectors, dims);

const STOP = new Set(['the', 'a']);
/** White-space tokens; `lemma:surface` gives a token whose lemma differs from its text. */
function tokenize(text: string): TokenLike[] {
  const out: TokenLike[] = [];
  let at = 0;
  for (const part of text.split(' ')) {
    const [lemma, surface] = part.includes(':') ? part.split(':') : [part, part];
    out.push({ string: surface, token: lemma, indexStart: at, indexEnd: at + surface.length, isStop: STOP.has(lemma) });
    at += part.length + 1;
  }
  return out;
}

const vec = (w: string): number[] =>
  Array.from(vectors.subarray(words.indexOf(w) * dims, (words.indexOf(w) + 1) * dims));
const unit = (v: number[]): number[] => {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
};
const cos = (a: number[], b: number[]): number => unit(a).reduce((s, x, i) => s + x * unit(b)[i], 0);
const f = (rank: number): number => 1 - Math.log(rank) / Math.log(words.length);

function score(texts: string[], dimensionWords: string[]) {
  return scoreTexts(
    {
      embeddingModelId: 'm',
      texts,
      composition: 'mean',
      dimensions: [{ id: 1, type: 'manual', words: dimensionWords }],
    },
    { index: model, tokenize, mappers: [], storedDimensions: new Map(), stats: new BoundedCache<FactorStats>(8) },
  );
}

describe('core/scoring/text.ts scoreTexts', () => {
  it('counts every token for metering, stop words only for modelRank, unknown words for neither', () => {
    const { response, tokenCount } = score(['the good zebra', 'cat'], ['good']);
    expect(tokenCount).toBe(4);
    const [first, second] = response.data;
    // modelRank: mean f(rank) over in-vocabulary tokens, stop words included (the: rank 1, good: rank 2).
    expect(first.modelRankScore).toBeCloseTo((f(1) + f(2)) / 2, 6);
    expect(second.modelRankScore).toBeCloseTo(f(5), 6);
    // The dimension score: only `good` (the is a stop word, zebra unknown): cos(good, good) = 1.
    expect(first.dimensionScores['1']).toBeCloseTo(1, 2);
    expect(second.dimensionScores['1']).toBeCloseTo(cos(vec('cat'), vec('good')), 2);
  });

  it('scores the mean cosine of the content tokens to the seed centroid', () => {
    const { response } = score(['good bad cat'], ['good', 'great']);
    const centroid = unit(vec('good')).map((x, i) => x + unit(vec('great'))[i]);
    const expected = (cos(vec('good'), centroid) + cos(vec('bad'), centroid) + cos(vec('cat'), centroid)) / 3;
    expect(response.data[0].dimensionScores['1']).toBeCloseTo(expected, 2);
    // Opposite words pull the score down: a text of `bad` alone scores below one of `great`.
    const [bad, great] = score(['bad', 'great'], ['good']).response.data;
    expect(bad.dimensionScores['1']).toBeLessThan(0);
    expect(great.dimensionScores['1']).toBeGreaterThan(0.9);
  });

  it('looks a token up by its lemma first, then by its surface form, lower-cased', () => {
    expect(tokenRow(model, { string: 'Good', token: 'GREAT', indexStart: 0, indexEnd: 4, isStop: false })).toBe(
      words.indexOf('great'),
    );
    expect(tokenRow(model, { string: 'Cat', token: 'cats', indexStart: 0, indexEnd: 3, isStop: false })).toBe(
      words.indexOf('cat'),
    );
    expect(tokenRow(model, { string: 'Dogs', token: 'dog', indexStart: 0, indexEnd: 4, isStop: false })).toBe(-1);
    // In a text: `zebras:Cat` has an unknown lemma and a known surface form.
    expect(score(['zebras:Cat'], ['cat']).response.data[0].modelRankScore).toBeCloseTo(f(5), 6);
  });

  it('leaves a text without known tokens unscored', () => {
    const { response, tokenCount } = score(['zebra yak'], ['good']);
    expect(tokenCount).toBe(2);
    expect(response.data[0].modelRankScore).toBeNull();
    expect(response.data[0].dimensionScores['1']).toBeUndefined();
  });
});
