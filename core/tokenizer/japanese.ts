/**
 * Japanese segmentation: TinySegmenter (tiny-segmenter.ts) over runs of Japanese script, with
 * katakana runs kept whole, single hiragana pieces of a known word joined and conjugated words
 * cut the IPADIC way (conjugation-ja.ts); runs of other scripts go the en/de/fr way (alphabetic.ts).
 */
import { segmentAlphabetic } from './alphabetic';
import { conjugationPieces } from './conjugation-ja';
import type { LanguageData, SegmenterModel } from './data';
import { FLAG } from './data';
import { HAS_WORD_CHAR } from './icu-words';
import type { Span } from './segment';
import { tinySegment } from './tiny-segmenter';

const JA_CHAR =
  /[\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Han}\u30fc\u3005\u3006\u30f5\u30f6\uff70\uff9e\uff9f]/u;

/** Code points and their offsets of a run, reused between calls (segmenting is synchronous). */
let cpScratch = new Int32Array(256);
let startScratch = new Int32Array(257);

function segmentJapaneseRun(text: string, from: number, to: number, model: SegmenterModel, data: LanguageData): Span[] {
  if (cpScratch.length < to - from) {
    cpScratch = new Int32Array(2 * (to - from));
    startScratch = new Int32Array(2 * (to - from) + 1);
  }
  const cps = cpScratch;
  const starts = startScratch;
  let n = 0;
  for (let i = from; i < to;) {
    const cp = text.codePointAt(i)!;
    cps[n] = cp;
    starts[n++] = i;
    i += cp > 0xffff ? 2 : 1;
  }
  starts[n] = to;
  const cut = tinySegment(cps, n, model);
  const spans: Span[] = [];
  let s = 0;
  for (let k = 1; k <= n; k++) {
    if (k === n || cut[k] === 1) {
      spans.push({ start: starts[s], end: starts[k] });
      s = k;
    }
  }
  // Correction: a katakana run is one word (TinySegmenter sometimes cuts loanwords). In place:
  // the spans are this call's own.
  let kept = 0;
  let prevKatakana = false;
  for (let k = 0; k < spans.length; k++) {
    const sp = spans[k]!;
    const katakana = allOf(text, sp.start, sp.end, katakanaChars, KATAKANA_CHAR);
    if (kept > 0 && prevKatakana && katakana && spans[kept - 1]!.end === sp.start) spans[kept - 1]!.end = sp.end;
    else spans[kept++] = sp;
    prevKatakana = katakana;
  }
  spans.length = kept;
  return conjugationPieces(text, mergeKnownHiragana(text, spans, data), data);
}

/** Whether a span is one hiragana character (mergeKnownHiragana). */
function isOneHiragana(text: string, sp: Span): boolean {
  const len = sp.end - sp.start;
  return (
    (len === 1 || (len === 2 && text.codePointAt(sp.start)! > 0xffff)) &&
    allOf(text, sp.start, sp.end, hiraganaChars, HIRAGANA_CHAR)
  );
}

/** Correction: single hiragana pieces that together spell a known word (と|て|も -> とても). */
function mergeKnownHiragana(text: string, spans: Span[], data: LanguageData): Span[] {
  // How many single-hiragana pieces start at each span, counted from the end (at most 4 matter).
  let run = 0;
  let runs: Uint8Array | null = null;
  for (let i = spans.length - 1; i >= 0; i--) {
    run = isOneHiragana(text, spans[i]!) ? Math.min(4, run + 1) : 0;
    if (run >= 3) (runs ??= new Uint8Array(spans.length))[i] = run;
  }
  if (runs === null) return spans;
  const out: Span[] = [];
  for (let i = 0; i < spans.length; i++) {
    let merged = false;
    for (let n = 4; n >= 3 && runs[i]! >= 3; n--) {
      if (runs[i]! < n) continue;
      const start = spans[i]!.start;
      const end = spans[i + n - 1]!.end;
      if (data.has(text.slice(start, end), FLAG.KNOWN)) {
        out.push({ start, end });
        i += n - 1;
        merged = true;
        break;
      }
    }
    if (!merged) out.push(spans[i]!);
  }
  return out;
}

const KATAKANA_CHAR = /^[\p{Script=Katakana}\u30fc\uff70\uff9e\uff9f]$/u;
const HIRAGANA_CHAR = /^\p{Script=Hiragana}$/u;
/** The regexes' answers per BMP code unit (0: not yet known, 1: yes, 2: no): one array load per character. */
const katakanaChars = new Uint8Array(0x10000);
const hiraganaChars = new Uint8Array(0x10000);

/** Whether every code point of text[start, end) matches `one` (a one-character regex), cached per BMP unit. */
function allOf(text: string, start: number, end: number, cache: Uint8Array, one: RegExp): boolean {
  for (let i = start; i < end;) {
    const cp = text.codePointAt(i)!;
    if (!matches(cp, cache, one)) return false;
    i += cp > 0xffff ? 2 : 1;
  }
  return end > start;
}

/** JA_CHAR per code point, cached for the BMP (0: not yet known, 1: Japanese, 2: not). */
const jaChars = new Uint8Array(0x10000);
const isJapaneseChar = (cp: number): boolean => matches(cp, jaChars, JA_CHAR);

/** Whether code point cp matches `one` (a one-character regex), its answer cached per BMP unit in `cache` (0: not yet known, 1: yes, 2: no). */
function matches(cp: number, cache: Uint8Array, one: RegExp): boolean {
  if (cp > 0xffff) return one.test(String.fromCodePoint(cp));
  let v = cache[cp]!;
  if (v === 0) cache[cp] = v = one.test(String.fromCharCode(cp)) ? 1 : 2;
  return v === 1;
}

/** Spans of a Japanese text: runs of Japanese script by TinySegmenter, the runs between them as en/de/fr text. */
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
    // A run without a letter or digit holds no token (punctuation between Japanese runs).
    if (!isJa && !HAS_WORD_CHAR.test(text.slice(start, i))) continue;
    // Loops, not push(...spans): spreading tens of thousands of spans overflows the call stack.
    for (const sp of isJa
      ? segmentJapaneseRun(text, start, i, model, data)
      : segmentAlphabetic(text, start, i, 'ja', null))
      out.push(sp);
  }
  return out;
}
