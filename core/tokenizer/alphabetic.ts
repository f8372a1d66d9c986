/**
 * Segmentation of en/de/fr text (and of the runs of other scripts inside Japanese text): URLs and
 * e-mails atomic, words by the char-code scanner or Intl.Segmenter, then the corrections: French
 * elisions and English contractions split, hyphenated words joined (French inversion clitics
 * split off again).
 */
import type { LanguageData } from './data';
import { FLAG } from './data';
import { icuFallback } from './icu-words';
import type { Language } from './languages';
import { scanWords } from './scan';
import type { Span } from './segment';
import { urlSpans } from './urls';

const HYPHENS = new Set(['-', '\u2010', '\u2011']);
const APOS = /['\u2019]/;

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
