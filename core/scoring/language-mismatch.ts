/**
 * Does a text look like another language than its model's? text-scores attaches the
 * answer to each text's result (`languageMismatch`, only when it does); it never changes a score.
 *
 * The check reads the text alone, in one pass over its char codes, against the small built-in
 * profile below: the same for every model and no language data loaded (the Worker holds only
 * the model's own language, docs/multilingual.md "Memory"). Two kinds of evidence:
 *   script      kana/kanji against Latin letters: a ja model given Latin-script text, an en/de/fr
 *               model given mostly kana and kanji;
 *   stop-words  among the Latin-script languages, hits of each language's very frequent and
 *               distinctive function words (PROFILE_WORDS).
 * It is conservative: it flags only with clear evidence (at least MIN_HITS profile words of the
 * other language and more than twice as many as of any other, or a clear script majority), so
 * a short text ("Super!") or a text mixing two languages about evenly is not flagged. It knows
 * these four languages only: Spanish, say, is flagged only when it looks like one of them, and
 * kanji without kana (Chinese) never counts as Japanese.
 */
import type { LanguageMismatch } from '../responses';

/**
 * Function words per Latin-script language: taken from the top of the usual frequency lists of
 * each language (articles, conjunctions, pronouns, auxiliaries, prepositions; e.g. the Leipzig
 * Corpora Collection's news-corpus lists), keeping only words that are no frequent word of the
 * other two (so no "in", "an", "was", "will", "so", "man", "war", "hat" (en/de); "a", "on",
 * "or", "as", "son", "mon", "pour", "par" (en/fr); "du", "es", "hier" (de/fr); "des" (de and
 * fr articles); "de", "en" (also Dutch and Spanish); "im" (en chat "im")). A word followed by an
 * apostrophe and a letter is looked up with the apostrophe: French elisions ("l'", "qu'") and
 * English contractions ("don'", "it'"). English "die" is rare, German "die" very frequent.
 */
export const PROFILE_WORDS = {
  en:
    'the and of to is that it for with this are be you not have but they he she we his at by from which what ' +
    "there were been has would can my your our their i very just don' it' i' didn' isn' can' that' wasn'",
  de:
    'und der die das nicht ist ich ein eine einen einem einer zu den dem mit sich auf für von auch sie er wir ihr ' +
    'sind wird haben noch nur aber oder wie wenn dass daß schon sehr kein keine mich mir vom zum zur bei aus nach ' +
    'über doch jetzt uns wurde kann diese gibt',
  fr:
    'le la les et est pas je il elle nous vous ils un une au aux ce cette ces que qui dans avec sur mais ou où sa ' +
    "ses mes très sont été être ont fait ne se leur tout bien comme aussi ça cela à y c' l' d' j' n' qu' s' m'",
} as const;

type ProfileLanguage = keyof typeof PROFILE_WORDS;
const PROFILE_LANGUAGES = Object.keys(PROFILE_WORDS) as ProfileLanguage[];

/**
 * Words are looked up without building strings: a word of at most MAX_KEY_CHARS characters, all
 * of them in the profile's alphabet, is the number sum(code_j << 6j) over its lower-cased
 * characters' codes (1..63, the apostrophe included; 30 bits at most, a small integer), found in
 * an open-addressing table (PROFILE_KEYS). Any other word cannot be a profile word.
 */
const MAX_KEY_CHARS = 5;
/**
 * Per UTF-16 code unit (one load per character, no range tests): 0 for anything but a letter of
 * the scripts below; a Latin letter (Basic Latin, Latin-1, Extended-A and -B) has the code of its
 * lower-case form in the profile's alphabet (1..63), or OUTSIDE when no profile word has it; kana
 * are KANA, kanji KANJI.
 */
const CLASS = new Uint8Array(0x10000);
const OUTSIDE = 64;
const KANA = 65;
const KANJI = 66;
const APOSTROPHE_CODE = 1;
/** Open addressing, linear probing: the keys of the profile words (0: empty slot) and their PROFILE_LANGUAGES index. */
const TABLE_BITS = 10;
const PROFILE_KEYS = new Int32Array(1 << TABLE_BITS);
const PROFILE_LANGUAGE = new Int8Array(1 << TABLE_BITS);
const slotOf = (key: number): number => Math.imul(key, 0x9e3779b1) >>> (32 - TABLE_BITS);

/** Index in PROFILE_LANGUAGES of the profile word with this key, or -1. */
function profileLanguageOf(key: number): number {
  for (let s = slotOf(key); ; s = (s + 1) & (PROFILE_KEYS.length - 1)) {
    const k = PROFILE_KEYS[s];
    if (k === key) return PROFILE_LANGUAGE[s];
    if (k === 0) return -1;
  }
}

{
  const codes = new Map<string, number>([["'", APOSTROPHE_CODE]]);
  PROFILE_LANGUAGES.forEach((language, k) => {
    for (const w of PROFILE_WORDS[language].split(' ')) {
      if (w.length > MAX_KEY_CHARS) throw new Error(`language-mismatch: "${w}" is longer than ${MAX_KEY_CHARS}`);
      let key = 0;
      for (let j = 0; j < w.length; j++) {
        if (!codes.has(w[j])) codes.set(w[j], codes.size + 1);
        key |= codes.get(w[j])! << (6 * j);
      }
      if (profileLanguageOf(key) >= 0) throw new Error(`language-mismatch: "${w}" is in two profiles`);
      let slot = slotOf(key);
      while (PROFILE_KEYS[slot] !== 0) slot = (slot + 1) & (PROFILE_KEYS.length - 1);
      PROFILE_KEYS[slot] = key;
      PROFILE_LANGUAGE[slot] = k;
    }
  });
  if (codes.size >= OUTSIDE) throw new Error(`language-mismatch: ${OUTSIDE} or more characters in the profile words`);
  for (let c = 0x41; c < 0x250; c++) {
    const letter = c <= 0x5a || (c >= 0x61 && c <= 0x7a) || (c >= 0xc0 && c !== 0xd7 && c !== 0xf7);
    const lower = String.fromCharCode(c).toLowerCase();
    if (letter) CLASS[c] = (lower.length === 1 && codes.get(lower)) || OUTSIDE;
  }
  // Hiragana, katakana (with the prolonged sound mark), katakana phonetic extensions, half-width katakana.
  CLASS.fill(KANA, 0x3041, 0x3100).fill(KANA, 0x31f0, 0x3200).fill(KANA, 0xff66, 0xff9e);
  // CJK unified ideographs, extension A, compatibility ideographs, the iteration mark 々.
  CLASS.fill(KANJI, 0x4e00, 0xa000).fill(KANJI, 0x3400, 0x4dc0).fill(KANJI, 0xf900, 0xfb00);
  CLASS[0x3005] = KANJI;
}

/** Profile hits a language needs before the check names it. */
export const MIN_HITS = 3;
/** Kana and kanji a text needs before it counts as Japanese script (and at least one kana: kanji alone may be Chinese). */
const MIN_JAPANESE_CHARS = 5;
/** A ja model flags Latin-script text: Latin letters at least this many times the kana and kanji. */
const LATIN_MAJORITY = 9;

/** What the check counts in a text. */
export interface LanguageProfile {
  /** Latin letters (Basic Latin, Latin-1, Extended-A and -B). */
  latin: number;
  kana: number;
  kanji: number;
  /** Profile hits per Latin-script language (en, de, fr). */
  hits: Record<string, number>;
}

/** Per text (reused: the check is synchronous): Latin letters, kana, kanji, then the profile hits per PROFILE_LANGUAGES entry. */
const LATIN_COUNT = 0;
const KANA_COUNT = 1;
const KANJI_COUNT = 2;
const HITS = 3;
const counts = new Int32Array(HITS + PROFILE_LANGUAGES.length);

const isApostrophe = (c: number): boolean => c === 0x27 || c === 0x2019;
const isLatin = (cls: number): boolean => cls !== 0 && cls <= OUTSIDE;

/**
 * Counts the word text[start, end) (at most MAX_KEY_CHARS Latin letters) when it is a profile
 * word; an apostrophe after it and before a letter belongs to it ("l'", "don'").
 */
function countWord(text: string, start: number, end: number): void {
  let key = 0;
  let shift = 0;
  for (let i = start; i < end; i++, shift += 6) {
    const cls = CLASS[text.charCodeAt(i)];
    if (cls === OUTSIDE) return;
    key |= cls << shift;
  }
  if (end + 1 < text.length && isApostrophe(text.charCodeAt(end)) && isLatin(CLASS[text.charCodeAt(end + 1)])) {
    if (end - start === MAX_KEY_CHARS) return;
    key |= APOSTROPHE_CODE << shift;
  }
  const k = profileLanguageOf(key);
  if (k >= 0) counts[HITS + k]++;
}

/** Fills `counts` for the text, in one pass over its char codes (and a second read of the words short enough to be profile words). */
function countText(text: string): void {
  counts.fill(0, HITS);
  let latin = 0;
  let kana = 0;
  let kanji = 0;
  let length = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const cls = CLASS[text.charCodeAt(i)];
    if (cls === 0) {
      if (length > 0) {
        if (length <= MAX_KEY_CHARS) countWord(text, i - length, i);
        latin += length;
        length = 0;
      }
    } else if (cls <= OUTSIDE) length++;
    else if (cls === KANA) kana++;
    else kanji++;
  }
  if (length > 0) {
    if (length <= MAX_KEY_CHARS) countWord(text, n - length, n);
    latin += length;
  }
  counts[LATIN_COUNT] = latin;
  counts[KANA_COUNT] = kana;
  counts[KANJI_COUNT] = kanji;
}

/** What the check counts in the text (its tests and figures). */
export function languageProfile(text: string): LanguageProfile {
  countText(text);
  const hits: Record<string, number> = {};
  PROFILE_LANGUAGES.forEach((language, k) => (hits[language] = counts[HITS + k]));
  return { latin: counts[LATIN_COUNT], kana: counts[KANA_COUNT], kanji: counts[KANJI_COUNT], hits };
}

/** Index of the Latin-script language whose profile hits are at least MIN_HITS and more than twice every other one's; else -1. */
function dominantLatinLanguage(): number {
  let best = 0;
  let runnerUp = 0;
  for (let k = 1; k < PROFILE_LANGUAGES.length; k++) {
    const h = counts[HITS + k];
    if (h > counts[HITS + best]) {
      runnerUp = counts[HITS + best];
      best = k;
    } else runnerUp = Math.max(runnerUp, h);
  }
  const hits = counts[HITS + best];
  return hits >= MIN_HITS && hits > 2 * runnerUp ? best : -1;
}

/**
 * The mismatch of `text` with a model of `modelLanguage` (en, de, fr or ja; any other language
 * is never flagged), or null. A Latin-script language is "dominant" in a text when it has at
 * least MIN_HITS profile hits and more than twice as many as each of the other two.
 *   ja model:    Latin letters at least LATIN_MAJORITY times the kana and kanji, and a dominant
 *                Latin-script language: that language, evidence "script";
 *   en/de/fr:    at least MIN_JAPANESE_CHARS kana and kanji, one kana among them, and no fewer
 *                than the Latin letters: ja, evidence "script"; else a dominant Latin-script
 *                language other than the model's: that language, evidence "stop-words".
 */
export function languageMismatch(text: string, modelLanguage: string): LanguageMismatch | null {
  const model = PROFILE_LANGUAGES.indexOf(modelLanguage as ProfileLanguage);
  if (model < 0 && modelLanguage !== 'ja') return null;
  countText(text);
  const latin = counts[LATIN_COUNT];
  const japanese = counts[KANA_COUNT] + counts[KANJI_COUNT];
  if (model < 0) {
    if (latin === 0 || latin < LATIN_MAJORITY * japanese) return null;
    const k = dominantLatinLanguage();
    return k < 0 ? null : { modelLanguage: 'ja', detectedLanguage: PROFILE_LANGUAGES[k], evidence: 'script' };
  }
  const modelLang = PROFILE_LANGUAGES[model];
  if (counts[KANA_COUNT] > 0 && japanese >= MIN_JAPANESE_CHARS && japanese >= latin)
    return { modelLanguage: modelLang, detectedLanguage: 'ja', evidence: 'script' };
  const k = dominantLatinLanguage();
  if (k < 0 || k === model) return null;
  return { modelLanguage: modelLang, detectedLanguage: PROFILE_LANGUAGES[k], evidence: 'stop-words' };
}
