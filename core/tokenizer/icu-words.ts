/**
 * Intl.Segmenter word segments in linear time: the fallback of the char-code scanner (scan.ts)
 * for every chunk it does not handle, one segmenter per locale.
 */
import type { Span } from './segment';

/** A letter or digit: a segment, URL or run of text without one holds no token. */
export const HAS_WORD_CHAR = /[\p{L}\p{N}]/u;

const segmenters = new Map<string, Intl.Segmenter>();
function wordSegmenter(locale: string): Intl.Segmenter {
  let s = segmenters.get(locale);
  if (!s) segmenters.set(locale, (s = new Intl.Segmenter(locale, { granularity: 'word' })));
  return s;
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

/** Intl.Segmenter words of text[from, to) in a locale: scanWords's fallback, one function per locale (no closure per call). */
const icuFallbacks = new Map<string, (from: number, to: number, text: string) => Span[]>();
export function icuFallback(locale: string): (from: number, to: number, text: string) => Span[] {
  let f = icuFallbacks.get(locale);
  if (!f) icuFallbacks.set(locale, (f = (a, b, t) => icuWords(t, a, b, locale)));
  return f;
}
