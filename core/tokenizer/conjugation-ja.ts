/**
 * Japanese conjugation: the pieces of a conjugated word as IPADIC cuts them, and its dictionary
 * form. The language file holds IPADIC's conjugation as rules (meta.conjugation.rules: surface
 * ending -> dictionary ending, conjugation type; build/lang/ipadic.ts), the dictionary forms keyed
 * with their type ("食べる\t0", FLAG.VERB / FLAG.ADJ), the na-adjective stems (FLAG.ADJ), the
 * auxiliaries' forms, and five filters (bloom.ts): the forms, the na-adjective stems, the dictionary-form keys, the words
 * of other parts of speech, the unit pairs inside forms. A piece is a conjugated form when a rule maps it to a dictionary
 * form of the rule's type (the most followed rule wins: 書い -> 書く, 食べ -> 食べる).
 * TinySegmenter mostly cuts the IPADIC way (楽しかっ|た, 食べ|ませ|ん); two corrections fix
 * where it does not:
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
import { bloomHas, BLOOM_VERSION, pairBitsHas } from './bloom';
import { FLAG, type LanguageData } from './data';
import type { Span } from './segment';
import { WordTable } from './word-table';

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

/** A rule as conjugation-ja reads it: the dictionary ending, the type, its rank (0: most followed). */
interface Rule {
  base: string;
  type: number;
  order: number;
}

/** The rules ([surface ending, dictionary ending, type], most followed first) by surface ending. */
export interface RuleIndex {
  bySuffix: Map<string, Rule[]>;
  maxSuffix: number;
}

export function indexRules(rules: ReadonlyArray<readonly [string, string, number]>): RuleIndex {
  const bySuffix = new Map<string, Rule[]>();
  let maxSuffix = 0;
  rules.forEach(([surface, base, type], order) => {
    let list = bySuffix.get(surface);
    if (!list) bySuffix.set(surface, (list = []));
    list.push({ base, type, order });
    maxSuffix = Math.max(maxSuffix, surface.length);
  });
  return { bySuffix, maxSuffix };
}

/**
 * The dictionary form the most followed rule gives `surface`: a rule whose surface ending it has,
 * whose dictionary form ("base\ttype") `isBase` knows; null when none does. The build measures
 * its agreement with IPADIC with this same function (build/lang/ipadic.ts).
 */
export function ruleReading(surface: string, index: RuleIndex, isBase: (key: string) => boolean): string | null {
  let best: string | null = null;
  let bestOrder = Infinity;
  for (let l = 0; l <= Math.min(index.maxSuffix, surface.length); l++) {
    const rules = index.bySuffix.get(surface.slice(surface.length - l));
    if (rules === undefined) continue;
    for (const r of rules) {
      if (r.order >= bestOrder) break; // the list is in rule order
      const base = surface.slice(0, surface.length - l) + r.base;
      if (base && isBase(`${base}\t${r.type}`)) {
        best = base;
        bestOrder = r.order;
      }
    }
  }
  return best;
}

/**
 * What the corrections need of a language file, compiled once: the rules by surface ending, the
 * filters, and what they asked before (the dictionary form of a piece, or null; where a piece is
 * cut), per language file, looked up by the characters in the text (the tokenizer's WordTable: no
 * substring, no string hash). Texts repeat their words; each question costs dictionary searches
 * otherwise.
 */
interface Conjugation {
  rules: RuleIndex;
  /** Whether a "base\ttype" key is a dictionary form (its filter first: most candidates are none). */
  isBase: (key: string) => boolean;
  auxiliaries: ReadonlySet<string>;
  endings: ReadonlySet<string>;
  forms: Uint32Array | null;
  naAdjectives: Uint32Array | null;
  otherWords: Uint32Array | null;
  junctions: Uint32Array | null;
  readings: WordTable<string | null>;
  cuts: WordTable<readonly number[] | null>;
}
const MEMO_SIZE = 50_000;
const MEMO_MAX_LENGTH = Math.max(MERGE_MAX_LENGTH, SPLIT_MAX_LENGTH);
const compiled = new WeakMap<LanguageData, Conjugation | null>();

const u32 = (b: Uint8Array | undefined): Uint32Array | null =>
  b ? new Uint32Array(b.buffer, b.byteOffset, b.byteLength >>> 2) : null;

/** The language file's conjugation, or null (no Japanese conjugation data). */
function conjugationOf(data: LanguageData): Conjugation | null {
  let c = compiled.get(data);
  if (c !== undefined) return c;
  const meta = data.meta.conjugation;
  c = null;
  if (meta) {
    // Filters built by another version of bloom.ts would answer "certainly not" wrongly: ignored.
    const ok = meta.bloomVersion === BLOOM_VERSION;
    const bases = ok ? u32(data.extraSections.get('JBAS')) : null;
    c = {
      rules: indexRules(meta.rules),
      isBase: (key) => (bases === null || bloomHas(bases, key, 0, key.length)) && data.find(key) >= 0,
      auxiliaries: new Set(meta.auxiliaries),
      endings: new Set(meta.endings),
      forms: ok ? u32(data.extraSections.get('JBLM')) : null,
      naAdjectives: ok ? u32(data.extraSections.get('JNAD')) : null,
      otherWords: ok ? u32(data.extraSections.get('JOTH')) : null,
      junctions: ok ? u32(data.extraSections.get('JJUN')) : null,
      readings: new WordTable(MEMO_SIZE, MEMO_MAX_LENGTH),
      cuts: new WordTable(MEMO_SIZE, MEMO_MAX_LENGTH),
    };
  }
  compiled.set(data, c);
  return c;
}

/**
 * The dictionary form of text[start, end) when it is a conjugated verb or i-adjective form or a
 * na-adjective stem (the stem itself), else null; remembered per piece.
 */
function readingAt(data: LanguageData, c: Conjugation, text: string, start: number, end: number): string | null {
  // Certainly no form (most pieces): answered without the memo.
  if (c.forms !== null && !bloomHas(c.forms, text, start, end)) return null;
  let r = c.readings.get(text, start, end);
  if (r === undefined) {
    r = readingOf(data, c, text, start, end);
    c.readings.add(text, start, end, r);
  }
  return r;
}

function readingOf(data: LanguageData, c: Conjugation, text: string, start: number, end: number): string | null {
  // A na-adjective stem (the filter first: most forms are none); a word IPADIC reads as another
  // part of speech (思わず).
  const surface = text.slice(start, end);
  if ((c.naAdjectives === null || bloomHas(c.naAdjectives, text, start, end)) && data.has(surface, FLAG.ADJ))
    return surface;
  if (c.otherWords !== null && bloomHas(c.otherWords, text, start, end)) return null;
  return ruleReading(surface, c.rules, c.isBase);
}

/** The dictionary form of a conjugated verb or i-adjective form (楽しかっ -> 楽しい), else null. */
export function dictionaryForm(data: LanguageData, surface: string): string | null {
  const c = conjugationOf(data);
  if (c === null || surface.length > MEMO_MAX_LENGTH) return null;
  const r = readingAt(data, c, surface, 0, surface.length);
  return r === surface ? null : r;
}

/** Whether a Japanese piece is an ending with no meaning of its own (meta.conjugation.endings: じゃ, たく, ませ). */
export function isEnding(data: LanguageData, surface: string): boolean {
  return conjugationOf(data)?.endings.has(surface) === true;
}

/** Both corrections over the spans of one run of Japanese script. */
export function conjugationPieces(text: string, spans: Span[], data: LanguageData): Span[] {
  const c = conjugationOf(data);
  if (c === null) return spans;
  return splitAuxiliaries(text, mergeConjugatedPieces(text, spans, data, c), data, c);
}

/**
 * Merge: from a first piece that is not a hiragana stop word (は|いる is a particle and a verb,
 * not はいる), the longest run of up to MERGE_PIECES hiragana pieces after it that spells a
 * conjugated form with it.
 */
function mergeConjugatedPieces(text: string, spans: Span[], data: LanguageData, c: Conjugation): Span[] {
  // A new list only from the first merge on (most runs have none).
  let out: Span[] | null = null;
  for (let i = 0; i < spans.length; i++) {
    const head = spans[i]!;
    let last = -1;
    const next = spans[i + 1];
    // Cheap tests first: a hiragana piece right after the head whose first unit can follow the
    // head's last inside a conjugated form. A head that is a particle is looked at last (below).
    if (
      next !== undefined &&
      next.start === head.end &&
      (c.junctions === null || pairBitsHas(c.junctions, text.charCodeAt(head.end - 1), text.charCodeAt(next.start))) &&
      isHiragana(text, next.start, next.end)
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
        if (readingAt(data, c, text, head.start, spans[j]!.end) !== null) last = j;
      }
      // No merge from a particle (は|いる is a particle and a verb, not はいる).
      if (last >= 0 && isHiragana(text, head.start, head.end) && data.has(text.slice(head.start, head.end), FLAG.STOP))
        last = -1;
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
function splitAuxiliaries(text: string, spans: Span[], data: LanguageData, c: Conjugation): Span[] {
  let out: Span[] | null = null;
  for (let k = 0; k < spans.length; k++) {
    const sp = spans[k]!;
    // Every auxiliary ends in hiragana: other pieces are never cut.
    const len = sp.end - sp.start;
    const pieces =
      len >= 2 && len <= SPLIT_MAX_LENGTH && isHiragana(text, sp.end - 1, sp.end)
        ? auxiliaryCut(text, sp, data, c)
        : null;
    if (pieces && !out) out = spans.slice(0, k);
    if (out) {
      if (pieces) for (const p of pieces) out.push(p);
      else out.push(sp);
    }
  }
  return out ?? spans;
}

function auxiliaryCut(text: string, sp: Span, data: LanguageData, c: Conjugation): Span[] | null {
  let cuts = c.cuts.get(text, sp.start, sp.end);
  if (cuts === undefined) {
    cuts = cutsOf(text, sp, data, c);
    c.cuts.add(text, sp.start, sp.end, cuts);
  }
  if (cuts === null) return null;
  const pieces: Span[] = [];
  for (let k = 0; k < cuts.length; k++)
    pieces.push({ start: sp.start + cuts[k]!, end: sp.start + (cuts[k + 1] ?? sp.end - sp.start) });
  return pieces;
}

/** Where the pieces of text[sp] start (0, the first auxiliary, ...), or null when it is not cut. */
function cutsOf(text: string, sp: Span, data: LanguageData, c: Conjugation): number[] | null {
  const word = text.slice(sp.start, sp.end);
  // A word of the language data or a conjugated form itself, an auxiliary, or (probably: a Bloom
  // filter) a word of another part of speech (思わず, とりあえず, ただ) stays whole.
  if (data.flagsOf(data.find(word)) !== 0 || c.auxiliaries.has(word)) return null;
  if (readingAt(data, c, text, sp.start, sp.end) !== null) return null;
  if (c.otherWords !== null && bloomHas(c.otherWords, text, sp.start, sp.end)) return null;
  for (let cut = word.length - 1; cut >= 1; cut--) {
    if (readingAt(data, c, text, sp.start, sp.start + cut) === null) continue;
    const chain = auxiliaryChain(word, cut, c.auxiliaries);
    if (chain !== null) return [0, ...chain];
  }
  return null;
}

/** Where each auxiliary of word[from..] starts (longest first at each step), or null when the rest is no such chain. */
function auxiliaryChain(word: string, from: number, auxiliaries: ReadonlySet<string>): number[] | null {
  const starts: number[] = [];
  let at = from;
  while (at < word.length) {
    let end = word.length;
    while (end > at && !auxiliaries.has(word.slice(at, end))) end--;
    if (end === at) return null;
    starts.push(at);
    at = end;
  }
  return starts;
}
