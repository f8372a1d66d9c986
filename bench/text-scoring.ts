/**
 * Core text-scoring throughput: POST text-scores' whole computation (core/scoring scoreTexts:
 * tokenizer, lookups, 2 dimensions, 1 mapper) in this process over the default model, in
 * requests of 100 texts, as tokens per second. This is the baseline of the CLI's local `score`
 * (bench/cli.ts). Part of `npm run bench`; alone: `npx tsx bench/text-scoring.ts`.
 */
import path from 'node:path';
import { DEFAULT_MODEL_ID } from '../build/default-model';
import { languageFile } from '../build/lang-data';
import { loadDefaultModel, readArrayBuffer } from '../build/load-model';
import { GENERATED } from '../build/wrangler';
import { parseMapperBundle } from '../core/mapper-bundle';
import { prng } from '../core/prng';
import { BoundedCache, scoreTexts, type FactorStats, type TextScoresRequest } from '../core/scoring';
import { parseLanguageData, tokenize } from '../core/tokenizer';
import type { EmbeddingModel } from '../core/model';
import { runIfMain } from './main';

/** The request of both benches (texts added per batch). */
export const BENCH_REQUEST: Omit<TextScoresRequest, 'texts'> = {
  embeddingModelId: DEFAULT_MODEL_ID,
  dimensions: [
    { id: 1, type: 'manual', name: 'food', words: ['pizza', 'burger', 'pasta'] },
    { id: 2, type: 'manual', name: 'service', words: ['waiter', 'staff', 'service'] },
  ],
  mapperKeys: ['sentiment_valence'],
};

/** n review-like texts of 8-40 words drawn (seeded) from the model's 20,000 most frequent words, with punctuation. */
export function benchTexts(model: EmbeddingModel, n: number, seed = 42): string[] {
  const rand = prng(seed);
  const top = Math.min(20_000, model.size);
  const words: string[] = [];
  for (let r = 0; r < top; r++) {
    const w = model.word(r);
    if (/^\p{L}+$/u.test(w)) words.push(w);
  }
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const len = 8 + Math.floor(rand() * 33);
    const parts: string[] = [];
    for (let j = 0; j < len; j++) {
      // Zipf-like: frequent words more often.
      const w = words[Math.floor(words.length * rand() ** 2)];
      parts.push(j === 0 ? w[0].toUpperCase() + w.slice(1) : w);
      if (j > 0 && j < len - 1 && rand() < 0.08) parts[parts.length - 1] += ',';
    }
    out.push(`${parts.join(' ')}${rand() < 0.2 ? '!' : '.'}`);
  }
  return out;
}

/** tokens/s of scoreTexts over `texts` in requests of 100 (after one warm-up request). */
export function coreTextScoring(
  model: EmbeddingModel,
  texts: string[],
): { tokensPerS: number; textsPerS: number; tokens: number; ms: number } {
  const lang = parseLanguageData(readArrayBuffer(languageFile('en')));
  const bundle = parseMapperBundle(
    readArrayBuffer(path.join(GENERATED, 'mappers', DEFAULT_MODEL_ID, 'sentiment.bin')),
    {
      id: DEFAULT_MODEL_ID,
      vocabularySize: model.size,
      checksum: model.manifest.checksum,
    },
  );
  const input = {
    index: model,
    tokenize: (t: string) => tokenize(t, lang, { synonyms: false }).tokens,
    mappers: [{ id: 'sentiment_valence', variable: 'valence', values: bundle }],
    storedDimensions: new Map(),
    stats: new BoundedCache<FactorStats>(256),
  };
  scoreTexts({ ...BENCH_REQUEST, texts: texts.slice(0, 100) }, input);
  let tokens = 0;
  const t0 = performance.now();
  for (let i = 0; i < texts.length; i += 100)
    tokens += scoreTexts({ ...BENCH_REQUEST, texts: texts.slice(i, i + 100) }, input).tokenCount;
  const ms = performance.now() - t0;
  return {
    tokensPerS: Math.round((tokens * 1000) / ms),
    textsPerS: Math.round((texts.length * 1000) / ms),
    tokens,
    ms,
  };
}

export async function run(): Promise<Record<string, number | string>> {
  const model = loadDefaultModel();
  const texts = benchTexts(model, 20_000);
  const r = coreTextScoring(model, texts);
  console.log(
    `[bench text-scoring] core scoreTexts: ${r.tokensPerS} tokens/s (${r.textsPerS} texts/s, ${texts.length} texts, 2 dimensions + 1 mapper, requests of 100)`,
  );
  return { text_scoring_core_tokens_per_s: r.tokensPerS, text_scoring_core_texts_per_s: r.textsPerS };
}

runIfMain(import.meta.url, run);
