/**
 * Vocabulary quality (decisions.md "Vocabulary quality", docs/vocabulary.md): the per-row flags
 * the importer computes once into the model artifact (section VFLG), and the one quality filter
 * that find-and-score, autocomplete and any other caller (seed expansion) share.
 * Runtime-agnostic: the Worker and the offline scorer use the same rules.
 */

/** Bits of a row's u16 flag word (artifact section VFLG). */
export const VOCAB_FLAG = {
  /** In the language's stop-word list (the tokenizer's list, consistent across a lemma's forms). */
  STOP: 1 << 0,
  /** Pronoun, auxiliary or modal verb (closed classes of the language data). */
  FUNCTION: 1 << 1,
  /**
   * A word of the model's language: the pinned word list has it in lower case (or, for a proper
   * noun or acronym, the word list and the language lexicon both know it); without a word list,
   * the language lexicon has it.
   */
  DICTIONARY: 1 << 2,
  /** Proper noun: the word lists know it only capitalized ("Berlin"). */
  PROPER: 1 << 3,
  /** Acronym: the word lists know it only in capitals ("NASA"). */
  ACRONYM: 1 << 4,
  /** Contains a letter (\p{L}). */
  LETTER: 1 << 5,
  /** Parts of speech of the word or its lemma (language lexicon); none set = unknown. */
  NOUN: 1 << 6,
  VERB: 1 << 7,
  ADJ: 1 << 8,
  ADV: 1 << 9,
  /** A number written in digits or words ("12", "twelve"). */
  NUMBER: 1 << 10,
  /**
   * One or two letters of an alphabetic script ("hi", "ni", "tv"): in web and news corpora these
   * are abbreviations, symbols and interjections far more often than words a person would pick.
   */
  SHORT: 1 << 11,
  /**
   * An inflected form of another dictionary word of the vocabulary ("plans", "suspected" of
   * "plan", "suspect"; the tokenizer's lemma), and not a noun of the lexicon in its own right
   * ("planning", "data" stay). Autocomplete offers the lemma before such forms.
   */
  INFLECTED: 1 << 12,
  /**
   * Evaluative polarity of the word: positive / negative in a published sentiment lexicon (en:
   * VADER), else by WordNet adjective propagation (Hu & Liu 2004: a synset and its similar-to
   * head share a polarity; "cozy" ~ comfortable +, "dingy" ~ dirty, grimy -). None: unknown/neutral.
   */
  POSITIVE: 1 << 13,
  NEGATIVE: 1 << 14,
  /**
   * A phrase row ("hot dog", "ice cream": the distilled model's WordNet collocations). Looked up
   * whole as a seed, whitelist word or word; never offered as a suggestion (find-and-score,
   * autocomplete and seed expansion list words).
   */
  PHRASE: 1 << 15,
} as const;

export const POS_MASK = VOCAB_FLAG.NOUN | VOCAB_FLAG.VERB | VOCAB_FLAG.ADJ | VOCAB_FLAG.ADV;

/**
 * The frequency cutoff of the words offered by default (decisions.md "Vocabulary quality"): the
 * 50,000 most frequent, find-and-score's default wordrankLimit and seed expansion's candidates.
 */
export const DEFAULT_WORDRANK_LIMIT = 50_000;

/** What a loaded model offers the filter: the flags of a row (0 when the artifact has none). */
export interface FlaggedIndex {
  readonly size: number;
  flags(row: number): number;
}

export interface QualityFilterOptions {
  /**
   * Only rows < rankLimit (modelRank <= rankLimit). Default DEFAULT_WORDRANK_LIMIT; -1: no cutoff,
   * and then only stop words, pronouns/auxiliaries and entries without a letter are skipped
   * (the behaviour before the filter, minus stop words).
   */
  rankLimit?: number;
  /**
   * Parts of speech of the seeds (POS_MASK bits). When non-zero, a candidate whose parts of
   * speech are known and share none of them is skipped (happy -> glad, proud; not know, think).
   */
  seedPos?: number;
}

/**
 * The default quality filter (one function for every caller): true when `row` may be suggested.
 * Default: a letter, not a phrase row, stop word, pronoun, auxiliary or number, not one or two Latin/Greek/
 * Cyrillic letters, a dictionary word (proper nouns included), within the rank limit,
 * and sharing a part of speech with the seeds when both are known. rankLimit -1 widens it to: a letter, not a phrase, stop word or pronoun.
 */
export function passesQualityFilter(index: FlaggedIndex, row: number, options: QualityFilterOptions = {}): boolean {
  const f = index.flags(row);
  if (!(f & VOCAB_FLAG.LETTER) || f & (VOCAB_FLAG.STOP | VOCAB_FLAG.FUNCTION | VOCAB_FLAG.PHRASE)) return false;
  const limit = options.rankLimit ?? DEFAULT_WORDRANK_LIMIT;
  if (limit === -1) return true;
  if (row >= limit) return false;
  if (f & (VOCAB_FLAG.NUMBER | VOCAB_FLAG.SHORT)) return false;
  if (!(f & VOCAB_FLAG.DICTIONARY)) return false;
  const seedPos = options.seedPos ?? 0;
  const pos = f & POS_MASK;
  return seedPos === 0 || pos === 0 || (pos & seedPos) !== 0;
}

/** The filter as a predicate over rows (for EmbeddingModel.prefixRows and candidate loops). */
export function qualityFilter(index: FlaggedIndex, options: QualityFilterOptions = {}): (row: number) => boolean {
  return (row) => passesQualityFilter(index, row, options);
}

/** Autocomplete junk: no letter, a phrase row, or neither a dictionary word nor frequent (rank beyond the default cutoff). */
export function isJunk(index: FlaggedIndex, row: number): boolean {
  const f = index.flags(row);
  if (!(f & VOCAB_FLAG.LETTER) || f & VOCAB_FLAG.PHRASE) return true;
  return !(f & VOCAB_FLAG.DICTIONARY) && row >= DEFAULT_WORDRANK_LIMIT;
}

/** A dictionary word (proper nouns included). */
export function isDictionaryRow(index: FlaggedIndex, row: number): boolean {
  return (index.flags(row) & VOCAB_FLAG.DICTIONARY) !== 0;
}

/** The word in the casing a person expects: proper nouns capitalized, acronyms in capitals. */
export function displayCase(word: string, flags: number): string {
  const lower = word.toLowerCase();
  if (flags & VOCAB_FLAG.ACRONYM) return word.toUpperCase();
  if (flags & VOCAB_FLAG.PROPER) return capitalize(lower);
  return lower;
}

export function capitalize(word: string): string {
  const first = word.codePointAt(0);
  if (first === undefined) return word;
  const n = first > 0xffff ? 2 : 1;
  return word.slice(0, n).toUpperCase() + word.slice(n);
}

const COMBINING = /[\u0300-\u036f]/g;

/**
 * Diacritics folded away for matching: NFD, combining marks (U+0300..U+036F) removed, then the
 * few letters NFD does not decompose (ß, æ, œ, ø, đ, ł, ı). "Café" -> "cafe". Lower-cases too.
 */
export function foldKey(word: string): string {
  let s = word.toLowerCase();
  // ASCII words (the common case) need nothing else.
  let ascii = true;
  for (let i = 0; i < s.length && ascii; i++) ascii = s.charCodeAt(i) < 0x80;
  if (ascii) return s;
  s = s.normalize('NFD').replace(COMBINING, '');
  if (/[ßæœøđłı]/.test(s))
    s = s
      .replace(/ß/g, 'ss')
      .replace(/æ/g, 'ae')
      .replace(/œ/g, 'oe')
      .replace(/ø/g, 'o')
      .replace(/đ/g, 'd')
      .replace(/ł/g, 'l')
      .replace(/ı/g, 'i');
  return s.normalize('NFC');
}
