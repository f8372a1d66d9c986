/**
 * The tokenizer: a pure function of (text, language data), the same in the Worker, the browser
 * bundle and Node. Token.string is always text.slice(indexStart, indexEnd).
 *
 * A text's spans (segment.ts), then per span its token in the context of its neighbours
 * (forms.ts, cached per language and context), then its synonyms (synonyms.ts).
 *
 * Lemmas (no part-of-speech tagger; one token of left context):
 *   en  lemma-en.ts: Penn-style contractions, WordNet exception lists, then WordNet "morphy"
 *       detachment rules checked against the WordNet lemma list; after a determiner the noun
 *       reading wins.
 *   de  lemma-de.ts: Morphy full-form lexicon (case-sensitive first, so nouns keep their
 *       capital), closed-class words (articles, pronouns, contractions) by table, separated verb
 *       particles rejoined ("stehe ... auf." -> aufstehen); after an article the nominal reading wins.
 *   fr  lemma-fr.ts: Lefff full-form lexicon (verbs first, frequent verbs win ties, e.g. suis ->
 *       être); after a determiner the noun/adjective reading wins (l'été -> été).
 *   ja  token = string (as the interface says).
 * Unknown words fall back to the lower-cased surface form (German: capitalized unknown words,
 * probably nouns or names, keep their capital). Lengthened forms ("sooo") read as the word they
 * stand for (elongated.ts).
 */
import type { LanguageData } from './data';
import { formsOf, wordCacheOf, type TokenForm, type WordInfo } from './forms';
import { segment } from './segment';
import { synonymsOf } from './synonyms';
import type { Token, Tokenization } from '../responses';
import type { WordTable } from './word-table';

export { SUPPORTED_LANGUAGES, normalizeLanguage, type Language } from './languages';
export { parseLanguageData, LanguageData } from './data';
export { segment } from './segment';
export { newWordCache, TokenForm, type WordInfo } from './forms';
export { partOfSpeechGuess } from './synonyms';

export type { Token, Tokenization } from '../responses';

export interface TokenizeOptions {
  /** Look up synonyms (default true). Scoring paths never read them and skip the lookups. */
  synonyms?: boolean;
}

/** Splits text into tokens with lemma, stop-word flag and synonyms. */
export function tokenize(text: string, data: LanguageData, options: TokenizeOptions = {}): Tokenization {
  return tokenizeWith(text, data, options.synonyms !== false, wordCacheOf(data));
}

/**
 * Tokens of a text for the text scorer (core/scoring/batch.ts), without token objects: per
 * token its shared TokenForm and offsets. The same tokens as tokenize(text, data, { synonyms: false }).
 */
export interface FormTokens {
  count: number;
  forms: TokenForm[];
  starts: Int32Array;
  ends: Int32Array;
}

export function newFormTokens(): FormTokens {
  return { count: 0, forms: [], starts: new Int32Array(64), ends: new Int32Array(64) };
}

/** Fills `out` with the tokens of text (see FormTokens) and returns it. */
export function formTokens(text: string, data: LanguageData, out: FormTokens): FormTokens {
  const spans = segment(text, data);
  const n = spans.length;
  if (out.starts.length < n) {
    out.starts = new Int32Array(Math.max(n, 2 * out.starts.length));
    out.ends = new Int32Array(out.starts.length);
  }
  formsOf(text, data, wordCacheOf(data), spans, out.forms);
  for (let k = 0; k < n; k++) {
    out.starts[k] = spans[k]!.start;
    out.ends[k] = spans[k]!.end;
  }
  out.count = n;
  return out;
}

/** A token as the text scorer reads it: without synonyms, with the form it is looked up by (TokenForm.lookup). */
export type ScoringToken = Omit<Token, 'synonyms'> & { lookup: string };

/** The text scorer's tokenizer: the tokens of tokenize(text, data, { synonyms: false }) with their lookup forms, and formTokens for its lean path. */
export interface ScoringTokenizer {
  (text: string): ScoringToken[];
  forms(text: string, out: FormTokens): FormTokens;
}

export function scoringTokenizer(data: LanguageData): ScoringTokenizer {
  const scratch = newFormTokens();
  return Object.assign(
    (text: string): ScoringToken[] => {
      const { count, forms, starts, ends } = formTokens(text, data, scratch);
      const tokens: ScoringToken[] = new Array(count);
      for (let k = 0; k < count; k++) {
        const { string, token, isStop, lookup } = forms[k]!;
        tokens[k] = { string, token, indexStart: starts[k]!, indexEnd: ends[k]!, isStop, lookup };
      }
      return tokens;
    },
    { forms: (text: string, out: FormTokens) => formTokens(text, data, out) },
  );
}

/** tokenize with the given word cache; null computes every form afresh (the reference of the cache's test). */
export function tokenizeWith(
  text: string,
  data: LanguageData,
  withSynonyms: boolean,
  cache: WordTable<WordInfo> | null,
): Tokenization {
  const spans = segment(text, data);
  const n = spans.length;
  const forms: TokenForm[] = new Array(n);
  formsOf(text, data, cache, spans, forms);
  const tokens: Token[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const sp = spans[k]!;
    const f = forms[k]!;
    const { string, token, isStop } = f;
    const synonyms = withSynonyms ? synonymsOf(data, f, k > 0 ? forms[k - 1] : undefined) : [];
    tokens[k] = { string, token, indexStart: sp.start, indexEnd: sp.end, isStop, synonyms };
  }
  return { tokenCount: n, tokens };
}
