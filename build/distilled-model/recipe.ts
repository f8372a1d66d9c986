/**
 * The distilled English model's vectors (docs/models-and-kernels.md "The distilled English
 * model"), from npm material only:
 *
 *   1. vocabulary: GloVe 6B's words in frequency order, then WordNet collocations ("hot dog")
 *      whose words are all frequent, ordered by their rarest word;
 *   2. sources: GloVe 6B 100d (a phrase: the mean of its words' unit vectors), and the Universal
 *      Sentence Encoder lite's vector of each word or phrase, encoded as a string of its own
 *      (encode.ts): every phrase and the `encodeLimit` most frequent words; the rarer words get the
 *      encoder part from a ridge map of their GloVe part fitted on the encoded rows;
 *   3. both unit-normalized, concatenated (612-d), retrofitted to WordNet (retrofit.ts);
 *   4. all-but-the-top and PCA to 100-d (reduce.ts).
 * The artifact step (index.ts) then L2-normalizes and quantizes to int8 like every model.
 */
import { Matrix, solve } from 'ml-matrix';
import { crossProduct, multiply } from './linalg';
import { readWinkJson } from '../vector-readers';
import { winkSource } from '../glove-model';
import { encodeWords, ENCODER_DIMS } from './encode';
import { lexiconGraph, retrofit } from './retrofit';
import { principalAxes, project, removeTop, varianceShare } from './reduce';
import { readSynsets, wordnetPhrases } from './wordnet';

export interface RecipeOptions {
  /** Rows of the model, words and phrases together (GloVe's 341,479 by default: the same size). */
  rows: number;
  /** A phrase's words must all be among the most frequent `phraseWordRank` words. */
  phraseWordRank: number;
  /** The most frequent words encoded by the encoder (the rest get the ridge map; phrases are always encoded). */
  encodeLimit: number;
  retrofitIterations: number;
  /** All-but-the-top on each source before they are joined: components removed from GloVe's and the encoder's part (Mu & Viswanath's d/100; -1: not applied). */
  preRemove: { glove: number; encoder: number };
  /** Top principal components of the joined vectors removed before the PCA, and the output width. */
  remove: number;
  dims: number;
  /** Which sources are joined (the ablation of eval/distilled-steps.ts); default both. */
  sources?: 'both' | 'glove' | 'encoder';
  /** Covariance sample: every `stride`-th row. */
  stride: number;
  threads?: number;
  progress?: boolean;
  /** Read and write the encoder cache (default true; the determinism test encodes afresh). */
  cache?: boolean;
  log?: (line: string) => void;
}

export const RECIPE: RecipeOptions = {
  rows: 341_479,
  phraseWordRank: 50_000,
  encodeLimit: 100_000,
  retrofitIterations: 10,
  preRemove: { glove: 1, encoder: 5 },
  remove: 0,
  dims: 100,
  stride: 8,
};

export interface RecipeResult {
  words: string[];
  /** rows x dims float. */
  vectors: Float32Array;
  dims: number;
  phrases: number;
  steps: Record<string, number>;
  stats: Record<string, number>;
}

function unitRows(v: Float32Array, dims: number): void {
  for (let r = 0; r < v.length / dims; r++) {
    let n = 0;
    for (let d = 0; d < dims; d++) n += v[r * dims + d]! ** 2;
    const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
    for (let d = 0; d < dims; d++) v[r * dims + d]! *= inv;
  }
}

/** Ridge map X -> Y fitted on the first `n` rows: W = (X'X + lambda I)^-1 X'Y (xd x yd). */
async function ridgeMap(
  x: Float32Array,
  xd: number,
  y: Float32Array,
  yd: number,
  n: number,
  lambda: number,
): Promise<Float32Array> {
  const a = await crossProduct(x, xd, x, xd, n);
  const b = await crossProduct(x, xd, y, yd, n);
  const xtx = new Matrix(xd, xd);
  const xty = new Matrix(xd, yd);
  for (let i = 0; i < xd; i++) for (let j = 0; j < xd; j++) xtx.set(i, j, a[i * xd + j]! + (i === j ? lambda : 0));
  for (let i = 0; i < xd; i++) for (let j = 0; j < yd; j++) xty.set(i, j, b[i * yd + j]!);
  const w = solve(xtx, xty);
  return Float32Array.from({ length: xd * yd }, (_, k) => w.get(Math.floor(k / yd), k % yd));
}

export async function buildDistilledVectors(options: RecipeOptions): Promise<RecipeResult> {
  const log = options.log ?? ((line: string) => console.error(line));
  const steps: Record<string, number> = {};
  let t = performance.now();
  const lap = (name: string): void => {
    steps[name] = Math.round(performance.now() - t);
    t = performance.now();
  };

  // 1. Vocabulary.
  const glove = await readWinkJson(winkSource().file);
  const gDims = glove.dims;
  const gloveRank = new Map<string, number>();
  glove.words.forEach((w, i) => {
    if (!gloveRank.has(w)) gloveRank.set(w, i);
  });
  const synsets = readSynsets();
  // At most a tenth of the rows are phrases, the most frequent ones (by their rarest word), and a
  // phrase's words always stay in the vocabulary.
  const maxPhrases = Math.floor(options.rows / 10);
  const wordLimit = Math.min(options.phraseWordRank, options.rows - maxPhrases);
  const phraseRank = (p: string): number => Math.max(...p.split(' ').map((w) => gloveRank.get(w)!));
  const phrases = wordnetPhrases(synsets, (w) => (gloveRank.get(w) ?? Infinity) < wordLimit)
    .filter((p) => !gloveRank.has(p))
    .map((p) => ({ p, rank: phraseRank(p) }))
    .sort((a, b) => a.rank - b.rank || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0))
    .slice(0, maxPhrases);
  const wordCount = Math.min(glove.words.length, options.rows - phrases.length);
  // Words keep their GloVe rank (modelRank, wordrankLimit and the quartiles mean what they did);
  // phrases, which have no corpus frequency here, follow all words.
  const words: string[] = glove.words.slice(0, wordCount);
  const gloveRow: number[] = words.map((_, r) => r); // GloVe row of a word, -1 for a phrase
  for (const { p } of phrases) {
    words.push(p);
    gloveRow.push(-1);
  }
  const n = words.length;
  lap('vocabulary');
  log(`[build] distilled model: ${wordCount} GloVe words + ${phrases.length} WordNet phrases = ${n} rows`);

  // 2. Sources: GloVe's part (a phrase: the sum of its words' unit vectors) and the encoder's.
  const gPart = new Float32Array(n * gDims);
  for (let r = 0; r < n; r++) {
    const g = gloveRow[r]!;
    for (const row of g >= 0 ? [g] : words[r]!.split(' ').map((w) => gloveRank.get(w)!)) {
      let norm = 0;
      for (let d = 0; d < gDims; d++) norm += glove.vectors[row * gDims + d]! ** 2;
      const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
      for (let d = 0; d < gDims; d++) gPart[r * gDims + d]! += glove.vectors[row * gDims + d]! * inv;
    }
  }
  unitRows(gPart, gDims);
  // Encoded: the `encodeLimit` most frequent words and every phrase (as a phrase).
  const encodedWords = Math.min(wordCount, options.encodeLimit);
  const encodeRows = [...Array(encodedWords).keys(), ...Array.from({ length: n - wordCount }, (_, i) => wordCount + i)];
  const encoded = await encodeWords(
    encodeRows.map((r) => words[r]!),
    { threads: options.threads, progress: options.progress, cache: options.cache },
  );
  lap('encode');
  log(
    `[build] encoder: ${encoded.encoded} strings encoded, ${encoded.cached} from the cache, in ${(encoded.ms / 1000).toFixed(1)} s`,
  );
  const ePart = new Float32Array(n * ENCODER_DIMS);
  encodeRows.forEach((r, k) =>
    ePart.set(encoded.vectors.subarray(k * ENCODER_DIMS, (k + 1) * ENCODER_DIMS), r * ENCODER_DIMS),
  );
  if (encodedWords < wordCount) {
    // The rarer words: the encoder's part predicted from GloVe's (ridge, fitted on the encoded rows).
    const x = new Float32Array(encodeRows.length * gDims);
    encodeRows.forEach((r, k) => x.set(gPart.subarray(r * gDims, (r + 1) * gDims), k * gDims));
    const w = await ridgeMap(x, gDims, encoded.vectors, ENCODER_DIMS, encodeRows.length, 1);
    ePart.set(
      await multiply(gPart.subarray(encodedWords * gDims, wordCount * gDims), gDims, w, ENCODER_DIMS),
      encodedWords * ENCODER_DIMS,
    );
    lap('ridge');
  }
  const removed: Record<string, number> = {};
  if (options.preRemove.glove >= 0)
    removed.glove = await removeTop(gPart, gDims, options.preRemove.glove, options.stride);
  if (options.preRemove.encoder >= 0)
    removed.encoder = await removeTop(ePart, ENCODER_DIMS, options.preRemove.encoder, options.stride);
  unitRows(gPart, gDims);
  unitRows(ePart, ENCODER_DIMS);
  // Joined, each part unit length so both weigh the same.
  const parts = (
    [
      [gPart, gDims],
      [ePart, ENCODER_DIMS],
    ] as const
  ).filter((_, i) => (options.sources ?? 'both') === 'both' || (options.sources === 'glove') === (i === 0));
  const width = parts.reduce((w, [, d]) => w + d, 0);
  const joint = new Float32Array(n * width);
  for (let r = 0; r < n; r++) {
    let at = r * width;
    for (const [part, d] of parts) {
      joint.set(part.subarray(r * d, (r + 1) * d), at);
      at += d;
    }
  }
  lap('sources');

  // 3. Retrofit.
  const rowOf = new Map<string, number>();
  words.forEach((w, i) => {
    if (!rowOf.has(w)) rowOf.set(w, i);
  });
  const graph = lexiconGraph(synsets, rowOf, n);
  retrofit(joint, width, graph, options.retrofitIterations);
  lap('retrofit');
  let linked = 0;
  for (let i = 0; i < n; i++) if (graph.offsets[i + 1]! > graph.offsets[i]!) linked++;

  // 4. All-but-the-top + PCA.
  const axes = await principalAxes(joint, width, options.stride);
  const vectors = await project(joint, width, axes, options.remove, Math.min(options.dims, width - options.remove));
  lap('reduce');
  return {
    words,
    vectors,
    dims: Math.min(options.dims, width - options.remove),
    phrases: phrases.length,
    steps,
    stats: {
      encoded: encoded.encoded,
      cached: encoded.cached,
      linkedRows: linked,
      links: graph.targets.length / 2,
      gloveTopVariance: removed.glove ?? 0,
      encoderTopVariance: removed.encoder ?? 0,
      removedVariance: varianceShare(axes, 0, options.remove),
      keptVariance: varianceShare(axes, options.remove, options.remove + options.dims),
    },
  };
}
