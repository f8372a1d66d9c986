/**
 * The text scorer's lean path (issue 17), taken when the tokenizer is core/tokenizer's
 * scoringTokenizer and no `explain` is asked: no token or item objects per token. Texts repeat
 * their words, so everything that depends only on a form (surface, token, stop flag in its
 * context: one shared TokenForm) is computed once and kept on it (TokenForm.memo): its model
 * row, its frequency score, its composition classes and case flags. Per request each distinct
 * form gets a slot; factor values (cosines, mapper values) are computed once per slot and each
 * scored token reads its slot's value. Same values in the same order as the item path of
 * text.ts, so the scores are bit for bit the same (test/node/text-batch.test.ts).
 */
import type { VectorIndex } from '../types';
import { newFormTokens, type FormTokens, type ScoringTokenizer, type TokenForm } from '../tokenizer';
import { frequencyScore, type DimensionQuery } from './common';
import { composedScoreOf, dimensionScale, mapperScale } from './composed';
import { dimensionTextScores } from './representation';
import {
  compositionInput,
  composeForms,
  formClasses,
  type CompiledComposition,
  type ComposedItem,
} from './composition';
import type { FormLike, Representation, ResolvedMapper } from './types';

/** What the scorer keeps on a TokenForm (TokenForm.memo) for one vector index. */
interface FormMemo {
  index: VectorIndex;
  /** Model row (-1: not in the vocabulary) and its frequency score f(row + 1). */
  row: number;
  freq: number;
  /** Composition classes and case flags under `rules` (null: not computed yet). */
  rules: CompiledComposition | null;
  cls: number;
  flags: number;
  /** The request (batch stamp) this form last got a slot in, and the slot. */
  stamp: number;
  slot: number;
}

/** Scored tokens of a request, text by text (see buildBatch). */
export interface TextBatch {
  texts: number;
  tokenCount: number;
  /** Per text: sum and count of the frequency scores of its in-vocabulary tokens (modelRankScore). */
  fSum: Float64Array;
  fCount: Int32Array;
  /** Scored tokens of text i: positions offsets[i] .. offsets[i + 1] - 1 of `slot` (and scale, negations, weight). */
  offsets: Int32Array;
  /** Per scored token: its form's slot. */
  slot: number[];
  /** Per slot: the model row (in-vocabulary only). */
  rows: Int32Array;
  /** Composition "rules": per scored token its emphasis, negations and contrast weight, per text its emoticons/emoji. */
  composed: {
    scale: number[];
    negations: number[];
    weight: number[];
    symbols: Array<ComposedItem[] | null>;
  } | null;
}

let batchStamp = 0;
const formBuffer: FormTokens = newFormTokens();
let memoScratch: FormMemo[] = [];

function memoOf(
  f: TokenForm,
  index: VectorIndex,
  rowOf: (t: FormLike) => number,
  rules: CompiledComposition | null,
): FormMemo {
  let m = f.memo as FormMemo | undefined;
  if (m === undefined || m.index !== index) {
    const row = rowOf(f);
    f.memo = m = {
      index,
      row,
      freq: row >= 0 ? frequencyScore(row + 1, index.size) : 0,
      rules: null,
      cls: 0,
      flags: 0,
      stamp: 0,
      slot: -1,
    };
  }
  if (rules !== null && m.rules !== rules) {
    const c = formClasses(rules, f);
    m.cls = c.cls;
    m.flags = c.flags;
    m.rules = rules;
  }
  return m;
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
        scale: [] as number[],
        negations: [] as number[],
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
    if (memoScratch.length < n) memoScratch = new Array(Math.max(n, 2 * memoScratch.length));
    const memos = memoScratch;
    const input = rules ? compositionInput(n) : null;
    let fs = 0;
    let fc = 0;
    for (let k = 0; k < n; k++) {
      const m = memoOf(forms[k], index, rowOf, rules);
      memos[k] = m;
      if (m.row >= 0) {
        fs += m.freq;
        fc++;
      }
      if (input) {
        input.cls[k] = m.cls;
        input.flags[k] = m.flags;
      }
    }
    fSum[i] = fs;
    fCount[i] = fc;
    const add = (m: FormMemo): void => {
      if (m.stamp !== stamp) {
        m.stamp = stamp;
        m.slot = rows.length;
        rows.push(m.row);
      }
      slot.push(m.slot);
    };
    let c: ReturnType<typeof composeForms> = null;
    if (input) {
      input.starts.set(ft.starts.subarray(0, n));
      input.ends.set(ft.ends.subarray(0, n));
      c = composeForms(text, n, forms, rules!, input);
    }
    if (c && composed) {
      const { kind, scale, negations, weight } = c.out;
      for (let k = 0; k < n; k++) {
        const m = memos[k];
        if (kind[k] !== 0 || m.row < 0) continue;
        add(m);
        composed.scale.push(scale[k]);
        composed.negations.push(negations[k]);
        composed.weight.push(weight[k]);
      }
      composed.symbols.push(c.symbols.length > 0 ? c.symbols : null);
    } else {
      // "mean", or a plain text under "rules": every in-vocabulary non-stop token, unchanged.
      for (let k = 0; k < n; k++) {
        const m = memos[k];
        if (forms[k].isStop || m.row < 0) continue;
        add(m);
        if (composed) {
          composed.scale.push(1);
          composed.negations.push(0);
          composed.weight.push(1);
        }
      }
      composed?.symbols.push(null);
    }
    offsets[i + 1] = slot.length;
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
        else if (composed)
          v = composedScoreOf(
            c,
            slot,
            from,
            to,
            composed.scale,
            composed.negations,
            composed.weight,
            null,
            dimScales[k],
          );
        else v = slotMean(c, slot, from, to);
      }
      if (v !== null) dimensionScores[dims[k].key] = v;
    }
    for (let k = 0; k < mappers.length; k++) {
      const scale = mapperScales[k];
      const v = composed
        ? composedScoreOf(
            values[k],
            slot,
            from,
            to,
            composed.scale,
            composed.negations,
            composed.weight,
            scale.bipolar ? composed.symbols[i] : null,
            scale,
          )
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
