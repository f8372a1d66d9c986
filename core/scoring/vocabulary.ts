/**
 * Vocabulary endpoints: autocomplete suggestions, word availabilities, similarity matrices.
 */
import { LIMITS } from '../limits';
import type { AutocompleteRequest, SimilarityMatrixRequest, WordAvailabilitiesRequest } from '../requests';
import type { AutocompleteResponse, SimilarityMatrixResponse, WordAvailabilitiesResponse } from '../responses';
import type { VectorIndex } from '../types';
import { lookupKey } from '../word-lookup';
import { capitalize, displayCase, foldKey, isDictionaryRow, isJunk, VOCAB_FLAG } from '../vocab-quality';
import { hasLetter, scoredRow } from './common';

export type { AutocompleteRequest, SimilarityMatrixRequest, WordAvailabilitiesRequest };

const MAX_SUGGESTIONS = LIMITS.autocompleteSuggestions;

/** A non-empty whitelist as a set of trimmed, lower-cased words; null when there is none. */
/** Allow-list entries and words compare by lookup key, lower-cased ("ｈａｐｐｙ" is "happy"). */
const allowKey = (w: string): string => lookupKey(w.trim()).toLowerCase();

function allowList(whitelistWords: readonly string[] | undefined): Set<string> | null {
  return whitelistWords && whitelistWords.length > 0 ? new Set(whitelistWords.map(allowKey)) : null;
}

/** Position the typed word itself is moved up to when it is a suggestion further down (0-based). */
export const EXACT_WORD_POSITION = 2;

/**
 * How much rarer an inflected form of a shown lemma ranks: "soldie" -> soldier, soldiers (rank
 * 630, far above soldiering); "sus" -> suspect, ..., sustainable before suspected and suspended.
 * Chosen on bench:vocab's frequency-list words (docs/vocabulary.md "Autocomplete").
 */
export const FORM_DISCOUNT = 5;

/**
 * Completions of a prefix (docs/vocabulary.md "Autocomplete"): entries whose folded form
 * (lower-cased, diacritics removed: "cafe" finds "café", "é" finds é and e) starts with the folded
 * prefix; no junk (entries without a letter, rare non-words), no stop words, pronouns or
 * auxiliaries; at most 10. Order, each tier most frequent first (the model's frequency rank):
 *   1. with a leading capital typed, proper nouns and acronyms ("Ber" -> Berlin, Bernard, ...);
 *   2. dictionary words by frequency, where an inflected form of a lemma that is itself a
 *      suggestion ranks as if FORM_DISCOUNT times rarer, so a lemma is not crowded out by its
 *      forms ("sus" -> suspect, suspension, sustainable before suspected, suspended) while a
 *      much more frequent form still comes early ("soldie" -> soldier, soldiers); a form whose
 *      lemma does not match the prefix keeps its own place ("plann" -> planning, planned);
 *   3. frequent non-dictionary entries.
 * The typed word itself, when it is a suggestion, is moved up to the third place at least.
 * Each suggestion in the casing a person expects (proper nouns capitalized, acronyms in capitals),
 * with the user's leading capital kept. With a non-empty whitelist: only words in it (compared
 * lower-cased), most frequent first, and only entries without a letter are skipped.
 */
export function autocomplete(index: VectorIndex, req: AutocompleteRequest): AutocompleteResponse {
  // The prefix is a lookup key too: a full-width or NFD prefix completes as the ordinary one.
  const prefix = lookupKey(req.word.trim());
  const allow = allowList(req.whitelistWords);
  const userCapital = /^\p{Lu}/u.test(prefix);
  const typed = foldKey(prefix);
  // Tiers 1-3 (see above; inflected forms collected apart for the discount); rows come in
  // frequency order, so each list is too.
  const tiers: number[][] = [[], [], [], []];
  const seen = new Set<string>();
  let exact = -1;
  for (const r of index.foldedPrefixRows(prefix)) {
    // Tier 1 or 2 full: nothing later can be shown before them.
    if (tiers[0]!.length + tiers[1]!.length >= MAX_SUGGESTIONS) break;
    const entry = index.word(r);
    const lower = entry.toLowerCase();
    const f = index.flags(r);
    if (allow) {
      if (!allow.has(allowKey(entry)) || !hasLetter(entry)) continue;
    } else if (isJunk(index, r) || f & (VOCAB_FLAG.STOP | VOCAB_FLAG.FUNCTION)) continue;
    if (seen.has(lower)) continue;
    seen.add(lower);
    let tier: number;
    if (allow) tier = 1;
    else if (!isDictionaryRow(index, r)) tier = 3;
    else if (userCapital && f & (VOCAB_FLAG.PROPER | VOCAB_FLAG.ACRONYM)) tier = 0;
    else tier = f & VOCAB_FLAG.INFLECTED ? 2 : 1;
    if (exact < 0 && foldKey(lower) === typed) exact = r;
    const t = tiers[tier]!;
    if (t.length < MAX_SUGGESTIONS) t.push(r);
  }
  const [named, lemmas, forms, others] = tiers as [number[], number[], number[], number[]];
  // Frequency order (the row is the frequency rank), but a form of a lemma that is itself a
  // suggestion ranks as if FORM_DISCOUNT times rarer: it adds little beside its lemma. Its lemma
  // is a shown lemma it starts with, whole or without its last letter (plan -> planned, study ->
  // studied).
  const shown = lemmas.map((r) => foldKey(index.word(r)));
  const ofShownLemma = (w: string) =>
    shown.some((l) => w.startsWith(l) || (l.length >= 4 && w.startsWith(l.slice(0, -1))));
  const rank = new Map<number, number>(lemmas.map((r) => [r, r + 1]));
  for (const r of forms) rank.set(r, ofShownLemma(foldKey(index.word(r))) ? (r + 1) * FORM_DISCOUNT : r + 1);
  // A stable sort: on equal ranks, lemmas (inserted first) stay ahead.
  const ranked = [...rank.keys()].sort((a, b) => rank.get(a)! - rank.get(b)!);
  const rows = [...named, ...ranked, ...others].slice(0, MAX_SUGGESTIONS);
  if (exact >= 0) {
    const at = rows.indexOf(exact);
    if (at < 0 || at > EXACT_WORD_POSITION) {
      if (at >= 0) rows.splice(at, 1);
      else if (rows.length >= MAX_SUGGESTIONS) rows.pop();
      rows.splice(Math.min(EXACT_WORD_POSITION, rows.length), 0, exact);
    }
  }
  return {
    suggestions: rows.map((r) => {
      const shown = displayCase(index.word(r), index.flags(r));
      return userCapital ? capitalize(shown) : shown;
    }),
  };
}

/** One element per requested word: in the vocabulary, and in the allow-list when one is given. */
export function wordAvailabilities(index: VectorIndex, req: WordAvailabilitiesRequest): WordAvailabilitiesResponse {
  const allow = allowList(req.whitelistWords);
  return {
    availabilities: req.words.map((word) => ({
      word,
      isAvailable: index.rowOf(word.trim()) >= 0 && (!allow || allow.has(allowKey(word))),
    })),
  };
}

const round2 = (x: number): number => {
  const r = Math.round(x * 100) / 100;
  return r === 0 ? 0 : r; // no -0 in JSON-visible output
};

/**
 * Words outside the vocabulary are dropped (composed instead with subwordFallback on a model with
 * a sub-word table), and a word repeated in the request is kept once;
 * matrix[i][j] = cos(words[i], words[j]) rounded to two decimals.
 */
export function similarityMatrix(index: VectorIndex, req: SimilarityMatrixRequest): SimilarityMatrixResponse {
  const words: string[] = [];
  const rows: number[] = [];
  const seen = new Set<string>();
  for (const w of req.words) {
    if (seen.has(w)) continue;
    seen.add(w);
    const r = scoredRow(index, w.trim());
    if (r < 0) continue;
    words.push(w);
    rows.push(r);
  }
  const n = rows.length;
  const flat = n > 0 ? index.similarityMatrix(Int32Array.from(rows)) : new Float32Array(0);
  const matrix: number[][] = [];
  for (let i = 0; i < n; i++) {
    const row: number[] = new Array(n);
    for (let j = 0; j < n; j++) row[j] = round2(flat[i * n + j]);
    matrix.push(row);
  }
  if (!req.subwordFallback) return { words, matrix };
  // subwordFallback: which words were composed (rows past the vocabulary).
  return { words, matrix, composedWords: words.filter((_, i) => rows[i]! >= index.size) };
}
