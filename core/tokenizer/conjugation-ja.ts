/**
 * Japanese conjugation: the pieces of a conjugated word as IPADIC cuts them, and its dictionary
 * form. The language file holds IPADIC's conjugated forms of every verb and i-adjective with
 * their dictionary form as lemma (FLAG.VERB / FLAG.ADJ), the na-adjective stems (FLAG.ADJ) and
 * the auxiliaries' forms (meta.conjugation; build/lang/ipadic.ts). TinySegmenter mostly cuts
 * the IPADIC way (楽しかっ|た, 食べ|ませ|ん); two corrections fix where it does not:
 *
 *   merge: pieces that together spell one conjugated form (美味|しかっ -> 美味しかっ,
 *          分|から -> 分から, つまら|ない -> つまらない: the longest form wins, as in IPADIC);
 *   split: a piece that is no word but a conjugated word followed by auxiliaries is cut after the
 *          word and after each auxiliary (読まれる -> 読ま|れる, 好きじゃ -> 好き|じゃ), so a
 *          negative auxiliary (ない, なかっ, ず, ぬ, ませ|ん) is a token of its own, which the
 *          composition's negators see.
 *
 * dictionaryForm gives the form scoring looks a token up by (楽しかっ -> 楽しい); the token
 * itself stays the surface form, as the interface says.
 */
import { FLAG, type LanguageData } from './data';
import type { Span } from './segment';

/** A conjugated verb or adjective form, or a na-adjective stem. */
const PREDICATE = FLAG.VERB | FLAG.ADJ;
/** At most this many pieces after the first are merged, into a form of at most MERGE_MAX_LENGTH characters. */
const MERGE_PIECES = 3;
const MERGE_MAX_LENGTH = 10;
/** Pieces longer than this are not split (no conjugated word with its auxiliaries is longer). */
const SPLIT_MAX_LENGTH = 16;
const HIRAGANA = /^\p{Script=Hiragana}+$/u;

function isPredicate(data: LanguageData, s: string): boolean {
  return (data.flagsOf(data.find(s)) & PREDICATE) !== 0;
}

/** The dictionary form of a conjugated verb or i-adjective form (楽しかっ -> 楽しい), else null. */
export function dictionaryForm(data: LanguageData, index: number): string | null {
  return data.flagsOf(index) & PREDICATE ? data.lemmaOf(index) : null;
}

/** Both corrections over the spans of one run of Japanese script. */
export function conjugationPieces(text: string, spans: Span[], data: LanguageData): Span[] {
  if (data.auxiliaries.size === 0) return spans;
  return splitAuxiliaries(text, mergeConjugatedPieces(text, spans, data), data);
}

/**
 * Merge: from a first piece that is not a hiragana stop word (は|いる is a particle and a verb,
 * not はいる), the longest run of up to MERGE_PIECES hiragana pieces after it that spells a
 * conjugated form with it.
 */
function mergeConjugatedPieces(text: string, spans: Span[], data: LanguageData): Span[] {
  const out: Span[] = [];
  for (let i = 0; i < spans.length; i++) {
    const head = spans[i]!;
    const headText = text.slice(head.start, head.end);
    let last = -1;
    if (!(HIRAGANA.test(headText) && data.has(headText, FLAG.STOP))) {
      let j = i;
      while (
        j + 1 < spans.length &&
        j - i < MERGE_PIECES &&
        spans[j + 1]!.start === spans[j]!.end &&
        spans[j + 1]!.end - head.start <= MERGE_MAX_LENGTH &&
        HIRAGANA.test(text.slice(spans[j + 1]!.start, spans[j + 1]!.end))
      ) {
        j++;
        if (isPredicate(data, text.slice(head.start, spans[j]!.end))) last = j;
      }
    }
    if (last < 0) out.push(head);
    else {
      out.push({ start: head.start, end: spans[last]!.end });
      i = last;
    }
  }
  return out;
}

/**
 * Split: a piece the language data does not know, cut after its longest conjugated-word prefix
 * when the rest is a chain of auxiliaries (each the longest that fits).
 */
function splitAuxiliaries(text: string, spans: Span[], data: LanguageData): Span[] {
  let out: Span[] | null = null;
  for (let k = 0; k < spans.length; k++) {
    const sp = spans[k]!;
    const pieces =
      sp.end - sp.start >= 2 && sp.end - sp.start <= SPLIT_MAX_LENGTH ? auxiliaryCut(text, sp, data) : null;
    if (pieces && !out) out = spans.slice(0, k);
    if (out) {
      if (pieces) for (const p of pieces) out.push(p);
      else out.push(sp);
    }
  }
  return out ?? spans;
}

function auxiliaryCut(text: string, sp: Span, data: LanguageData): Span[] | null {
  const word = text.slice(sp.start, sp.end);
  if (data.flagsOf(data.find(word)) !== 0 || data.auxiliaries.has(word)) return null;
  for (let cut = word.length - 1; cut >= 1; cut--) {
    if (!isPredicate(data, word.slice(0, cut))) continue;
    const chain = auxiliaryChain(word, cut, data);
    if (chain === null) continue;
    const pieces: Span[] = [{ start: sp.start, end: sp.start + cut }];
    for (let k = 0; k < chain.length; k++)
      pieces.push({ start: sp.start + chain[k]!, end: sp.start + (chain[k + 1] ?? word.length) });
    return pieces;
  }
  return null;
}

/** Where each auxiliary of word[from..] starts (longest first at each step), or null when the rest is no such chain. */
function auxiliaryChain(word: string, from: number, data: LanguageData): number[] | null {
  const starts: number[] = [];
  let at = from;
  while (at < word.length) {
    let end = word.length;
    while (end > at && !data.auxiliaries.has(word.slice(at, end))) end--;
    if (end === at) return null;
    starts.push(at);
    at = end;
  }
  return starts;
}
