/**
 * How a word the request sends is found in a model's vocabulary (docs/vocabulary.md "Lookup"):
 * the word NFKC-normalized with default-ignorable code points removed (so a full-width "ｈａｐｐｙ",
 * a soft hyphen or a zero-width joiner inside a word, and NFD "café" all become the ordinary
 * form), then, when that form is not an entry, its folded form (lower-cased, diacritics removed:
 * the autocomplete fold, core/vocab-quality.ts foldKey). Every index's rowOf applies it, so the
 * Worker, the model hosts, the browser and the CLI find the same rows; answers keep the words as
 * the request wrote them.
 */
import { foldKey } from './vocab-quality';

const DEFAULT_IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu;

/** True when every code unit is ASCII: then the key is the word itself and its fold is its lower case. */
function isAscii(word: string): boolean {
  for (let i = 0; i < word.length; i++) if (word.charCodeAt(i) >= 0x80) return false;
  return true;
}

/** The form a word is looked up by: NFKC, default-ignorable code points removed. */
export function lookupKey(word: string): string {
  if (isAscii(word)) return word;
  return word.normalize('NFKC').replace(DEFAULT_IGNORABLE, '');
}

/**
 * Row of `word` by the lookup rule, `entryRow` answering one exact form (its own case rules
 * included); -1 when neither the key nor its folded form is an entry. ASCII words (the common
 * case) cost one lookup, as before: their fold is their lower case, which entryRow already tries.
 */
export function lookupRow(word: string, entryRow: (form: string) => number): number {
  if (isAscii(word)) return entryRow(word);
  const key = lookupKey(word);
  if (key.length === 0) return -1;
  const row = entryRow(key);
  if (row >= 0) return row;
  const folded = foldKey(key);
  return folded !== key && folded !== key.toLowerCase() ? entryRow(folded) : -1;
}
