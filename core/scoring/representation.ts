/**
 * How a text's content tokens (in-vocabulary, non-stop; repeats count) become one score per
 * dimension with query q (a unit vector), u_i being the tokens' unit vectors:
 *   meanCosine  (1/n) sum_i cos(q, u_i)                 the mean of the tokens' scores
 *   meanVector  cos(q, sum_i u_i)                        the cosine of the mean vector
 *   sif         sum_i w_i cos(q, u_i) / sum_i w_i,       smooth inverse frequency weights
 *               w_i = a / (a + p(w_i))                   (Arora, Liang & Ma 2017, a = SIF_A),
 *               without their common-component removal. This is cos(q, v) |v| for the SIF text
 *               vector v = sum_i w_i u_i / sum_i w_i: the same arg-max over dimensions as their
 *               cosine, on the scale of word cosines, so the zscore/percentile word statistics
 *               describe it (the plain cosine of an averaged vector is larger than any word's
 *               and saturates them; see meanVector in docs/dimensions.md).
 *   contentMean sum_i c_i cos(q, u_i) / sum_i c_i,       c_i = 1 for a content word (contentWeight: a
 *               dictionary word that is not a proper noun, acronym, number or one/two-letter
 *               entry, by the artifact's vocabulary flags), else 0: names and numbers say where
 *               and when, not what a text is about, and their vectors lean toward the places and
 *               people they co-occur with.
 *               A text without a content word falls back to meanCosine's plain mean; so does a
 *               model without vocabulary flags. Computed as cos(q, v) |v| (as sif), no composition.
 * p(w) is the Zipf estimate of the word's unigram probability from its model rank r (the model
 * is frequency-ordered; V = vocabulary size): p(r) = 1 / (r * H_V), H_V = ln V + 0.5772 + 1/(2V).
 * The default and the measured figures are in docs/dimensions.md.
 */
import type { VectorIndex } from '../types';
import { VOCAB_FLAG } from '../vocab-quality';
import type { DimensionQuery } from './common';
import { ln } from './ln';
import type { Representation } from './types';

export const REPRESENTATIONS = [
  'meanCosine',
  'meanVector',
  'sif',
  'contentMean',
] as const satisfies readonly Representation[];

export const DEFAULT_REPRESENTATION: Representation = 'meanCosine';

/** Flags of which any makes a row a non-content word for contentMean (besides lacking DICTIONARY). */
const NON_CONTENT = VOCAB_FLAG.PROPER | VOCAB_FLAG.ACRONYM | VOCAB_FLAG.NUMBER | VOCAB_FLAG.SHORT;

/** contentMean's weight of a row: 1 for a content word, 0 otherwise. */
export function contentWeight(index: VectorIndex, row: number): number {
  const f = index.flags(row);
  return f & VOCAB_FLAG.DICTIONARY && !(f & NON_CONTENT) ? 1 : 0;
}

/** SIF's a (Arora et al. 2017 use 1e-3 to 1e-4; 1e-3 is their default). */
export const SIF_A = 1e-3;

const EULER_GAMMA = 0.5772156649015329;

/** Zipf estimate of the unigram probability of the word at 1-based `rank` among V words. */
export function zipfProbability(rank: number, vocabularySize: number): number {
  const h = ln(vocabularySize) + EULER_GAMMA + 1 / (2 * vocabularySize);
  return 1 / (rank * h);
}

/** SIF weight a / (a + p(rank)). */
export function sifWeight(rank: number, vocabularySize: number, a = SIF_A): number {
  return a / (a + zipfProbability(rank, vocabularySize));
}

/**
 * Score of every dimension for every text: out[k][i] for dimension k and text i, null when the
 * dimension has no query or the text no content token (the text gets no entry).
 */
export function dimensionTextScores(
  index: VectorIndex,
  dims: readonly DimensionQuery[],
  content: ReadonlyArray<readonly number[]>,
  representation: Representation,
): Array<Array<number | null>> {
  if (representation === 'meanCosine') return meanCosines(index, dims, content);
  const V = index.size;
  // sif and contentMean score the weighted mean vector (not re-normalized); meanVector the unit mean vector.
  const weighted = representation !== 'meanVector';
  const weight =
    representation === 'sif'
      ? (row: number) => sifWeight(row + 1, V)
      : representation === 'contentMean'
        ? (row: number) => contentWeight(index, row)
        : () => 1;
  const vectors = new Map<number, Float32Array>();
  if (index.prefetch) index.prefetch(content.flat());
  const textVectors = content.map((rows) => {
    if (rows.length === 0) return null;
    const v = new Float64Array(index.dims);
    let wSum = 0;
    const add = (w: (row: number) => number) => {
      for (const r of rows) {
        const wr = w(r);
        if (wr === 0) continue;
        let u = vectors.get(r);
        if (!u) vectors.set(r, (u = index.vector(r)));
        wSum += wr;
        for (let j = 0; j < u.length; j++) v[j] += wr * u[j];
      }
    };
    add(weight);
    // contentMean without a content word: the plain mean of all the tokens.
    if (wSum === 0 && representation === 'contentMean') add(() => 1);
    let s = 0;
    for (let j = 0; j < v.length; j++) s += v[j] * v[j];
    if (!(s > 0) || !(wSum > 0)) return null;
    const inv = weighted ? 1 / wSum : 1 / Math.sqrt(s);
    for (let j = 0; j < v.length; j++) v[j] *= inv;
    return v;
  });
  return dims.map((d) => {
    const q = d.query;
    return textVectors.map((v) => {
      if (!q || !v) return null;
      let dot = 0;
      for (let j = 0; j < q.length; j++) dot += q[j] * v[j];
      return dot;
    });
  });
}

/** meanCosine: one kernel call per dimension over the content tokens of every text. */
function meanCosines(
  index: VectorIndex,
  dims: readonly DimensionQuery[],
  content: ReadonlyArray<readonly number[]>,
): Array<Array<number | null>> {
  const offsets: number[] = [0];
  for (const rows of content) offsets.push(offsets[offsets.length - 1] + rows.length);
  const flat = new Int32Array(offsets[offsets.length - 1]);
  content.forEach((rows, i) => flat.set(rows, offsets[i]));
  return dims.map((d) => {
    const s = d.query && flat.length > 0 ? index.scores(d.query, flat) : null;
    return content.map((_, i) => {
      if (!s) return null;
      let sum = 0;
      let n = 0;
      for (let p = offsets[i]; p < offsets[i + 1]; p++) {
        if (!Number.isNaN(s[p])) {
          sum += s[p];
          n++;
        }
      }
      return n > 0 ? sum / n : null;
    });
  });
}
