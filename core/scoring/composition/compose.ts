/**
 * Composing a text: composeText (the scored items with their rules, for `explain` and the
 * endpoint's plain path) and composeForms (the text scorer's lean path over token forms), and the
 * value transform that applies an item's emphasis and negations on a factor's scale.
 */
import { F_STOP } from './bits';
import { formInfo, type CompiledComposition } from './compile';
import { NO_RULES, plainItems, tokenItem, type ComposedItem, type PositionedToken, type RuleName } from './items';
import { addToken, applyRules, scratch, type ComposableForm, type CompositionScratch } from './rules';
import { FACTORS } from './vader';

/**
 * Composes a text: the scored items in text order with their rules. `tokens` must be the
 * tokenizer's tokens of `text` (ascending offsets).
 */
export function composeText(
  text: string,
  tokens: readonly PositionedToken[],
  rules: CompiledComposition,
): ComposedItem[] {
  const n = tokens.length;
  const sc = scratch(n);
  let summary = 0;
  for (let i = 0; i < n; i++) {
    const t = tokens[i];
    const f = formInfo(rules, t);
    summary = addToken(sc, i, f, t.isStop, summary);
    sc.starts[i] = t.indexStart;
    sc.ends[i] = t.indexEnd;
  }
  const ruleSets: Array<RuleName[] | undefined> = new Array(n);
  const symbols = applyRules(text, n, summary, null, sc.starts, sc.ends, rules, sc, ruleSets);
  if (!symbols) return plainItems(tokens);
  const items: ComposedItem[] = [];
  for (let i = 0; i < n; i++) {
    if (sc.kind[i] === 0)
      items.push(tokenItem(tokens[i], i, sc.negations[i], sc.scale[i], sc.weight[i], ruleSets[i] ?? NO_RULES));
  }
  if (symbols.length > 0) {
    items.push(...symbols);
    items.sort((a, b) => a.indexStart - b.indexStart);
  }
  return items;
}

/** What a token's stop-word flag adds to its case flags (ComposableForm.compositionFlags). */
export const stopFlag = (isStop: boolean): number => (isStop ? F_STOP : 0);

/**
 * composeText without item objects (the text scorer's lean path, core/scoring/batch.ts): the
 * rules over the n forms, `summary` the | of their infos' summary. Returns the text's
 * emoticon/emoji items with the per-token results in the shared scratch (valid until the next
 * composition), or null for a plain text (every non-stop token scored with scale 1, weight 1
 * and no negation: composeText's plainItems).
 */
export function composeForms(
  text: string,
  n: number,
  summary: number,
  forms: ArrayLike<ComposableForm>,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
): { symbols: ComposedItem[]; scratch: CompositionScratch } | null {
  const sc = scratch(n);
  const symbols = applyRules(text, n, summary, forms, starts, ends, rules, sc, null);
  if (symbols === null) return null;
  sc.result.symbols = symbols;
  return sc.result;
}

/**
 * The value an item contributes on a factor's scale: its distance from `neutral` scaled by the
 * emphasis factors, and per negation multiplied by N_SCALAR (bipolar: flipped and damped) or
 * by 1 + N_SCALAR (unipolar: damped).
 */
export function composedValue(value: number, item: ComposedItem, neutral: number, bipolar: boolean): number {
  return composeValue(value, item.scale, item.negations, neutral, bipolar);
}

/**
 * The factor on an item's distance from neutral: its emphasis `scale`, and per negation
 * N_SCALAR (bipolar: flipped and damped) or 1 + N_SCALAR (unipolar: damped).
 */
export function emphasis(scale: number, negations: number, bipolar: boolean): number {
  let m = scale;
  for (let k = 0; k < negations; k++) m *= bipolar ? FACTORS.negatedBipolar : FACTORS.negatedUnipolar;
  return m;
}

/** composedValue of a value with the emphasis `scale` and `negations` of its token (emphasis 1: the value itself). */
function composeValue(value: number, scale: number, negations: number, neutral: number, bipolar: boolean): number {
  return emphasized(value, emphasis(scale, negations, bipolar), neutral);
}

/** A value whose distance from `neutral` is multiplied by `e` (e = 1: the value itself, to the bit). */
export function emphasized(value: number, e: number, neutral: number): number {
  return e === 1 ? value : neutral + (value - neutral) * e;
}
