/**
 * English lemmas: Penn-style contractions, WordNet exception lists, then WordNet "morphy"
 * detachment rules checked against the WordNet lemma list; after a determiner the noun reading
 * wins. One token of context (CTX_EN_*), no part-of-speech tagger.
 */
import { FLAG, type LanguageData } from './data';

export const EN_DETERMINERS = new Set([
  'the',
  'a',
  'an',
  'this',
  'these',
  'those',
  'my',
  'your',
  'his',
  'its',
  'our',
  'their',
  'every',
  'each',
  'several',
  "'s",
]);
export const EN_SUBJECTS = new Set([
  'i',
  'you',
  'he',
  'she',
  'it',
  'we',
  'they',
  'who',
  'to',
  'can',
  'could',
  'will',
  'would',
  'shall',
  'should',
  'may',
  'might',
  'must',
  "n't",
  'not',
  'also',
  'often',
  'never',
  'always',
]);
export const EN_S_IS = new Set([
  'it',
  'he',
  'she',
  'that',
  'what',
  'there',
  'here',
  'who',
  'where',
  'how',
  'this',
  'everything',
  'nothing',
  'something',
]);
// A Map, not an object literal: user words such as "constructor" or "__proto__" must not hit Object.prototype.
const EN_CONTRACTIONS = new Map<string, string>([
  ["n't", 'not'],
  ["'m", 'be'],
  ["'re", 'be'],
  ["'ve", 'have'],
  ["'ll", 'will'],
  ["'d", 'would'],
]);

const NOUN_RULES: Array<[string, string]> = [
  ['ses', 's'],
  ['xes', 'x'],
  ['zes', 'z'],
  ['ches', 'ch'],
  ['shes', 'sh'],
  ['men', 'man'],
  ['ies', 'y'],
  ['s', ''],
];
const VERB_RULES: Array<[string, string]> = [
  ['ies', 'y'],
  ['es', 'e'],
  ['es', ''],
  ['s', ''],
  ['ed', 'e'],
  ['ed', ''],
  ['ing', 'e'],
  ['ing', ''],
];
const ADJ_RULES: Array<[string, string]> = [
  ['er', ''],
  ['est', ''],
  ['er', 'e'],
  ['est', 'e'],
];

// Contexts of an English token (bits of its context index): see lemmaEn.
export const CTX_EN_NOUN = 1;
export const CTX_EN_VERB = 2;
export const CTX_EN_NT = 4;
export const CTX_EN_S_IS = 8;

function morphy(data: LanguageData, w: string, rules: Array<[string, string]>, flag: number): string | null {
  for (const [suffix, repl] of rules) {
    if (w.length > suffix.length + 1 && w.endsWith(suffix)) {
      const stem = w.slice(0, w.length - suffix.length) + repl;
      if (data.has(stem, flag)) return stem;
      // doubled final consonant: running -> run, stopped -> stop
      if (
        repl === '' &&
        (suffix === 'ing' || suffix === 'ed' || suffix === 'er' || suffix === 'est') &&
        /([bcdfgklmnprstvz])\1$/.test(stem)
      ) {
        const single = stem.slice(0, -1);
        if (data.has(single, flag)) return single;
      }
    }
  }
  return null;
}

/**
 * w: the lower-cased form with apostrophes normalized (forms.ts), i: its key index (data.find(w)).
 * Context (ctx, CTX_EN_*): the previous token a determiner (and its lemma not "be"), a subject,
 * one of EN_S_IS; the next token "n't".
 */
export function lemmaEn(data: LanguageData, w: string, i: number, ctx: number): string {
  const contraction = EN_CONTRACTIONS.get(w);
  if (contraction !== undefined) return contraction;
  if (w === "'s") return ctx & CTX_EN_S_IS ? 'be' : "'s";
  if (ctx & CTX_EN_NT) {
    if (w === 'ca') return 'can';
    if (w === 'wo') return 'will';
    if (w === 'sha') return 'shall';
  }
  const f = data.flagsOf(i);
  const nounContext = (ctx & CTX_EN_NOUN) !== 0;
  const verbContext = (ctx & CTX_EN_VERB) !== 0;
  // A plural that is also listed as a lemma (bridges, costs): the shorter lemma wins, as NLTK does.
  const plural = w.endsWith('s') && !w.endsWith('ss') && (f & FLAG.NOUN) !== 0 && !(f & FLAG.STOP);
  if (nounContext) {
    const n = data.nounLemmaOf(i) ?? (plural ? morphy(data, w, NOUN_RULES, FLAG.NOUN) : null);
    if (n) return n;
    if (f & (FLAG.NOUN | FLAG.ADJ)) return w;
    const r = morphy(data, w, NOUN_RULES, FLAG.NOUN);
    if (r) return r;
  }
  const exc = data.lemmaOf(i);
  if (exc) return exc;
  if (verbContext || /(?:ing|ed)$/.test(w)) {
    const r = morphy(data, w, VERB_RULES, FLAG.VERB);
    if (r) return r;
  }
  const n = data.nounLemmaOf(i) ?? (plural ? morphy(data, w, NOUN_RULES, FLAG.NOUN) : null);
  if (n) return n;
  if (f & (FLAG.NOUN | FLAG.VERB | FLAG.ADJ | FLAG.ADV)) return w;
  return (
    morphy(data, w, NOUN_RULES, FLAG.NOUN) ??
    morphy(data, w, VERB_RULES, FLAG.VERB) ??
    morphy(data, w, ADJ_RULES, FLAG.ADJ) ??
    w
  );
}
