/**
 * The tokenizer: a pure function of (text, language data), the same in the Worker, the browser
 * bundle and Node. Token.string is always text.slice(indexStart, indexEnd).
 *
 * Lemmas (no part-of-speech tagger; one token of left context):
 *   en  Penn-style contractions, WordNet exception lists, then WordNet "morphy" detachment
 *       rules checked against the WordNet lemma list; after a determiner the noun reading wins.
 *   de  Morphy full-form lexicon (case-sensitive first, so nouns keep their capital), closed-class
 *       words (articles, pronouns, contractions) by table, separated verb particles rejoined
 *       ("stehe ... auf." -> aufstehen); after an article the nominal reading wins.
 *   fr  Lefff full-form lexicon (verbs first, frequent verbs win ties, e.g. suis -> être);
 *       after a determiner the noun/adjective reading wins (l'été -> été).
 *   ja  token = string (as the interface says).
 * Unknown words fall back to the lower-cased surface form (German: capitalized unknown words,
 * probably nouns or names, keep their capital).
 *
 * Synonyms (docs/vocabulary.md): only for content words (never stop words, pronouns,
 * auxiliaries, numbers); each link carries the part of speech of its source sense, kept when
 * it matches a simple guess for the token (partOfSpeechGuess); the language data holds only
 * synonyms that passed the similarity filter against the language's default model.
 */
import { FLAG, POS_FLAGS, type LanguageData } from './data';
import { segment, type Span } from './segment';
import type { Language } from './languages';
import { LIMITS } from '../limits';
import type { Token, Tokenization } from '../responses';
import { WordTable } from './word-table';
import { capitalize } from '../vocab-quality';

export { SUPPORTED_LANGUAGES, normalizeLanguage, type Language } from './languages';
export { parseLanguageData, LanguageData } from './data';
export { segment } from './segment';

export type { Token, Tokenization } from '../responses';

const MAX_SYNONYMS = LIMITS.synonymsPerToken;

const EN_DETERMINERS = new Set([
  'the',
  'a',
  'an',
  'this',
  'these',
  'those',
  'my',
  'your',
  'his',
  'its',
  'our',
  'their',
  'every',
  'each',
  'several',
  "'s",
]);
const EN_SUBJECTS = new Set([
  'i',
  'you',
  'he',
  'she',
  'it',
  'we',
  'they',
  'who',
  'to',
  'can',
  'could',
  'will',
  'would',
  'shall',
  'should',
  'may',
  'might',
  'must',
  "n't",
  'not',
  'also',
  'often',
  'never',
  'always',
]);
const EN_S_IS = new Set([
  'it',
  'he',
  'she',
  'that',
  'what',
  'there',
  'here',
  'who',
  'where',
  'how',
  'this',
  'everything',
  'nothing',
  'something',
]);
// A Map, not an object literal: user words such as "constructor" or "__proto__" must not hit Object.prototype.
const EN_CONTRACTIONS = new Map<string, string>([
  ["n't", 'not'],
  ["'m", 'be'],
  ["'re", 'be'],
  ["'ve", 'have'],
  ["'ll", 'will'],
  ["'d", 'would'],
]);
const DE_ARTICLES = new Set([
  'der',
  'die',
  'das',
  'den',
  'dem',
  'des',
  'ein',
  'eine',
  'einen',
  'einem',
  'einer',
  'eines',
  'kein',
  'keine',
  'keinen',
  'keinem',
  'keiner',
  'dieser',
  'diese',
  'dieses',
  'diesem',
  'diesen',
  'jeder',
  'jede',
  'jedes',
  'jedem',
  'jeden',
  'mein',
  'meine',
  'meinen',
  'meinem',
  'meiner',
  'sein',
  'seine',
  'seinen',
  'seinem',
  'seiner',
  'ihr',
  'ihre',
  'ihren',
  'ihrem',
  'ihrer',
  'unser',
  'unsere',
  'unseren',
  'unserem',
  'zum',
  'zur',
  'im',
  'am',
  'vom',
  'beim',
  'ins',
]);
const FR_DETERMINERS = new Set([
  'le',
  'la',
  "l'",
  'les',
  'un',
  'une',
  'des',
  'du',
  'au',
  'aux',
  'ce',
  'cet',
  'cette',
  'ces',
  'mon',
  'ma',
  'mes',
  'ton',
  'ta',
  'tes',
  'son',
  'sa',
  'ses',
  'notre',
  'nos',
  'votre',
  'vos',
  'leur',
  'leurs',
  'chaque',
  'quelques',
  "d'",
  'de',
]);
const FR_ADJ_CONTEXT = new Set(['très', 'si', 'trop', 'plus', 'moins', 'assez', 'aussi', 'bien']);
const DE_COORDINATORS = new Set(['und', 'oder', 'aber', 'denn', 'sondern', 'dass', 'weil', 'wenn', 'als', 'ob']);
const CLAUSE_END = /[.!?;:,()"«»„“”\u2026\u3002]/;

const NOUN_RULES: Array<[string, string]> = [
  ['ses', 's'],
  ['xes', 'x'],
  ['zes', 'z'],
  ['ches', 'ch'],
  ['shes', 'sh'],
  ['men', 'man'],
  ['ies', 'y'],
  ['s', ''],
];
const VERB_RULES: Array<[string, string]> = [
  ['ies', 'y'],
  ['es', 'e'],
  ['es', ''],
  ['s', ''],
  ['ed', 'e'],
  ['ed', ''],
  ['ing', 'e'],
  ['ing', ''],
];
const ADJ_RULES: Array<[string, string]> = [
  ['er', ''],
  ['est', ''],
  ['er', 'e'],
  ['est', 'e'],
];

function apos(s: string): string {
  return s.replace(/\u2019/g, "'");
}

function morphy(data: LanguageData, w: string, rules: Array<[string, string]>, flag: number): string | null {
  for (const [suffix, repl] of rules) {
    if (w.length > suffix.length + 1 && w.endsWith(suffix)) {
      const stem = w.slice(0, w.length - suffix.length) + repl;
      if (data.has(stem, flag)) return stem;
      // doubled final consonant: running -> run, stopped -> stop
      if (
        repl === '' &&
        (suffix === 'ing' || suffix === 'ed' || suffix === 'er' || suffix === 'est') &&
        /([bcdfgklmnprstvz])\1$/.test(stem)
      ) {
        const single = stem.slice(0, -1);
        if (data.has(single, flag)) return single;
      }
    }
  }
  return null;
}

/**
 * w: the lower-cased form with apostrophes normalized (apos), i: its key index (data.find(w)).
 * Context (ctx, CTX_EN_*): the previous token a determiner (and its lemma not "be"), a subject,
 * one of EN_S_IS; the next token "n't".
 */
function lemmaEn(data: LanguageData, w: string, i: number, ctx: number): string {
  const contraction = EN_CONTRACTIONS.get(w);
  if (contraction !== undefined) return contraction;
  if (w === "'s") return ctx & CTX_EN_S_IS ? 'be' : "'s";
  if (ctx & CTX_EN_NT) {
    if (w === 'ca') return 'can';
    if (w === 'wo') return 'will';
    if (w === 'sha') return 'shall';
  }
  const f = data.flagsOf(i);
  const nounContext = (ctx & CTX_EN_NOUN) !== 0;
  const verbContext = (ctx & CTX_EN_VERB) !== 0;
  // A plural that is also listed as a lemma (bridges, costs): the shorter lemma wins, as NLTK does.
  const plural = w.endsWith('s') && !w.endsWith('ss') && (f & FLAG.NOUN) !== 0 && !(f & FLAG.STOP);
  if (nounContext) {
    const n = data.nounLemmaOf(i) ?? (plural ? morphy(data, w, NOUN_RULES, FLAG.NOUN) : null);
    if (n) return n;
    if (f & (FLAG.NOUN | FLAG.ADJ)) return w;
    const r = morphy(data, w, NOUN_RULES, FLAG.NOUN);
    if (r) return r;
  }
  const exc = data.lemmaOf(i);
  if (exc) return exc;
  if (verbContext || /(?:ing|ed)$/.test(w)) {
    const r = morphy(data, w, VERB_RULES, FLAG.VERB);
    if (r) return r;
  }
  const n = data.nounLemmaOf(i) ?? (plural ? morphy(data, w, NOUN_RULES, FLAG.NOUN) : null);
  if (n) return n;
  if (f & (FLAG.NOUN | FLAG.VERB | FLAG.ADJ | FLAG.ADV)) return w;
  return (
    morphy(data, w, NOUN_RULES, FLAG.NOUN) ??
    morphy(data, w, VERB_RULES, FLAG.VERB) ??
    morphy(data, w, ADJ_RULES, FLAG.ADJ) ??
    w
  );
}

/** Lemma by the full-form lexicon (de, fr): exact case first, then lower case. */
function lemmaLexicon(data: LanguageData, candidates: string[], nounContext: boolean): string | null {
  for (const c of candidates) {
    const i = data.find(c);
    if (i < 0) continue;
    if (nounContext) {
      const n = data.nounLemmaOf(i);
      if (n) return n;
    }
    const l = data.lemmaOf(i);
    if (l) return l;
    if (data.flagsOf(i) & FLAG.KNOWN) return c;
  }
  return null;
}

const DE_IRREGULAR_DEGREE: Array<[RegExp, string]> = [
  [/^(?:besser|best)/, 'gut'],
  [/^(?:mehr|meist)/, 'viel'],
  [/^(?:lieber|liebst)/, 'gern'],
  [/^(?:höher|höchst)/, 'hoch'],
  [/^(?:näher|nächst)/, 'nah'],
];
const DE_DEGREE = /(?:er|ere|eren|erem|erer|eres|ste|sten|ster|stem|stes|este|esten|ester|estem|estes|st)$/;

/** Comparative/superlative of a known adjective (the lexicon lists positive forms): größer -> groß. */
function germanComparative(data: LanguageData, lower: string): string | null {
  for (const [re, lemma] of DE_IRREGULAR_DEGREE) if (re.test(lower)) return lemma;
  const m = DE_DEGREE.exec(lower);
  if (!m) return null;
  const stem = lower.slice(0, m.index);
  if (stem.length < 3) return null;
  for (const cand of [stem, stem.replace(/ä/g, 'a').replace(/ö/g, 'o').replace(/ü/g, 'u')]) {
    const i = data.find(cand);
    if (data.flagsOf(i) & FLAG.ADJ) return cand;
    const l = data.lemmaOf(i);
    if (l && data.has(l, FLAG.ADJ)) return l;
  }
  return null;
}

/** German separated verb particle: finite verb at k, particle closing the clause later on. */
function germanSeparable(data: LanguageData, text: string, spans: Span[], k: number, lower: string): string | null {
  for (let j = k + 1; j < spans.length && j <= k + 15; j++) {
    const gap = text.slice(spans[j - 1].end, spans[j].start);
    if (CLAUSE_END.test(gap)) return null;
    const after = j + 1 < spans.length ? text.slice(spans[j].end, spans[j + 1].start) : '.';
    const nextWord = j + 1 < spans.length ? text.slice(spans[j + 1].start, spans[j + 1].end).toLowerCase() : '';
    if (CLAUSE_END.test(after) || DE_COORDINATORS.has(nextWord)) {
      const particle = text.slice(spans[j].start, spans[j].end).toLowerCase();
      const i = data.find(`${lower}|${particle}`);
      return i >= 0 ? data.lemmaOf(i) : null;
    }
  }
  return null;
}

/** Pronouns, auxiliaries and number words (closed classes of the language data). */
const CLOSED = FLAG.STOP | FLAG.FUNCTION | FLAG.NUMBER;

function synonymsFor(data: LanguageData, keys: string[], self: string, pos: number): string[] {
  const out: string[] = [];
  for (const k of keys) {
    for (const s of data.synonymLinksOf(data.find(k))) {
      if (out.length >= MAX_SYNONYMS) return out;
      if (pos !== 0 && s.pos !== 0 && (s.pos & pos) === 0) continue;
      if (s.word !== self && s.word !== k && !out.includes(s.word)) out.push(s.word);
    }
    if (out.length) break;
  }
  return out;
}

/**
 * A simple guess of the token's parts of speech (FLAG.NOUN...ADV bits; 0 = any): after a
 * determiner a noun or adjective (en, fr, de), after a subject pronoun, modal or "to" a verb
 * (en), a capitalized word inside a German sentence a noun, "-ly" an adverb or adjective (en);
 * otherwise every part of speech the lexicon gives the lemma or the form.
 */
export function partOfSpeechGuess(
  data: LanguageData,
  language: Language,
  lower: string,
  lemma: string,
  prev: string | undefined,
  capitalizedInside: boolean,
): number {
  if (language === 'ja') return 0;
  if (language === 'en') {
    if (prev !== undefined && EN_DETERMINERS.has(prev)) return FLAG.NOUN | FLAG.ADJ;
    if (prev !== undefined && EN_SUBJECTS.has(prev)) return FLAG.VERB | FLAG.ADV;
    if (lower.endsWith('ly')) return FLAG.ADV | FLAG.ADJ;
  } else if (language === 'de') {
    if (capitalizedInside) return FLAG.NOUN;
    if (prev !== undefined && DE_ARTICLES.has(prev)) return FLAG.NOUN | FLAG.ADJ;
  } else if (prev !== undefined && FR_DETERMINERS.has(prev)) return FLAG.NOUN | FLAG.ADJ;
  return (data.flagsOf(data.find(lemma)) | data.flagsOf(data.find(lower))) & POS_FLAGS;
}

export interface TokenizeOptions {
  /** Look up synonyms (default true). Scoring paths never read them and skip the lookups. */
  synonyms?: boolean;
}

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
   * Compiled composition of the scorer (core/scoring/composition.ts) and what it keeps of the
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

// Contexts (index into WordInfo.forms). en: see lemmaEn; de: after an article, sentence-initial; fr: after a determiner, "s'" before il/ils.
const CTX_EN_NOUN = 1;
const CTX_EN_VERB = 2;
const CTX_EN_NT = 4;
const CTX_EN_S_IS = 8;
const CTX_DE_NOUN = 1;
const CTX_DE_INITIAL = 2;
const CTX_FR_NOUN = 1;
const CTX_FR_S_IL = 2;

/** Per language at most this many forms are cached (then the cache starts over), each at most WORD_CACHE_MAX_LENGTH long. */
const WORD_CACHE_SIZE = 50_000;
const WORD_CACHE_MAX_LENGTH = 64;
const wordCaches = new WeakMap<LanguageData, WordTable<WordInfo>>();

/** A word cache for tokenizeWith (tokenize() keeps one per language). */
export function newWordCache(): WordTable<WordInfo> {
  return new WordTable<WordInfo>(WORD_CACHE_SIZE, WORD_CACHE_MAX_LENGTH);
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

/** A run of three or more of one letter ("sooo", "loooove"): lengthening for emphasis. */
const ELONGATED_RUNS = /(\p{L})\1{2,}/gu;
/** en/de/fr vowels: a shortened form without one ("mm", "hm", "brr" -> br) is no word. */
const VOWEL = /[aeiouyàáâäæéèêëíìîïóòôöœúùûüÿ]/;
/**
 * The mixes tried for a form with r runs (ELONGATED_MIXES[r], up to three runs): bit i set shortens
 * run i to one letter, else to two; fewer one-letter runs first. More runs: all two, then all one.
 */
const ELONGATED_MIXES = [[], [0, 1], [0, 1, 2, 3], [0, 1, 2, 4, 3, 5, 6, 7]];
const ELONGATED_ALL_OR_NONE = [0, -1];

/** A word of the language data: a lemma or form, a stop word or a form with a lemma. */
function knownWord(data: LanguageData, index: number): boolean {
  return (
    index >= 0 &&
    ((data.flagsOf(index) & (FLAG.KNOWN | FLAG.STOP | POS_FLAGS)) !== 0 ||
      data.lemmaOf(index) !== null ||
      data.nounLemmaOf(index) !== null)
  );
}

/**
 * The word a lengthened form stands for ("goood" -> good, "sooo" -> so, "goooodddd" -> good), as
 * social-media sentiment work normalizes it (Go, Bhayani & Huang 2009 shorten such runs; Brody &
 * Diakopoulos 2011 find them mostly on sentiment words): for a form the language data does not
 * know, its runs of three or more of one letter shortened to two letters or to one, two-letter
 * runs first (every mix for up to three runs, else all two or all one), the first result that is
 * a word of the language data with a vowel and at least three letters, or a stop word ("so",
 * "no"). Null otherwise, for Japanese and for short all-caps forms (IEEE, OOO: acronyms).
 */
function unelongated(data: LanguageData, string: string, lower: string): string | null {
  if (data.language === 'ja' || (string.length <= 4 && string === string.toUpperCase())) return null;
  const before: string[] = [];
  const runs: string[] = [];
  let last = 0;
  for (const m of lower.matchAll(ELONGATED_RUNS)) {
    before.push(lower.slice(last, m.index));
    runs.push(m[1]!);
    last = m.index + m[0].length;
  }
  const r = runs.length;
  if (r === 0) return null;
  const tail = lower.slice(last);
  for (const mix of ELONGATED_MIXES[r] ?? ELONGATED_ALL_OR_NONE) {
    let word = '';
    for (let i = 0; i < r; i++) word += before[i] + ((mix >> i) & 1 ? runs[i] : runs[i]! + runs[i]);
    word += tail;
    if (word.length < 2 || !VOWEL.test(word)) continue;
    const index = data.find(word);
    // German nouns are keyed capitalized ("Haaaus" -> Haus).
    if (!knownWord(data, index) && !(data.language === 'de' && knownWord(data, data.find(capitalize(word))))) continue;
    if (word.length >= 3 || data.flagsOf(index) & FLAG.STOP) return word;
  }
  return null;
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
    case 'de': {
      // Sentence-initial capitals are positional: try the lower-case form first there.
      const initial = (ctx & CTX_DE_INITIAL) !== 0;
      const lemma = lemmaLexicon(
        data,
        initial ? [lower, w.aposString] : [w.aposString, lower],
        (ctx & CTX_DE_NOUN) !== 0,
      );
      token = lemma ?? germanComparative(data, lower) ?? (w.upper && !initial ? w.aposString : lower);
      break;
    }
    case 'fr':
      // s' before il/ils is the conjunction si ("s'il"), otherwise the pronoun se.
      token =
        ctx & CTX_FR_S_IL && lower === "s'" ? 'si' : (lemmaLexicon(data, [lower], (ctx & CTX_FR_NOUN) !== 0) ?? lower);
      break;
    default:
      // ja: token = string (as the interface says).
      token = w.string;
  }
  return (w.forms[ctx] = new TokenForm(w.string, token, isStop, w, ctx));
}

/** Whether the character range text[from, to) holds a sentence end (. ! ? …). */
function hasSentenceEnd(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e || c === 0x21 || c === 0x3f || c === 0x2026) return true;
  }
  return false;
}

/** Splits text into tokens with lemma, stop-word flag and synonyms. */
export function tokenize(text: string, data: LanguageData, options: TokenizeOptions = {}): Tokenization {
  return tokenizeWith(text, data, options.synonyms !== false, wordCacheOf(data));
}

function wordCacheOf(data: LanguageData): WordTable<WordInfo> {
  let cache = wordCaches.get(data);
  if (!cache) wordCaches.set(data, (cache = newWordCache()));
  return cache;
}

/** Word infos of the spans, reused between calls (tokenizing is synchronous). */
let infoScratch: WordInfo[] = [];

/** The TokenForm of every span (forms[k] for spans[k]): the context rules of the header, per token. */
function formsOf(
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
      form = w.forms[0] ??= new TokenForm(w.string, w.string, (w.flags & FLAG.STOP) !== 0, w, 0);
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

/** The text scorer's tokenizer: tokenize(text, data, { synonyms: false }).tokens, and formTokens for its lean path. */
export interface ScoringTokenizer {
  (text: string): Token[];
  forms(text: string, out: FormTokens): FormTokens;
}

export function scoringTokenizer(data: LanguageData): ScoringTokenizer {
  return Object.assign((text: string) => tokenize(text, data, { synonyms: false }).tokens, {
    forms: (text: string, out: FormTokens) => formTokens(text, data, out),
  });
}

/** tokenize with the given word cache; null computes every form afresh (the reference of the cache's test). */
export function tokenizeWith(
  text: string,
  data: LanguageData,
  withSynonyms: boolean,
  cache: WordTable<WordInfo> | null,
): Tokenization {
  const spans = segment(text, data);
  const language: Language = data.language;
  const n = spans.length;
  const forms: TokenForm[] = new Array(n);
  formsOf(text, data, cache, spans, forms);
  const tokens: Token[] = new Array(n);
  for (let k = 0; k < n; k++) {
    const sp = spans[k]!;
    const f = forms[k]!;
    const { string, token, isStop } = f;
    let synonyms: string[] = [];
    if (withSynonyms) {
      const w = f.info;
      const lower = w.lower;
      const prev = k > 0 ? forms[k - 1]!.info.lower : undefined;
      const capitalizedInside = language === 'de' && w.upper && !(f.ctx & CTX_DE_INITIAL);
      // Content words only: no synonyms for stop words, pronouns, auxiliaries, numbers.
      const closed = isStop || ((w.flags | data.flagsOf(data.find(token))) & CLOSED) !== 0 || /\p{N}/u.test(string);
      const synKeys = language === 'ja' ? [string] : [token, lower];
      synonyms = closed
        ? []
        : synonymsFor(data, synKeys, token, partOfSpeechGuess(data, language, lower, token, prev, capitalizedInside));
    }
    tokens[k] = { string, token, indexStart: sp.start, indexEnd: sp.end, isStop, synonyms };
  }
  return { tokenCount: n, tokens };
}
