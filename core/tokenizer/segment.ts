/**
 * Word segmentation with exact UTF-16 offsets. en/de/fr: Intl.Segmenter word boundaries plus
 * corrections (URLs/e-mails atomic, hyphenated words joined, French elisions and clitics and
 * English contractions split). ja: TinySegmenter (model from the language file) over runs of
 * Japanese script, with katakana runs kept whole; other scripts inside Japanese text go the
 * en/de/fr way.
 */
import type { LanguageData, SegmenterModel } from './data';
import { FLAG } from './data';
import type { Language } from './languages';
import { scanWords } from './scan';

export interface Span {
  start: number;
  end: number;
}

// Linear: every repetition is bounded where a start position could otherwise scan far and fail
// (RFC 5321/1035 limits: local part 64, label 63, 127 labels), so a 100,000-character run without
// white space costs a bounded amount of work per position instead of a scan to its end.
const URL_RE =
  /(?:\b(?:https?|ftp):\/\/|\bwww\.)[^\s<>"'`{}|\\^[\]]+|[\p{L}\p{N}._%+-]{1,64}@(?:[\p{L}\p{N}-]{1,63}\.){1,127}\p{L}{2,}/giu;
const URL_ONLY_RE = /(?:\b(?:https?|ftp):\/\/|\bwww\.)[^\s<>"'`{}|\\^[\]]+/giu;
const TRAILING = new Set(['.', ',', ';', ':', '!', '?', ')', ']', '}', "'", '"', '»', '’', '”']);

/** The string without trailing punctuation (a loop from the end: a `[...]+$` regex is quadratic on long runs). */
function trimTrailingPunct(s: string): string {
  let end = s.length;
  while (end > 0 && TRAILING.has(s[end - 1])) end--;
  return s.slice(0, end);
}
const HYPHENS = new Set(['-', '\u2010', '\u2011']);
const APOS = /['\u2019]/;
const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;

const FR_ELISION = /(?:qu|jusqu|lorsqu|puisqu|quoiqu|presqu|[ldjmnstc])['\u2019](?=[\p{L}\p{N}])/iuy;
const FR_CLITICS = new Set([
  'je',
  'tu',
  'il',
  'elle',
  'on',
  'nous',
  'vous',
  'ils',
  'elles',
  'ce',
  'moi',
  'toi',
  'le',
  'la',
  'les',
  'lui',
  'leur',
  'y',
  'en',
]);
const EN_NT = /n['\u2019]t$/i;
const EN_CLITIC = /['\u2019](?:s|m|d|ll|re|ve)$/i;

const segmenters = new Map<string, Intl.Segmenter>();
function wordSegmenter(locale: string): Intl.Segmenter {
  let s = segmenters.get(locale);
  if (!s) segmenters.set(locale, (s = new Intl.Segmenter(locale, { granularity: 'word' })));
  return s;
}

/**
 * Whether text holds what every URL_RE match needs: "://", "www." (any case) or "@". Most texts
 * hold none, and this costs a few indexOf calls instead of the regex's per-position work.
 */
function mayHoldUrl(text: string): boolean {
  if (text.includes('://') || text.includes('@')) return true;
  for (let i = text.indexOf('.', 3); i >= 0; i = text.indexOf('.', i + 1)) {
    // c | 32 is 119 only for "w" and "W".
    if (
      (text.charCodeAt(i - 1) | 32) === 119 &&
      (text.charCodeAt(i - 2) | 32) === 119 &&
      (text.charCodeAt(i - 3) | 32) === 119
    )
      return true;
  }
  return false;
}

/** URL and e-mail spans (atomic tokens). */
function urlSpans(text: string): Span[] {
  const out: Span[] = [];
  if (!mayHoldUrl(text)) return out;
  // Without an '@' only the URL branch can match; skipping the e-mail branch saves its per-position work.
  const re = text.includes('@') ? URL_RE : URL_ONLY_RE;
  re.lastIndex = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const trimmed = trimTrailingPunct(m[0]);
    if (trimmed.length > 0 && HAS_WORD_CHAR.test(trimmed)) out.push({ start: m.index, end: m.index + trimmed.length });
  }
  return out;
}

const CHUNK = 1024;
/** Right context kept after a cut inside a run without white space (word-break rules look at most a few characters ahead). */
const MARGIN = 64;
const SPACE = /\s/;

/**
 * Intl.Segmenter word-like segments of text[from, to), linear in the length. V8's segment
 * iterator slows down quadratically on long strings, so the range is cut into windows of about
 * 1 KB: at the last white space in the window (always a word boundary) or, in a run without
 * white space (CJK text, "....", long tokens), at the last segment boundary at least MARGIN
 * characters before the window's end, so the boundary has the same right context the whole
 * text would give it. A single segment longer than the window is cut at the window's end.
 */
export function icuWords(text: string, from: number, to: number, locale: string): Span[] {
  const out: Span[] = [];
  const segmenter = wordSegmenter(locale);
  let start = from;
  // After a forced cut inside one long word, its continuation at the next window's start is joined to it.
  let forced = false;
  const emit = (a: number, b: number) => {
    const prev = out[out.length - 1];
    if (forced && prev && prev.end === a && a === start) prev.end = b;
    else out.push({ start: a, end: b });
  };
  while (start < to) {
    const windowEnd = Math.min(to, start + CHUNK);
    let end = windowEnd;
    let atSpace = windowEnd === to;
    if (!atSpace) {
      let cut = windowEnd;
      while (cut > start && !SPACE.test(text[cut])) cut--;
      if (cut > start) {
        end = cut;
        atSpace = true;
      }
    }
    const segments = segmenter.segment(text.slice(start, end));
    if (!atSpace) {
      // No white space in the window: cut at a segment boundary (see above).
      let safe = -1;
      let last = -1;
      for (const s of segments) {
        if (s.index > 0) {
          last = s.index;
          if (s.index <= end - start - MARGIN) safe = s.index;
        }
      }
      const cut = safe >= CHUNK / 2 ? safe : last > 0 ? last : end - start;
      end = start + cut;
      for (const s of segments) {
        if (s.index >= cut) break;
        if (s.isWordLike && HAS_WORD_CHAR.test(s.segment))
          emit(start + s.index, start + Math.min(cut, s.index + s.segment.length));
      }
      // One segment filled the whole window: the word goes on in the next window (joined there).
      forced = last <= 0;
    } else {
      for (const s of segments) {
        if (s.isWordLike && HAS_WORD_CHAR.test(s.segment)) emit(start + s.index, start + s.index + s.segment.length);
      }
      forced = false;
    }
    start = end;
  }
  return out;
}

/** French elision split: "L'homme" -> "L'", "homme"; "qu'il" -> "qu'", "il". */
function splitElisions(text: string, spans: Span[]): Span[] {
  const out: Span[] = [];
  for (const sp of spans) {
    let start = sp.start;
    for (;;) {
      // Sticky match at `start` (no copy of the rest of the span per elision); the letter after
      // the apostrophe must still be inside the span.
      FR_ELISION.lastIndex = start;
      const m = FR_ELISION.exec(text);
      if (!m || start + m[0].length >= sp.end) break;
      out.push({ start, end: start + m[0].length });
      start += m[0].length;
    }
    if (start < sp.end) out.push({ start, end: sp.end });
  }
  return out;
}

/** Whether text[from, to) holds ' or ’ (APOS), without a substring. */
function hasApostrophe(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x27 || c === 0x2019) return true;
  }
  return false;
}

/** English contractions, as the Penn Treebank tokenizer does: don't -> do n't, I'm -> I 'm. */
function splitContractions(text: string, spans: Span[], data: LanguageData | null): Span[] {
  const out: Span[] = [];
  for (const sp of spans) {
    if (sp.end - sp.start < 3 || !hasApostrophe(text, sp.start, sp.end)) {
      out.push(sp);
      continue;
    }
    const w = text.slice(sp.start, sp.end);
    const nt = EN_NT.exec(w);
    const cl = EN_CLITIC.exec(w);
    const known = data ? data.has(w.toLowerCase().replace(/\u2019/g, "'"), FLAG.KNOWN) : false;
    if (nt && nt.index > 0) {
      out.push({ start: sp.start, end: sp.start + nt.index }, { start: sp.start + nt.index, end: sp.end });
    } else if (cl && cl.index > 0 && !known) {
      out.push({ start: sp.start, end: sp.start + cl.index }, { start: sp.start + cl.index, end: sp.end });
    } else out.push(sp);
  }
  return out;
}

/**
 * Joins word spans separated by exactly one hyphen ("state-of-the-art", "2020-2021").
 * French: a trailing clitic pronoun of an inversion is split off again ("dit-il", "est-ce",
 * "va-t-il" -> "va", "il"; the euphonic t is dropped) unless the whole compound is a known word
 * ("rendez-vous", "celle-ci").
 */
function joinHyphens(text: string, spans: Span[], language: Language, data: LanguageData | null): Span[] {
  const out: Span[] = [];
  let i = 0;
  while (i < spans.length) {
    // Most words are followed by something other than one hyphen and a word: kept as they are.
    if (!(i + 1 < spans.length && spans[i + 1].start - spans[i].end === 1 && HYPHENS.has(text[spans[i].end]))) {
      out.push(spans[i++]);
      continue;
    }
    const group = [spans[i]];
    while (
      i + 1 < spans.length &&
      spans[i + 1].start - spans[i].end === 1 &&
      HYPHENS.has(text[spans[i].end]) &&
      !APOS.test(text[spans[i].end - 1] ?? '')
    ) {
      group.push(spans[++i]);
    }
    i++;
    if (language === 'fr' && group.length > 1) {
      const whole = text.slice(group[0].start, group[group.length - 1].end).toLowerCase();
      if (!(data && data.has(whole, FLAG.KNOWN))) {
        // Peel clitics off the end: "va-t-il" -> [va] [il]
        const tail: Span[] = [];
        while (group.length > 1) {
          const last = group[group.length - 1];
          const w = text.slice(last.start, last.end).toLowerCase();
          if (FR_CLITICS.has(w)) {
            tail.unshift(last);
            group.pop();
            const prev = group[group.length - 1];
            if (group.length > 1 && text.slice(prev.start, prev.end).toLowerCase() === 't') group.pop();
          } else break;
        }
        out.push({ start: group[0].start, end: group[group.length - 1].end }, ...tail);
        continue;
      }
    }
    out.push({ start: group[0].start, end: group[group.length - 1].end });
  }
  return out;
}

const ICU_LOCALE: Record<Language, string> = { en: 'en', de: 'de', fr: 'fr', ja: 'en' };

/** Intl.Segmenter words of text[from, to) in a locale: scanWords's fallback, one function per locale (no closure per call). */
const icuFallbacks = new Map<string, (from: number, to: number, text: string) => Span[]>();
function icuFallback(locale: string): (from: number, to: number, text: string) => Span[] {
  let f = icuFallbacks.get(locale);
  if (!f) icuFallbacks.set(locale, (f = (a, b, t) => icuWords(t, a, b, locale)));
  return f;
}

/** Appends the words of text[from, to) (no URL inside) to out. */
function appendWords(
  text: string,
  from: number,
  to: number,
  language: Language,
  data: LanguageData | null,
  out: Span[],
): void {
  // Latin-script chunks by the char-code scanner (scan.ts), the rest by Intl.Segmenter.
  const locale = ICU_LOCALE[language];
  let words = scanWords(text, from, to, locale, icuFallback(locale));
  if (language === 'fr') words = splitElisions(text, words);
  if (language === 'en') words = splitContractions(text, words, data);
  for (const w of joinHyphens(text, words, language, data)) out.push(w);
}

/** Segments a text without Japanese script. */
export function segmentAlphabetic(
  text: string,
  from: number,
  to: number,
  language: Language,
  data: LanguageData | null,
): Span[] {
  const out: Span[] = [];
  let pos = from;
  for (const u of urlSpans(text.slice(from, to))) {
    appendWords(text, pos, u.start + from, language, data, out);
    out.push({ start: u.start + from, end: u.end + from });
    pos = u.end + from;
  }
  appendWords(text, pos, to, language, data, out);
  return out;
}

// ---------------------------------------------------------------------------------------
// Japanese

const JA_CHAR =
  /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}\u30fc\u3005\u3006\u30f5\u30f6\uff70\uff9e\uff9f]/u;
const KATAKANA = /^[\p{Script=Katakana}\u30fc\uff70\uff9e\uff9f]+$/u;

/** TinySegmenter's character type (exported for its test's reference implementation). */
export function ctype(ch: string): string {
  if (/[一二三四五六七八九十百千万億兆]/.test(ch)) return 'M';
  if (/[一-龠々〆ヵヶ]/.test(ch)) return 'H';
  if (/[ぁ-ん]/.test(ch)) return 'I';
  if (/[ァ-ヴーｱ-ﾝﾞｰ]/.test(ch)) return 'K';
  if (/[a-zA-Zａ-ｚＡ-Ｚ]/.test(ch)) return 'A';
  if (/[0-9０-９]/.test(ch)) return 'N';
  return 'O';
}

/*
 * TinySegmenter (Taku Kudo, BSD) scores each position from ~40 features: n-grams of the
 * characters around it (UW/BW/TW), of their character types (UC/BC/TC), of the previous
 * decisions (UP/BP) and mixes (UQ/BQ/TQ). The model's tables are keyed by the features'
 * concatenated strings; they are compiled once per model to integer keys, so a position costs
 * array and integer-map lookups instead of ~40 string concatenations and string-map lookups
 * (about 5x faster). The lookups, their order and the additions are the reference's, so the
 * score of every position is the same double and the cuts are the same
 * (test/node/tokenizer-fast.test.ts compares them with the string implementation).
 */

/** Character types: O M H I K A N (ctype), and previous decisions: U O B. */
const CTYPES = 'OMHIKAN';
const PREVS = 'UOB';
const MARKERS = ['B3', 'B2', 'B1', 'E1', 'E2', 'E3'] as const;

interface CompiledSegmenter {
  bias: number;
  /** Symbol ids: the markers and every character in a table key (others are 0: no key holds them). */
  ids: Map<string, number>;
  /** Symbol count + 1 (keys are mixed-radix numbers of ids). */
  radix: number;
  /** UW1..UW6 by symbol: uw[k * radix + id]. */
  uw: Float64Array;
  /** BW1..BW3 and TW1..TW4 by id pairs and triples. */
  bw: Array<Map<number, number>>;
  tw: Array<Map<number, number>>;
  /** UC/BC/TC, UP/BP and UQ/BQ/TQ by type and decision codes. */
  uc: Float64Array;
  bc: Float64Array;
  tc: Float64Array;
  up: Float64Array;
  bp: Float64Array;
  uq: Float64Array;
  bq: Float64Array;
  tq: Float64Array;
}

const compiled = new WeakMap<SegmenterModel, CompiledSegmenter>();

/** Every way to read `key` as `arity` symbols (markers or single code points). */
function symbolParses(key: string, arity: number): string[][] {
  if (arity === 0) return key.length === 0 ? [[]] : [];
  const out: string[][] = [];
  for (const m of MARKERS)
    if (key.startsWith(m)) for (const rest of symbolParses(key.slice(m.length), arity - 1)) out.push([m, ...rest]);
  const cp = key.codePointAt(0);
  if (cp !== undefined) {
    const ch = String.fromCodePoint(cp);
    for (const rest of symbolParses(key.slice(ch.length), arity - 1)) out.push([ch, ...rest]);
  }
  return out;
}

/** Codes of a key over small alphabets (e.g. 'BHI' over PREVS, CTYPES, CTYPES), or -1. */
function smallCode(key: string, alphabets: string[]): number {
  if (key.length !== alphabets.length) return -1;
  let code = 0;
  for (let i = 0; i < key.length; i++) {
    const d = alphabets[i]!.indexOf(key[i]!);
    if (d < 0) return -1;
    code = code * alphabets[i]!.length + d;
  }
  return code;
}

function compileSegmenter(model: SegmenterModel): CompiledSegmenter {
  const known = compiled.get(model);
  if (known) return known;
  const table = (name: string): Map<string, number> => model.tables.get(name) ?? new Map();
  const ids = new Map<string, number>();
  for (const m of MARKERS) ids.set(m, ids.size + 1);
  const wordTables: Array<[string, number]> = [
    ...[1, 2, 3, 4, 5, 6].map((k): [string, number] => [`UW${k}`, 1]),
    ...[1, 2, 3].map((k): [string, number] => [`BW${k}`, 2]),
    ...[1, 2, 3, 4].map((k): [string, number] => [`TW${k}`, 3]),
  ];
  const parsed = new Map<string, Array<[string[], number]>>();
  for (const [name, arity] of wordTables) {
    const entries: Array<[string[], number]> = [];
    for (const [key, v] of table(name))
      for (const parse of symbolParses(key, arity)) {
        for (const sym of parse) if (!ids.has(sym)) ids.set(sym, ids.size + 1);
        entries.push([parse, v]);
      }
    parsed.set(name, entries);
  }
  const radix = ids.size + 1;
  const keyOf = (parse: string[]): number => parse.reduce((k, sym) => k * radix + ids.get(sym)!, 0);
  const uw = new Float64Array(6 * radix);
  for (let k = 0; k < 6; k++) for (const [parse, v] of parsed.get(`UW${k + 1}`)!) uw[k * radix + keyOf(parse)] = v;
  const maps = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, k) => new Map(parsed.get(`${prefix}${k + 1}`)!.map(([p, v]) => [keyOf(p), v])));
  const small = (prefix: string, n: number, alphabets: string[]): Float64Array => {
    const size = alphabets.reduce((a, b) => a * b.length, 1);
    const out = new Float64Array(n * size);
    for (let k = 0; k < n; k++)
      for (const [key, v] of table(`${prefix}${k + 1}`)) {
        const code = smallCode(key, alphabets);
        if (code >= 0) out[k * size + code] = v;
      }
    return out;
  };
  const c = CTYPES;
  const p = PREVS;
  const out: CompiledSegmenter = {
    bias: model.bias,
    ids,
    radix,
    uw,
    bw: maps('BW', 3),
    tw: maps('TW', 4),
    uc: small('UC', 6, [c]),
    bc: small('BC', 3, [c, c]),
    tc: small('TC', 4, [c, c, c]),
    up: small('UP', 3, [p]),
    bp: small('BP', 2, [p, p]),
    uq: small('UQ', 3, [p, c]),
    bq: small('BQ', 4, [p, c, c]),
    tq: small('TQ', 4, [p, c, c, c]),
  };
  compiled.set(model, out);
  return out;
}

/** ctype as a code (index in CTYPES), cached for the BMP. */
const ctypeCodes = new Uint8Array(0x10000).fill(255);
function ctypeCode(cp: number, ch: string): number {
  if (cp < 0x10000) {
    let t = ctypeCodes[cp]!;
    if (t === 255) ctypeCodes[cp] = t = CTYPES.indexOf(ctype(ch));
    return t;
  }
  return CTYPES.indexOf(ctype(ch));
}

/**
 * TinySegmenter over code points: a cut before chars[i] for each i with cut[i] = 1 (the
 * reference's boundaries, computed on the compiled tables). Exported for its test.
 */
export function tinySegment(chars: string[], cps: number[], model: SegmenterModel): Uint8Array {
  const m = compileSegmenter(model);
  const n = chars.length;
  const R = m.radix;
  // Symbols and types with three markers / 'O's on each side, as the reference's seg and ct.
  const sym = new Float64Array(n + 6);
  const ct = new Uint8Array(n + 6);
  sym[0] = m.ids.get('B3')!;
  sym[1] = m.ids.get('B2')!;
  sym[2] = m.ids.get('B1')!;
  sym[n + 3] = m.ids.get('E1')!;
  sym[n + 4] = m.ids.get('E2')!;
  sym[n + 5] = m.ids.get('E3')!;
  for (let i = 0; i < n; i++) {
    sym[i + 3] = m.ids.get(chars[i]!) ?? 0;
    ct[i + 3] = ctypeCode(cps[i]!, chars[i]!);
  }
  const { uw, bw, tw, uc, bc, tc, up, bp, uq, bq, tq } = m;
  const [bw1, bw2, bw3] = bw as [Map<number, number>, Map<number, number>, Map<number, number>];
  const [tw1, tw2, tw3, tw4] = tw as [
    Map<number, number>,
    Map<number, number>,
    Map<number, number>,
    Map<number, number>,
  ];
  const cut = new Uint8Array(n + 1);
  let p1 = 0; // U
  let p2 = 0;
  let p3 = 0;
  for (let i = 4; i < n + 3; ++i) {
    const w1 = sym[i - 3]!;
    const w2 = sym[i - 2]!;
    const w3 = sym[i - 1]!;
    const w4 = sym[i]!;
    const w5 = sym[i + 1]!;
    const w6 = sym[i + 2]!;
    const c1 = ct[i - 3]!;
    const c2 = ct[i - 2]!;
    const c3 = ct[i - 1]!;
    const c4 = ct[i]!;
    const c5 = ct[i + 1]!;
    const c6 = ct[i + 2]!;
    let score = m.bias;
    score += up[p1]! + up[3 + p2]! + up[6 + p3]! + bp[p1 * 3 + p2]! + bp[9 + p2 * 3 + p3]!;
    score += uw[w1]! + uw[R + w2]! + uw[2 * R + w3]! + uw[3 * R + w4]! + uw[4 * R + w5]! + uw[5 * R + w6]!;
    score += (bw1.get(w2 * R + w3) ?? 0) + (bw2.get(w3 * R + w4) ?? 0) + (bw3.get(w4 * R + w5) ?? 0);
    score +=
      (tw1.get((w1 * R + w2) * R + w3) ?? 0) +
      (tw2.get((w2 * R + w3) * R + w4) ?? 0) +
      (tw3.get((w3 * R + w4) * R + w5) ?? 0) +
      (tw4.get((w4 * R + w5) * R + w6) ?? 0);
    score += uc[c1]! + uc[7 + c2]! + uc[14 + c3]! + uc[21 + c4]! + uc[28 + c5]! + uc[35 + c6]!;
    score += bc[c2 * 7 + c3]! + bc[49 + c3 * 7 + c4]! + bc[98 + c4 * 7 + c5]!;
    score +=
      tc[(c1 * 7 + c2) * 7 + c3]! +
      tc[343 + (c2 * 7 + c3) * 7 + c4]! +
      tc[686 + (c3 * 7 + c4) * 7 + c5]! +
      tc[1029 + (c4 * 7 + c5) * 7 + c6]!;
    score += uq[p1 * 7 + c1]! + uq[21 + p2 * 7 + c2]! + uq[42 + p3 * 7 + c3]!;
    score +=
      bq[(p2 * 7 + c2) * 7 + c3]! +
      bq[147 + (p2 * 7 + c3) * 7 + c4]! +
      bq[294 + (p3 * 7 + c2) * 7 + c3]! +
      bq[441 + (p3 * 7 + c3) * 7 + c4]!;
    score +=
      tq[((p2 * 7 + c1) * 7 + c2) * 7 + c3]! +
      tq[1029 + ((p2 * 7 + c2) * 7 + c3) * 7 + c4]! +
      tq[2058 + ((p3 * 7 + c1) * 7 + c2) * 7 + c3]! +
      tq[3087 + ((p3 * 7 + c2) * 7 + c3) * 7 + c4]!;
    let p = 1; // O
    if (score > 0) {
      cut[i - 3] = 1; // boundary before chars[i - 3]
      p = 2; // B
    }
    p1 = p2;
    p2 = p3;
    p3 = p;
  }
  return cut;
}

function segmentJapaneseRun(text: string, from: number, to: number, model: SegmenterModel, data: LanguageData): Span[] {
  const chars: string[] = [];
  const cps: number[] = [];
  const starts: number[] = [];
  for (let i = from; i < to;) {
    const cp = text.codePointAt(i)!;
    const len = cp > 0xffff ? 2 : 1;
    chars.push(text.slice(i, i + len));
    cps.push(cp);
    starts.push(i);
    i += len;
  }
  starts.push(to);
  const cut = tinySegment(chars, cps, model);
  const spans: Span[] = [];
  let s = 0;
  for (let k = 1; k <= chars.length; k++) {
    if (k === chars.length || cut[k] === 1) {
      spans.push({ start: starts[s], end: starts[k] });
      s = k;
    }
  }
  // Correction: a katakana run is one word (TinySegmenter sometimes cuts loanwords).
  const merged: Span[] = [];
  for (const sp of spans) {
    const prev = merged[merged.length - 1];
    if (
      prev &&
      prev.end === sp.start &&
      KATAKANA.test(text.slice(prev.start, prev.end)) &&
      KATAKANA.test(text.slice(sp.start, sp.end))
    ) {
      prev.end = sp.end;
    } else merged.push({ ...sp });
  }
  return mergeKnownHiragana(text, merged, data);
}

const HIRAGANA1 = /^\p{Script=Hiragana}$/u;

/** Correction: single hiragana pieces that together spell a known word (と|て|も -> とても). */
function mergeKnownHiragana(text: string, spans: Span[], data: LanguageData): Span[] {
  const out: Span[] = [];
  for (let i = 0; i < spans.length; i++) {
    let merged = false;
    for (const n of [4, 3]) {
      if (i + n > spans.length) continue;
      const group = spans.slice(i, i + n);
      if (!group.every((s) => HIRAGANA1.test(text.slice(s.start, s.end)))) continue;
      const word = text.slice(group[0].start, group[n - 1].end);
      if (data.has(word, FLAG.KNOWN)) {
        out.push({ start: group[0].start, end: group[n - 1].end });
        i += n - 1;
        merged = true;
        break;
      }
    }
    if (!merged) out.push(spans[i]);
  }
  return out;
}

/** JA_CHAR per code point, cached for the BMP (0: not yet known, 1: Japanese, 2: not). */
const jaChars = new Uint8Array(0x10000);
function isJapaneseChar(cp: number): boolean {
  if (cp >= 0x10000) return JA_CHAR.test(String.fromCodePoint(cp));
  let v = jaChars[cp]!;
  if (v === 0) jaChars[cp] = v = JA_CHAR.test(String.fromCharCode(cp)) ? 1 : 2;
  return v === 1;
}

/** A letter or digit: a run without one holds no token (punctuation between Japanese runs). */
const WORD_CHAR = /[\p{L}\p{N}]/u;

export function segmentJapanese(text: string, data: LanguageData): Span[] {
  const model = data.segmenter;
  if (!model) throw new Error('the Japanese language file has no segmenter model');
  const out: Span[] = [];
  let i = 0;
  while (i < text.length) {
    const start = i;
    const isJa = isJapaneseChar(text.codePointAt(i)!);
    while (i < text.length) {
      const c = text.codePointAt(i)!;
      if (isJapaneseChar(c) !== isJa) break;
      i += c > 0xffff ? 2 : 1;
    }
    if (!isJa && !WORD_CHAR.test(text.slice(start, i))) continue;
    // Loops, not push(...spans): spreading tens of thousands of spans overflows the call stack.
    for (const sp of isJa
      ? segmentJapaneseRun(text, start, i, model, data)
      : segmentAlphabetic(text, start, i, 'ja', null))
      out.push(sp);
  }
  return out;
}
