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
const KATAKANA = /^[\p{Script=Katakana}\u30fc\uff70\uff9e\uff9f]+$/u;

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
  return conjugationPieces(text, mergeKnownHiragana(text, merged, data), data);
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
