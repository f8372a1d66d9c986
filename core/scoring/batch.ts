/**
 * The text scorer's lean path (for throughput on large batches), taken when the tokenizer is core/tokenizer's
 * scoringTokenizer and no `explain` is asked: no token or item objects per token. Texts repeat
 * their words, so everything that depends only on a form (surface, token, stop flag in its
 * context: one shared TokenForm) is computed once and kept on it: its model row, its frequency
 * score, its composition classes and case flags. Per request each distinct
 * form gets a slot; factor values (cosines, mapper values) are computed once per slot and each
 * scored token reads its slot's value. Same values in the same order as the item path of
 * text.ts, so the scores are bit for bit the same (test/node/text-batch.test.ts).
 */
import type { VectorIndex } from '../types';
import { newFormTokens, type FormTokens, type ScoringTokenizer, type TokenForm } from '../tokenizer';
import { frequencyScore, type DimensionQuery } from './common';
import { dimensionTextScores } from './representation';
import {
  composeForms,
  emphasis,
  emphasized,
  computeFormInfo,
  stopFlag,
  dimensionScale,
  mapperScale,
  type CompiledComposition,
  type ComposedItem,
  type FactorScale,
} from './composition';
import type { FormLike, Representation, ResolvedMapper } from './types';

/** Scored tokens of a request, text by text (see buildBatch). */
export interface TextBatch {
  texts: number;
  tokenCount: number;
  /** Per text: sum and count of the frequency scores of its in-vocabulary tokens (modelRankScore). */
  fSum: Float64Array;
  fCount: Int32Array;
  /** Scored tokens of text i: positions offsets[i] .. offsets[i + 1] - 1 of `slot` (their emphasis and weight: `composed`). */
  offsets: Int32Array;
  /** Per scored token: its form's slot. */
  slot: number[];
  /** Per slot: the model row (in-vocabulary only). */
  rows: Int32Array;
  /**
   * Composition "rules": per text its emoticons/emoji, and its scored tokens whose emphasis or
   * contrast weight is not 1 (the rest have emphasis 1 and weight 1): entries from[i] ..
   * from[i + 1] - 1 of `at` (the token's position in `slot`), the emphasis on bipolar and on
   * unipolar factors, and the weight.
   */
  composed: {
    from: Int32Array;
    at: number[];
    emphasisBipolar: number[];
    emphasisUnipolar: number[];
    weight: number[];
    symbols: Array<ComposedItem[] | null>;
  } | null;
}

let batchStamp = 0;
const formBuffer: FormTokens = newFormTokens();

/** Fills the form's scorer fields for this index and composition (once per form; TokenForm). */
function prepare(
  f: TokenForm,
  index: VectorIndex,
  rowOf: (t: FormLike) => number,
  rules: CompiledComposition | null,
): void {
  if (f.scoredBy !== index) {
    const row = rowOf(f);
    f.row = row;
    f.freq = row >= 0 ? frequencyScore(row + 1, index.size) : 0;
    f.stamp = 0;
    f.scoredBy = index;
  }
  if (rules !== null && f.composedBy !== rules) {
    const info = computeFormInfo(rules, f);
    f.compositionInfo = info;
    f.compositionClasses = info.cls;
    f.compositionFlags = info.flags | stopFlag(f.isStop);
    f.compositionSummary = info.summary;
    f.composedBy = rules;
  }
}

/** The form's slot in this request (stamp), given on first use: its row joins `rows`. */
function slotOf(f: TokenForm, stamp: number, rows: number[]): number {
  if (f.stamp !== stamp) {
    f.stamp = stamp;
    f.slot = rows.length;
    rows.push(f.row);
  }
  return f.slot;
}

/**
 * Tokenizes the texts and collects their scored tokens: in-vocabulary non-stop tokens with
 * "mean" (rules null), the tokens the composition rules score with "rules" (composeText's
 * token items that have a row). `rowOf` is the row of a token (text.ts tokenRow).
 */
export function buildBatch(
  texts: readonly string[],
  tokenizer: ScoringTokenizer,
  index: VectorIndex,
  rowOf: (t: FormLike) => number,
  rules: CompiledComposition | null,
): TextBatch {
  const stamp = ++batchStamp;
  const T = texts.length;
  const fSum = new Float64Array(T);
  const fCount = new Int32Array(T);
  const offsets = new Int32Array(T + 1);
  const slot: number[] = [];
  const rows: number[] = [];
  const composed = rules
    ? {
        from: new Int32Array(T + 1),
        at: [] as number[],
        emphasisBipolar: [] as number[],
        emphasisUnipolar: [] as number[],
        weight: [] as number[],
        symbols: [] as Array<ComposedItem[] | null>,
      }
    : null;
  let tokenCount = 0;
  for (let i = 0; i < T; i++) {
    const text = texts[i];
    const ft = tokenizer.forms(text, formBuffer);
    const n = ft.count;
    tokenCount += n;
    const forms = ft.forms;
    let summary = 0;
    let fs = 0;
    let fc = 0;
    for (let k = 0; k < n; k++) {
      const f = forms[k];
      prepare(f, index, rowOf, rules);
      if (f.row >= 0) {
        fs += f.freq;
        fc++;
      }
      if (rules !== null) summary |= f.compositionSummary;
    }
    fSum[i] = fs;
    fCount[i] = fc;
    const rc = rules ? composeForms(text, n, summary, forms, ft.starts, ft.ends, rules) : null;
    if (rc && composed) {
      // Composed: the tokens the rules score, with their emphasis and contrast weight.
      const { kind, scale, negations, weight } = rc.scratch;
      for (let k = 0; k < n; k++) {
        const f = forms[k];
        if (kind[k] !== 0 || f.row < 0) continue;
        slot.push(slotOf(f, stamp, rows));
        const s = scale[k];
        const g = negations[k];
        const w = weight[k];
        if (s === 1 && g === 0 && w === 1) continue;
        composed.at.push(slot.length - 1);
        composed.emphasisBipolar.push(emphasis(s, g, true));
        composed.emphasisUnipolar.push(emphasis(s, g, false));
        composed.weight.push(w);
      }
      composed.symbols.push(rc.symbols.length > 0 ? rc.symbols : null);
    } else {
      // "mean", or a plain text under "rules": every in-vocabulary non-stop token, unchanged.
      for (let k = 0; k < n; k++) {
        const f = forms[k];
        if (!f.isStop && f.row >= 0) slot.push(slotOf(f, stamp, rows));
      }
      if (composed) composed.symbols.push(null);
    }
    offsets[i + 1] = slot.length;
    if (composed) composed.from[i + 1] = composed.at.length;
  }
  return { texts: T, tokenCount, fSum, fCount, offsets, slot, rows: Int32Array.from(rows), composed };
}

/** A text's scores before goalConfig and normalization. */
export interface RawTextScores {
  modelRankScore: number | null;
  dimensionScores: Record<string, number>;
  mapperScores: Record<string, number>;
}

/** Mean of values[slot[p]] over p in [from, to), NaN skipped; null when none (text.ts mean, meanCosines). */
function slotMean(values: ArrayLike<number>, slot: ArrayLike<number>, from: number, to: number): number | null {
  let s = 0;
  let n = 0;
  for (let p = from; p < to; p++) {
    const v = values[slot[p]];
    if (!Number.isNaN(v)) {
      s += v;
      n++;
    }
  }
  return n > 0 ? s / n : null;
}

/**
 * The scores of every text of a batch (text.ts scoreTexts without `explain`): one kernel call
 * per dimension and one mapper lookup per slot, then per text the composed (rules) or plain
 * (mean) average of its tokens' values.
 */
export function batchScores(
  batch: TextBatch,
  index: VectorIndex,
  dims: readonly DimensionQuery[],
  mappers: readonly ResolvedMapper[],
  representation: Representation,
): RawTextScores[] {
  const { offsets, slot, rows, composed } = batch;
  const meanCosine = representation === 'meanCosine';
  const cos = meanCosine ? dims.map((d) => (d.query && rows.length > 0 ? index.scores(d.query, rows) : null)) : null;
  const vectorScores = meanCosine
    ? null
    : dimensionTextScores(
        index,
        dims,
        Array.from({ length: batch.texts }, (_, i) => {
          const out: number[] = [];
          for (let p = offsets[i]; p < offsets[i + 1]; p++) out.push(rows[slot[p]]);
          return out;
        }),
        representation,
      );
  const values = mappers.map((m) => {
    const v = new Float64Array(rows.length);
    for (let s = 0; s < rows.length; s++) v[s] = m.values.value(m.variable, rows[s]);
    return v;
  });
  const dimScales = dims.map((d) => dimensionScale(d.axis));
  const mapperScales = mappers.map(mapperScale);
  const out: RawTextScores[] = new Array(batch.texts);
  for (let i = 0; i < batch.texts; i++) {
    const from = offsets[i];
    const to = offsets[i + 1];
    const dimensionScores: Record<string, number> = {};
    const mapperScores: Record<string, number> = {};
    for (let k = 0; k < dims.length; k++) {
      let v: number | null;
      if (vectorScores) v = vectorScores[k][i];
      else {
        const c = cos![k];
        if (!c) v = null;
        else if (composed) v = composedScoreOf(c, slot, from, to, composed, i, false, dimScales[k]);
        else v = slotMean(c, slot, from, to);
      }
      if (v !== null) dimensionScores[dims[k].key] = v;
    }
    for (let k = 0; k < mappers.length; k++) {
      const scale = mapperScales[k];
      const v = composed
        ? composedScoreOf(values[k], slot, from, to, composed, i, scale.bipolar, scale)
        : slotMean(values[k], slot, from, to);
      if (v !== null) mapperScores[mappers[k].id] = v;
    }
    out[i] = {
      modelRankScore: batch.fCount[i] > 0 ? batch.fSum[i] / batch.fCount[i] : null,
      dimensionScores,
      mapperScores,
    };
  }
  return out;
}

/**
 * composed.ts composedScore over the batch arrays: text i's scored tokens are positions p in
 * [from, to) with raw value values[slot[p]] (NaN = none); `symbols`: count its emoticons and
 * emoji (bipolar factors). The same arithmetic in the same order as composedScore, so the same
 * bits: a token without an entry in composed.at has emphasis 1 and weight 1.
 */
function composedScoreOf(
  values: ArrayLike<number>,
  slot: ArrayLike<number>,
  from: number,
  to: number,
  composed: NonNullable<TextBatch['composed']>,
  i: number,
  symbols: boolean,
  f: FactorScale,
): number | null {
  const { neutral, bipolar } = f;
  const { at, weight } = composed;
  const emphases = bipolar ? composed.emphasisBipolar : composed.emphasisUnipolar;
  let sw = 0;
  let swc = 0;
  let q = composed.from[i];
  const qEnd = composed.from[i + 1];
  const sym = symbols ? composed.symbols[i] : null;
  // No token with an emphasis or weight other than 1 and no symbol: the plain mean, to the bit.
  if (q === qEnd && sym === null) return slotMean(values, slot, from, to);
  let next = q < qEnd ? at[q] : -1;
  for (let p = from; p < to; p++) {
    const v = values[slot[p]];
    if (p === next) {
      const e = emphases[q];
      const w = weight[q];
      q++;
      next = q < qEnd ? at[q] : -1;
      if (Number.isNaN(v)) continue;
      sw += w;
      swc += w * emphasized(v, e, neutral);
    } else if (!Number.isNaN(v)) {
      sw += 1;
      swc += v;
    }
  }
  if (sym) {
    for (const it of sym) {
      const c = neutral + it.valence! * f.halfRange;
      sw += it.weight;
      swc += it.weight * c;
    }
  }
  return sw > 0 ? swc / sw : null;
}
