/**
 * The items a composition yields (a token's, or an emoticon's or emoji's) and their rule lists.
 */
import type { TokenLike } from '../types';

/** A token with its position in the text (core/tokenizer tokens). */
export interface PositionedToken extends TokenLike {
  indexStart: number;
  indexEnd: number;
}

export type RuleName =
  'negated' | 'intensified' | 'downtoned' | 'contrast' | 'caps' | 'exclamation' | 'emoticon' | 'emoji';

/** One scored item of a text: a token, or an emoticon/emoji (tokenIndex -1, `valence` set). */
export interface ComposedItem {
  tokenIndex: number;
  string: string;
  token: string;
  indexStart: number;
  indexEnd: number;
  /** How many negations apply (double negation: 2). */
  negations: number;
  /** Product of the booster, dampener, caps and exclamation factors on the distance from neutral. */
  scale: number;
  /** Contrast weight (0.5 before, 1.5 after a contrast word in the same sentence; else 1). */
  weight: number;
  rules: RuleName[];
  /** Emoticon/emoji valence in [-1, 1] (bipolar factors only). */
  valence?: number;
}

/** Shared empty symbol list (never mutated). */
export const NO_SYMBOLS: ComposedItem[] = [];

/** Shared empty rule list of items without a rule (never mutated). */
export const NO_RULES: RuleName[] = [];

export function addRule(list: RuleName[] | null, r: RuleName): void {
  if (list && !list.includes(r)) list.push(r);
}

export function symbol(
  s: string,
  start: number,
  end: number,
  valence: number,
  rule: 'emoticon' | 'emoji',
): ComposedItem {
  return {
    tokenIndex: -1,
    string: s,
    token: s,
    indexStart: start,
    indexEnd: end,
    negations: 0,
    scale: 1,
    weight: 1,
    rules: [rule],
    valence,
  };
}

/** A token's item with its composed emphasis. */
export function tokenItem(
  t: PositionedToken,
  i: number,
  negations: number,
  scale: number,
  weight: number,
  rules: RuleName[],
): ComposedItem {
  return {
    tokenIndex: i,
    string: t.string,
    token: t.token,
    indexStart: t.indexStart,
    indexEnd: t.indexEnd,
    negations,
    scale,
    weight,
    rules,
  };
}

/** Whether a token is scored unless a rule says otherwise: not a stop word, and not an auxiliary (lookup ''). */
export function scoredByDefault(t: Pick<TokenLike, 'isStop' | 'lookup'>): boolean {
  return !t.isStop && t.lookup !== '';
}

/** Items of composition "mean" (and of plain texts under "rules"): every token scoredByDefault, unchanged. */
export function plainItems(tokens: readonly PositionedToken[]): ComposedItem[] {
  const out: ComposedItem[] = [];
  for (let i = 0; i < tokens.length; i++)
    if (scoredByDefault(tokens[i])) out.push(tokenItem(tokens[i], i, 0, 1, 1, NO_RULES));
  return out;
}
