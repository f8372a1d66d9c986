/**
 * Word segmentation over char codes (Intl.Segmenter is too slow per word): the word-like segments Intl.Segmenter gives for
 * text in Latin script, found in one pass without the segment iterator (which costs several
 * microseconds per word). The Unicode word-break rules (UAX #29 WB5-WB13b) restricted to the
 * characters of CLASS below: letters of Basic Latin, Latin-1 and Latin Extended-A, ASCII digits,
 * "_", the mid characters (' . , ; : · ‘ ’) and plain punctuation, spaces and line breaks.
 *
 * A white-space delimited chunk with any other character (another script, combining marks,
 * format characters, emoji, other spaces) goes to Intl.Segmenter (`fallback`); consecutive such
 * chunks go together in one call. White space is always a word boundary, so chunks are
 * independent. Before first use per locale the scanner is checked against the runtime's
 * Intl.Segmenter on probes of every class and pair of classes; if they disagree anywhere, that
 * locale always uses Intl.Segmenter (so the result is the runtime's in any case).
 */
import type { Span } from './segment';

/** Character classes (UAX #29 Word_Break values restricted to CLASS's characters). */
const OTHER = 0;
const LETTER = 1;
const DIGIT = 2;
/** ExtendNumLet: "_". */
const EXTEND_NUM = 3;
/** MidLetter: ":" "·" (joins letters). */
const MID_LETTER = 4;
/** MidNum: "," ";" (joins digits). */
const MID_NUM = 5;
/** MidNumLet and Single_Quote: "." "'" "‘" "’" (join letters and digits). */
const MID_NUM_LET = 6;
/** White space and line breaks: chunk ends (OTHER for the rules). */
const SPACE = 7;
/** Anything else: the chunk goes to Intl.Segmenter. */
const COMPLEX = 8;

const TABLE_SIZE = 0x180;
const CLASS = new Uint8Array(TABLE_SIZE).fill(COMPLEX);
{
  const set = (from: number, to: number, c: number) => CLASS.fill(c, from, to + 1);
  set(0x21, 0x7e, OTHER);
  set(0x41, 0x5a, LETTER);
  set(0x61, 0x7a, LETTER);
  set(0x30, 0x39, DIGIT);
  CLASS[0x5f] = EXTEND_NUM;
  CLASS[0x3a] = MID_LETTER;
  CLASS[0x2c] = MID_NUM;
  CLASS[0x3b] = MID_NUM;
  CLASS[0x2e] = MID_NUM_LET;
  CLASS[0x27] = MID_NUM_LET;
  set(0x09, 0x0d, SPACE);
  CLASS[0x20] = SPACE;
  // Latin-1 punctuation and symbols that are plain Word_Break Other: ¡ ¢ £ ¤ ¥ ¦ § ¨ © « ¬ ® ¯ ° ± ´ ¶ » ¿ × ÷
  for (const c of [
    0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7, 0xa8, 0xa9, 0xab, 0xac, 0xae, 0xaf, 0xb0, 0xb1, 0xb4, 0xb6, 0xbb, 0xbf,
    0xd7, 0xf7,
  ])
    CLASS[c] = OTHER;
  CLASS[0xb7] = MID_LETTER;
  // ª µ º are letters (Word_Break ALetter).
  CLASS[0xaa] = LETTER;
  CLASS[0xb5] = LETTER;
  CLASS[0xba] = LETTER;
  set(0xc0, 0xd6, LETTER);
  set(0xd8, 0xf6, LETTER);
  set(0xf8, 0x17f, LETTER);
}

/** Class of a char code (a few punctuation marks above the table: dashes, quotes, ellipsis, euro). */
function classOf(c: number): number {
  if (c < TABLE_SIZE) return CLASS[c]!;
  if (c === 0x2019 || c === 0x2018) return MID_NUM_LET;
  // ‐ ‑ ‒ – — ― “ ” „ † ‡ • … ‰ ‹ › €
  if (
    (c >= 0x2010 && c <= 0x2015) ||
    (c >= 0x201c && c <= 0x201e) ||
    c === 0x2020 ||
    c === 0x2021 ||
    c === 0x2022 ||
    c === 0x2026 ||
    c === 0x2030 ||
    c === 0x2039 ||
    c === 0x203a ||
    c === 0x20ac
  )
    return OTHER;
  return COMPLEX;
}

const isWordPart = (k: number): boolean => k === LETTER || k === DIGIT || k === EXTEND_NUM;

/**
 * Words of the simple chunk text[from, to) (no SPACE or COMPLEX inside), pushed to out: runs of
 * letters, digits and "_" (WB5, WB8-WB10, WB13a/b), joined over one mid character between two
 * letters (WB6/7: MidLetter, MidNumLet) or two digits (WB11/12: MidNum, MidNumLet). Runs of
 * only "_" are not words (no letter or digit).
 */
function scanChunk(text: string, from: number, to: number, out: Span[]): void {
  let i = from;
  while (i < to) {
    let k = classOf(text.charCodeAt(i));
    if (!isWordPart(k)) {
      i++;
      continue;
    }
    const start = i;
    let hasWordChar = k !== EXTEND_NUM;
    let last = k;
    i++;
    while (i < to) {
      k = classOf(text.charCodeAt(i));
      if (isWordPart(k)) {
        if (k !== EXTEND_NUM) hasWordChar = true;
        last = k;
        i++;
        continue;
      }
      if (i + 1 < to && (k === MID_LETTER || k === MID_NUM || k === MID_NUM_LET)) {
        const next = classOf(text.charCodeAt(i + 1));
        if (last === LETTER && next === LETTER && k !== MID_NUM) {
          i += 2;
          continue;
        }
        if (last === DIGIT && next === DIGIT && k !== MID_LETTER) {
          i += 2;
          continue;
        }
      }
      break;
    }
    if (hasWordChar) out.push({ start, end: i });
  }
}

/**
 * Word spans of text[from, to) equal to `fallback` (Intl.Segmenter word-like segments with a
 * letter or digit, in `locale`) on the same range; `fallback` runs only on chunks the scanner
 * does not cover.
 */
export function scanWords(
  text: string,
  from: number,
  to: number,
  locale: string,
  fallback: (from: number, to: number, text: string) => Span[],
): Span[] {
  return scannerAgrees(locale) ? scanWordsUnchecked(text, from, to, fallback) : fallback(from, to, text);
}

/** scanWords without the agreement check (the check itself, tests). */
export function scanWordsUnchecked(
  text: string,
  from: number,
  to: number,
  fallback: (from: number, to: number, text: string) => Span[],
): Span[] {
  const out: Span[] = [];
  let complexFrom = -1;
  let complexTo = -1;
  let i = from;
  while (i < to) {
    let k = classOf(text.charCodeAt(i));
    if (k === SPACE) {
      i++;
      continue;
    }
    // A chunk: up to the next white space; complex when any character is.
    const start = i;
    let complex = k === COMPLEX;
    i++;
    while (i < to) {
      k = classOf(text.charCodeAt(i));
      if (k === SPACE) break;
      if (k === COMPLEX) complex = true;
      i++;
    }
    if (complex) {
      if (complexFrom < 0) complexFrom = start;
      complexTo = i;
      continue;
    }
    if (complexFrom >= 0) {
      for (const sp of fallback(complexFrom, complexTo, text)) out.push(sp);
      complexFrom = -1;
    }
    scanChunk(text, start, i, out);
  }
  if (complexFrom >= 0) for (const sp of fallback(complexFrom, complexTo, text)) out.push(sp);
  return out;
}

const agreement = new Map<string, boolean>();

/** One representative of every class (letters: ASCII, Latin-1, Extended-A) for the probes. */
const PROBE_CHARS = ['a', 'é', 'Ł', '1', '_', ':', '·', ',', ';', '.', "'", '\u2019', '-', '!', '\u201c'];
const PROBE_MIDS = [':', '·', ',', ';', '.', "'", '\u2019'];
const PROBE_SIDES = ['a', 'é', '1', '_', '.', '-'];

/**
 * The probe text, between spaces: every pair of PROBE_CHARS, every mid character between two
 * PROBE_SIDES, and a few longer runs (the full triples are checked in test/node/tokenizer-fast.test.ts).
 */
export function probeText(): string {
  const parts: string[] = [];
  for (const a of PROBE_CHARS) for (const b of PROBE_CHARS) parts.push(a + b);
  for (const a of PROBE_SIDES) for (const m of PROBE_MIDS) for (const b of PROBE_SIDES) parts.push(a + m + b);
  parts.push(
    "a.b.c.d e:f:g 1.2,3;4 a1.b2 x_y_1 don't l'été rock'n'roll U.S.A. 3.14. a..b 1,,2 __ _a a_ 1_000 Straße œuvre",
  );
  return parts.join(' ');
}

/** True when the scanner gives Intl.Segmenter's words (in this runtime) on the probes. */
export function scannerAgrees(locale: string): boolean {
  let ok = agreement.get(locale);
  if (ok !== undefined) return ok;
  const segmenter = new Intl.Segmenter(locale, { granularity: 'word' });
  const text = probeText();
  ok = true;
  // In pieces of at most 512 characters cut at spaces, like every other input of Intl.Segmenter here (segment.ts icuWords).
  for (let from = 0; from < text.length && ok;) {
    let to = Math.min(text.length, from + 512);
    while (to < text.length && text[to] !== ' ') to--;
    const piece = text.slice(from, to);
    const reference: Span[] = [];
    for (const s of segmenter.segment(piece)) {
      if (s.isWordLike && /[\p{L}\p{N}]/u.test(s.segment))
        reference.push({ start: s.index, end: s.index + s.segment.length });
    }
    const ours = scanWordsUnchecked(piece, 0, piece.length, () => []);
    ok =
      ours.length === reference.length &&
      ours.every((sp, i) => sp.start === reference[i]!.start && sp.end === reference[i]!.end);
    from = to + 1;
  }
  agreement.set(locale, ok);
  return ok;
}
