/**
 * Core text-scoring throughput per language (issue 17): POST text-scores' whole computation
 * (core/scoring scoreTexts: tokenize with lemma, stop words and the composition rules of the
 * language's data, 3 dimensions, 2 mappers, a goal) in this process, over 10,000 generated texts
 * in requests of 100, as tokens per second on one core; beside it the baseline of the same run:
 * plain `Intl.Segmenter` word segmentation of the same texts (its time over the same texts).
 *
 * Texts (seeded, realistic length: 1-5 sentences of 4-24 words, about 45 tokens): words drawn
 * Zipf-like from the model's 20,000 most frequent letter-only words, with the language's stop
 * words mixed in at about the rate of running text (45%), sentence capitals, commas, ., ! and ?,
 * and now and then a real sentence of test/gold/tokens-{language}.json (contractions, elisions,
 * hyphens). Japanese sentences are written without spaces and end in 。.
 *
 * A second baseline of the same run: the same work by the core of the commit before issue 35
 * (Japanese conjugation; BEFORE_REV, bench/previous-core.ts), in alternating rounds, so a change
 * of the tokenizer or the scorer shows as a ratio (> 1: faster now).
 *
 * Part of `npm run bench`; alone: `npx tsx bench/text-throughput.ts [en de fr ja]`.
 * Fields: text_scoring_{en,de,fr,ja}_tokens_per_s, text_scoring_{l}_intl_segmenter_tokens_per_s,
 * text_scoring_{l}_intl_segmenter_ratio, text_scoring_intl_segmenter_ratio (English),
 * text_scoring_{l}_before_tokens_per_s and text_scoring_{l}_vs_before (tokens/s now / before).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ALIGNED, alignedModelFile, builtAlignedLanguages } from '../build/aligned-models';
import { DEFAULT_MODEL_ID } from '../build/default-model';
import { languageFile } from '../build/lang-data';
import { loadDefaultModel, loadModelFile, readArrayBuffer } from '../build/load-model';
import { GENERATED } from '../build/wrangler';
import { parseMapperBundle } from '../core/mapper-bundle';
import type { EmbeddingModel } from '../core/model';
import { prng } from '../core/prng';
import {
  BoundedCache,
  languageLexicon,
  scoreTexts,
  type FactorStats,
  type TextScoresRequest,
  type TextScoringInput,
} from '../core/scoring';
import { parseLanguageData, scoringTokenizer, type Language, type LanguageData } from '../core/tokenizer';
import { FLAG } from '../core/tokenizer/data';
import { runIfMain } from './main';
import { previousCore, type PreviousCore } from './previous-core';

/** The commit before issue 35 (Japanese conjugation): the "before" baseline. */
const BEFORE_REV = 'aba69f9';
/** Alternating rounds (before, now) of timeScoring each; the ratio is the median of the rounds'. */
const ROUNDS = 3;

const here = path.dirname(fileURLToPath(import.meta.url));
export const TEXTS = 10_000;
const BATCH = 100;
const MAPPERS = ['sentiment_valence', 'afinn_valence'];

/** Per language: two manual dimensions and one axis (3 dimensions), seeds in the language. */
const DIMENSIONS: Record<Language, TextScoresRequest['dimensions']> = {
  en: [
    { id: 1, type: 'manual', name: 'food', words: ['pizza', 'burger', 'pasta'] },
    { id: 2, type: 'manual', name: 'service', words: ['waiter', 'staff', 'service'] },
    { id: 3, type: 'axis', name: 'quality', words: ['good', 'great'], oppositeWords: ['bad', 'awful'] },
  ],
  de: [
    { id: 1, type: 'manual', name: 'food', words: ['Pizza', 'Essen', 'Nudeln'] },
    { id: 2, type: 'manual', name: 'service', words: ['Kellner', 'Personal', 'Bedienung'] },
    { id: 3, type: 'axis', name: 'quality', words: ['gut', 'toll'], oppositeWords: ['schlecht', 'schrecklich'] },
  ],
  fr: [
    { id: 1, type: 'manual', name: 'food', words: ['pizza', 'repas', 'pâtes'] },
    { id: 2, type: 'manual', name: 'service', words: ['serveur', 'personnel', 'service'] },
    { id: 3, type: 'axis', name: 'quality', words: ['bon', 'excellent'], oppositeWords: ['mauvais', 'horrible'] },
  ],
  ja: [
    { id: 1, type: 'manual', name: 'food', words: ['ピザ', '料理', 'パスタ'] },
    { id: 2, type: 'manual', name: 'service', words: ['店員', 'スタッフ', 'サービス'] },
    { id: 3, type: 'axis', name: 'quality', words: ['良い', '素晴らしい'], oppositeWords: ['悪い', 'ひどい'] },
  ],
};

const GOAL: TextScoresRequest['goalConfig'] = {
  modelRankScore: 0.5,
  dimensions: [
    { id: 1, weight: 1 },
    { id: 3, weight: 2 },
  ],
  mappers: [{ id: 'sentiment_valence', weight: 2 }],
  normalization: 'zscore',
};

/** Zipf rank in [0, n): p(r) ~ 1 / (r + 1). */
function zipf(rand: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(Math.exp(rand() * Math.log(n + 1))) - 1);
}

/** `n` seeded texts in `language` (header). */
export function realisticTexts(
  language: Language,
  model: EmbeddingModel,
  data: LanguageData,
  n: number,
  seed = 17,
): string[] {
  const rand = prng(seed);
  const letters = /^\p{L}+$/u;
  const content: string[] = [];
  for (let r = 0; r < model.size && content.length < 20_000; r++) {
    const w = model.word(r);
    if (letters.test(w) && !(data.flagsOf(data.find(w.toLowerCase())) & FLAG.STOP)) content.push(w);
  }
  const stops: string[] = [];
  for (let i = 0; i < data.keys.size; i++) {
    const w = data.keys.get(i);
    if (data.flagsOf(i) & FLAG.STOP && letters.test(w)) stops.push(w);
  }
  // Stop words in a fixed shuffled order, so Zipf favours some of them as running text does.
  for (let i = stops.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [stops[i], stops[j]] = [stops[j]!, stops[i]!];
  }
  const gold = (
    JSON.parse(fs.readFileSync(path.join(here, '..', 'test', 'gold', `tokens-${language}.json`), 'utf8')) as {
      sentences: Array<{ text: string }>;
    }
  ).sentences.map((s) => s.text);
  const ja = language === 'ja';
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const sentences: string[] = [];
    const count = 1 + Math.floor(rand() * 5);
    for (let s = 0; s < count; s++) {
      if (rand() < 0.05) {
        sentences.push(gold[Math.floor(rand() * gold.length)]!);
        continue;
      }
      const len = 4 + Math.floor(rand() * 21);
      const parts: string[] = [];
      for (let j = 0; j < len; j++) {
        let w = rand() < 0.45 ? stops[zipf(rand, stops.length)]! : content[zipf(rand, content.length)]!;
        if (j === 0 && !ja) w = w[0]!.toUpperCase() + w.slice(1);
        if (j > 0 && j < len - 1 && rand() < 0.07) w += ja ? '、' : ',';
        parts.push(w);
      }
      const end = ja ? '。' : (['.', '.', '.', '!', '?'][Math.floor(rand() * 5)] as string);
      sentences.push(parts.join(ja ? '' : ' ') + end);
    }
    out.push(sentences.join(ja ? '' : ' '));
  }
  return out;
}

export interface LanguageSetup {
  language: Language;
  model: EmbeddingModel;
  data: LanguageData;
  input: TextScoringInput;
  request: Omit<TextScoresRequest, 'texts'>;
  /** The scorer (default: this core's scoreTexts). */
  score?: typeof scoreTexts;
}

export function setup(language: Language, english: EmbeddingModel): LanguageSetup | null {
  let model = english;
  let id = DEFAULT_MODEL_ID;
  if (language !== 'en') {
    if (!builtAlignedLanguages().includes(language)) return null;
    id = ALIGNED[language].id;
    model = loadModelFile(alignedModelFile(ALIGNED[language]));
  }
  const data = parseLanguageData(readArrayBuffer(languageFile(language)));
  const mappers = MAPPERS.map((key) => {
    const cut = key.lastIndexOf('_');
    const file = path.join(GENERATED, 'mappers', id, `${key.slice(0, cut)}.bin`);
    const values = parseMapperBundle(readArrayBuffer(file), {
      id,
      vocabularySize: model.size,
      checksum: model.manifest.checksum,
    });
    return { id: key, variable: key.slice(cut + 1), values };
  });
  const input: TextScoringInput = {
    index: model,
    tokenize: scoringTokenizer(data),
    mappers,
    storedDimensions: new Map(),
    stats: new BoundedCache<FactorStats>(256),
    lexicon: languageLexicon(data),
    companion: language === 'en' ? null : english,
    composition: data.meta.composition,
    // As the engine passes it: the language-mismatch check runs too.
    language,
  };
  return {
    language,
    model,
    data,
    input,
    request: { embeddingModelId: id, dimensions: DIMENSIONS[language], mapperKeys: MAPPERS, goalConfig: GOAL },
  };
}

/** The same setup on an earlier core: its tokenizer, lexicon and scorer over the same model, mappers and language file. */
function setupOn(core: PreviousCore, s: LanguageSetup): LanguageSetup {
  const data = core.tokenizer.parseLanguageData(readArrayBuffer(languageFile(s.language))) as unknown as LanguageData;
  const input = {
    ...s.input,
    tokenize: core.tokenizer.scoringTokenizer(data as never),
    stats: new core.scoring.BoundedCache<FactorStats>(256),
    lexicon: core.scoring.languageLexicon(data as never),
    composition: data.meta.composition,
  } as TextScoringInput;
  return { ...s, data, input, score: core.scoring.scoreTexts as typeof scoreTexts };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const PASSES = 3;

/** Median over PASSES of the ms scoreTexts takes for all texts in requests of BATCH (one warm-up request first), and the token count. */
export function timeScoring(s: LanguageSetup, texts: string[]): { ms: number; tokens: number } {
  const score = s.score ?? scoreTexts;
  score({ ...s.request, texts: texts.slice(0, BATCH) }, s.input);
  const times: number[] = [];
  let tokens = 0;
  for (let p = 0; p < PASSES; p++) {
    tokens = 0;
    const t0 = performance.now();
    for (let i = 0; i < texts.length; i += BATCH)
      tokens += score({ ...s.request, texts: texts.slice(i, i + BATCH) }, s.input).tokenCount;
    times.push(performance.now() - t0);
  }
  return { ms: median(times), tokens };
}

/** Median over PASSES of the ms Intl.Segmenter word segmentation takes for the same texts, and its word-like segments. */
export function timeIntlSegmenter(language: Language, texts: string[]): { ms: number; words: number } {
  const seg = new Intl.Segmenter(language, { granularity: 'word' });
  const once = () => {
    let n = 0;
    for (const t of texts) for (const x of seg.segment(t)) if (x.isWordLike) n++;
    return n;
  };
  once();
  const times: number[] = [];
  let words = 0;
  for (let p = 0; p < PASSES; p++) {
    const t0 = performance.now();
    words = once();
    times.push(performance.now() - t0);
  }
  return { ms: median(times), words };
}

export async function run(
  languages: readonly Language[] = ['en', 'de', 'fr', 'ja'],
): Promise<Record<string, number | string>> {
  const english = loadDefaultModel();
  const figures: Record<string, number | string> = {};
  const before = await previousCore(BEFORE_REV);
  if ('skipped' in before) console.log(`[bench text-throughput] the "before" baseline skipped: ${before.skipped}`);
  for (const language of languages) {
    const s = setup(language, english);
    if (!s) {
      console.log(`[bench text-throughput] ${language}: skipped (the aligned model is not built here)`);
      continue;
    }
    const texts = realisticTexts(language, s.model, s.data, TEXTS);
    const ours = timeScoring(s, texts);
    const intl = timeIntlSegmenter(language, texts);
    const tps = Math.round((ours.tokens * 1000) / ours.ms);
    const intlTps = Math.round((intl.words * 1000) / intl.ms);
    const ratio = +(intl.ms / ours.ms).toFixed(2);
    figures[`text_scoring_${language}_tokens_per_s`] = tps;
    figures[`text_scoring_${language}_intl_segmenter_tokens_per_s`] = intlTps;
    figures[`text_scoring_${language}_intl_segmenter_ratio`] = ratio;
    if (language === 'en') figures.text_scoring_intl_segmenter_ratio = ratio;
    if (!('skipped' in before)) {
      const old = setupOn(before, s);
      const ratios: number[] = [];
      const beforeTps: number[] = [];
      let beforeTokens = 0;
      for (let r = 0; r < ROUNDS; r++) {
        const b = timeScoring(old, texts);
        beforeTokens = b.tokens;
        const now = timeScoring(s, texts);
        beforeTps.push((b.tokens * 1000) / b.ms);
        ratios.push((now.tokens * 1000) / now.ms / ((b.tokens * 1000) / b.ms));
      }
      figures[`text_scoring_${language}_before_tokens_per_s`] = Math.round(median(beforeTps));
      figures[`text_scoring_${language}_vs_before`] = +median(ratios).toFixed(3);
      console.log(
        `[bench text-throughput] ${language}: the core of ${before.rev} (before issue 35) on the same texts ${Math.round(median(beforeTps))} tokens/s; ` +
          `now / before ${median(ratios).toFixed(3)} (median of ${ROUNDS} alternating rounds; tokens now ${ours.tokens}, before ${beforeTokens})`,
      );
    }
    console.log(
      `[bench text-throughput] ${language}: ${tps} tokens/s (${TEXTS} texts, ${ours.tokens} tokens, ${(ours.tokens / TEXTS).toFixed(1)} per text, ${ours.ms.toFixed(0)} ms; ` +
        `3 dimensions + 2 mappers + goal, composition rules, requests of ${BATCH}); Intl.Segmenter on the same texts ${intlTps} words/s (${intl.ms.toFixed(0)} ms): ` +
        `scoring takes ${ratio > 0 ? (1 / ratio).toFixed(2) : 'n/a'}x its time (ratio ${ratio})`,
    );
  }
  return figures;
}

runIfMain(import.meta.url, () => {
  const langs = process.argv.slice(2) as Language[];
  return run(langs.length ? langs : undefined);
});
