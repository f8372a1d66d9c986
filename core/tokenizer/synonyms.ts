/**
 * Synonyms (docs/vocabulary.md): only for content words (never stop words, pronouns,
 * auxiliaries, numbers); each link carries the part of speech of its source sense, kept when
 * it matches a simple guess for the token (partOfSpeechGuess); the language data holds only
 * synonyms that passed the similarity filter against the language's default model.
 */
import { FLAG, POS_FLAGS, type LanguageData } from './data';
import type { TokenForm } from './forms';
import type { Language } from './languages';
import { CTX_DE_INITIAL, DE_ARTICLES } from './lemma-de';
import { EN_DETERMINERS, EN_SUBJECTS } from './lemma-en';
import { FR_DETERMINERS } from './lemma-fr';
import { LIMITS } from '../limits';

const MAX_SYNONYMS = LIMITS.synonymsPerToken;

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

/** The synonyms of a token: its form f, prev the previous token's form (undefined for the first). */
export function synonymsOf(data: LanguageData, f: TokenForm, prev: TokenForm | undefined): string[] {
  const language: Language = data.language;
  const { string, token, isStop } = f;
  const w = f.info;
  const lower = w.lower;
  const capitalizedInside = language === 'de' && w.upper && !(f.ctx & CTX_DE_INITIAL);
  // Content words only: no synonyms for stop words, pronouns, auxiliaries, numbers.
  const closed = isStop || ((w.flags | data.flagsOf(data.find(token))) & CLOSED) !== 0 || /\p{N}/u.test(string);
  if (closed) return [];
  // Japanese: the surface form, then a conjugated word's dictionary form (楽しかっ -> 楽しい).
  const synKeys =
    language === 'ja' ? (f.lookup !== string && f.lookup !== '' ? [string, f.lookup] : [string]) : [token, lower];
  return synonymsFor(
    data,
    synKeys,
    token,
    partOfSpeechGuess(data, language, lower, token, prev?.info.lower, capitalizedInside),
  );
}
