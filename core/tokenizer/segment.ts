/**
 * Word segmentation with exact UTF-16 offsets. en/de/fr (alphabetic.ts): Intl.Segmenter word
 * boundaries (icu-words.ts), or the char-code scanner where it gives the same (scan.ts), plus
 * corrections (URLs/e-mails atomic (urls.ts), hyphenated words joined, French elisions and
 * clitics and English contractions split, camel-case hashtags split (below)). ja (japanese.ts):
 * TinySegmenter (tiny-segmenter.ts, model from the language file) over runs of Japanese script,
 * with katakana runs kept whole; other scripts inside Japanese text go the en/de/fr way.
 */
import { segmentAlphabetic } from './alphabetic';
import type { LanguageData } from './data';
import { segmentJapanese } from './japanese';

export interface Span {
  start: number;
  end: number;
}

/** The word spans of a text, in order. */
export function segment(text: string, data: LanguageData): Span[] {
  return data.language === 'ja'
    ? segmentJapanese(text, data)
    : splitHashtags(text, segmentAlphabetic(text, 0, text.length, data.language, data));
}

/** A lower-case letter followed by an upper-case one: a word boundary inside a camel-case hashtag. */
const CASE_CHANGE = /(?<=\p{Ll})(?=\p{Lu})/gu;

/**
 * Camel-case hashtags are several words (#NotHappy -> Not, Happy; #soooGood -> sooo, Good), as
 * social-media text preprocessing splits them (e.g. ekphrasis, Baziotis et al. 2017): a span right
 * after "#" is cut where a lower-case letter meets an upper-case one and both pieces have at least
 * two characters (#iPhone and #eBay stay whole). Spans are substrings still, in order.
 */
function splitHashtags(text: string, spans: Span[]): Span[] {
  if (text.indexOf('#') < 0) return spans;
  let out: Span[] | null = null;
  for (let k = 0; k < spans.length; k++) {
    const sp = spans[k]!;
    let pieces: Span[] | null = null;
    if (sp.start > 0 && text.charCodeAt(sp.start - 1) === 0x23) {
      const word = text.slice(sp.start, sp.end);
      let from = 0;
      for (const m of word.matchAll(CASE_CHANGE)) {
        if (m.index - from < 2 || word.length - m.index < 2) continue;
        (pieces ??= []).push({ start: sp.start + from, end: sp.start + m.index });
        from = m.index;
      }
      if (pieces) pieces.push({ start: sp.start + from, end: sp.end });
    }
    if (pieces && !out) out = spans.slice(0, k);
    if (out) out.push(...(pieces ?? [sp]));
  }
  return out ?? spans;
}
