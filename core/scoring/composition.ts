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
  /** Every single-word key with its classes (C_* bits): one lookup per key instead of one per list. */
  classes: Map<string, number>;
  /** Per lemma: classes and case flags of the surface form last seen with it (see formInfo). */
  forms: Map<string, FormInfo>;
  /** First tokens of the two-token phrases (only these build a pair key). */
  pairHeads: Set<string>;
  /** The two-token phrases (notNegating and booster keys) by head and tail key (pairEntry). */
  pairs: Map<string, Map<string, PairEntry>>;
  /** Characters that mark a chunk as a possible emoticon (not letters, digits or . , ! ? ' "). */
  emoticonMarks: RegExp | null;
  /** The same characters as UTF-16 units: a table for ASCII, a set for the others (applyRules' pre-scan). */
  asciiMarks: Uint8Array;
  otherMarks: Set<number>;
  /** Any ASCII mark (preScan); null when there is none. */
  asciiMarkTest: RegExp | null;
  /** Any "!", "！", mark or unit at or above U+00A9 (what every preScan bit and hasBang need). */
  anySpecial: RegExp;
}

const cache = new WeakMap<CompositionData, CompiledComposition>();

/** A UTF-16 unit as a regex escape (\uXXXX). */
const unitEscape = (c: number): string => `\\u${c.toString(16).padStart(4, '0')}`;

/** What composeText needs of a token that depends only on its surface form and lemma. */
export interface FormInfo {
  surface: string;
  /** C_* bits of both keys. */
  cls: number;
  /** F_CASED: has an upper- or lower-case letter; F_ALL_CAPS: two or more letters, all upper case. */
  flags: number;
}
const F_CASED = 1;
const F_ALL_CAPS = 2;
/** In the scratch flags only (not a property of the form's case): the token is a stop word. */
export const F_STOP = 4;
/** Distinct forms kept per language before the map starts afresh (bounds memory on hostile input). */
const FORMS_MAX = 50_000;
const C_NEG = 1;
const C_OPENER_NEEDED = 2;
const C_CONTRAST = 4;
const C_BOOSTER = 8;
const C_POLAR = 16;
const C_PAIR_HEAD = 32;
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
      let tails = pairs.get(head);
      if (!tails) pairs.set(head, (tails = new Map()));
      tails.set(k.slice(cut + joiner.length), { notNegating: notNegating.has(k), booster: boosters.get(k) });
    }
  }
  const marks = new Set<string>();
  for (const k of emoticons.keys()) for (const ch of k) if (!/[\p{L}\p{N}.,!?'"]/u.test(ch)) marks.add(ch);
  const esc = [...marks].map((ch) => ch.replace(/[\\\]^-]/g, '\\$&')).join('');
  const asciiMarks = new Uint8Array(128);
  const otherMarks = new Set<number>();
  for (const ch of marks) {
    // Every UTF-16 unit of a mark: a mark outside the BMP shows up as its surrogates.
    for (let i = 0; i < ch.length; i++) {
      const c = ch.charCodeAt(i);
      if (c < 128) asciiMarks[c] = 1;
      else otherMarks.add(c);
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
    pairHeads,
    emoticonMarks: esc ? new RegExp(`[${esc}]`, 'gu') : null,
    asciiMarks,
    otherMarks,
    anySpecial: new RegExp(
      `[!\\uff01${[...asciiMarks.keys()]
        .filter((c) => asciiMarks[c])
        .concat([...otherMarks])
        .map(unitEscape)
        .join('')}\\u00a9-\\uffff]`,
    ),
    asciiMarkTest: asciiMarks.some((m) => m === 1)
      ? new RegExp(
          `[${[...asciiMarks.keys()]
            .filter((c) => asciiMarks[c])
            .map(unitEscape)
            .join('')}]`,
        )
      : null,
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

// What preScan saw in a text: an emoticon mark, a unit from which an Extended_Pictographic code
// point can start (all are at or above U+00A9).
const SEEN_MARK = 2;
const SEEN_EMOJI = 4;

/**
 * SEEN_* bits of a text (a superset: a bit may be set where the regex it guards finds nothing):
 * two cheap native scans, an ASCII character class of the marks and any unit at or above
 * U+00A9 (where every Extended_Pictographic code point and every non-ASCII mark lies); "!" is
 * looked for only where it decides something (SEEN_BANG is not set here).
 */
function preScan(text: string, rules: CompiledComposition): number {
  let seen = 0;
  if (rules.asciiMarkTest !== null && rules.asciiMarkTest.test(text)) seen |= SEEN_MARK;
  if (HIGH_UNIT.test(text)) seen |= rules.otherMarks.size > 0 ? SEEN_EMOJI | SEEN_MARK : SEEN_EMOJI;
  return seen;
}

/** Whether the text holds "!" or "！". */
function hasBang(text: string): boolean {
  return text.indexOf('!') >= 0 || text.indexOf('\uff01') >= 0;
}

const HIGH_UNIT = /[\u00a9-\uffff]/;
const EMOJI = /\p{Extended_Pictographic}/gu;
const EMOJI_ANY = /\p{Extended_Pictographic}/u;
const TRAILING = /[.,!?;]+$/;
const CASED = /\p{Lu}/u;
const LOWER = /\p{Ll}/u;

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
 * A token's classes and case flags, computed once per form (texts repeat their words: two
 * lower-casings, two map lookups and the case tests per token were most of composeText's time).
 * Keyed by the lemma, which the tokenizer hands out from its own cache (the same string object
 * every time, so its hash is computed once), and checked against the surface form.
 */
function formInfo(rules: CompiledComposition, t: TokenLike): FormInfo {
  const hit = rules.forms.get(t.token);
  if (hit !== undefined && hit.surface === t.string) return hit;
  const info = formClasses(rules, t);
  if (rules.forms.size >= FORMS_MAX) rules.forms.clear();
  rules.forms.set(t.token, info);
  return info;
}

/** A token's composition classes (C_* bits of its surface and lemma keys) and case flags (F_*), computed afresh. */
export function formClasses(rules: CompiledComposition, t: FormLike): FormInfo {
  const k = keysOf(t);
  const classes = rules.classes;
  const cls = (classes.get(k[0]) ?? 0) | (k[1] !== k[0] ? (classes.get(k[1]) ?? 0) : 0);
  const cased = CASED.test(t.string) || LOWER.test(t.string);
  const info: FormInfo = {
    surface: t.string,
    cls,
    flags: (cased ? F_CASED : 0) | (isAllCaps(t.string) ? F_ALL_CAPS : 0),
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
  for (let i = 0; i < n; i++) {
    const t = tokens[i];
    const f = formInfo(rules, t);
    sc.cls[i] = f.cls;
    sc.flags[i] = t.isStop ? f.flags | F_STOP : f.flags;
    sc.starts[i] = t.indexStart;
    sc.ends[i] = t.indexEnd;
  }
  const ruleSets: Array<RuleName[] | undefined> = new Array(n);
  const symbols = applyRules(text, n, tokens, sc.starts, sc.ends, rules, sc, ruleSets);
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

/** composeForms' working arrays: the caller fills cls and flags, composeForms leaves its results in the others. */
export interface CompositionScratch {
  /** Per token: C_* classes and case flags (formClasses), the latter | F_STOP for a stop word. */
  cls: Uint8Array;
  flags: Uint8Array;
  /** Per token: 0 scored, else not. */
  kind: Uint8Array;
  negations: Uint8Array;
  scale: Float64Array;
  weight: Float64Array;
}

/** The arrays of composeForms for n tokens (shared scratch: fill cls and flags, then call composeForms before any other composition). */
export function compositionScratch(n: number): CompositionScratch {
  return scratch(n);
}

/**
 * composeText without item objects (the text scorer's lean path, core/scoring/batch.ts) over
 * `sc` from compositionScratch(n), cls and flags filled by the caller: returns the text's
 * emoticon/emoji items with the per-token results in sc, or null for a plain text (every
 * non-stop token scored with scale 1, weight 1 and no negation: composeText's plainItems).
 */
export function composeForms(
  text: string,
  n: number,
  tokens: ArrayLike<FormLike>,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
  sc: CompositionScratch,
): ComposedItem[] | null {
  if (sc !== scratchBuf) throw new Error('composeForms: not the current composition scratch');
  return applyRules(text, n, tokens, starts, ends, rules, scratchBuf, null);
}

/**
 * The rules over the n tokens whose classes and case flags (| F_STOP) are in sc and offsets in
 * starts/ends: leaves kind, negations, scale (every emphasis factor) and weight per token in sc,
 * and returns the text's emoticon and emoji items with their contrast weight, or null when no
 * rule applies (plain text). ruleSets (null: not wanted) receives each token's rule names.
 * A pass whose words the text does not hold (boosters, negators, contrast, caps or "!") is
 * skipped: it would change nothing. No closures in here: bundlers that keep function names
 * (tsx, wrangler) pay a defineProperty for each one per call.
 */
function applyRules(
  text: string,
  n: number,
  tokens: ArrayLike<FormLike>,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
  sc: Scratch,
  ruleSets: Array<RuleName[] | undefined> | null,
): ComposedItem[] | null {
  const {
    cls,
    flags,
    kind,
    covered,
    clauseBefore,
    negator,
    contrastAt,
    cancelled,
    negations,
    sentenceOf,
    boosterOf,
    scale,
    weight,
  } = sc;
  let symbols: ComposedItem[] = NO_SYMBOLS;
  // Most texts hold no "!", mark or unit >= U+00A9 at all: one scan tells, and the others are skipped.
  const special = rules.anySpecial.test(text);
  const seen = special ? preScan(text, rules) : 0;
  let coveredReset = false;

  // Emoticons: whitespace-separated chunks that are VADER emoticons (":)", ":-(", "<3", ":D"); only
  // chunks holding an emoticon character are looked at.
  const marks = rules.emoticonMarks;
  if (marks && seen & SEEN_MARK) {
    covered.fill(0, 0, n + 1);
    coveredReset = true;
    marks.lastIndex = 0;
    let ti = 0;
    for (let m = marks.exec(text); m; m = marks.exec(text)) {
      let start = m.index;
      while (start > 0 && !isSpace(text.charCodeAt(start - 1))) start--;
      let end = m.index + 1;
      while (end < text.length && !isSpace(text.charCodeAt(end))) end++;
      marks.lastIndex = end;
      if (end - start > rules.emoticonMax + 3) continue;
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

  // List classes and case: all-caps emphasis only when the text mixes cases (VADER's allcap_differential).
  let anyClass = 0;
  let cased = 0;
  let upper = 0;
  for (let i = 0; i < n; i++) {
    anyClass |= cls[i];
    const f = flags[i];
    if (f & F_CASED) {
      cased++;
      if (f & F_ALL_CAPS) upper++;
    }
  }
  const capsDiff = upper > 0 && upper < cased;
  // Plain text, the common case: no word of the lists, no emoticon or emoji, no "!" and no all-caps
  // emphasis. Every rule below would leave each item at scale 1, weight 1 and no negation.
  const bang = special && hasBang(text);
  if (symbols.length === 0 && !bang && anyClass === 0 && !capsDiff) return null;

  for (let i = 0; i <= n; i++) {
    kind[i] = 0;
    clauseBefore[i] = 0;
    negator[i] = 0;
    contrastAt[i] = 0;
    cancelled[i] = 0;
    negations[i] = 0;
    boosterOf[i] = 0;
    scale[i] = 1;
    weight[i] = 1;
  }
  if (!coveredReset) covered.fill(0, 0, n + 1);

  // Gaps: clause and sentence breaks before each token; '!' count of the gap after the last token.
  const bangs: number[] = [];
  let sentence = 0;
  for (let i = 0; i <= n; i++) {
    const from = i === 0 ? 0 : ends[i - 1];
    const to = i === n ? text.length : starts[i];
    if (to - from <= 1 && (to === from || text.charCodeAt(from) === 32)) {
      // no gap or one space: neither a clause nor a sentence break (the common case, checked cheaply)
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

  // Function words and two-token phrases ("not only", "kind of").
  let keyCache: Array<[string, string] | undefined> | null = null;
  let boosters = 0;
  let negators = 0;
  let contrasts = 0;
  let notOnlyInSentence = -1;
  for (let i = 0; i < n; i++) {
    if (covered[i]) {
      kind[i] = 2;
      continue;
    }
    const c = cls[i];
    if (c & C_PAIR_HEAD && i + 1 < n && !clauseBefore[i + 1]) {
      const pair = pairEntry(rules, keyAt((keyCache ??= []), tokens, i), keyAt(keyCache, tokens, i + 1));
      if (pair !== null && pair.notNegating) {
        kind[i] = kind[i + 1] = 1;
        cancelled[i] = cancelled[i + 1] = 1;
        notOnlyInSentence = sentenceOf[i];
        i++;
        continue;
      }
      if (pair !== null && pair.booster !== undefined) {
        kind[i] = kind[i + 1] = 1;
        boosterOf[i + 1] = pair.booster;
        boosters++;
        i++;
        continue;
      }
    }
    if (c & C_NEG) {
      kind[i] = 1;
      negator[i] = c & C_OPENER_NEEDED ? 2 : 1;
      negators++;
    } else if (c & C_CONTRAST) {
      kind[i] = 1;
      if (notOnlyInSentence !== sentenceOf[i]) {
        contrastAt[i] = 1;
        contrasts++;
      } else cancelled[i] = 1;
      clauseBefore[i] = 1;
      if (i + 1 < n) clauseBefore[i + 1] = 1;
    } else if (c & C_BOOSTER) {
      kind[i] = 1;
      const k = keyAt((keyCache ??= []), tokens, i);
      boosterOf[i] = rules.boosters.get(k[0]) ?? rules.boosters.get(k[1])!;
      boosters++;
    } else if (flags[i] & F_STOP && !(c & C_POLAR)) {
      kind[i] = 2;
    }
  }

  // A booster with no scored token after it in its clause ("Das war super.") is a word like any other.
  for (let i = 0; boosters > 0 && i < n; i++) {
    if (boosterOf[i] === 0) continue;
    let target = -1;
    for (let j = i + 1; j < n && j <= i + VADER.BOOSTER_WINDOW && !clauseBefore[j]; j++) {
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
    if (boosterOf[i] > 0) {
      scale[target] *= 1 + (FACTORS.booster - 1) * decay;
      addRule(ruleListAt(ruleSets, target), 'intensified');
    } else {
      scale[target] *= 1 - (1 - FACTORS.dampener) * decay;
      addRule(ruleListAt(ruleSets, target), 'downtoned');
    }
  }

  // Negation scopes: each active forward scope covers its next NEGATION_SCOPE scored tokens.
  let scopes: number[] = [];
  for (let i = 0; negators > 0 && i < n; i++) {
    if (clauseBefore[i] && scopes.length > 0) scopes = [];
    if (negator[i] && !cancelled[i]) {
      const inScope =
        scopes.length > 0 || (rules.direction === 'backward' && i > 0 && negator[i - 1] > 0 && !clauseBefore[i]);
      if (negator[i] === 2 && !inScope) {
        // "plus" without "ne": not a negation; a content word ("personne") is scored as usual.
        if (!(flags[i] & F_STOP)) kind[i] = 0;
        continue;
      }
      if (inScope && rules.concord) {
        // Negative concord: "ne ... jamais rien", "ありませ|ん" are one negation.
        scopes.fill(NEGATION_SCOPE);
        continue;
      }
      if (rules.direction === 'backward') {
        negateBackward(i, kind, negations, clauseBefore, ruleSets);
        continue;
      }
      let hasTarget = false;
      for (let j = i + 1; j < n && !clauseBefore[j]; j++) {
        if (kind[j] === 0) {
          hasTarget = true;
          break;
        }
      }
      // German: a negator with nothing after it in its clause looks back ("Ich mag es nicht.").
      if (!hasTarget && rules.direction === 'forward-else-backward')
        negateBackward(i, kind, negations, clauseBefore, ruleSets);
      else scopes.push(NEGATION_SCOPE); // a second negator inside a scope (en, de) negates again
      continue;
    }
    if (kind[i] === 0 && scopes.length > 0) {
      negations[i] = scopes.length;
      addRule(ruleListAt(ruleSets, i), 'negated');
      // Each scope has one scored token less left; spent scopes end.
      let kept = 0;
      for (const left of scopes) if (left > 1) scopes[kept++] = left - 1;
      scopes.length = kept;
    }
  }

  // Contrast: the first contrast word of a sentence weights the sentence before it 0.5 and after it 1.5.
  let si = 0;
  while (contrasts > 0 && si < n) {
    let end = si;
    while (end < n && sentenceOf[end] === sentenceOf[si]) end++;
    let c = -1;
    for (let j = si; j < end; j++) {
      if (contrastAt[j]) {
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
    const b = Math.min(bangs[sentenceOf[i]] ?? 0, VADER.EXCL_MAX);
    if (b > 0) {
      s *= 1 + b * FACTORS.exclamation;
      addRule(ruleListAt(ruleSets, i), 'exclamation');
    }
    scale[i] = s;
  }
  // Symbols take the contrast weight of their sentence side.
  for (const sym of symbols) {
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

/** The scored tokens before negator i in its clause, at most NEGATION_SCOPE of them, take one negation more. */
function negateBackward(
  i: number,
  kind: Uint8Array,
  negations: Uint8Array,
  clauseBefore: Uint8Array,
  ruleSets: Array<RuleName[] | undefined> | null,
): void {
  for (let j = i - 1, left = NEGATION_SCOPE; j >= 0 && left > 0; j--) {
    if (kind[j] === 0) {
      negations[j]++;
      addRule(ruleListAt(ruleSets, j), 'negated');
      left--;
    }
    if (clauseBefore[j]) break;
  }
}

/** Both lookup keys of token i, computed once per composition. */
function keyAt(cache: Array<[string, string] | undefined>, tokens: ArrayLike<FormLike>, i: number): [string, string] {
  return (cache[i] ??= keysOf(tokens[i]));
}

/** What a two-token phrase is (CompiledComposition.pairs). */
interface PairEntry {
  /** "not only": cancels negation and contrast. */
  notNegating: boolean;
  /** "kind of", "a bit": the booster value of the phrase. */
  booster: number | undefined;
}

/**
 * The phrase of two tokens with keys a and b: by the surface forms first, then by the lemmas, as
 * the joined keys a + joiner + b would be looked up, without building them.
 */
function pairEntry(rules: CompiledComposition, a: [string, string], b: [string, string]): PairEntry | null {
  if (rules.joiner === ' ' && (a[0].includes(' ') || a[1].includes(' '))) {
    // A head with a space of its own (no tokenizer gives one): the joined keys themselves.
    const p: [string, string] = [a[0] + ' ' + b[0], a[1] + ' ' + b[1]];
    const booster = rules.boosters.get(p[0]) ?? rules.boosters.get(p[1]);
    const notNegating = hasKey(rules.notNegating, p);
    return notNegating || booster !== undefined ? { notNegating, booster } : null;
  }
  const s = rules.pairs.get(a[0])?.get(b[0]);
  const l = rules.pairs.get(a[1])?.get(b[1]);
  if (s === undefined && l === undefined) return null;
  return {
    notNegating: (s?.notNegating ?? false) || (l?.notNegating ?? false),
    booster: s?.booster ?? l?.booster,
  };
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
 * synchronous). cls: list classes; flags: case flags (F_*); starts/ends: offsets; kind: 0 scored, 1 function word, 2 not scored; negator: 1
 * negator, 2 needs an opener; cancelled: "not only" (neither negation nor contrast); boosterOf:
 * +1 booster / -1 dampener; scale and weight start at 1.
 */
interface Scratch {
  cls: Uint8Array;
  flags: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  kind: Uint8Array;
  covered: Uint8Array;
  clauseBefore: Uint8Array;
  negator: Uint8Array;
  contrastAt: Uint8Array;
  cancelled: Uint8Array;
  negations: Uint8Array;
  sentenceOf: Int32Array;
  boosterOf: Float64Array;
  scale: Float64Array;
  weight: Float64Array;
}
let scratchCap = 0;
let scratchBuf: Scratch | null = null;
function scratch(n: number): Scratch {
  if (!scratchBuf || n + 1 > scratchCap) {
    scratchCap = Math.max(64, 2 * (n + 1));
    const u8 = () => new Uint8Array(scratchCap);
    scratchBuf = {
      cls: u8(),
      flags: u8(),
      starts: new Int32Array(scratchCap),
      ends: new Int32Array(scratchCap),
      kind: u8(),
      covered: u8(),
      clauseBefore: u8(),
      negator: u8(),
      contrastAt: u8(),
      cancelled: u8(),
      negations: u8(),
      sentenceOf: new Int32Array(scratchCap),
      boosterOf: new Float64Array(scratchCap),
      scale: new Float64Array(scratchCap),
      weight: new Float64Array(scratchCap),
    };
  }
  // applyRules resets the arrays it uses (plain texts never touch them).
  const b = scratchBuf;
  return b;
}

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

/** composedValue of a value with the emphasis `scale` and `negations` of its token. */
export function composeValue(
  value: number,
  scale: number,
  negations: number,
  neutral: number,
  bipolar: boolean,
): number {
  let d = (value - neutral) * scale;
  for (let k = 0; k < negations; k++) d *= bipolar ? FACTORS.negatedBipolar : FACTORS.negatedUnipolar;
  return neutral + d;
}
