/**
 * Verification of candidate sources: runs of at least MIN_RUN_WORDS consecutive normalized
 * words shared by the input and a source, compared word by word; the input words they cover;
 * and the snippet shown to the user: the longest run as written in the source. Linear in input
 * plus source length (a suffix automaton of the input), also on repetitive texts.
 */
import { MIN_RUN_WORDS } from './fingerprint';
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
 * Suffix automaton of a word sequence (Blumer et al. 1985; Crochemore's matching statistics):
 * every substring of the input is a path from state 0, and states are classes of substrings
 * with the same end positions. Built in O(n) for the input once; each source is then streamed
 * through it in O(m), so a check costs O(n + m) per source however repetitive the texts are
 * (comparing alignments, as n-gram hits per diagonal do, is O(n * m) on "a a a ..." x 50,000).
 */
export class WordAutomaton {
  /** Word -> symbol (a Map: the words are user text). */
  private readonly symbols = new Map<string, number>();
  /** Longest string of each state (words). */
  private readonly len: number[] = [0];
  /** Suffix link of each state (-1 for the root). */
  private readonly link: number[] = [-1];
  /** Transitions keyed by state * symbolCount + symbol. */
  private readonly next = new Map<number, number>();
  /** Per state, its transitions' symbols as a linked list (first edge, next edge, edge symbol) for cloning. */
  private readonly edgeHead: number[] = [-1];
  private readonly edgeNext: number[] = [];
  private readonly edgeSym: number[] = [];
  private readonly symbolCount: number;
  /** State reached by the whole prefix input[0..e] (the longest string ending at e). */
  readonly prefixState: Int32Array;
  /** States ordered by len ascending (counting sort). */
  private readonly byLen: Int32Array;

  constructor(readonly words: readonly string[]) {
    for (const w of words) if (!this.symbols.has(w)) this.symbols.set(w, this.symbols.size);
    this.symbolCount = Math.max(1, this.symbols.size);
    this.prefixState = new Int32Array(words.length);
    let last = 0;
    for (let e = 0; e < words.length; e++) {
      last = this.extend(last, this.symbols.get(words[e])!);
      this.prefixState[e] = last;
    }
    const states = this.len.length;
    const count = new Int32Array(words.length + 2);
    for (let v = 0; v < states; v++) count[this.len[v] + 1]++;
    for (let i = 1; i < count.length; i++) count[i] += count[i - 1];
    this.byLen = new Int32Array(states);
    for (let v = 0; v < states; v++) this.byLen[count[this.len[v]]++] = v;
  }

  get stateCount(): number {
    return this.len.length;
  }

  private go(v: number, c: number): number | undefined {
    return this.next.get(v * this.symbolCount + c);
  }

  private setGo(v: number, c: number, to: number): void {
    const key = v * this.symbolCount + c;
    if (!this.next.has(key)) {
      this.edgeNext.push(this.edgeHead[v]);
      this.edgeSym.push(c);
      this.edgeHead[v] = this.edgeSym.length - 1;
    }
    this.next.set(key, to);
  }

  private newState(len: number, link: number): number {
    this.len.push(len);
    this.link.push(link);
    this.edgeHead.push(-1);
    return this.len.length - 1;
  }

  private extend(last: number, c: number): number {
    const cur = this.newState(this.len[last] + 1, 0);
    let p = last;
    while (p !== -1 && this.go(p, c) === undefined) {
      this.setGo(p, c, cur);
      p = this.link[p];
    }
    if (p === -1) return cur;
    const q = this.go(p, c)!;
    if (this.len[p] + 1 === this.len[q]) {
      this.link[cur] = q;
      return cur;
    }
    const clone = this.newState(this.len[p] + 1, this.link[q]);
    for (let e = this.edgeHead[q]; e !== -1; e = this.edgeNext[e])
      this.setGo(clone, this.edgeSym[e], this.go(q, this.edgeSym[e])!);
    while (p !== -1 && this.go(p, c) === q) {
      this.setGo(p, c, clone);
      p = this.link[p];
    }
    this.link[q] = clone;
    this.link[cur] = clone;
    return cur;
  }

  /**
   * For every input position e, the length of the longest run of words ending at e that also
   * occurs in `source` (0 when none), and for the longest of them where it first occurs in the
   * source. O(source length + input length).
   */
  matchSource(source: readonly string[]): { endingAt: Int32Array; state: Int32Array; firstEnd: Int32Array } {
    const states = this.len.length;
    const best = new Int32Array(states);
    const firstEnd = new Int32Array(states).fill(-1);
    let v = 0;
    let l = 0;
    for (let j = 0; j < source.length; j++) {
      const c = this.symbols.get(source[j]);
      if (c === undefined) {
        v = 0;
        l = 0;
        continue;
      }
      // Longest suffix of source[..j] that is an input substring, extended by source[j].
      while (v !== 0 && this.go(v, c) === undefined) {
        v = this.link[v];
        l = this.len[v];
      }
      const to = this.go(v, c);
      if (to === undefined) {
        v = 0;
        l = 0;
        continue;
      }
      v = to;
      l++;
      if (l > best[v]) {
        best[v] = l;
        firstEnd[v] = j;
      }
    }
    // A matched string's suffixes match too: its suffix-link ancestors match in full.
    for (let i = states - 1; i > 0; i--) {
      const w = this.byLen[i];
      const p = this.link[w];
      if (best[w] > 0 && p > 0 && best[p] < this.len[p]) {
        best[p] = this.len[p];
        firstEnd[p] = -1; // not needed: a propagated state never holds the longest run
      }
    }
    // Deepest matched state on each state's suffix-link path (states by len ascending: parents first).
    const deepest = new Int32Array(states);
    for (let i = 1; i < states; i++) {
      const w = this.byLen[i];
      deepest[w] = best[w] > 0 ? w : deepest[this.link[w]];
    }
    const n = this.prefixState.length;
    const endingAt = new Int32Array(n);
    const state = new Int32Array(n);
    for (let e = 0; e < n; e++) {
      const d = deepest[this.prefixState[e]];
      state[e] = d;
      endingAt[e] = best[d];
    }
    return { endingAt, state, firstEnd };
  }
}

/**
 * The input words covered by runs of at least `minRun` words shared with the source, and the
 * longest such run (the first in the input on ties, at its first place in the source); null when
 * there is no run. Linear in input plus source length.
 */
export function sharedRuns(
  input: readonly string[] | WordAutomaton,
  source: readonly string[],
  minRun: number = MIN_RUN_WORDS,
): { wordsMatched: number; longest: Run } | null {
  const automaton = input instanceof WordAutomaton ? input : new WordAutomaton(input);
  const n = automaton.words.length;
  if (n < minRun || source.length < minRun) return null;
  const { endingAt, state, firstEnd } = automaton.matchSource(source);
  // Position p is covered when a run [e - endingAt[e] + 1, e] with e >= p starts at or before p.
  let wordsMatched = 0;
  let minStart = Number.POSITIVE_INFINITY;
  for (let p = n - 1; p >= 0; p--) {
    if (endingAt[p] >= minRun) minStart = Math.min(minStart, p - endingAt[p] + 1);
    if (minStart <= p) wordsMatched++;
  }
  if (wordsMatched === 0) return null;
  let e = -1;
  for (let p = 0; p < n; p++) if (endingAt[p] >= minRun && (e < 0 || endingAt[p] > endingAt[e])) e = p;
  const length = endingAt[e];
  return {
    wordsMatched,
    longest: { inputStart: e - length + 1, sourceStart: firstEnd[state[e]] - length + 1, length },
  };
}

/**
 * Words of the source shown on each side of the matched passage by default: none. The local
 * provider's corpus is the operator's and private, so a snippet is the matched passage alone (a
 * checker learns nothing of a page beyond the words it sent); an operator with a public corpus
 * configures context words (PLAGIARISM_SNIPPET_CONTEXT_WORDS, worker/plagiarism/provider.ts).
 */
export const DEFAULT_SNIPPET_CONTEXT_WORDS = 0;
/** The most context words an operator may configure on each side. */
export const MAX_SNIPPET_CONTEXT_WORDS = 200;

/**
 * The source passage of a run, cut from the original source text (white space collapsed to
 * single spaces), with `context` words either side; with context, an ellipsis marks each side
 * where the source goes on. The matched words themselves are always complete, as written in the
 * source (their punctuation and case included); with no context the snippet is exactly them.
 */
export function buildSnippet(
  sourceText: string,
  sourceWords: readonly Word[],
  run: Run,
  context: number = DEFAULT_SNIPPET_CONTEXT_WORDS,
): string {
  const first = Math.max(0, run.sourceStart - context);
  const last = Math.min(sourceWords.length - 1, run.sourceStart + run.length - 1 + context);
  const body = sourceText.slice(sourceWords[first].start, sourceWords[last].end).replace(/\s+/gu, ' ');
  if (context <= 0) return body;
  return `${first > 0 ? '… ' : ''}${body}${last < sourceWords.length - 1 ? ' …' : ''}`;
}

export interface SourceMatch {
  wordsMatched: number;
  /** 100 * wordsMatched / input word count, rounded to two decimals. */
  matchPercentage: number;
  matchSnippet: string;
  /** The longest shared run (the snippet shows it, as written in the source). */
  longest: Run;
}

/** Rounds a percentage to two decimals without ever exceeding 100. */
export function percentage(part: number, whole: number): number {
  if (whole <= 0) return 0;
  return Math.min(100, Math.round((10000 * part) / whole) / 100);
}

/** An input prepared once for comparison with many sources: its normalized words and their suffix automaton. */
export interface MatchInput {
  words: readonly Word[];
  norms: readonly string[];
  automaton: WordAutomaton;
}

export function matchInput(words: readonly Word[]): MatchInput {
  const norms = words.map((w) => w.norm);
  return { words, norms, automaton: new WordAutomaton(norms) };
}

/**
 * Compares an input (already split, or prepared by matchInput when it is compared with several
 * sources) with one source text; null when they share no run of MIN_RUN_WORDS words. The
 * snippet is the source's longest run, with `contextWords` words of the source either side.
 */
export function matchSource(
  input: readonly Word[] | MatchInput,
  sourceText: string,
  sourceWords?: readonly Word[],
  contextWords: number = DEFAULT_SNIPPET_CONTEXT_WORDS,
): SourceMatch | null {
  const prepared = 'norms' in input ? input : matchInput(input);
  const inputWords = prepared.words;
  const words = sourceWords ?? splitWords(sourceText);
  const shared = sharedRuns(
    prepared.automaton,
    words.map((w) => w.norm),
    MIN_RUN_WORDS,
  );
  if (!shared) return null;
  return {
    wordsMatched: shared.wordsMatched,
    matchPercentage: percentage(shared.wordsMatched, inputWords.length),
    matchSnippet: buildSnippet(sourceText, words, shared.longest, contextWords),
    longest: shared.longest,
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
