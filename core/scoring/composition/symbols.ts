/**
 * Emoticons and emoji: found in the text (findSymbols) as items with a lexicon valence, and given
 * the contrast weight of their sentence side (weighSymbols).
 */
import { SEEN_EMOJI, SEEN_MARK } from './bits';
import type { CompiledComposition } from './compile';
import { addRule, NO_SYMBOLS, symbol, type ComposedItem } from './items';
import { asciiLetterRun, isSpace, lowerBound } from './scan';

const EMOJI = /\p{Extended_Pictographic}/gu;
const EMOJI_ANY = /\p{Extended_Pictographic}/u;
const TRAILING = /[.,!?;]+$/;

/**
 * The text's emoticon and emoji items (NO_SYMBOLS when none), in the order found: emoticons, then
 * emoji. Emoticons are whitespace-separated chunks that are VADER emoticons (":)", ":-(", "<3",
 * ":D"); only chunks holding an emoticon character are looked at. The tokens an emoticon covers
 * get covered[j] = 1 and coverage.any is set (the array is cleared on the first one, and left
 * untouched when there is none).
 */
export function findSymbols(
  text: string,
  n: number,
  starts: Int32Array,
  ends: Int32Array,
  rules: CompiledComposition,
  seen: number,
  covered: Uint8Array,
  coverage: { any: boolean },
): ComposedItem[] {
  let symbols: ComposedItem[] = NO_SYMBOLS;
  coverage.any = false;
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
      if (!coverage.any) covered.fill(0, 0, n + 1);
      coverage.any = true;
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
  return symbols;
}

/**
 * Symbols take the contrast weight of their sentence side (only a contrast sets a weight), then
 * are put in text order (emoticons were found before emoji): the order composeText's items have,
 * and so the order their values are summed in.
 */
export function weighSymbols(
  symbols: ComposedItem[],
  contrasts: number,
  n: number,
  starts: Int32Array,
  weight: Float64Array,
  sentenceOf: Int32Array,
): ComposedItem[] {
  for (const sym of contrasts > 0 ? symbols : NO_SYMBOLS) {
    const next = lowerBound(starts, n, sym.indexStart);
    const ref = next < n ? next : n - 1;
    if (ref >= 0 && weight[ref] !== 1 && sentenceOf[ref] === sentenceOf[Math.max(0, next - 1)]) {
      sym.weight = weight[ref];
      addRule(sym.rules, 'contrast');
    }
  }
  if (symbols === NO_SYMBOLS) return [];
  if (symbols.length > 1) symbols.sort((a, b) => a.indexStart - b.indexStart);
  return symbols;
}
