/**
 * Text scores from composed items (compose.ts): the weighted mean of the items'
 * composed values per factor, and the `explain` token lists. docs/text-scores.md has the formula:
 *
 *   score = sum_i w_i * c_i / sum_i w_i,   c_i = n + (v_i - n) * scale_i * N^negations_i
 *
 * over the text's scored items i with a value v_i on the factor (n: the factor's neutral point;
 * N = -0.74 on bipolar factors, 0.26 on unipolar ones; w_i: the contrast weight).
 * With composition "mean" every item has w = 1, scale = 1 and no negation: the plain mean.
 */
import { LIMITS } from '../../limits';
import type { ExplainedToken, ResolvedMapper } from '../types';
import { composedValue } from './compose';
import type { ComposedItem } from './items';

/** At most this many tokens per factor in `explanation`. */
const EXPLAIN_TOKENS = LIMITS.explainedTokens;

/** Neutral point and polarity of a factor's scale. */
export interface FactorScale {
  neutral: number;
  bipolar: boolean;
  /** Distance from neutral to the end of the scale (an emoticon of valence 1 lands there). */
  halfRange: number;
}

/** A mapper variable's scale: bipolar when it spans 0 (neutral 0), else unipolar from its minimum. */
export function mapperScale(m: ResolvedMapper): FactorScale {
  const s = m.values.info.scales?.[m.variable];
  if (!s) return { neutral: 0, bipolar: true, halfRange: 1 };
  if (s.min < 0 && s.max > 0) return { neutral: 0, bipolar: true, halfRange: Math.min(-s.min, s.max) };
  return { neutral: s.min, bipolar: false, halfRange: s.max - s.min };
}

/** A dimension: cosine, neutral 0; `axis` dimensions are bipolar. */
export const dimensionScale = (axis: boolean): FactorScale => ({ neutral: 0, bipolar: axis, halfRange: 1 });

/** One text's items split as the scorer needs them: token items (aligned with its rows) and symbols. */
export interface TextItems {
  tokens: ComposedItem[];
  symbols: ComposedItem[];
}

/**
 * Weighted mean of a text's composed values on one factor, with the explanation when asked.
 * `values[from + k]` is the raw value of `items.tokens[k]` (NaN = none). Symbols count only on
 * bipolar factors (`symbols` true). Returns null when no item has a value.
 */
export function composedScore(
  values: ArrayLike<number>,
  from: number,
  items: TextItems,
  scale: FactorScale,
  symbols: boolean,
  explain: ((k: number) => string[]) | null,
): { score: number; tokens?: ExplainedToken[] } | null {
  let sw = 0;
  let swc = 0;
  const top: Array<{ item: ComposedItem; value: number; extra: string[]; key: number }> | null = explain ? [] : null;
  const its = items.tokens;
  for (let k = 0; k < its.length; k++) {
    const v = values[from + k];
    if (Number.isNaN(v)) continue;
    const it = its[k];
    const c = composedValue(v, it, scale.neutral, scale.bipolar);
    sw += it.weight;
    swc += it.weight * c;
    if (top) top.push({ item: it, value: c, extra: explain!(k), key: Math.abs(it.weight * (c - scale.neutral)) });
  }
  if (symbols) {
    for (const it of items.symbols) {
      const c = scale.neutral + it.valence! * scale.halfRange;
      sw += it.weight;
      swc += it.weight * c;
      if (top) top.push({ item: it, value: c, extra: [], key: Math.abs(it.weight * (c - scale.neutral)) });
    }
  }
  if (!(sw > 0)) return null;
  const score = swc / sw;
  if (!top) return { score };
  // Largest |contribution| first; ties in text order.
  top.sort((a, b) => b.key - a.key || a.item.indexStart - b.item.indexStart);
  return {
    score,
    tokens: top.slice(0, EXPLAIN_TOKENS).map(({ item, value, extra }) => ({
      string: item.string,
      token: item.token,
      indexStart: item.indexStart,
      indexEnd: item.indexEnd,
      value,
      weight: item.weight,
      rules: [...item.rules, ...extra],
    })),
  };
}
