/**
 * Reading a text around its tokens: the gap characters (clause and sentence breaks, "!"), what a
 * text holds (seenIn / seenInText) and the clause structure (readGaps, clauseAt). Most gaps are
 * one space, so most of a text is never read here.
 */
import { S_SEEN_MASK, S_SEEN_SHIFT, SEEN_BANG, SEEN_BANG_WIDE } from './bits';
import type { CompiledComposition } from './compile';

// Gap characters between tokens (bits of gapClass): clause breaks . , ; : ! ? ( ) [ ] { } " “ ” « » „ … 、 。 ！ ？ ， ； ：,
// sentence breaks . ! ? … 。 ！ ？ and the line feed, exclamation marks ! ！.
const GAP_CLAUSE = 1;
const GAP_SENTENCE = 2;
const GAP_BANG = 4;
const GAP_ASCII = new Uint8Array(128);
for (const ch of '.,;:!?()[]{}"') GAP_ASCII[ch.charCodeAt(0)] |= GAP_CLAUSE;
for (const ch of '.!?\n') GAP_ASCII[ch.charCodeAt(0)] |= GAP_SENTENCE;
GAP_ASCII[0x21] |= GAP_BANG;

function gapClass(c: number): number {
  if (c < 128) return GAP_ASCII[c];
  switch (c) {
    case 0x201c: // “
    case 0x201d: // ”
    case 0xab: // «
    case 0xbb: // »
    case 0x201e: // „
    case 0x3001: // 、
    case 0xff0c: // ，
    case 0xff1b: // ；
    case 0xff1a: // ：
      return GAP_CLAUSE;
    case 0x2026: // …
    case 0x3002: // 。
    case 0xff1f: // ？
      return GAP_CLAUSE | GAP_SENTENCE;
    case 0xff01: // ！
      return GAP_CLAUSE | GAP_SENTENCE | GAP_BANG;
    default:
      return 0;
  }
}

/** SEEN_* bits of text[from, to). */
export function seenIn(rules: CompiledComposition, text: string, from: number, to: number): number {
  let seen = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k);
    if (c < 128) seen |= rules.asciiSeen[c];
    else if (c >= rules.highFrom) seen |= rules.highSeen;
  }
  return seen;
}

/**
 * SEEN_* bits of a text from its tokens' forms (their summary) and the gaps between them: most
 * gaps are one space, so most of the text is never read here.
 */
export function seenInText(
  rules: CompiledComposition,
  text: string,
  n: number,
  starts: Int32Array,
  ends: Int32Array,
  summary: number,
): number {
  let seen = (summary >>> S_SEEN_SHIFT) & S_SEEN_MASK;
  let from = 0;
  for (let i = 0; i <= n; i++) {
    const to = i === n ? text.length : starts[i];
    if (!isPlainGap(text, from, to)) seen |= seenIn(rules, text, from, to);
    if (i < n) from = ends[i];
  }
  if (seen & SEEN_BANG_WIDE) {
    seen &= ~SEEN_BANG_WIDE;
    if (text.indexOf('\uff01') >= 0) seen |= SEEN_BANG;
  }
  return seen;
}

/** Longest run of ASCII letters in text[from, to). */
export function asciiLetterRun(text: string, from: number, to: number): number {
  let best = 0;
  let run = 0;
  for (let k = from; k < to; k++) {
    const c = text.charCodeAt(k) | 0x20;
    run = c >= 0x61 && c <= 0x7a ? run + 1 : 0;
    if (run > best) best = run;
  }
  return best;
}

/** No gap, or one space, between two tokens: no break and no symbol (the common case, checked cheaply). */
export const isPlainGap = (text: string, from: number, to: number): boolean =>
  to - from <= 1 && (to === from || text.charCodeAt(from) === 32);

export const isSpace = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || c === 0x2028 || c === 0x2029 || c === 0x85;

/**
 * Every gap of the text: clauseBefore (a clause or sentence break before the token) and sentenceOf
 * per token; returns the "!" count of the gap that ends each sentence.
 */
export function readGaps(
  text: string,
  n: number,
  starts: Int32Array,
  ends: Int32Array,
  clauseBefore: Uint8Array,
  sentenceOf: Int32Array,
): number[] {
  const bangs: number[] = [];
  let sentence = 0;
  for (let i = 0; i <= n; i++) {
    const from = i === 0 ? 0 : ends[i - 1];
    const to = i === n ? text.length : starts[i];
    clauseBefore[i] = 0;
    if (isPlainGap(text, from, to)) {
      if (i < n) sentenceOf[i] = sentence;
      continue;
    }
    let gap = 0;
    let gapBangs = 0;
    for (let k = from; k < to; k++) {
      const g = gapClass(text.charCodeAt(k));
      gap |= g;
      if (g & GAP_BANG) gapBangs++;
    }
    if (i > 0 && gap & GAP_CLAUSE) clauseBefore[i] = 1;
    if (i > 0 && gap & GAP_SENTENCE) {
      bangs.push(gapBangs);
      sentence++;
      clauseBefore[i] = 1;
    }
    if (i < n) sentenceOf[i] = sentence;
  }
  if (bangs.length === sentence) bangs.push(0);
  return bangs;
}

/**
 * Whether a clause or sentence break comes before token j (j < n): from readGaps' array when
 * eager (where a contrast word also sets one), else from the gap; none before the first token.
 */
export function clauseAt(
  text: string,
  starts: Int32Array,
  ends: Int32Array,
  clauseBefore: Uint8Array,
  eager: boolean,
  j: number,
): boolean {
  if (j === 0) return false;
  if (eager) return clauseBefore[j] === 1;
  const from = ends[j - 1];
  const to = starts[j];
  if (isPlainGap(text, from, to)) return false;
  for (let k = from; k < to; k++) if (gapClass(text.charCodeAt(k)) & (GAP_CLAUSE | GAP_SENTENCE)) return true;
  return false;
}

/** The scored tokens before negator i in its clause, at most NEGATION_SCOPE of them, take one negation more. */

/** First of the n tokens starting at or after `pos`. */
export function lowerBound(starts: Int32Array, n: number, pos: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
