/**
 * URL and e-mail spans: atomic tokens of en/de/fr text (alphabetic.ts cuts the words around them).
 */
import { HAS_WORD_CHAR } from './icu-words';
import type { Span } from './segment';

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
export function urlSpans(text: string): Span[] {
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
