/**
 * Composition rules of text scores (decisions.md "Text scores that mean what they say";
 * docs/text-scores.md): which tokens of a text are scored, and how negators, boosters and
 * dampeners, contrast, all-caps and exclamation marks change each token's value and weight.
 * Emoticons and emoji become items with a lexicon valence. Runtime-agnostic and linear in the
 * text length; the word lists come from the language data (meta.composition).
 *
 * Constants are VADER's (Hutto & Gilbert 2014, vaderSentiment.py / npm vader-sentiment 1.1.3):
 * N_SCALAR -0.74, B_INCR 0.293, B_DECR -0.293, C_INCR 0.733, 0.292 per "!" (at most 4), and the
 * contrast weights 0.5 before / 1.5 after "but". VADER adds B_INCR, C_INCR and the "!" amount to
 * a valence on its -4..4 scale; here the values live on each factor's own scale and most words
 * are near neutral, so the increments act on the distance from neutral, relative to a typical
 * rated word: the mean absolute valence of the VADER lexicon, 1.544 (7,517 entries). A booster
 * thus scales that distance by 1 + 0.293 / 1.544 = 1.19, and a neutral word stays neutral
 * (as in VADER, where a word without valence gets no increment).
 */
import type { CompositionData } from '../tokenizer/format';
import type { FormLike, TokenLike } from './types';

export const VADER = {
  N_SCALAR: -0.74,
  B_INCR: 0.293,
  B_DECR: -0.293,
  C_INCR: 0.733,
  /** Per exclamation mark, at most EXCL_MAX of them. */
  EXCL_INCR: 0.292,
  EXCL_MAX: 4,
  BUT_BEFORE: 0.5,
  BUT_AFTER: 1.5,
  /** Mean |rating| over the 7,517 entries of vader_lexicon.txt (-4..4 scale). */
  MEAN_ABS_VALENCE: 1.544,
  /** VADER looks at most three words back for a booster. */
  BOOSTER_WINDOW: 3,
} as const;

/** Relative factors on the distance from neutral (see the header). */
export const FACTORS = {
  booster: 1 + VADER.B_INCR / VADER.MEAN_ABS_VALENCE,
  dampener: 1 + VADER.B_DECR / VADER.MEAN_ABS_VALENCE,
  caps: 1 + VADER.C_INCR / VADER.MEAN_ABS_VALENCE,
  exclamation: VADER.EXCL_INCR / VADER.MEAN_ABS_VALENCE,
  /** Bipolar scales: flip and damp. */
  negatedBipolar: VADER.N_SCALAR,
  /** Unipolar scales (a dimension's cosine): damp by the same 74%. */
  negatedUnipolar: 1 + VADER.N_SCALAR,
  /** VADER's damping of a booster two and three words away. */
  boosterDistance: [1, 1, 0.95, 0.9],
} as const;

/** Negators count up to this many scored tokens (decisions.md: "up to the next clause boundary or three content tokens"). */
export const NEGATION_SCOPE = 3;

export type CompositionMode = 'rules' | 'mean';

/** A token with its position in the text (core/tokenizer tokens). */
export interface PositionedToken extends TokenLike {
  indexStart: number;
  indexEnd: number;
}

export type RuleName =
  'negated' | 'intensified' | 'downtoned' | 'contrast' | 'caps' | 'exclamation' | 'emoticon' | 'emoji';

/** One scored item of a text: a token, or an emoticon/emoji (tokenIndex -1, `valence` set). */
export interface ComposedItem {
  tokenIndex: number;
  string: string;
  token: string;
  indexStart: number;
  indexEnd: number;
  /** How many negations apply (double negation: 2). */
  negations: number;
  /** Product of the booster, dampener, caps and exclamation factors on the distance from neutral. */
  scale: number;
  /** Contrast weight (0.5 before, 1.5 after a contrast word in the same sentence; else 1). */
  weight: number;
  rules: RuleName[];
  /** Emoticon/emoji valence in [-1, 1] (bipolar factors only). */
  valence?: number;
}

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

/**
 * Tests only: applyRules visits every token and reads every gap, the rules' plain definition,
 * which its event-driven shortcuts must not change (test/node/composition.test.ts).
 */
let denseTraversal = false;
export function setDenseTraversal(on: boolean): void {
  denseTraversal = on;
}

/** What composeText needs of a token that depends only on its surface form and lemma. */
export interface FormInfo {
  surface: string;
  /** C_* bits of both keys. */
  cls: number;
  /** F_CASED: has an upper- or lower-case letter; F_ALL_CAPS: two or more letters, all upper case. */
  flags: number;
  /** Both lookup keys (keysOf): the same string objects every time, so their hashes are computed once. */
  keys: [string, string];
  /** The booster value of a booster (C_BOOSTER), else 0. */
  booster: number;
  /** What the form adds to its text's summary (S_* bits): its classes, its case and the SEEN_* bits of its string. */
  summary: number;
  /** A phrase head's tails by the surface key and by the lemma key (pairEntry); else empty. */
  pairTails: ReadonlyArray<ReadonlyMap<string, PairEntry> | undefined>;
  /** A key holds a space (pairEntry then joins the keys themselves). */
  spaced: boolean;
}
const NO_TAILS: ReadonlyArray<ReadonlyMap<string, PairEntry> | undefined> = [undefined, undefined];
const F_CASED = 1;
const F_ALL_CAPS = 2;
/** In the scratch flags only (not a property of the form's case): the token is a stop word. */
const F_STOP = 4;
/** Distinct forms kept per language before the map starts afresh (bounds memory on hostile input). */
const FORMS_MAX = 50_000;
const C_NEG = 1;
const C_OPENER_NEEDED = 2;
const C_CONTRAST = 4;
const C_BOOSTER = 8;
const C_POLAR = 16;
const C_PAIR_HEAD = 32;
/** The second token of a two-token phrase: a head is looked up with its next token only then. Not a rule's class (not in a text's summary). */
const C_PAIR_TAIL = 64;
/** The classes a rule acts on (applyRules visits only these tokens after its first pass). */
const C_SPECIAL = C_NEG | C_CONTRAST | C_BOOSTER | C_PAIR_HEAD;
// Roles of a token in applyRules: a negator (that needs an opener), the contrast word of its
// sentence, cancelled by "not only".
const R_NEGATOR = 1;
const R_NEEDS_OPENER = 2;
const R_CONTRAST = 4;
const R_CANCELLED = 8;
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
  asciiSeen[0x21] = SEEN_BANG;
  let highSeen = SEEN_EMOJI | SEEN_BANG_WIDE;
  // Every emoji starts at or above U+00A9; the range starts lower if a non-ASCII mark does.
  let highFrom = 0xa9;
  for (const ch of marks) {
    // Every UTF-16 unit of a mark: a mark outside the BMP shows up as its surrogates.
    for (let i = 0; i < ch.length; i++) {
      const c = ch.charCodeAt(i);
      if (c < 128) asciiSeen[c] |= SEEN_MARK;
      else {
        highSeen |= SEEN_MARK;
        highFrom = Math.min(highFrom, c);
      }
    }
  }
  const classes = new Map<string, number>();
  const mark = (keys: Iterable<string>, bit: number) => {
    for (const k of keys) classes.set(k, (classes.get(k) ?? 0) | bit);
  };
  mark(d.negators, C_NEG);
  mark(d.negationNeedsOpener ?? [], C_OPENER_NEEDED);
  mark(d.contrast, C_CONTRAST);
  mark(Object.keys(d.boosters), C_BOOSTER);
  mark(d.polarStopWords, C_POLAR);
  for (const k of pairHeads) classes.set(k, (classes.get(k) ?? 0) | C_PAIR_HEAD);
  for (const k of pairTails) classes.set(k, (classes.get(k) ?? 0) | C_PAIR_TAIL);
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

/**
 * What seenIn saw in a text: "!", an emoticon mark, a unit from which an Extended_Pictographic
 * code point can start (all are at or above U+00A9) and so perhaps "！". A superset: a bit may be
 * set where the rule it guards finds nothing.
 */
const SEEN_BANG = 1;
const SEEN_MARK = 2;
const SEEN_EMOJI = 4;
/** A unit at or above U+00A9: perhaps "！" (seenInText looks). */
const SEEN_BANG_WIDE = 8;

/** SEEN_* bits of text[from, to). */
function seenIn(rules: CompiledComposition, text: string, from: number, to: number): number {
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
function seenInText(
  rules: CompiledComposition,
  text: string,
  n: number,
  starts: Int32Array,
  ends: Int32Array,
  summary: number,
): number {
  let seen: number;
  if (denseTraversal) seen = seenIn(rules, text, 0, text.length);
  else {
    seen = (summary >>> S_SEEN_SHIFT) & S_SEEN_MASK;
    let from = 0;
    for (let i = 0; i <= n; i++) {
      const to = i === n ? text.length : starts[i];
      if (!isPlainGap(text, from, to)) seen |= seenIn(rules, text, from, to);
      if (i < n) from = ends[i];
    }
  }
  if (seen & SEEN_BANG_WIDE) {
    seen &= ~SEEN_BANG_WIDE;
    if (text.indexOf('\uff01') >= 0) seen |= SEEN_BANG;
  }
  return seen;
}

const EMOJI = /\p{Extended_Pictographic}/gu;
const EMOJI_ANY = /\p{Extended_Pictographic}/u;
const TRAILING = /[.,!?;]+$/;
const CASED = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

/** Longest run of ASCII letters in text[from, to). */
function asciiLetterRun(text: string, from: number, to: number): number {
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
const isPlainGap = (text: string, from: number, to: number): boolean =>
  to - from <= 1 && (to === from || text.charCodeAt(from) === 32);

/** Token i's FormInfo: from its form (composeForms) or from the scratch (composeText). */
const infoAt = (forms: ArrayLike<ComposableForm> | null, infos: FormInfo[], i: number): FormInfo =>
  forms !== null ? (forms[i].compositionInfo as FormInfo) : infos[i];

const isSpace = (c: number): boolean =>
  c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0x3000 || c === 0x2028 || c === 0x2029 || c === 0x85;

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
function formInfo(rules: CompiledComposition, t: TokenLike): FormInfo {
  const hit = rules.forms.get(t.token);
  if (hit !== undefined && hit.surface === t.string) return hit;
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
    flags: (cased ? F_CASED : 0) | (isAllCaps(t.string) ? F_ALL_CAPS : 0),
    keys: k,
    booster: cls & C_BOOSTER ? (rules.boosters.get(k[0]) ?? rules.boosters.get(k[1]) ?? 0) : 0,
    summary:
      (cls & ~C_PAIR_TAIL) |
      (cased ? (isAllCaps(t.string) ? S_ALL_CAPS : S_NOT_ALL_CAPS) : 0) |
      (seenIn(rules, t.string, 0, t.string.length) << S_SEEN_SHIFT),
    pairTails: cls & C_PAIR_HEAD ? [rules.pairs.get(k[0]), rules.pairs.get(k[1])] : NO_TAILS,
    spaced: k[0].includes(' ') || k[1].includes(' '),
  };
  return info;
}

/**
 * Composes a text: the scored items in text order with their rules. `tokens` must be the
 * tokenizer's tokens of `text` (ascending offsets).
 */
export function composeText(
  text: string,
  tokens: readonly PositionedToken[],
  rules: CompiledComposition,
): ComposedItem[] {
  const n = tokens.length;
  const sc = scratch(n);
  let summary = 0;
  for (let i = 0; i < n; i++) {
    const t = tokens[i];
    const f = formInfo(rules, t);
    summary = addToken(sc, i, f, t.isStop, summary);
    sc.starts[i] = t.indexStart;
    sc.ends[i] = t.indexEnd;
  }
  const ruleSets: Array<RuleName[] | undefined> = new Array(n);
  const symbols = applyRules(text, n, summary, null, sc.starts, sc.ends, rules, sc, ruleSets);
  if (!symbols) return plainItems(tokens);
  const items: ComposedItem[] = [];
  for (let i = 0; i < n; i++) {
    if (sc.kind[i] === 0)
      items.push(tokenItem(tokens[i], i, sc.negations[i], sc.scale[i], sc.weight[i], ruleSets[i] ?? NO_RULES));
  }
  if (symbols.length > 0) {
    items.push(...symbols);
    items.sort((a, b) => a.indexStart - b.indexStart);
  }
  return items;
}

/** composeForms' results per token (the shared scratch: valid until the next composition). */
export interface CompositionScratch {
  /** 0 scored, else not. */
  kind: Uint8Array;
  /** Product of the emphasis factors, and the number of negations (composeValue). */
  scale: Float64Array;
  negations: Uint8Array;
  /** Contrast weight. */
  weight: Float64Array;
}

/** What a token's stop-word flag adds to its case flags (ComposableForm.compositionFlags). */
export const stopFlag = (isStop: boolean): number => (isStop ? F_STOP : 0);

/**
 * A token form that keeps what the composition needs of it (core/tokenizer's TokenForm), from
 * info = computeFormInfo(rules, form): the info, its cls and its flags | stopFlag(isStop).
 */
export interface ComposableForm {
  compositionInfo: unknown;
  compositionClasses: number;
  compositionFlags: number;
}

/**
 * composeText without item objects (the text scorer's lean path, core/scoring/batch.ts): the
 * rules over the n forms, `summary` the | of their infos' summary. Returns the text's
 * emoticon/emoji items with the per-token results in the shared scratch (valid until the next
 * composition), or null for a plain text (every non-stop token scored with scale 1, weight 1
 * and no negation: composeText's plainItems).
 */
export function composeForms(
  text: string,
  n: number,
  summary: number,
  forms: ArrayLike<ComposableForm>,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
): { symbols: ComposedItem[]; scratch: CompositionScratch } | null {
  const sc = scratch(n);
  const symbols = applyRules(text, n, summary, forms, starts, ends, rules, sc, null);
  if (symbols === null) return null;
  sc.result.symbols = symbols;
  return sc.result;
}

// What a text's tokens hold (addToken's summary): the union of their C_* classes, and whether a
// cased token is all caps and whether one is not (both: all-caps emphasis applies).
const S_CLASSES = 0xff;
const S_ALL_CAPS = 0x100;
const S_NOT_ALL_CAPS = 0x200;
// And the SEEN_* bits of the tokens' strings (seenInText reads the gaps).
const S_SEEN_SHIFT = 10;
const S_SEEN_MASK = 0xf;

/** Puts token i's info into the scratch and adds it to the text's summary. */
function addToken(sc: Scratch, i: number, f: FormInfo, isStop: boolean, summary: number): number {
  sc.infos[i] = f;
  sc.cls[i] = f.cls;
  sc.flags[i] = isStop ? f.flags | F_STOP : f.flags;
  return summary | f.summary;
}

/**
 * The rules over the n tokens whose infos, classes and case flags (| F_STOP) are in `forms`
 * (composeForms) or else in sc (addToken: composeText), `summary` the | of their infos' summary,
 * and offsets in starts/ends: leaves kind,
 * negations, scale (every emphasis factor) and weight per token in sc, and returns the text's
 * emoticon and emoji items with their contrast weight, or null when no rule applies (plain
 * text). ruleSets (null: not wanted) receives each token's rule names.
 *
 * Event-driven: after one pass that sets every token's defaults, the rules visit only the
 * tokens of the lists (negators, boosters, contrast words, phrase heads) and the few tokens
 * after them; clause breaks are read from the gap before a token when asked (clauseAt). Only a
 * text with a contrast word or "!" has every gap read, since those rules act on whole
 * sentences. No closures in here: bundlers that keep function names (tsx, wrangler) pay a
 * defineProperty for each one per call.
 */
function applyRules(
  text: string,
  n: number,
  summary: number,
  forms: ArrayLike<ComposableForm> | null,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
  sc: Scratch,
  ruleSets: Array<RuleName[] | undefined> | null,
): ComposedItem[] | null {
  const { infos, cls, flags, kind, covered, role, negations, scale, weight, specials } = sc;
  let symbols: ComposedItem[] = NO_SYMBOLS;
  const seen = seenInText(rules, text, n, starts, ends, summary);
  let anyCovered = false;

  // Emoticons: whitespace-separated chunks that are VADER emoticons (":)", ":-(", "<3", ":D"); only
  // chunks holding an emoticon character are looked at.
  const marks = rules.emoticonMarks;
  if (marks && seen & SEEN_MARK) {
    marks.lastIndex = 0;
    let ti = 0;
    for (let m = marks.exec(text); m; m = marks.exec(text)) {
      let start = m.index;
      while (start > 0 && !isSpace(text.charCodeAt(start - 1))) start--;
      let end = m.index + 1;
      while (end < text.length && !isSpace(text.charCodeAt(end))) end++;
      marks.lastIndex = end;
      if (end - start > rules.emoticonMax + 3 || asciiLetterRun(text, start, end) > rules.emoticonLetters) continue;
      let chunk = text.slice(start, end);
      let v = rules.emoticons.get(chunk) ?? rules.emoticons.get(chunk.toLowerCase());
      if (v === undefined) {
        chunk = chunk.replace(TRAILING, '');
        v = chunk ? rules.emoticons.get(chunk) : undefined;
      }
      if (v === undefined) continue;
      end = start + chunk.length;
      if (symbols === NO_SYMBOLS) symbols = [];
      symbols.push(symbol(chunk, start, end, v, 'emoticon'));
      if (!anyCovered) covered.fill(0, 0, n + 1);
      anyCovered = true;
      while (ti < n && ends[ti] <= start) ti++;
      for (let j = ti; j < n && starts[j] < end; j++) covered[j] = 1;
    }
  }
  if (seen & SEEN_EMOJI && rules.emoji.size > 0 && EMOJI_ANY.test(text)) {
    for (const m of text.matchAll(EMOJI)) {
      const v = rules.emoji.get(m[0]);
      if (v === undefined) continue;
      if (symbols === NO_SYMBOLS) symbols = [];
      symbols.push(symbol(m[0], m.index!, m.index! + m[0].length, v, 'emoji'));
    }
  }

  // All-caps emphasis only when the text mixes cases (VADER's allcap_differential).
  const anyClass = summary & S_CLASSES;
  const capsDiff = (summary & (S_ALL_CAPS | S_NOT_ALL_CAPS)) === (S_ALL_CAPS | S_NOT_ALL_CAPS);
  // Plain text, the common case: no word of the lists, no emoticon or emoji, no "!" and no all-caps
  // emphasis. Every rule below would leave each item at scale 1, weight 1 and no negation.
  const bang = (seen & SEEN_BANG) !== 0;
  if (symbols.length === 0 && !bang && anyClass === 0 && !capsDiff) return null;

  // Defaults: a stop word is not scored unless it is polar; emoticon characters are not scored.
  // The tokens of the lists go to `specials`.
  let ns = 0;
  for (let i = 0; i < n; i++) {
    let c: number;
    let fl: number;
    if (forms !== null) {
      const f = forms[i];
      cls[i] = c = f.compositionClasses;
      flags[i] = fl = f.compositionFlags;
    } else {
      c = cls[i];
      fl = flags[i];
    }
    kind[i] = fl & F_STOP && !(c & C_POLAR) ? 2 : 0;
    role[i] = 0;
    negations[i] = 0;
    scale[i] = 1;
    weight[i] = 1;
    if (c & C_SPECIAL || denseTraversal) specials[ns++] = i;
  }
  if (anyCovered) for (let i = 0; i < n; i++) if (covered[i]) kind[i] = 2;

  // Contrast and "!" act on sentences: then every gap is read (clause and sentence breaks before
  // each token, "!" count of each sentence). Otherwise clauseAt reads a gap when a rule asks.
  const eager = bang || (anyClass & C_CONTRAST) !== 0 || denseTraversal;
  const bangs: number[] = eager ? readGaps(text, n, starts, ends, sc) : NO_NUMBERS;

  // Function words and two-token phrases ("not only", "kind of").
  const { sentenceOf, clauseBefore, boosterAt, boosterValue, negatorAt } = sc;
  let nb = 0;
  let nn = 0;
  let contrasts = 0;
  let notOnlyInSentence = -1;
  let skip = -1;
  for (let s = 0; s < ns; s++) {
    const i = specials[s];
    if (i <= skip || (anyCovered && covered[i])) continue;
    const c = cls[i];
    const head = c & C_PAIR_HEAD && i + 1 < n ? infoAt(forms, infos, i) : null;
    if (
      head !== null &&
      (cls[i + 1] & C_PAIR_TAIL || head.spaced || denseTraversal) &&
      !clauseAt(text, starts, ends, clauseBefore, eager, i + 1)
    ) {
      const pair = pairEntry(rules, head, infoAt(forms, infos, i + 1));
      if (pair !== null && pair.notNegating) {
        kind[i] = kind[i + 1] = 1;
        role[i] |= R_CANCELLED;
        role[i + 1] |= R_CANCELLED;
        if (eager) notOnlyInSentence = sentenceOf[i];
        skip = i + 1;
        continue;
      }
      if (pair !== null && pair.booster !== undefined) {
        kind[i] = kind[i + 1] = 1;
        boosterAt[nb] = i + 1;
        boosterValue[nb++] = pair.booster;
        skip = i + 1;
        continue;
      }
    }
    if (c & C_NEG) {
      kind[i] = 1;
      role[i] |= c & C_OPENER_NEEDED ? R_NEGATOR | R_NEEDS_OPENER : R_NEGATOR;
      negatorAt[nn++] = i;
    } else if (c & C_CONTRAST) {
      kind[i] = 1;
      if (notOnlyInSentence !== sentenceOf[i]) {
        role[i] |= R_CONTRAST;
        contrasts++;
      } else role[i] |= R_CANCELLED;
      clauseBefore[i] = 1;
      if (i + 1 < n) clauseBefore[i + 1] = 1;
    } else if (c & C_BOOSTER) {
      kind[i] = 1;
      boosterAt[nb] = i;
      boosterValue[nb++] = infoAt(forms, infos, i).booster;
    }
  }

  // A booster with no scored token after it in its clause ("Das war super.") is a word like any other.
  for (let b = 0; b < nb; b++) {
    const i = boosterAt[b];
    const value = boosterValue[b];
    if (value === 0) continue;
    let target = -1;
    for (let j = i + 1; j < n && j <= i + VADER.BOOSTER_WINDOW; j++) {
      if (clauseAt(text, starts, ends, clauseBefore, eager, j)) break;
      if (kind[j] === 0) {
        target = j;
        break;
      }
    }
    if (target < 0) {
      if (!(flags[i] & F_STOP) || cls[i] & C_POLAR) kind[i] = 0;
      continue;
    }
    const decay = FACTORS.boosterDistance[Math.min(target - i, 3)];
    if (value > 0) {
      scale[target] *= 1 + (FACTORS.booster - 1) * decay;
      addRule(ruleListAt(ruleSets, target), 'intensified');
    } else {
      scale[target] *= 1 - (1 - FACTORS.dampener) * decay;
      addRule(ruleListAt(ruleSets, target), 'downtoned');
    }
  }

  // Negation scopes: each active forward scope covers its next NEGATION_SCOPE scored tokens
  // (scopes[0 .. open - 1]: how many each has left). The sweep jumps from negator to negator while
  // no scope is open.
  const scopes = sc.scopes;
  let open = 0;
  for (let i = 0, q = 0; i < n; i++) {
    if (open === 0 && !denseTraversal) {
      while (q < nn && negatorAt[q] < i) q++;
      if (q === nn) break;
      i = negatorAt[q];
    }
    if (open > 0 && clauseAt(text, starts, ends, clauseBefore, eager, i)) open = 0;
    const r = role[i];
    if (r & R_NEGATOR && !(r & R_CANCELLED)) {
      const inScope =
        open > 0 ||
        (rules.direction === 'backward' &&
          i > 0 &&
          role[i - 1] & R_NEGATOR &&
          !clauseAt(text, starts, ends, clauseBefore, eager, i));
      if (r & R_NEEDS_OPENER && !inScope) {
        // "plus" without "ne": not a negation; a content word ("personne") is scored as usual.
        if (!(flags[i] & F_STOP)) kind[i] = 0;
        continue;
      }
      if (inScope && rules.concord) {
        // Negative concord: "ne ... jamais rien", "ありませ|ん" are one negation.
        scopes.fill(NEGATION_SCOPE, 0, open);
        continue;
      }
      if (rules.direction === 'backward') {
        negateBackward(text, starts, ends, clauseBefore, eager, i, kind, negations, ruleSets);
        continue;
      }
      let hasTarget = false;
      for (let j = i + 1; j < n && !clauseAt(text, starts, ends, clauseBefore, eager, j); j++) {
        if (kind[j] === 0) {
          hasTarget = true;
          break;
        }
      }
      // German: a negator with nothing after it in its clause looks back ("Ich mag es nicht.").
      if (!hasTarget && rules.direction === 'forward-else-backward')
        negateBackward(text, starts, ends, clauseBefore, eager, i, kind, negations, ruleSets);
      else scopes[open++] = NEGATION_SCOPE; // a second negator inside a scope (en, de) negates again
      continue;
    }
    if (kind[i] === 0 && open > 0) {
      negations[i] = open;
      addRule(ruleListAt(ruleSets, i), 'negated');
      // Each scope has one scored token less left; spent scopes end.
      let kept = 0;
      for (let k = 0; k < open; k++) if (scopes[k] > 1) scopes[kept++] = scopes[k] - 1;
      open = kept;
    }
  }

  // Contrast: the first contrast word of a sentence weights the sentence before it 0.5 and after it 1.5.
  let si = 0;
  while (contrasts > 0 && si < n) {
    let end = si;
    while (end < n && sentenceOf[end] === sentenceOf[si]) end++;
    let c = -1;
    for (let j = si; j < end; j++) {
      if (role[j] & R_CONTRAST) {
        c = j;
        break;
      }
    }
    if (c >= 0) {
      for (let j = si; j < end; j++) {
        if (kind[j] !== 0) continue;
        weight[j] = j < c ? VADER.BUT_BEFORE : VADER.BUT_AFTER;
        addRule(ruleListAt(ruleSets, j), 'contrast');
      }
    }
    si = end;
  }

  // All-caps emphasis and "!" (only a text with "!" can have a sentence with exclamation marks).
  for (let i = 0; (capsDiff || bang) && i < n; i++) {
    if (kind[i] !== 0) continue;
    let s = scale[i];
    if (capsDiff && flags[i] & F_ALL_CAPS) {
      s *= FACTORS.caps;
      addRule(ruleListAt(ruleSets, i), 'caps');
    }
    const b = bang ? Math.min(bangs[sentenceOf[i]] ?? 0, VADER.EXCL_MAX) : 0;
    if (b > 0) {
      s *= 1 + b * FACTORS.exclamation;
      addRule(ruleListAt(ruleSets, i), 'exclamation');
    }
    scale[i] = s;
  }
  // Symbols take the contrast weight of their sentence side (only a contrast sets a weight).
  for (const sym of contrasts > 0 ? symbols : NO_SYMBOLS) {
    const next = lowerBound(starts, n, sym.indexStart);
    const ref = next < n ? next : n - 1;
    if (ref >= 0 && weight[ref] !== 1 && sentenceOf[ref] === sentenceOf[Math.max(0, next - 1)]) {
      sym.weight = weight[ref];
      addRule(sym.rules, 'contrast');
    }
  }
  if (symbols === NO_SYMBOLS) return [];
  // In text order (emoticons were found before emoji): the order composeText's items have, and so
  // the order their values are summed in.
  if (symbols.length > 1) symbols.sort((a, b) => a.indexStart - b.indexStart);
  return symbols;
}

/**
 * Every gap of the text: clauseBefore (a clause or sentence break before the token) and sentenceOf
 * per token; returns the "!" count of the gap that ends each sentence.
 */
function readGaps(text: string, n: number, starts: Int32Array, ends: Int32Array, sc: Scratch): number[] {
  const { clauseBefore, sentenceOf } = sc;
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
function clauseAt(
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
function negateBackward(
  text: string,
  starts: Int32Array,
  ends: Int32Array,
  clauseBefore: Uint8Array,
  eager: boolean,
  i: number,
  kind: Uint8Array,
  negations: Uint8Array,
  ruleSets: Array<RuleName[] | undefined> | null,
): void {
  for (let j = i - 1, left = NEGATION_SCOPE; j >= 0 && left > 0; j--) {
    if (kind[j] === 0) {
      negations[j]++;
      addRule(ruleListAt(ruleSets, j), 'negated');
      left--;
    }
    if (clauseAt(text, starts, ends, clauseBefore, eager, j)) break;
  }
}

/** What a two-token phrase is (CompiledComposition.pairs). */
interface PairEntry {
  /** "not only": cancels negation and contrast. */
  notNegating: boolean;
  /** "kind of", "a bit": the booster value of the phrase. */
  booster: number | undefined;
}

/**
 * The phrase of two tokens a and b: by the surface forms first, then by the lemmas, as the joined
 * keys a + joiner + b would be looked up, without building them.
 */
function pairEntry(rules: CompiledComposition, a: FormInfo, b: FormInfo): PairEntry | null {
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

/** Token i's rule list (created on first use); null when rule names are not wanted. */
function ruleListAt(ruleSets: Array<RuleName[] | undefined> | null, i: number): RuleName[] | null {
  return ruleSets ? (ruleSets[i] ??= []) : null;
}

function symbol(s: string, start: number, end: number, valence: number, rule: 'emoticon' | 'emoji'): ComposedItem {
  return {
    tokenIndex: -1,
    string: s,
    token: s,
    indexStart: start,
    indexEnd: end,
    negations: 0,
    scale: 1,
    weight: 1,
    rules: [rule],
    valence,
  };
}

/**
 * Per-token working arrays, reused across calls (one composition at a time: the scorer is
 * synchronous). cls: list classes; flags: case flags (F_*); starts/ends: offsets; kind: 0
 * scored, 1 function word, 2 not scored; covered: part of an emoticon; role: R_* bits;
 * clauseBefore and sentenceOf: readGaps; scale and weight start at 1. The lists hold token
 * positions in text order: specials (a C_SPECIAL class), boosterAt (with boosterValue) and
 * negatorAt.
 */
interface Scratch {
  /** Per token: its FormInfo (composeText; composeForms reads the forms'). */
  infos: FormInfo[];
  cls: Uint8Array;
  flags: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  kind: Uint8Array;
  covered: Uint8Array;
  role: Uint8Array;
  clauseBefore: Uint8Array;
  negations: Uint8Array;
  sentenceOf: Int32Array;
  scale: Float64Array;
  weight: Float64Array;
  specials: Int32Array;
  boosterAt: Int32Array;
  boosterValue: Float64Array;
  negatorAt: Int32Array;
  /** Open negation scopes: scored tokens each has left (applyRules). */
  scopes: Int32Array;
  /** composeForms' answer (one object, reused). */
  result: { symbols: ComposedItem[]; scratch: CompositionScratch };
}
let scratchCap = 0;
let scratchBuf: Scratch | null = null;
function scratch(n: number): Scratch {
  if (!scratchBuf || n + 1 > scratchCap) {
    scratchCap = Math.max(64, 2 * (n + 1));
    const u8 = () => new Uint8Array(scratchCap);
    scratchBuf = {
      infos: [],
      cls: u8(),
      flags: u8(),
      starts: new Int32Array(scratchCap),
      ends: new Int32Array(scratchCap),
      kind: u8(),
      covered: u8(),
      role: u8(),
      clauseBefore: u8(),
      negations: u8(),
      sentenceOf: new Int32Array(scratchCap),
      scale: new Float64Array(scratchCap),
      weight: new Float64Array(scratchCap),
      specials: new Int32Array(scratchCap),
      boosterAt: new Int32Array(scratchCap),
      boosterValue: new Float64Array(scratchCap),
      negatorAt: new Int32Array(scratchCap),
      scopes: new Int32Array(scratchCap),
      result: { symbols: NO_SYMBOLS, scratch: null! },
    };
    scratchBuf.result.scratch = scratchBuf;
  }
  // applyRules resets the arrays it uses (plain texts never touch them).
  const b = scratchBuf;
  return b;
}

/** Shared empty list of "!" counts (never mutated). */
const NO_NUMBERS: number[] = [];

/** Shared empty symbol list (never mutated). */
const NO_SYMBOLS: ComposedItem[] = [];

/** Shared empty rule list of items without a rule (never mutated). */
const NO_RULES: RuleName[] = [];

function addRule(list: RuleName[] | null, r: RuleName): void {
  if (list && !list.includes(r)) list.push(r);
}

/** A token's item with its composed emphasis. */
function tokenItem(
  t: PositionedToken,
  i: number,
  negations: number,
  scale: number,
  weight: number,
  rules: RuleName[],
): ComposedItem {
  return {
    tokenIndex: i,
    string: t.string,
    token: t.token,
    indexStart: t.indexStart,
    indexEnd: t.indexEnd,
    negations,
    scale,
    weight,
    rules,
  };
}

/** Items of composition "mean" (and of plain texts under "rules"): every non-stop token, unchanged. */
export function plainItems(tokens: readonly PositionedToken[]): ComposedItem[] {
  const out: ComposedItem[] = [];
  for (let i = 0; i < tokens.length; i++) if (!tokens[i].isStop) out.push(tokenItem(tokens[i], i, 0, 1, 1, NO_RULES));
  return out;
}

/** First of the n tokens starting at or after `pos`. */
function lowerBound(starts: Int32Array, n: number, pos: number): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (starts[mid] < pos) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The value an item contributes on a factor's scale: its distance from `neutral` scaled by the
 * emphasis factors, and per negation multiplied by N_SCALAR (bipolar: flipped and damped) or
 * by 1 + N_SCALAR (unipolar: damped).
 */
export function composedValue(value: number, item: ComposedItem, neutral: number, bipolar: boolean): number {
  return composeValue(value, item.scale, item.negations, neutral, bipolar);
}

/**
 * The factor on an item's distance from neutral: its emphasis `scale`, and per negation
 * N_SCALAR (bipolar: flipped and damped) or 1 + N_SCALAR (unipolar: damped).
 */
export function emphasis(scale: number, negations: number, bipolar: boolean): number {
  let m = scale;
  for (let k = 0; k < negations; k++) m *= bipolar ? FACTORS.negatedBipolar : FACTORS.negatedUnipolar;
  return m;
}

/** composedValue of a value with the emphasis `scale` and `negations` of its token (emphasis 1: the value itself). */
function composeValue(value: number, scale: number, negations: number, neutral: number, bipolar: boolean): number {
  return emphasized(value, emphasis(scale, negations, bipolar), neutral);
}

/** A value whose distance from `neutral` is multiplied by `e` (e = 1: the value itself, to the bit). */
export function emphasized(value: number, e: number, neutral: number): number {
  return e === 1 ? value : neutral + (value - neutral) * e;
}
