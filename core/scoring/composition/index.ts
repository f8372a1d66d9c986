/**
 * Composition rules of text scores (decisions.md "Text scores that mean what they say";
 * docs/text-scores.md): which tokens of a text are scored, and how negators, boosters and
 * dampeners, contrast, all-caps and exclamation marks change each token's value and weight.
 * Emoticons and emoji become items with a lexicon valence. Runtime-agnostic and linear in the
 * text length; the word lists come from the language data (meta.composition).
 *
 * vader.ts: the constants; compile.ts: the compiled lists and per-form info; scan.ts: gaps and
 * clauses; symbols.ts: emoticons and emoji; rules.ts: the rules; compose.ts: the entry points;
 * score.ts: a text's score from its items.
 */
export { VADER, FACTORS, NEGATION_SCOPE, type CompositionMode } from './vader';
export { plainItems, scoredByDefault, type ComposedItem, type PositionedToken, type RuleName } from './items';
export { compileComposition, computeFormInfo, type CompiledComposition, type FormInfo } from './compile';
export type { ComposableForm, CompositionScratch } from './rules';
export { composeText, composeForms, stopFlag, composedValue, emphasis, emphasized } from './compose';
export { composedScore, dimensionScale, mapperScale, type FactorScale, type TextItems } from './score';
