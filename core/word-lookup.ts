/**
 * How a word the request sends is found in a model's vocabulary (docs/vocabulary.md "Lookup"):
 * the word itself when it is an entry, else the word NFKC-normalized with default-ignorable code
 * points removed (so a full-width "ｈａｐｐｙ",
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
 * included): the word itself, else its key, else the key's folded form; -1 when none is an entry.
 * ASCII words (the common case) cost one lookup, as before: their key is themselves and their
 * fold their lower case, which entryRow already tries.
 */
export function lookupRow(word: string, entryRow: (form: string) => number): number {
  // The word as sent first: a vocabulary may hold an entry in a form NFKC changes ("ǅemal").
  const row = entryRow(word);
  if (row >= 0 || isAscii(word)) return row;
  const key = lookupKey(word);
  if (key.length === 0) return -1;
  const keyRow = key === word ? -1 : entryRow(key);
  if (keyRow >= 0) return keyRow;
  const folded = foldKey(key);
  return folded !== key && folded !== key.toLowerCase() ? entryRow(folded) : -1;
}
