/**
 * German lemmas: Morphy full-form lexicon (case-sensitive first, so nouns keep their capital),
 * closed-class words (articles, pronouns, contractions) by table, separated verb particles
 * rejoined ("stehe ... auf." -> aufstehen); after an article the nominal reading wins.
 * Capitalized unknown words, probably nouns or names, keep their capital.
 */
import { FLAG, type LanguageData } from './data';
import { lemmaLexicon } from './lemma-lexicon';
import type { Span } from './segment';

export const DE_ARTICLES = new Set([
  'der',
  'die',
  'das',
  'den',
  'dem',
  'des',
  'ein',
  'eine',
  'einen',
  'einem',
  'einer',
  'eines',
  'kein',
  'keine',
  'keinen',
  'keinem',
  'keiner',
  'dieser',
  'diese',
  'dieses',
  'diesem',
  'diesen',
  'jeder',
  'jede',
  'jedes',
  'jedem',
  'jeden',
  'mein',
  'meine',
  'meinen',
  'meinem',
  'meiner',
  'sein',
  'seine',
  'seinen',
  'seinem',
  'seiner',
  'ihr',
  'ihre',
  'ihren',
  'ihrem',
  'ihrer',
  'unser',
  'unsere',
  'unseren',
  'unserem',
  'zum',
  'zur',
  'im',
  'am',
  'vom',
  'beim',
  'ins',
]);
const DE_COORDINATORS = new Set(['und', 'oder', 'aber', 'denn', 'sondern', 'dass', 'weil', 'wenn', 'als', 'ob']);
const CLAUSE_END = /[.!?;:,()"«»„“”\u2026\u3002]/;

// Contexts of a German token (bits of its context index): after an article, sentence-initial.
export const CTX_DE_NOUN = 1;
export const CTX_DE_INITIAL = 2;

const DE_IRREGULAR_DEGREE: Array<[RegExp, string]> = [
  [/^(?:besser|best)/, 'gut'],
  [/^(?:mehr|meist)/, 'viel'],
  [/^(?:lieber|liebst)/, 'gern'],
  [/^(?:höher|höchst)/, 'hoch'],
  [/^(?:näher|nächst)/, 'nah'],
];
const DE_DEGREE = /(?:er|ere|eren|erem|erer|eres|ste|sten|ster|stem|stes|este|esten|ester|estem|estes|st)$/;

/** Comparative/superlative of a known adjective (the lexicon lists positive forms): größer -> groß. */
function germanComparative(data: LanguageData, lower: string): string | null {
  for (const [re, lemma] of DE_IRREGULAR_DEGREE) if (re.test(lower)) return lemma;
  const m = DE_DEGREE.exec(lower);
  if (!m) return null;
  const stem = lower.slice(0, m.index);
  if (stem.length < 3) return null;
  for (const cand of [stem, stem.replace(/ä/g, 'a').replace(/ö/g, 'o').replace(/ü/g, 'u')]) {
    const i = data.find(cand);
    if (data.flagsOf(i) & FLAG.ADJ) return cand;
    const l = data.lemmaOf(i);
    if (l && data.has(l, FLAG.ADJ)) return l;
  }
  return null;
}

/**
 * The lemma of a German form not found as a separated verb: lower its lower-cased form, surface
 * its surface form (apostrophes normalized), upper whether that starts with a capital.
 */
export function lemmaDe(data: LanguageData, lower: string, surface: string, upper: boolean, ctx: number): string {
  // Sentence-initial capitals are positional: try the lower-case form first there.
  const initial = (ctx & CTX_DE_INITIAL) !== 0;
  const lemma = lemmaLexicon(data, initial ? [lower, surface] : [surface, lower], (ctx & CTX_DE_NOUN) !== 0);
  return lemma ?? germanComparative(data, lower) ?? (upper && !initial ? surface : lower);
}

/** German separated verb particle: finite verb at k, particle closing the clause later on. */
export function germanSeparable(
  data: LanguageData,
  text: string,
  spans: Span[],
  k: number,
  lower: string,
): string | null {
  for (let j = k + 1; j < spans.length && j <= k + 15; j++) {
    const gap = text.slice(spans[j - 1].end, spans[j].start);
    if (CLAUSE_END.test(gap)) return null;
    const after = j + 1 < spans.length ? text.slice(spans[j].end, spans[j + 1].start) : '.';
    const nextWord = j + 1 < spans.length ? text.slice(spans[j + 1].start, spans[j + 1].end).toLowerCase() : '';
    if (CLAUSE_END.test(after) || DE_COORDINATORS.has(nextWord)) {
      const particle = text.slice(spans[j].start, spans[j].end).toLowerCase();
      const i = data.find(`${lower}|${particle}`);
      return i >= 0 ? data.lemmaOf(i) : null;
    }
  }
  return null;
}
