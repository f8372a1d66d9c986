/**
 * Word forms: what the tokenizer knows of a surface form (WordInfo, cached per language), and
 * the token of each span in the context of its neighbours (TokenForm, shared by every occurrence
 * of a form in one context). The lemma rules per language are lemma-en.ts, lemma-de.ts and
 * lemma-fr.ts; this module finds each token's context and caches their results.
 */
import { dictionaryForm, isEnding } from './conjugation-ja';
import { FLAG, type LanguageData } from './data';
import { knownWord, unelongated } from './elongated';
import type { Language } from './languages';
import { CTX_DE_INITIAL, CTX_DE_NOUN, DE_ARTICLES, germanSeparable, lemmaDe } from './lemma-de';
import {
  CTX_EN_NOUN,
  CTX_EN_NT,
  CTX_EN_S_IS,
  CTX_EN_VERB,
  EN_DETERMINERS,
  EN_S_IS,
  EN_SUBJECTS,
  lemmaEn,
} from './lemma-en';
import { CTX_FR_NOUN, CTX_FR_S_IL, FR_ADJ_CONTEXT, FR_DETERMINERS, lemmaFr } from './lemma-fr';
import type { Span } from './segment';
import { WordTable } from './word-table';
import { capitalize } from '../vocab-quality';

/**
 * What the tokenizer knows of one surface form apart from its context, cached per language
 * (WORD_CACHE): its lower-cased form and dictionary entry, its roles as the left or right
 * context of another token (ROLE_*), and its TokenForm per context (CTX_*), computed on first
 * use. Scoring sees the same few thousand forms again and again, so most tokens cost one Map
 * lookup instead of dictionary searches and lemma rules.
 */
export interface WordInfo {
  /** The surface form (the word cache's key). */
  string: string;
  /** The surface form with typographic apostrophes normalized. */
  aposString: string;
  lower: string;
  index: number;
  flags: number;
  roles: number;
  /** de: starts with an upper-case letter. */
  upper: boolean;
  /** de: the dictionary has separated-verb keys "lower|particle" (germanSeparable can find one). */
  separable: boolean;
  /** The form's token per context (index ctx). */
  forms: Array<TokenForm | undefined>;
  /** The form last handed out (most tokens see the same context as the form's last occurrence). */
  last: TokenForm | undefined;
}

/**
 * A token apart from its position: surface form, token and stop-word flag in one context.
 * Every occurrence of a form in that context shares this object (through the word cache), so
 * the text scorer keeps its per-form results on it (the fields below; core/scoring/batch.ts
 * owns them, the tokenizer never reads them). Plain fields rather than a memo object: one
 * object per token to load instead of two.
 */
export class TokenForm {
  /** Vector index the row and frequency score belong to (null: not computed). */
  scoredBy: unknown = null;
  row = -1;
  freq = 0;
  /**
   * Compiled composition of the scorer (core/scoring/composition/) and what it keeps of the
   * form there: its info (opaque here), and of it the numbers every token needs.
   */
  composedBy: unknown = null;
  compositionInfo: unknown = null;
  compositionClasses = 0;
  compositionFlags = 0;
  compositionSummary = 0;
  /** Request stamp of the last slot given to the form, and the slot. */
  stamp = 0;
  slot = -1;
  constructor(
    readonly string: string,
    readonly token: string,
    readonly isStop: boolean,
    readonly info: WordInfo,
    readonly ctx: number,
    /**
     * The form scoring looks the token up by: the token (lemma) for en/de/fr; for Japanese, whose
     * token is the surface form, the dictionary form of a conjugated word (楽しかっ -> 楽しい), and
     * '' (none) for an auxiliary.
     */
    readonly lookup: string = token,
  ) {}
}

// Roles of a form as the neighbour of another token (bits of WordInfo.roles).
const ROLE_EN_DETERMINER = 1;
const ROLE_EN_SUBJECT = 2;
const ROLE_EN_S_IS = 4;
const ROLE_EN_NT = 8;
const ROLE_DE_ARTICLE = 16;
const ROLE_FR_NOUN_CONTEXT = 32;
const ROLE_FR_IL = 64;

// Contexts (index into WordInfo.forms): the CTX_* bits of lemma-en.ts, lemma-de.ts and lemma-fr.ts, set in formsOf.

/** Per language at most this many forms are cached (then the cache starts over), each at most WORD_CACHE_MAX_LENGTH long. */
const WORD_CACHE_SIZE = 50_000;
const WORD_CACHE_MAX_LENGTH = 64;
const wordCaches = new WeakMap<LanguageData, WordTable<WordInfo>>();

/** A word cache for tokenizeWith (tokenize() keeps one per language). */
export function newWordCache(): WordTable<WordInfo> {
  return new WordTable<WordInfo>(WORD_CACHE_SIZE, WORD_CACHE_MAX_LENGTH);
}

/** The word cache tokenize() keeps for a language. */
export function wordCacheOf(data: LanguageData): WordTable<WordInfo> {
  let cache = wordCaches.get(data);
  if (!cache) wordCaches.set(data, (cache = newWordCache()));
  return cache;
}

function rolesOf(language: Language, lower: string): number {
  let r = 0;
  if (language === 'en') {
    if (EN_DETERMINERS.has(lower)) r |= ROLE_EN_DETERMINER;
    if (EN_SUBJECTS.has(lower)) r |= ROLE_EN_SUBJECT;
    if (EN_S_IS.has(lower)) r |= ROLE_EN_S_IS;
    if (lower === "n't") r |= ROLE_EN_NT;
  } else if (language === 'de') {
    if (DE_ARTICLES.has(lower)) r |= ROLE_DE_ARTICLE;
  } else if (language === 'fr') {
    if (FR_DETERMINERS.has(lower) || FR_ADJ_CONTEXT.has(lower)) r |= ROLE_FR_NOUN_CONTEXT;
    if (lower === 'il' || lower === 'ils') r |= ROLE_FR_IL;
  }
  return r;
}

function apos(s: string): string {
  return s.replace(/\u2019/g, "'");
}

function newWordInfo(data: LanguageData, string: string): WordInfo {
  let aposString = apos(string);
  let lower = apos(string.toLowerCase());
  let index = data.find(lower);
  if (!knownWord(data, index)) {
    const word = unelongated(data, string, lower);
    if (word !== null) {
      lower = word;
      index = data.find(word);
      // The surface form's case stays on the word ("Suuuper" -> "Super", "SOOO" -> "SO").
      aposString =
        string === string.toUpperCase() ? word.toUpperCase() : /^\p{Lu}/u.test(string) ? capitalize(word) : word;
    }
  }
  const language = data.language;
  return {
    string,
    aposString,
    lower,
    index,
    flags: data.flagsOf(index),
    roles: rolesOf(language, lower),
    upper: language === 'de' && /^\p{Lu}/u.test(string),
    separable: language === 'de' && data.keys.hasPrefix(`${lower}|`),
    forms: [],
    last: undefined,
  };
}

/** The WordInfo of the form text[start, end). */
function wordInfo(
  data: LanguageData,
  cache: WordTable<WordInfo> | null,
  text: string,
  start: number,
  end: number,
): WordInfo {
  if (!cache || end - start > WORD_CACHE_MAX_LENGTH) return newWordInfo(data, text.slice(start, end));
  let w = cache.get(text, start, end);
  if (w === undefined) cache.add(text, start, end, (w = newWordInfo(data, text.slice(start, end))));
  return w;
}

/** The token of a form in a context (not a German separated verb), computed once per form and context. */
function contextForm(data: LanguageData, w: WordInfo, ctx: number): TokenForm {
  const cached = w.forms[ctx];
  if (cached !== undefined) return cached;
  const { lower } = w;
  let token: string;
  let isStop = (w.flags & FLAG.STOP) !== 0;
  switch (data.language) {
    case 'en':
      token = lemmaEn(data, lower, w.index, ctx);
      // English contraction pieces ("ca", "n't", "'m") are stop words when their lemma is.
      if (!isStop && lower !== token && /['\u2019]|^(?:ca|wo|sha)$/.test(lower)) isStop = data.has(token, FLAG.STOP);
      break;
    case 'de':
      token = lemmaDe(data, lower, w.aposString, w.upper, ctx);
      break;
    case 'fr':
      token = lemmaFr(data, lower, ctx);
      break;
    default:
      // ja: token = string (as the interface says).
      token = w.string;
  }
  return (w.forms[ctx] = new TokenForm(w.string, token, isStop, w, ctx));
}

/**
 * A Japanese form: token = string (the interface says so); a content word looks up by its
 * dictionary form, an auxiliary ending (じゃ, たく, られ: meta.conjugation.endings) by nothing: it
 * carries no meaning of its own to score. Stop words keep their surface (の, で and い are no verb forms to score).
 */
function japaneseForm(data: LanguageData, w: WordInfo): TokenForm {
  const isStop = (w.flags & FLAG.STOP) !== 0;
  const lookup = isStop ? w.string : isEnding(data, w.string) ? '' : (dictionaryForm(data, w.string) ?? w.string);
  return new TokenForm(w.string, w.string, isStop, w, 0, lookup);
}

/** Whether the character range text[from, to) holds a sentence end (. ! ? …). */
function hasSentenceEnd(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e || c === 0x21 || c === 0x3f || c === 0x2026) return true;
  }
  return false;
}

/** Word infos of the spans, reused between calls (tokenizing is synchronous). */
let infoScratch: WordInfo[] = [];

/** The TokenForm of every span (forms[k] for spans[k]): the context rules of the lemma modules, per token. */
export function formsOf(
  text: string,
  data: LanguageData,
  cache: WordTable<WordInfo> | null,
  spans: Span[],
  forms: TokenForm[],
): void {
  const language: Language = data.language;
  const n = spans.length;
  if (infoScratch.length < n) infoScratch = new Array(Math.max(n, 2 * infoScratch.length));
  const infos = infoScratch;
  for (let k = 0; k < n; k++) {
    const sp = spans[k]!;
    infos[k] = wordInfo(data, cache, text, sp.start, sp.end);
  }
  let prevToken: string | undefined;
  for (let k = 0; k < n; k++) {
    const w = infos[k]!;
    let form: TokenForm;
    if (language === 'ja') {
      form = w.forms[0] ??= japaneseForm(data, w);
    } else {
      const prevRoles = k > 0 ? infos[k - 1]!.roles : 0;
      const nextRoles = k + 1 < n ? infos[k + 1]!.roles : 0;
      let ctx = 0;
      let separated: string | null = null;
      if (language === 'en') {
        if (prevRoles & ROLE_EN_DETERMINER && prevToken !== 'be') ctx |= CTX_EN_NOUN;
        if (prevRoles & ROLE_EN_SUBJECT) ctx |= CTX_EN_VERB;
        if (nextRoles & ROLE_EN_NT) ctx |= CTX_EN_NT;
        if (prevRoles & ROLE_EN_S_IS) ctx |= CTX_EN_S_IS;
      } else if (language === 'de') {
        if (prevRoles & ROLE_DE_ARTICLE) ctx |= CTX_DE_NOUN;
        if (k === 0 || hasSentenceEnd(text, spans[k - 1]!.end, spans[k]!.start)) ctx |= CTX_DE_INITIAL;
        if (w.separable) separated = germanSeparable(data, text, spans, k, w.lower);
      } else {
        if (prevRoles & ROLE_FR_NOUN_CONTEXT) ctx |= CTX_FR_NOUN;
        if (nextRoles & ROLE_FR_IL) ctx |= CTX_FR_S_IL;
      }
      // A German separated verb depends on more than the context: a form of its own.
      if (separated !== null) form = new TokenForm(w.string, separated, (w.flags & FLAG.STOP) !== 0, w, ctx);
      else {
        const last = w.last;
        form = last !== undefined && last.ctx === ctx ? last : (w.last = contextForm(data, w, ctx));
      }
    }
    prevToken = form.token;
    forms[k] = form;
  }
}
