/**
 * Verification of candidate sources: maximal runs of at least MIN_RUN_WORDS consecutive
 * normalized words shared by the input and a source, compared word by word; the input words
 * they cover; and the snippet shown to the user.
 */
import { MIN_RUN_WORDS, ngramHashes } from './fingerprint';
import { splitWords, type Word } from './text';

export interface Run {
  /** Index of the run's first word in the input. */
  inputStart: number;
  /** Index of the run's first word in the source. */
  sourceStart: number;
  /** Number of words (>= the minimum run). */
  length: number;
}

/**
 * Every maximal run of at least `minRun` equal consecutive words between input and source
 * (one per alignment: a run that repeats elsewhere in the source is reported at each place).
 * Runs are ordered by inputStart, then sourceStart.
 */
export function findRuns(
  input: readonly string[],
  source: readonly string[],
  minRun: number = MIN_RUN_WORDS,
  /** ngramHashes(input, minRun) when the caller already has them. */
  inputHashes?: readonly number[],
): Run[] {
  if (input.length < minRun || source.length < minRun) return [];
  // Index the source's minRun-grams by hash; every hit is then verified word by word.
  const index = new Map<number, number[]>();
  const sourceHashes = ngramHashes(source, minRun);
  for (let j = 0; j < sourceHashes.length; j++) {
    const list = index.get(sourceHashes[j]);
    if (list) list.push(j);
    else index.set(sourceHashes[j], [j]);
  }
  inputHashes ??= ngramHashes(input, minRun);
  // Per diagonal (sourceStart - inputStart): the input index where the last run found on it ends.
  const diagonalEnd = new Map<number, number>();
  const runs: Run[] = [];
  for (let i = 0; i < inputHashes.length; i++) {
    const hits = index.get(inputHashes[i]);
    if (!hits) continue;
    for (const j of hits) {
      const d = j - i;
      if ((diagonalEnd.get(d) ?? -1) > i) continue; // inside a run already found
      let len = 0;
      while (i + len < input.length && j + len < source.length && input[i + len] === source[j + len]) len++;
      if (len < minRun) continue; // hash collision, not a real match
      // Scanning i upward, the first hit on a diagonal is the start of a maximal run:
      // had the previous word matched too, the previous n-gram would have hit first.
      runs.push({ inputStart: i, sourceStart: j, length: len });
      diagonalEnd.set(d, i + len);
    }
  }
  return runs;
}

/** Number of distinct input words covered by the runs. */
export function coveredWords(runs: readonly Run[], inputLength: number): number {
  const covered = new Uint8Array(inputLength);
  let n = 0;
  for (const r of runs) {
    for (let i = r.inputStart; i < r.inputStart + r.length; i++) {
      if (!covered[i]) {
        covered[i] = 1;
        n++;
      }
    }
  }
  return n;
}

export const SNIPPET_CONTEXT_WORDS = 20;

/**
 * The source passage of a run with `context` words either side, cut from the original
 * source text (white space collapsed to single spaces); an ellipsis marks each side where the
 * source goes on. The matched words themselves are always complete.
 */
export function buildSnippet(
  sourceText: string,
  sourceWords: readonly Word[],
  run: Run,
  context: number = SNIPPET_CONTEXT_WORDS,
): string {
  const first = Math.max(0, run.sourceStart - context);
  const last = Math.min(sourceWords.length - 1, run.sourceStart + run.length - 1 + context);
  const body = sourceText.slice(sourceWords[first].start, sourceWords[last].end).replace(/\s+/gu, ' ');
  return `${first > 0 ? '… ' : ''}${body}${last < sourceWords.length - 1 ? ' …' : ''}`;
}

export interface SourceMatch {
  wordsMatched: number;
  /** 100 * wordsMatched / input word count, rounded to two decimals. */
  matchPercentage: number;
  matchSnippet: string;
  runs: Run[];
}

/** Rounds a percentage to two decimals without ever exceeding 100. */
export function percentage(part: number, whole: number): number {
  if (whole <= 0) return 0;
  return Math.min(100, Math.round((10000 * part) / whole) / 100);
}

/** An input prepared once for comparison with many sources: its normalized words and their MIN_RUN_WORDS-gram hashes. */
export interface MatchInput {
  words: readonly Word[];
  norms: readonly string[];
  hashes: readonly number[];
}

export function matchInput(words: readonly Word[]): MatchInput {
  const norms = words.map((w) => w.norm);
  return { words, norms, hashes: ngramHashes(norms, MIN_RUN_WORDS) };
}

/**
 * Compares an input (already split, or prepared by matchInput when it is compared with several
 * sources) with one source text; null when they share no run of MIN_RUN_WORDS words. The
 * snippet shows the source around its longest run.
 */
export function matchSource(input: readonly Word[] | MatchInput, sourceText: string, sourceWords?: readonly Word[]): SourceMatch | null {
  const prepared = 'norms' in input ? input : matchInput(input);
  const inputWords = prepared.words;
  const words = sourceWords ?? splitWords(sourceText);
  const runs = findRuns(
    prepared.norms,
    words.map((w) => w.norm),
    MIN_RUN_WORDS,
    prepared.hashes,
  );
  if (runs.length === 0) return null;
  let longest = runs[0];
  for (const r of runs) if (r.length > longest.length) longest = r;
  const wordsMatched = coveredWords(runs, inputWords.length);
  return {
    wordsMatched,
    matchPercentage: percentage(wordsMatched, inputWords.length),
    matchSnippet: buildSnippet(sourceText, words, longest),
    runs,
  };
}

export interface RankedMatch {
  url: string;
  wordsMatched: number;
}

/** The interface's order: wordsMatched descending; ties by url so the order is stable. */
export function compareMatches(a: RankedMatch, b: RankedMatch): number {
  return b.wordsMatched - a.wordsMatched || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0);
}
