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
import { bloomHas } from './bloom';
import type { Span } from './segment';
import { WordTable } from './word-table';

/** A conjugated verb or adjective form, or a na-adjective stem. */
const PREDICATE = FLAG.VERB | FLAG.ADJ;
/** At most this many pieces after the first are merged, into a form of at most MERGE_MAX_LENGTH characters. */
const MERGE_PIECES = 3;
const MERGE_MAX_LENGTH = 10;
/** Pieces longer than this are not split (no conjugated word with its auxiliaries is longer). */
const SPLIT_MAX_LENGTH = 16;

/** Whether text[start, end) is all hiragana (U+3041..U+309F; the iteration marks ゝゞ too). */
function isHiragana(text: string, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x3041 || c > 0x309f) return false;
  }
  return end > start;
}

/**
 * What the corrections asked of a piece of text before: its flags in the language data (merge)
 * and where it is cut (split), per language file, looked up by the characters in the text (the
 * tokenizer's WordTable: no substring, no string hash). Texts repeat their words; each question
 * costs a UTF-8 encoding and a binary search otherwise.
 */
interface Memo {
  flags: WordTable<number>;
  cuts: WordTable<readonly number[] | null>;
}
const MEMO_SIZE = 50_000;
const MEMO_MAX_LENGTH = Math.max(MERGE_MAX_LENGTH, SPLIT_MAX_LENGTH);
const memos = new WeakMap<LanguageData, Memo>();

function memoOf(data: LanguageData): Memo {
  let m = memos.get(data);
  if (!m)
    memos.set(
      data,
      (m = { flags: new WordTable(MEMO_SIZE, MEMO_MAX_LENGTH), cuts: new WordTable(MEMO_SIZE, MEMO_MAX_LENGTH) }),
    );
  return m;
}

/**
 * Whether units a, b can be adjacent inside a conjugated form (meta.conjugation.junctions): a
 * bit set of JUNCTION_BITS bits per language file, indexed by a small-integer hash of the pair
 * (a false positive only costs the lookup the set saves).
 */
const JUNCTION_BITS = 1 << 20;
const junctionSets = new WeakMap<LanguageData, Uint32Array>();

function junctionIndex(a: number, b: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ b) & (JUNCTION_BITS - 1);
}

function hasJunction(data: LanguageData, a: number, b: number): boolean {
  let set = junctionSets.get(data);
  if (!set) {
    set = new Uint32Array(JUNCTION_BITS / 32);
    for (const pair of data.junctions) {
      const i = junctionIndex(Math.floor(pair / 65536), pair % 65536);
      set[i >>> 5]! |= 1 << (i & 31);
    }
    junctionSets.set(data, set);
  }
  const i = junctionIndex(a, b);
  return (set[i >>> 5]! & (1 << (i & 31))) !== 0;
}

/** Whether text[start, end) is a conjugated form or a na-adjective stem (the Bloom filter first: most pieces are not). */
function isPredicateAt(data: LanguageData, memo: Memo, text: string, start: number, end: number): boolean {
  const bloom = data.predicateBloom;
  if (bloom !== null && !bloomHas(bloom, text, start, end)) return false;
  return (flagsAt(data, memo, text, start, end) & PREDICATE) !== 0;
}

/** The language data's flags of text[start, end). */
function flagsAt(data: LanguageData, memo: Memo, text: string, start: number, end: number): number {
  let f = memo.flags.get(text, start, end);
  if (f === undefined) {
    f = data.flagsOf(data.find(text.slice(start, end)));
    memo.flags.add(text, start, end, f);
  }
  return f;
}

/** The dictionary form of a conjugated verb or i-adjective form (楽しかっ -> 楽しい), else null. */
export function dictionaryForm(data: LanguageData, index: number): string | null {
  return data.flagsOf(index) & PREDICATE ? data.lemmaOf(index) : null;
}

/** Both corrections over the spans of one run of Japanese script. */
export function conjugationPieces(text: string, spans: Span[], data: LanguageData): Span[] {
  if (data.auxiliaries.size === 0) return spans;
  const memo = memoOf(data);
  return splitAuxiliaries(text, mergeConjugatedPieces(text, spans, data, memo), data, memo);
}

/**
 * Merge: from a first piece that is not a hiragana stop word (は|いる is a particle and a verb,
 * not はいる), the longest run of up to MERGE_PIECES hiragana pieces after it that spells a
 * conjugated form with it.
 */
function mergeConjugatedPieces(text: string, spans: Span[], data: LanguageData, memo: Memo): Span[] {
  // A new list only from the first merge on (most runs have none).
  let out: Span[] | null = null;
  for (let i = 0; i < spans.length; i++) {
    const head = spans[i]!;
    let last = -1;
    const next = spans[i + 1];
    // Cheap tests first: a hiragana piece right after the head whose first unit can follow the
    // head's last inside a conjugated form, and a head that is no particle.
    if (
      next !== undefined &&
      next.start === head.end &&
      hasJunction(data, text.charCodeAt(head.end - 1), text.charCodeAt(next.start)) &&
      isHiragana(text, next.start, next.end) &&
      !(isHiragana(text, head.start, head.end) && flagsAt(data, memo, text, head.start, head.end) & FLAG.STOP)
    ) {
      let j = i;
      while (
        j + 1 < spans.length &&
        j - i < MERGE_PIECES &&
        spans[j + 1]!.start === spans[j]!.end &&
        spans[j + 1]!.end - head.start <= MERGE_MAX_LENGTH &&
        isHiragana(text, spans[j + 1]!.start, spans[j + 1]!.end)
      ) {
        j++;
        if (isPredicateAt(data, memo, text, head.start, spans[j]!.end)) last = j;
      }
    }
    if (last < 0) out?.push(head);
    else {
      (out ??= spans.slice(0, i)).push({ start: head.start, end: spans[last]!.end });
      i = last;
    }
  }
  return out ?? spans;
}

/**
 * Split: a piece the language data does not know, cut after its longest conjugated-word prefix
 * when the rest is a chain of auxiliaries (each the longest that fits).
 */
function splitAuxiliaries(text: string, spans: Span[], data: LanguageData, memo: Memo): Span[] {
  let out: Span[] | null = null;
  for (let k = 0; k < spans.length; k++) {
    const sp = spans[k]!;
    // Every auxiliary ends in hiragana: other pieces are never cut.
    const len = sp.end - sp.start;
    const pieces =
      len >= 2 && len <= SPLIT_MAX_LENGTH && isHiragana(text, sp.end - 1, sp.end)
        ? auxiliaryCut(text, sp, data, memo)
        : null;
    if (pieces && !out) out = spans.slice(0, k);
    if (out) {
      if (pieces) for (const p of pieces) out.push(p);
      else out.push(sp);
    }
  }
  return out ?? spans;
}

function auxiliaryCut(text: string, sp: Span, data: LanguageData, memo: Memo): Span[] | null {
  let cuts = memo.cuts.get(text, sp.start, sp.end);
  if (cuts === undefined) {
    cuts = cutsOf(text, sp, data, memo);
    memo.cuts.add(text, sp.start, sp.end, cuts);
  }
  if (cuts === null) return null;
  const pieces: Span[] = [];
  for (let k = 0; k < cuts.length; k++)
    pieces.push({ start: sp.start + cuts[k]!, end: sp.start + (cuts[k + 1] ?? sp.end - sp.start) });
  return pieces;
}

/** Where the pieces of text[sp] start (0, the first auxiliary, ...), or null when it is not cut. */
function cutsOf(text: string, sp: Span, data: LanguageData, memo: Memo): number[] | null {
  const word = text.slice(sp.start, sp.end);
  // A word of the language data, an auxiliary, or (probably: a Bloom filter) a word of another
  // part of speech (思わず, とりあえず, ただ) stays whole.
  if (flagsAt(data, memo, text, sp.start, sp.end) !== 0 || data.auxiliaries.has(word)) return null;
  const other = data.otherWordBloom;
  if (other !== null && bloomHas(other, text, sp.start, sp.end)) return null;
  for (let cut = word.length - 1; cut >= 1; cut--) {
    if (!isPredicateAt(data, memo, text, sp.start, sp.start + cut)) continue;
    const chain = auxiliaryChain(word, cut, data);
    if (chain !== null) return [0, ...chain];
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
