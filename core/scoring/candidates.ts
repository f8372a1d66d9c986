/**
 * The one filter that decides which vocabulary rows may be offered as words (find-and-score
 * candidates, seed expansion). Every caller goes through candidateFilter, so a new rule (e.g.
 * vocabulary flags in the artifact) is added here once.
 *
 * Rules: the row is within the frequency cutoff, its entry contains a letter, it is not
 * excluded (seed rows, seed words compared lower-cased) and, when a WordLexicon is given, the
 * entry is one token of the language, not a stop word, and a dictionary word (the entry or its
 * lemma is a known lemma/form of the language data). Always: the vocabulary flags of the
 * artifact (core/vocab-quality.ts passesQualityFilter: no stop words, pronouns, auxiliaries,
 * numbers, one/two-letter entries or non-dictionary words, the seeds' part of speech where
 * known; with no cutoff only stop words, pronouns and entries without a letter are skipped).
 */
import { passesQualityFilter } from '../vocab-quality';
import { tokenize, type LanguageData } from '../tokenizer';
import { FLAG } from '../tokenizer/data';
import type { VectorIndex } from '../types';
import { hasLetter } from './common';

/** What the filter knows about a word from the language data. */
export interface WordLexicon {
  /** null when the entry is not a single token of the language (e.g. "u.s.-led"). */
  info(word: string): { stop: boolean; known: boolean } | null;
}

const lexicons = new WeakMap<LanguageData, WordLexicon>();

/**
 * A WordLexicon on the tokenizer's language data: the entry tokenized alone. One object per
 * language data, so caches keyed by the lexicon (common.ts expansions) hold across requests.
 */
export function languageLexicon(data: LanguageData): WordLexicon {
  let lexicon = lexicons.get(data);
  if (!lexicon) lexicons.set(data, (lexicon = wordLexicon(data)));
  return lexicon;
}

function wordLexicon(data: LanguageData): WordLexicon {
  return {
    info(word: string) {
      const tokens = tokenize(word, data, { synonyms: false }).tokens;
      if (tokens.length !== 1) return null;
      const t = tokens[0];
      const known = data.has(t.token, FLAG.KNOWN) || data.has(word.toLowerCase(), FLAG.KNOWN);
      return { stop: t.isStop, known };
    },
  };
}

export interface CandidateFilterOptions {
  /** Only rows < cutoff (modelRank <= cutoff); undefined: no cutoff. */
  cutoff?: number;
  excludedRows?: ReadonlySet<number>;
  /** Lower-cased words never offered. */
  excludedWords?: ReadonlySet<string>;
  lexicon?: WordLexicon;
  /** Parts of speech of the seeds (core/vocab-quality.ts POS_MASK bits); 0: any. */
  seedPos?: number;
}

export interface CandidateFilter {
  /** Rows below this are eligible by frequency (the vocabulary size when there is no cutoff). */
  available: number;
  cutoff: number | undefined;
  /** The non-frequency rules for one row (the caller keeps to `available`). */
  accept(row: number): boolean;
}

export function candidateFilter(index: VectorIndex, options: CandidateFilterOptions = {}): CandidateFilter {
  const { cutoff, excludedRows, excludedWords, lexicon, seedPos } = options;
  return {
    available: cutoff !== undefined ? Math.min(cutoff, index.size) : index.size,
    cutoff,
    accept(row: number): boolean {
      if (excludedRows?.has(row)) return false;
      if (!passesQualityFilter(index, row, { rankLimit: cutoff ?? -1, seedPos })) return false;
      const w = index.word(row);
      if (!hasLetter(w)) return false;
      if (excludedWords?.has(w.toLowerCase())) return false;
      if (lexicon) {
        const info = lexicon.info(w);
        if (!info || info.stop || !info.known) return false;
      }
      return true;
    },
  };
}
