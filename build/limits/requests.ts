/**
 * The largest request each endpoint family allows (decisions.md "Limits", core/limits.ts), and
 * the largest the cost cap admits (largestAdmittedRequests), built
 * from a model's own vocabulary so that every word is scored: as many texts, words, dimensions and
 * mappers as the limits allow, every option that adds work switched on, and the texts as long as
 * the 2 MiB body still holds. Deterministic (a seeded PRNG), so runs compare.
 */
import { COST_OF, estimateUnits, type CostedRoute } from '../../core/cost';
import { LIMITS } from '../../core/limits';
import { prng } from '../../core/prng';
import type { VectorIndex } from '../../core/types';

const LETTER = /\p{L}/u;

/** Rows [from, to) of the vocabulary whose entry has a letter, at most `n`. */
export function wordRows(index: VectorIndex, from: number, to: number, n: number): string[] {
  const out: string[] = [];
  for (let r = from; r < Math.min(to, index.size) && out.length < n; r++) {
    const w = index.word(r);
    if (LETTER.test(w) && !w.includes(' ')) out.push(w);
  }
  return out;
}

/**
 * English-like prose of `chars` characters from the model's frequent words, with the negators,
 * intensifiers, contrast, capitals and exclamation marks that text scoring's composition rules act on.
 */
export function prose(index: VectorIndex, chars: number, seed = 1): string {
  const common = wordRows(index, 0, 2000, 2000);
  const rarer = wordRows(index, 2000, 20_000, 18_000);
  const extras = ['not', 'very', 'but', "don't", 'never', 'extremely', 'barely'];
  const rand = prng(seed);
  const pick = (xs: string[]): string => xs[Math.floor(rand() * xs.length)]!;
  const parts: string[] = [];
  let length = 0;
  while (length < chars) {
    const n = 6 + Math.floor(rand() * 13);
    const words: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = rand();
      const w = r < 0.08 ? pick(extras) : r < 0.72 ? pick(common) : pick(rarer);
      words.push(rand() < 0.02 ? w.toUpperCase() : w);
    }
    words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
    if (n > 9) words[Math.floor(n / 2)] += ',';
    const sentence = `${words.join(' ')}${rand() < 0.1 ? '!' : '.'}`;
    parts.push(sentence);
    length += sentence.length + 1;
  }
  return parts.join(' ').slice(0, chars);
}

/** Bytes of a body as the Worker reads it. */
export const bodyBytes = (body: unknown): number => Buffer.byteLength(JSON.stringify(body));

/** `dimensionsPerRequest` manual dimensions of 10 seeds each, each expanded by `expandMax` words. */
function dimensions(index: VectorIndex) {
  const seeds = wordRows(index, 100, 20_000, LIMITS.dimensionsPerRequest * 10);
  return Array.from({ length: LIMITS.dimensionsPerRequest }, (_, i) => ({
    id: i + 1,
    type: 'manual' as const,
    name: `dimension ${i + 1}`,
    words: seeds.slice(i * 10, i * 10 + 10),
    expand: LIMITS.expandMax,
  }));
}

export interface LargestRequests {
  textScores: Record<string, unknown>;
  wordScoresFind: Record<string, unknown>;
  wordScoresWhitelist: Record<string, unknown>;
  tokenization: Record<string, unknown>;
  autocomplete: Record<string, unknown>;
  availabilities: Record<string, unknown>;
  similarityMatrix: Record<string, unknown>;
  /** The plagiarism check's text (its body is { text }). */
  plagiarismText: string;
}

/** The largest requests on model `modelId` (`index`), with every mapper variable it has (`mapperIds`). */
export function largestRequests(modelId: string, index: VectorIndex, mapperIds: readonly string[]): LargestRequests {
  const dims = dimensions(index);
  const mapperKeys = mapperIds.slice(0, LIMITS.mapperKeysPerRequest);
  const base = {
    embeddingModelId: modelId,
    dimensions: dims,
    expansion: 'contrastive',
    mapperKeys,
    goalConfig: {
      modelRankScore: 0.5,
      dimensions: dims.map((d) => ({ id: d.id, weight: 1 })),
      mappers: mapperKeys.map((id) => ({ id, weight: 1 })),
      normalization: 'zscore',
    },
    normalization: 'zscore',
    explain: true,
  };
  // Texts as long as the body allows: 100 of them, sharing what the body has left (with a margin for escapes).
  const room = LIMITS.bodyBytes - bodyBytes({ ...base, texts: [] }) - 16 * LIMITS.textsPerRequest;
  const perText = Math.min(LIMITS.charactersPerText, Math.floor(room / LIMITS.textsPerRequest) - 64);
  const texts = Array.from({ length: LIMITS.textsPerRequest }, (_, i) => prose(index, perText, i + 1));
  const seedWords = wordRows(index, 0, index.size, LIMITS.seedOrWhitelistWords);
  const whitelist = wordRows(index, 20_000, index.size, LIMITS.seedOrWhitelistWords);
  const { goalConfig: _goal, normalization: _n, explain: _e, ...wordBase } = base;
  return {
    textScores: { ...base, texts },
    wordScoresFind: {
      ...wordBase,
      seedWords,
      limit: LIMITS.findLimitMax,
      wordrankLimit: -1,
      excludeAntonyms: true,
      seedScore: 1,
    },
    wordScoresWhitelist: { ...wordBase, seedWords, whitelistWords: whitelist, seedScore: 1 },
    tokenization: { language: index.manifest.language, text: prose(index, LIMITS.charactersPerText, 7) },
    // One letter: the most completions to rank.
    autocomplete: { embeddingModelId: modelId, word: 's' },
    availabilities: {
      // Half known words, half unknown ones.
      words: [
        ...seedWords.slice(0, LIMITS.seedOrWhitelistWords / 2),
        ...seedWords.slice(0, LIMITS.seedOrWhitelistWords / 2).map((w) => `${w}qx`),
      ],
      whitelistWords: seedWords,
    },
    similarityMatrix: { words: wordRows(index, 0, 50_000, LIMITS.similarityMatrixWords) },
    plagiarismText: prose(index, LIMITS.charactersPerText, 11),
  };
}

/**
 * The largest n in [0, max] whose body `build(n)` the cap admits (bodies grow with n); null when
 * not even build(0) is admitted.
 */
function largestWithin<R extends CostedRoute>(
  route: R,
  build: (n: number) => Parameters<(typeof COST_OF)[R]>[0],
  max: number,
  capUnits: number,
): Parameters<(typeof COST_OF)[R]>[0] | null {
  const fits = (n: number) => estimateUnits(route, build(n)) <= capUnits;
  if (!fits(0)) return null;
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  return build(lo);
}

/**
 * The largest request of each family that the cost cap admits (decisions.md "Admission and
 * cost"): the largest allowed request (largestRequests), cut down until its estimate
 * (core/cost.ts) is within `capUnits`. Text families keep every option and shorten their texts
 * (then drop dimensions); word families drop dimensions, then words.
 */
export function largestAdmittedRequests(
  modelId: string,
  index: VectorIndex,
  mapperIds: readonly string[],
  capUnits: number,
): LargestRequests {
  const all = largestRequests(modelId, index, mapperIds);
  type Body = Record<string, unknown> & { dimensions?: unknown[]; goalConfig?: { dimensions?: unknown[] } };
  const withDims = (body: Body, d: number): Body => {
    const dims = (body.dimensions ?? []).slice(0, d);
    const goal = body.goalConfig
      ? { ...body.goalConfig, dimensions: (body.goalConfig.dimensions ?? []).slice(0, d) }
      : undefined;
    return { ...body, dimensions: dims, ...(goal ? { goalConfig: goal } : {}) };
  };
  const texts = all.textScores.texts as string[];
  const longest = Math.max(...texts.map((t) => t.length));
  const dimCount = LIMITS.dimensionsPerRequest;
  const textScores =
    largestWithin(
      'textScores',
      (n) => ({ ...all.textScores, texts: texts.map((t) => t.slice(0, n)) }) as never,
      longest,
      capUnits,
    ) ??
    largestWithin(
      'textScores',
      (d) => ({ ...withDims(all.textScores as Body, d), texts: texts.map((t) => t.slice(0, 200)) }) as never,
      dimCount,
      capUnits,
    )!;
  const byDims = (body: Record<string, unknown>) =>
    largestWithin('wordScores', (d) => withDims(body as Body, d) as never, dimCount, capUnits);
  const whitelist = all.wordScoresWhitelist.whitelistWords as string[];
  const wordScoresWhitelist =
    byDims(all.wordScoresWhitelist) ??
    largestWithin(
      'wordScores',
      (n) => ({ ...withDims(all.wordScoresWhitelist as Body, 0), whitelistWords: whitelist.slice(0, n) }) as never,
      whitelist.length,
      capUnits,
    )!;
  const tokenText = all.tokenization.text as string;
  const words = (list: unknown) => list as string[];
  return {
    textScores: textScores as unknown as Record<string, unknown>,
    wordScoresFind: (byDims(all.wordScoresFind) ?? withDims(all.wordScoresFind as Body, 0)) as Record<string, unknown>,
    wordScoresWhitelist: wordScoresWhitelist as unknown as Record<string, unknown>,
    tokenization: largestWithin(
      'tokenize',
      (n) => ({ ...all.tokenization, text: tokenText.slice(0, n) }) as never,
      tokenText.length,
      capUnits,
    ) as Record<string, unknown>,
    autocomplete: all.autocomplete,
    availabilities: largestWithin(
      'wordAvailabilities',
      (n) =>
        ({
          words: words(all.availabilities.words).slice(0, n),
          whitelistWords: all.availabilities.whitelistWords,
        }) as never,
      words(all.availabilities.words).length,
      capUnits,
    ) as Record<string, unknown>,
    similarityMatrix: largestWithin(
      'similarityMatrix',
      (n) => ({ words: words(all.similarityMatrix.words).slice(0, n) }),
      words(all.similarityMatrix.words).length,
      capUnits,
    ) as Record<string, unknown>,
    plagiarismText: largestWithin(
      'plagiarismCheck',
      (n) => ({ text: all.plagiarismText.slice(0, n) }),
      all.plagiarismText.length,
      capUnits,
    )!.text,
  };
}
