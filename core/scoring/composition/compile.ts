/**
 * The word lists of a language compiled for the rules (compileComposition, cached per
 * CompositionData object), and what the rules need of each token form (FormInfo, computed once
 * per form) and of each two-token phrase (pairEntry).
 */
import type { CompositionData } from '../../tokenizer/format';
import type { FormLike, TokenLike } from '../types';
// The bit sets the compiled lists and the form infos carry (bits.ts).
import * as bits from './bits';
import { asciiLetterRun, seenIn } from './scan';

/** The compiled word lists of a language (cached per CompositionData object). */
export interface CompiledComposition {
  negators: Set<string>;
  needsOpener: Set<string>;
  openers: Set<string>;
  concord: boolean;
  direction: CompositionData['negationDirection'];
  notNegating: Set<string>;
  boosters: Map<string, number>;
  contrast: Set<string>;
  polar: Set<string>;
  emoticons: Map<string, number>;
  emoji: Map<string, number>;
  joiner: string;
  /** Longest emoticon, in UTF-16 units. */
  emoticonMax: number;
  /** Longest run of ASCII letters in an emoticon (a chunk with a longer one is none: "well-made"). */
  emoticonLetters: number;
  /** Every single-word key with its classes (C_* bits): one lookup per key instead of one per list. */
  classes: Map<string, number>;
  /** Per lemma: the FormInfo of the surface form last seen with it (see formInfo). */
  forms: Map<string, FormInfo>;
  /** First tokens of the two-token phrases (only these build a pair key). */
  pairHeads: Set<string>;
  /** The two-token phrases (notNegating and booster keys) by head and tail key (pairEntry). */
  pairs: Map<string, Map<string, PairEntry>>;
  /** Characters that mark a chunk as a possible emoticon (not letters, digits or . , ! ? ' "). */
  emoticonMarks: RegExp | null;
  /** SEEN_* bits of each ASCII unit: "!" and the emoticon marks (seenIn). */
  asciiSeen: Uint8Array;
  /** Units from highFrom up (U+00A9, where every emoji starts, or a lower non-ASCII mark) stand for highSeen. */
  highFrom: number;
  highSeen: number;
}

const cache = new WeakMap<CompositionData, CompiledComposition>();

/** What composeText needs of a token that depends only on its surface form and lemma. */
export interface FormInfo {
  surface: string;
  /** C_* bits of both keys. */
  cls: number;
  /** bits.F_CASED: has an upper- or lower-case letter; bits.F_ALL_CAPS: two or more letters, all upper case; bits.F_STOP: an ending looked up by nothing (lookup ''). */
  flags: number;
  /** Both lookup keys (keysOf): the same string objects every time, so their hashes are computed once. */
  keys: [string, string];
  /** The booster value of a booster (bits.C_BOOSTER), else 0. */
  booster: number;
  /** What the form adds to its text's summary (S_* bits): its classes, its case and the SEEN_* bits of its string. */
  summary: number;
  /** A phrase head's tails by the surface key and by the lemma key (pairEntry); else empty. */
  pairTails: ReadonlyArray<ReadonlyMap<string, PairEntry> | undefined>;
  /** A key holds a space (pairEntry then joins the keys themselves). */
  spaced: boolean;
}
const NO_TAILS: ReadonlyArray<ReadonlyMap<string, PairEntry> | undefined> = [undefined, undefined];
/** Distinct forms kept per language before the map starts afresh (bounds memory on hostile input). */
const FORMS_MAX = 50_000;
const EMPTY: CompositionData = {
  negators: [],
  negationDirection: 'forward',
  notNegating: [],
  boosters: {},
  contrast: [],
  polarStopWords: [],
  emoticons: {},
  emoji: {},
};

export function compileComposition(data: CompositionData | null | undefined): CompiledComposition {
  const d = data ?? EMPTY;
  let c = cache.get(d);
  if (c) return c;
  const emoticons = new Map(Object.entries(d.emoticons));
  const joiner = d.joiner ?? ' ';
  const pairHeads = new Set<string>();
  const pairTails = new Set<string>();
  // Every way a key can be head + joiner + tail: the first space (joiner " "), else every cut.
  const pairs = new Map<string, Map<string, PairEntry>>();
  const notNegating = new Set(d.notNegating);
  const boosters = new Map(Object.entries(d.boosters));
  for (const k of [...d.notNegating, ...Object.keys(d.boosters)]) {
    const cuts: number[] = [];
    if (joiner === ' ') {
      const cut = k.indexOf(' ');
      if (cut > 0) cuts.push(cut);
    } else {
      for (let i = 1; i < k.length; i++) cuts.push(i);
    }
    for (const cut of cuts) {
      const head = k.slice(0, cut);
      pairHeads.add(head);
      pairTails.add(k.slice(cut + joiner.length));
      let tails = pairs.get(head);
      if (!tails) pairs.set(head, (tails = new Map()));
      tails.set(k.slice(cut + joiner.length), { notNegating: notNegating.has(k), booster: boosters.get(k) });
    }
  }
  const marks = new Set<string>();
  for (const k of emoticons.keys()) for (const ch of k) if (!/[\p{L}\p{N}.,!?'"]/u.test(ch)) marks.add(ch);
  const esc = [...marks].map((ch) => ch.replace(/[\\\]^-]/g, '\\$&')).join('');
  const asciiSeen = new Uint8Array(128);
  asciiSeen[0x21] = bits.SEEN_BANG;
  let highSeen = bits.SEEN_EMOJI | bits.SEEN_BANG_WIDE;
  // Every emoji starts at or above U+00A9; the range starts lower if a non-ASCII mark does.
  let highFrom = 0xa9;
  for (const ch of marks) {
    // Every UTF-16 unit of a mark: a mark outside the BMP shows up as its surrogates.
    for (let i = 0; i < ch.length; i++) {
      const c = ch.charCodeAt(i);
      if (c < 128) asciiSeen[c] |= bits.SEEN_MARK;
      else {
        highSeen |= bits.SEEN_MARK;
        highFrom = Math.min(highFrom, c);
      }
    }
  }
  const classes = new Map<string, number>();
  const mark = (keys: Iterable<string>, bit: number) => {
    for (const k of keys) classes.set(k, (classes.get(k) ?? 0) | bit);
  };
  mark(d.negators, bits.C_NEG);
  mark(d.negationNeedsOpener ?? [], bits.C_OPENER_NEEDED);
  mark(d.contrast, bits.C_CONTRAST);
  mark(Object.keys(d.boosters), bits.C_BOOSTER);
  mark(d.polarStopWords, bits.C_POLAR);
  for (const k of pairHeads) classes.set(k, (classes.get(k) ?? 0) | bits.C_PAIR_HEAD);
  for (const k of pairTails) classes.set(k, (classes.get(k) ?? 0) | bits.C_PAIR_TAIL);
  mark(d.scopeBarriers ?? [], bits.C_SCOPE_BARRIER);
  c = {
    classes,
    negators: new Set(d.negators),
    needsOpener: new Set(d.negationNeedsOpener ?? []),
    openers: new Set(d.negationOpeners ?? []),
    concord: d.negativeConcord === true,
    direction: d.negationDirection,
    notNegating,
    boosters,
    pairs,
    contrast: new Set(d.contrast),
    polar: new Set(d.polarStopWords),
    emoticons,
    emoji: new Map(Object.entries(d.emoji)),
    joiner,
    emoticonMax: Math.max(0, ...[...emoticons.keys()].map((k) => k.length)),
    emoticonLetters: Math.max(0, ...[...emoticons.keys()].map((k) => asciiLetterRun(k, 0, k.length))),
    pairHeads,
    // Unicode mode only when a mark lies outside the BMP (it is slower).
    emoticonMarks: esc ? new RegExp(`[${esc}]`, [...marks].some((ch) => ch.length > 1) ? 'gu' : 'g') : null,
    asciiSeen,
    highFrom,
    highSeen,
    forms: new Map(),
  };
  cache.set(d, c);
  return c;
}

const CASED = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

/** "GOOD" (two or more letters, all upper case). */
function isAllCaps(s: string): boolean {
  return s.length >= 2 && CASED.test(s) && !LOWER.test(s);
}

/** Both lookup keys of a token: lower-cased surface (typographic apostrophe normalized) and lemma. */
function keysOf(t: FormLike): [string, string] {
  const s = t.string.toLowerCase();
  const l = t.token === t.string ? s : t.token.toLowerCase();
  return [s.includes('\u2019') ? s.replace(/\u2019/g, "'") : s, l.includes('\u2019') ? l.replace(/\u2019/g, "'") : l];
}

const hasKey = (set: ReadonlySet<string>, k: [string, string]): boolean => set.has(k[0]) || set.has(k[1]);

/**
 * A token's FormInfo, computed once per form (texts repeat their words: two lower-casings, two
 * map lookups and the case tests per token were most of composeText's time).
 * Keyed by the lemma, which the tokenizer hands out from its own cache (the same string object
 * every time, so its hash is computed once), and checked against the surface form.
 */
export function formInfo(rules: CompiledComposition, t: TokenLike): FormInfo {
  const hit = rules.forms.get(t.token);
  // The flags depend on the lookup too (an auxiliary ending, lookup '', reads like a stop word).
  if (hit !== undefined && hit.surface === t.string && ((hit.flags & bits.F_STOP) !== 0) === (t.lookup === ''))
    return hit;
  const info = computeFormInfo(rules, t);
  if (rules.forms.size >= FORMS_MAX) rules.forms.clear();
  rules.forms.set(t.token, info);
  return info;
}

/**
 * What the composition needs of a token, computed afresh: its classes (C_* bits of its surface
 * and lemma keys), case flags (F_*), lookup keys, booster value, phrase tails and summary bits.
 */
export function computeFormInfo(rules: CompiledComposition, t: FormLike): FormInfo {
  const k = keysOf(t);
  const classes = rules.classes;
  const cls = (classes.get(k[0]) ?? 0) | (k[1] !== k[0] ? (classes.get(k[1]) ?? 0) : 0);
  const cased = CASED.test(t.string) || LOWER.test(t.string);
  const info: FormInfo = {
    surface: t.string,
    cls,
    // An auxiliary (lookup '': a Japanese ending such as たく) is read like a stop word: not scored,
    // so it takes no place in a negation scope.
    flags:
      (cased ? bits.F_CASED : 0) | (isAllCaps(t.string) ? bits.F_ALL_CAPS : 0) | (t.lookup === '' ? bits.F_STOP : 0),
    keys: k,
    booster: cls & bits.C_BOOSTER ? (rules.boosters.get(k[0]) ?? rules.boosters.get(k[1]) ?? 0) : 0,
    summary:
      (cls & ~(bits.C_PAIR_TAIL | bits.C_SCOPE_BARRIER)) |
      (cased ? (isAllCaps(t.string) ? bits.S_ALL_CAPS : bits.S_NOT_ALL_CAPS) : 0) |
      (seenIn(rules, t.string, 0, t.string.length) << bits.S_SEEN_SHIFT),
    pairTails: cls & bits.C_PAIR_HEAD ? [rules.pairs.get(k[0]), rules.pairs.get(k[1])] : NO_TAILS,
    spaced: k[0].includes(' ') || k[1].includes(' '),
  };
  return info;
}

/**

/** What a two-token phrase is (CompiledComposition.pairs). */
export interface PairEntry {
  /** "not only": cancels negation and contrast. */
  notNegating: boolean;
  /** "kind of", "a bit": the booster value of the phrase. */
  booster: number | undefined;
}

/**
 * The phrase of two tokens a and b: by the surface forms first, then by the lemmas, as the joined
 * keys a + joiner + b would be looked up, without building them.
 */
export function pairEntry(rules: CompiledComposition, a: FormInfo, b: FormInfo): PairEntry | null {
  if (rules.joiner === ' ' && a.spaced) {
    // A head with a space of its own (no tokenizer gives one): the joined keys themselves.
    const p: [string, string] = [a.keys[0] + ' ' + b.keys[0], a.keys[1] + ' ' + b.keys[1]];
    const booster = rules.boosters.get(p[0]) ?? rules.boosters.get(p[1]);
    const notNegating = hasKey(rules.notNegating, p);
    return notNegating || booster !== undefined ? { notNegating, booster } : null;
  }
  const s = a.pairTails[0]?.get(b.keys[0]);
  const l = a.pairTails[1]?.get(b.keys[1]);
  if (s === undefined) return l ?? null;
  if (l === undefined || l === s) return s;
  return { notNegating: s.notNegating || l.notNegating, booster: s.booster ?? l.booster };
}
