/**
 * Word lists of the text-score composition rules (core/scoring/composition/), per language,
 * written into the language data (meta.composition of lang/{language}.bin) by build/lang-data.ts.
 *
 * Sources and licences:
 *   en negators, boosters and dampeners: VADER (Hutto & Gilbert 2014), vaderSentiment NEGATE and
 *      BOOSTER_DICT as shipped in npm vader-sentiment@1.1.3 (MIT), plus "no", "n't", "nobody",
 *      "cannot" (VADER treats "no" and "n't" in code, not in the list).
 *   en sentiment-bearing stop words: the NLTK stop words that the VADER lexicon rates.
 *   de, fr, ja lists: written for this project (MIT) from standard grammars (German negation
 *      particles and Gradpartikeln; French ne ... pas/jamais/plus/rien and adverbes d'intensité;
 *      Japanese negative auxiliaries ない/ず/ぬ/ません and degree adverbs); no external data.
 *   emoticons: the emoticon entries of the VADER lexicon (vader_lexicon.txt, MIT), mean rating / 4.
 *   emoji: Emoji Sentiment Ranking 1.0 (Kralj Novak, Smailović, Sluban & Mozetič 2015,
 *      CC BY-SA 4.0) as shipped in npm sentiment@5.0.2 (build/Emoji_Sentiment_Data_v1.0.csv):
 *      score = (positive - negative) / occurrences, in [-1, 1].
 */
import fs from 'node:fs';
import type { CompositionData } from '../core/tokenizer/format';
import type { Language } from '../core/tokenizer/languages';
import { pkgFile } from './lang/inputs';

const B = 1; // booster (VADER B_INCR)
const D = -1; // dampener (VADER B_DECR)

const EN_NEGATORS = [
  // vaderSentiment NEGATE (npm vader-sentiment@1.1.3)
  'aint',
  'arent',
  'cannot',
  'cant',
  'couldnt',
  'darent',
  'didnt',
  'doesnt',
  "ain't",
  "aren't",
  "can't",
  "couldn't",
  "daren't",
  "didn't",
  "doesn't",
  'dont',
  'hadnt',
  'hasnt',
  'havent',
  'isnt',
  'mightnt',
  'mustnt',
  'neither',
  "don't",
  "hadn't",
  "hasn't",
  "haven't",
  "isn't",
  "mightn't",
  "mustn't",
  'neednt',
  "needn't",
  'never',
  'none',
  'nope',
  'nor',
  'not',
  'nothing',
  'nowhere',
  'oughtnt',
  'shant',
  'shouldnt',
  'uhuh',
  'wasnt',
  'werent',
  "oughtn't",
  "shan't",
  "shouldn't",
  'uh-uh',
  "wasn't",
  "weren't",
  'without',
  'wont',
  'wouldnt',
  "won't",
  "wouldn't",
  'rarely',
  'seldom',
  'despite',
  // handled in VADER's code rather than its list
  'no',
  "n't",
  'nobody',
];

const EN_BOOSTERS: Record<string, number> = {
  // vaderSentiment BOOSTER_DICT (npm vader-sentiment@1.1.3)
  absolutely: B,
  amazingly: B,
  awfully: B,
  completely: B,
  considerably: B,
  decidedly: B,
  deeply: B,
  effing: B,
  enormously: B,
  entirely: B,
  especially: B,
  exceptionally: B,
  extremely: B,
  fabulously: B,
  flipping: B,
  flippin: B,
  fricking: B,
  frickin: B,
  frigging: B,
  friggin: B,
  fully: B,
  fucking: B,
  greatly: B,
  hella: B,
  highly: B,
  hugely: B,
  incredibly: B,
  intensely: B,
  majorly: B,
  more: B,
  most: B,
  particularly: B,
  purely: B,
  quite: B,
  really: B,
  remarkably: B,
  so: B,
  substantially: B,
  thoroughly: B,
  totally: B,
  tremendously: B,
  uber: B,
  unbelievably: B,
  unusually: B,
  utterly: B,
  very: B,
  almost: D,
  barely: D,
  hardly: D,
  'just enough': D,
  'kind of': D,
  kinda: D,
  kindof: D,
  'kind-of': D,
  less: D,
  little: D,
  marginally: D,
  occasionally: D,
  partly: D,
  scarcely: D,
  slightly: D,
  somewhat: D,
  'sort of': D,
  sorta: D,
  sortof: D,
  'sort-of': D,
};

const DE_BOOSTERS: Record<string, number> = {
  sehr: B,
  äußerst: B,
  extrem: B,
  total: B,
  völlig: B,
  absolut: B,
  wirklich: B,
  besonders: B,
  echt: B,
  höchst: B,
  unglaublich: B,
  enorm: B,
  ausgesprochen: B,
  überaus: B,
  zutiefst: B,
  ungemein: B,
  außerordentlich: B,
  furchtbar: B,
  so: B,
  ziemlich: B,
  komplett: B,
  voll: B,
  mega: B,
  super: B,
  unheimlich: B,
  wahnsinnig: B,
  überhaupt: B,
  etwas: D,
  bisschen: D,
  'ein bisschen': D,
  'ein wenig': D,
  kaum: D,
  wenig: D,
  fast: D,
  beinahe: D,
  eher: D,
  relativ: D,
  halbwegs: D,
  einigermaßen: D,
  teilweise: D,
};

const FR_BOOSTERS: Record<string, number> = {
  très: B,
  vraiment: B,
  trop: B,
  extrêmement: B,
  tellement: B,
  absolument: B,
  totalement: B,
  complètement: B,
  particulièrement: B,
  vachement: B,
  incroyablement: B,
  hautement: B,
  profondément: B,
  énormément: B,
  fortement: B,
  entièrement: B,
  hyper: B,
  super: B,
  carrément: B,
  peu: D,
  'un peu': D,
  plutôt: D,
  légèrement: D,
  presque: D,
  'à peine': D,
  moyennement: D,
  relativement: D,
  'quelque peu': D,
  assez: D,
};

const JA_BOOSTERS: Record<string, number> = {
  とても: B,
  すごく: B,
  凄く: B,
  非常: B,
  非常に: B,
  本当に: B,
  ほんとうに: B,
  めっちゃ: B,
  超: B,
  かなり: B,
  最も: B,
  大変: B,
  たいへん: B,
  すごい: B,
  極めて: B,
  実に: B,
  全く: B,
  まったく: B,
  一番: B,
  特に: B,
  少し: D,
  ちょっと: D,
  やや: D,
  多少: D,
  若干: D,
  少々: D,
  わりと: D,
  まあまあ: D,
};

/** Stop words (of the language's stop list) that carry sentiment: scored by the rules although they are stop words. */
const DE_POLAR_STOP = [
  'gut',
  'gute',
  'guter',
  'gutes',
  'besser',
  'besten',
  'schlecht',
  'gern',
  'gerne',
  'lieber',
  'leider',
  'mögen',
  'mag',
  'magst',
  'mögt',
  'ehrlich',
  'wahr',
  'richtig',
];
const FR_POLAR_STOP = [
  'bon',
  'bonne',
  'bons',
  'bonnes',
  'bien',
  'beau',
  'belle',
  'beaux',
  'belles',
  'pire',
  'bravo',
  'hélas',
  'remarquable',
  'merci',
  'zut',
  'vive',
  'cher',
  'chère',
];

/** Language-specific lists (emoji and emoticons are added for every language). */
const LISTS: Record<
  Language,
  Omit<CompositionData, 'emoticons' | 'emoji' | 'polarStopWords'> & { polarStopWords?: string[] }
> = {
  en: {
    negators: EN_NEGATORS,
    negationDirection: 'forward',
    notNegating: ['not only', 'not just', 'not merely', 'no doubt', 'without doubt', 'nothing but'],
    boosters: EN_BOOSTERS,
    contrast: ['but', 'however'],
  },
  de: {
    negators: [
      'nicht',
      'kein',
      'keine',
      'keinen',
      'keinem',
      'keiner',
      'keines',
      'nie',
      'niemals',
      'nichts',
      'niemand',
      'niemandem',
      'niemanden',
      'ohne',
      'weder',
      'nirgends',
      'nirgendwo',
    ],
    negationDirection: 'forward-else-backward',
    notNegating: ['nicht nur', 'nicht bloß', 'nicht allein', 'ohne zweifel'],
    boosters: DE_BOOSTERS,
    contrast: ['aber', 'jedoch', 'allerdings', 'sondern', 'trotzdem', 'dennoch'],
    polarStopWords: DE_POLAR_STOP,
  },
  fr: {
    negators: [
      'ne',
      "n'",
      'pas',
      'jamais',
      'rien',
      'aucun',
      'aucune',
      'sans',
      'ni',
      'nullement',
      'guère',
      'personne',
      'plus',
      'point',
    ],
    // pas/plus/point/personne alone are not always negations ("plus" = more): they negate only after ne/n'.
    negationNeedsOpener: ['plus', 'point', 'personne'],
    negationOpeners: ['ne', "n'"],
    negativeConcord: true,
    negationDirection: 'forward',
    notNegating: ['ne que', "n' que", 'non seulement', 'pas seulement', 'sans doute', 'ne pas que'],
    boosters: FR_BOOSTERS,
    contrast: ['mais', 'cependant', 'pourtant', 'toutefois', 'néanmoins'],
    polarStopWords: FR_POLAR_STOP,
  },
  ja: {
    // The forms of the negative auxiliaries ない (also written 無い) and ぬ as IPADIC lists them
    // (modern ones; ね is left out: it is also the sentence-final particle).
    negators: [
      'ない',
      'なかっ',
      'なく',
      'なくっ',
      'なけれ',
      'なきゃ',
      'なけりゃ',
      'なかろ',
      '無い',
      '無かっ',
      '無く',
      '無くっ',
      '無けれ',
      '無きゃ',
      '無けりゃ',
      '無かろ',
      'ず',
      'ぬ',
      'ませ',
      'ねえ',
      'ねぇ',
      'なし',
      'ん',
    ],
    // ん negates only right after ませ (ありませ|ん); alone it is a nominalizer.
    negationNeedsOpener: ['ん'],
    negationOpeners: ['ませ'],
    negativeConcord: true,
    negationDirection: 'backward',
    // Case particles that mark an argument of the predicate: the negation of the predicate
    // (解決できなかった) does not reach back over them to its object (問題を). が and は stay
    // open: an existential ない negates its subject (問題はない, 問題がない).
    scopeBarriers: ['を', 'に', 'へ', 'から', 'より', 'まで'],
    notNegating: [],
    boosters: JA_BOOSTERS,
    contrast: ['しかし', 'でも', 'けど', 'けれど', 'けれども', 'だが', 'ところが', 'だけど'],
    joiner: '',
  },
};

/** VADER lexicon: entry -> mean rating / 4 (in [-1, 1]). */
function vaderLexicon(): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of fs.readFileSync(pkgFile('vader-sentiment', 'vader_lexicon.txt'), 'utf8').split('\n')) {
    const cols = line.split('\t');
    const v = Number(cols[1]);
    if (cols[0] && Number.isFinite(v)) out.set(cols[0], v / 4);
  }
  return out;
}

/** Emoticons: VADER entries without a letter, or short punctuation faces with one letter (":D", ":p", "xD"). */
function emoticons(vader: Map<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of vader) {
    const letters = (k.match(/\p{L}/gu) ?? []).length;
    const punct = (k.match(/[^\p{L}\p{N}\s]/gu) ?? []).length;
    if (k.includes(' ') || punct === 0) continue;
    if (letters === 0 || (letters <= 2 && punct >= 1 && k.length <= 4)) out[k] = Math.round(v * 1000) / 1000;
  }
  return out;
}

function emoji(): Record<string, number> {
  const out: Record<string, number> = {};
  const lines = fs
    .readFileSync(pkgFile('sentiment', 'build/Emoji_Sentiment_Data_v1.0.csv'), 'utf8')
    .split('\n')
    .slice(1);
  for (const line of lines) {
    const c = line.split(',');
    if (c.length < 7) continue;
    const n = Number(c[2]);
    const neg = Number(c[4]);
    const pos = Number(c[6]);
    if (!(n > 0)) continue;
    out[c[0].replace(/\uFE0F/g, '')] = Math.round(((pos - neg) / n) * 1000) / 1000;
  }
  return out;
}

let shared: { emoticons: Record<string, number>; emoji: Record<string, number>; vader: Map<string, number> } | null =
  null;

/** The composition lists of a language; `stopWords` is the language's stop list (en: sentiment-bearing ones are kept scored). */
export function compositionData(language: Language, stopWords: readonly string[]): CompositionData {
  shared ??= (() => {
    const vader = vaderLexicon();
    return { vader, emoticons: emoticons(vader), emoji: emoji() };
  })();
  const l = LISTS[language];
  const polar =
    l.polarStopWords ?? stopWords.filter((w) => shared!.vader.has(w) && !l.negators.includes(w) && !(w in l.boosters));
  return { ...l, polarStopWords: [...polar].sort(), emoticons: shared.emoticons, emoji: shared.emoji };
}

export const COMPOSITION_SOURCES = [
  {
    name: 'npm:vader-sentiment',
    license: 'MIT',
    use: 'English negators, boosters and dampeners (vaderSentiment NEGATE, BOOSTER_DICT); emoticon valences (vader_lexicon.txt)',
  },
  {
    name: 'npm:sentiment',
    license: 'MIT package; Emoji Sentiment Ranking data CC BY-SA 4.0 (Kralj Novak et al. 2015)',
    use: 'emoji sentiment scores',
  },
  {
    name: 'project',
    license: 'MIT',
    use: 'German, French and Japanese negators, degree adverbs, contrast words and sentiment-bearing stop words (from standard grammars)',
  },
];
