/**
 * Vocabulary endpoints: autocomplete suggestions, word availabilities, similarity matrices.
 */
import type { VectorIndex } from '../types';
import { hasLetter } from './common';

export const MAX_SUGGESTIONS = 10;

export interface AutocompleteRequest {
  word: string;
  embeddingModelId: string;
  whitelistWords?: string[];
}

/** A non-empty whitelist as a set of trimmed, lower-cased words; null when there is none. */
function allowList(whitelistWords: readonly string[] | undefined): Set<string> | null {
  return whitelistWords && whitelistWords.length > 0 ? new Set(whitelistWords.map((w) => w.trim().toLowerCase())) : null;
}

/**
 * Prefix match on the lower-cased vocabulary, most frequent first, at most 10, entries without
 * a letter never suggested; with a non-empty whitelist only words in it (compared lower-cased).
 */
export function autocomplete(index: VectorIndex, req: AutocompleteRequest): { suggestions: string[] } {
  const prefix = req.word.trim().toLowerCase();
  const allow = allowList(req.whitelistWords);
  const seen = new Set<string>();
  const rows = index.prefixRows(prefix, MAX_SUGGESTIONS, (row) => {
    const w = index.word(row).toLowerCase();
    if (seen.has(w) || !hasLetter(w) || (allow && !allow.has(w))) return false;
    seen.add(w);
    return true;
  });
  return { suggestions: rows.slice(0, MAX_SUGGESTIONS).map((r) => index.word(r).toLowerCase()) };
}

export interface WordAvailabilitiesRequest {
  words: string[];
  whitelistWords?: string[];
}

/** One element per requested word: in the vocabulary, and in the allow-list when one is given. */
export function wordAvailabilities(
  index: VectorIndex,
  req: WordAvailabilitiesRequest,
): { availabilities: Array<{ word: string; isAvailable: boolean }> } {
  const allow = allowList(req.whitelistWords);
  return {
    availabilities: req.words.map((word) => ({
      word,
      isAvailable: index.rowOf(word.trim()) >= 0 && (!allow || allow.has(word.trim().toLowerCase())),
    })),
  };
}

export interface SimilarityMatrixRequest {
  words: string[];
}

const round2 = (x: number): number => {
  const r = Math.round(x * 100) / 100;
  return r === 0 ? 0 : r; // no -0 in JSON-visible output
};

/**
 * Words outside the vocabulary are dropped, and a word repeated in the request is kept once;
 * matrix[i][j] = cos(words[i], words[j]) rounded to two decimals.
 */
export function similarityMatrix(index: VectorIndex, req: SimilarityMatrixRequest): { words: string[]; matrix: number[][] } {
  const words: string[] = [];
  const rows: number[] = [];
  const seen = new Set<string>();
  for (const w of req.words) {
    if (seen.has(w)) continue;
    seen.add(w);
    const r = index.rowOf(w.trim());
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
  return { words, matrix };
}
