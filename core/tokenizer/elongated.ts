/**
 * Lengthened words ("sooo", "goood", "loooove"): the word of the language data they stand for.
 */
import { FLAG, POS_FLAGS, type LanguageData } from './data';
import { capitalize } from '../vocab-quality';

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
export function knownWord(data: LanguageData, index: number): boolean {
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
export function unelongated(data: LanguageData, string: string, lower: string): string | null {
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
