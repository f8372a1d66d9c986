/**
 * The distilled English model's vectors (docs/models-and-kernels.md "The distilled English
 * model"), from npm material only:
 *
 *   1. vocabulary: GloVe 6B's words in frequency order, plus WordNet collocations ("hot dog")
 *      whose words are all frequent, each placed right after its rarest word;
 *   2. sources: GloVe 6B 100d (a phrase: the mean of its words' unit vectors), and the Universal
 *      Sentence Encoder lite's vector of each word or phrase, encoded as a string of its own
 *      (encode.ts); words past `encodeLimit` get the encoder part from a ridge map of their GloVe
 *      part fitted on the encoded words;
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
  /** Words and phrases encoded by the encoder (the rest get the ridge map). */
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
  const candidates = wordnetPhrases(synsets, (w) => (gloveRank.get(w) ?? Infinity) < options.phraseWordRank).filter(
    (p) => !gloveRank.has(p),
  );
  const phraseCount = Math.min(candidates.length, Math.floor(options.rows / 10));
  const wordCount = Math.min(glove.words.length, options.rows - phraseCount);
  // Phrases sorted by their rarest word's rank, then merged after it.
  const phraseRank = (p: string): number => Math.max(...p.split(' ').map((w) => gloveRank.get(w)!));
  const phrases = candidates
    .slice(0, phraseCount)
    .map((p) => ({ p, rank: phraseRank(p) }))
    .sort((a, b) => a.rank - b.rank || (a.p < b.p ? -1 : a.p > b.p ? 1 : 0));
  const words: string[] = [];
  const gloveRow: number[] = []; // GloVe row of a word, -1 for a phrase
  let k = 0;
  for (let r = 0; r < wordCount; r++) {
    words.push(glove.words[r]!);
    gloveRow.push(r);
    while (k < phrases.length && phrases[k]!.rank === r) {
      words.push(phrases[k++]!.p);
      gloveRow.push(-1);
    }
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
  const encodeCount = Math.min(n, options.encodeLimit);
  const encoded = await encodeWords(words.slice(0, encodeCount), {
    threads: options.threads,
    progress: options.progress,
  });
  lap('encode');
  log(
    `[build] encoder: ${encoded.encoded} strings encoded, ${encoded.cached} from the cache, in ${(encoded.ms / 1000).toFixed(1)} s`,
  );
  let ePart = encoded.vectors;
  if (encodeCount < n) {
    // The rarer rows: the encoder's part predicted from GloVe's (ridge, fitted on the encoded rows).
    const w = await ridgeMap(gPart, gDims, encoded.vectors, ENCODER_DIMS, encodeCount, 1);
    ePart = new Float32Array(n * ENCODER_DIMS);
    ePart.set(encoded.vectors);
    ePart.set(await multiply(gPart.subarray(encodeCount * gDims), gDims, w, ENCODER_DIMS), encodeCount * ENCODER_DIMS);
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
