/**
 * The cost of a request, estimated from its shape before any work (decisions.md "Admission and
 * cost"): characters, words, dimensions, options and the size of the answer, never tokens or
 * anything that needs a model or language data. The unit is a work unit, about 1 ms of one core
 * of the development machine; the coefficients below were fitted to the server's own time for
 * requests of every shape family (docs/api.md "Cost and admission" has the formula and how it
 * was calibrated; `npm run bench:overload` prints each family's largest admitted request and
 * its time).
 *
 * The estimate is deterministic: the same body always costs the same, in the Worker's
 * `X-Cost-Units` header, in the 413 answer and in the docs' formula. It assumes cold caches
 * (a seed expansion or a factor's statistics computed, not remembered), because a client
 * chooses its dimensions and could otherwise make every request miss.
 */

/** The coefficients, in work units. */
export const COST = {
  /** Every request: routing, parsing, the meter. */
  base: 1,
  /** text-scores: per character, tokenizing and looking its words up. */
  textChar: 0.00015,
  /** text-scores: per character and factor (dimension or mapper) scored over its tokens. */
  textCharFactor: 0.0000035,
  /** text-scores with explain: per character and factor (token objects, composed items, ranking). */
  explainCharFactor: 0.00004,
  /** subwordFallback: per character of a scored text, or per word (whitelist, matrix), composing unknown words. */
  subwordChar: 0.0016,
  /** subwordFallback: loading the model's sub-word table once. */
  subwordTable: 5,
  /** A dimension: its seed centroid (per seed word) and its query. */
  dimensionSeed: 0.002,
  /** A dimension with `expand`: one scan of the candidate rows. */
  expansionScan: 1.5,
  /** contrastive expansion: one scan of the candidates per competing (non-axis) dimension, once per request. */
  contrastScan: 1.5,
  /** A factor's normalization statistics (zscore / percentile over the frequent words). */
  factorStats: 3,
  /** One scan of a model's whole vocabulary (find-and-score, a translation's word). */
  vocabularyScan: 2,
  /** find-and-score: per word asked for (`limit`), filtering and scoring it per factor. */
  foundWordFactor: 0.003,
  /** word-scores whitelist, availabilities, autocomplete whitelist: per word, looked up. */
  listWord: 0.0015,
  /** word-scores whitelist: per word scored (its entry, ranks and quartiles). */
  whitelistWord: 0.003,
  /** word-scores whitelist: per word and factor scored. */
  listWordFactor: 0.0005,
  /** word-similarity-matrices: per pair of words (the cosine and its JSON). */
  matrixPair: 0.00008,
  /** tokenizations: per character (lemma, stop word, synonyms). */
  tokenizeChar: 0.0005,
  /** plagiarism checks: per character of the checked text (fingerprints, corpus lookups). */
  plagiarismChar: 0.001,
  /** plagiarism checks: the corpus query, and verifying up to PLAGIARISM_SOURCE_CHARS of candidate sources. */
  plagiarismBase: 180,
  /** Per byte of the answer (building and serializing its JSON, sending it). */
  answerByte: 0.00002,
} as const;

/** The bytes of a JSON number with its key and separators, as the scorers write them. */
const NUMBER_FIELD_BYTES = 32;

/** Code points are counted by the limits; code units bound them from above and cost nothing to count. */
function chars(texts: readonly string[]): number {
  let n = 0;
  for (const t of texts) n += t.length;
  return n;
}

function wordCount(list: readonly string[] | undefined): number {
  return list?.length ?? 0;
}

interface DimensionShape {
  type?: string;
  words?: readonly string[];
  oppositeWords?: readonly string[];
  expand?: number;
}

/** The dimensions' seeds and their expansions (text-scores and word-scores alike). */
function dimensionsCost(dimensions: readonly DimensionShape[] | undefined, expansion: string | undefined): number {
  if (!dimensions?.length) return 0;
  let units = 0;
  let seeds = 0;
  let expanded = 0;
  let competitors = 0;
  for (const d of dimensions) {
    seeds += wordCount(d.words) + wordCount(d.oppositeWords);
    if (d.expand) expanded++;
    if (d.type !== 'axis') competitors++;
  }
  units += seeds * COST.dimensionSeed + expanded * COST.expansionScan;
  // A contrastive expansion scores the candidates against every non-axis dimension, once.
  if (expansion === 'contrastive' && expanded > 0 && competitors > 1) units += competitors * COST.contrastScan;
  return units;
}

export interface TextScoresShape {
  texts: readonly string[];
  dimensions?: readonly DimensionShape[];
  expansion?: string;
  mapperKeys?: readonly string[];
  goalConfig?: {
    modelRankScore?: number;
    dimensions?: readonly unknown[];
    mappers?: readonly unknown[];
    normalization?: string;
  };
  normalization?: string;
  explain?: boolean;
  subwordFallback?: boolean;
}

function uniqueCount(list: readonly string[] | undefined): number {
  return list ? new Set(list).size : 0;
}

/** Factors whose word statistics a request needs (top-level zscore/percentile, goal normalization). */
function statsCost(factors: number, goalFactors: number, outMode: string | undefined, goalMode: string | undefined) {
  const out = outMode === 'zscore' || outMode === 'percentile' ? factors : 0;
  const goal = goalMode === 'zscore' || goalMode === 'percentile' ? goalFactors : 0;
  return Math.max(out, goal) * COST.factorStats;
}

export function textScoresCost(req: TextScoresShape): number {
  const c = chars(req.texts);
  const dims = req.dimensions?.length ?? 0;
  const mappers = uniqueCount(req.mapperKeys);
  const factors = dims + mappers;
  const goal = req.goalConfig;
  const goalFactors =
    (goal?.dimensions?.length ?? 0) + (goal?.mappers?.length ?? 0) + (goal?.modelRankScore !== undefined ? 1 : 0);
  let units = COST.base + c * COST.textChar + c * factors * COST.textCharFactor;
  if (req.explain) units += c * factors * COST.explainCharFactor;
  if (req.subwordFallback) units += COST.subwordTable + c * COST.subwordChar;
  units += dimensionsCost(req.dimensions, req.expansion);
  units += statsCost(factors, goalFactors, req.normalization, goal?.normalization);
  // The answer: per text its scores and goal factors; with explain up to 10 tokens per factor.
  const n = req.texts.length;
  let bytes = n * (64 + (factors + 1) * NUMBER_FIELD_BYTES + goalFactors * 96);
  if (req.explain) {
    let expandedWords = 0;
    for (const d of req.dimensions ?? []) expandedWords += d.expand ?? 0;
    bytes += n * (factors * 10 * 200 + expandedWords * 16);
  }
  return units + bytes * COST.answerByte;
}

export interface WordScoresShape {
  seedWords: readonly string[];
  whitelistWords?: readonly string[];
  limit?: number;
  dimensions?: readonly DimensionShape[];
  expansion?: string;
  mapperKeys?: readonly string[];
  subwordFallback?: boolean;
}

/** find-and-score's default `limit` (core/scoring/words.ts FIND_LIMIT_DEFAULT, repeated here to keep this module a leaf). */
const FIND_LIMIT_DEFAULT = 100;

export function wordScoresCost(req: WordScoresShape): number {
  const factors = 1 + (req.dimensions?.length ?? 0) + uniqueCount(req.mapperKeys);
  let units = COST.base + wordCount(req.seedWords) * COST.dimensionSeed;
  units += dimensionsCost(req.dimensions, req.expansion);
  let words: number;
  if (req.whitelistWords?.length) {
    words = req.whitelistWords.length;
    units += words * (COST.whitelistWord + factors * COST.listWordFactor);
    if (req.subwordFallback) units += COST.subwordTable + words * 8 * COST.subwordChar;
  } else {
    words = req.limit ?? FIND_LIMIT_DEFAULT;
    units += COST.vocabularyScan + words * factors * COST.foundWordFactor;
  }
  return units + words * (96 + factors * NUMBER_FIELD_BYTES) * COST.answerByte;
}

export function autocompleteCost(req: { whitelistWords?: readonly string[] }): number {
  return COST.base + wordCount(req.whitelistWords) * COST.listWord;
}

export function wordAvailabilitiesCost(req: { words: readonly string[]; whitelistWords?: readonly string[] }): number {
  const words = wordCount(req.words) + wordCount(req.whitelistWords);
  return COST.base + words * COST.listWord + wordCount(req.words) * 48 * COST.answerByte;
}

export function similarityMatrixCost(req: { words: readonly string[]; subwordFallback?: boolean }): number {
  const n = req.words.length;
  let units = COST.base + n * COST.listWord + n * n * COST.matrixPair;
  if (req.subwordFallback) units += COST.subwordTable + n * 8 * COST.subwordChar;
  return units + n * n * 6 * COST.answerByte;
}

export function tokenizationCost(req: { text: string }): number {
  // About one token per six characters, each answered with its offsets, lemma and synonyms.
  return COST.base + req.text.length * (COST.tokenizeChar + 30 * COST.answerByte);
}

export function wordTranslationsCost(req: { words: readonly string[]; limit?: number }): number {
  const limit = req.limit ?? 5;
  return COST.base + req.words.length * (COST.vocabularyScan + limit * 48 * COST.answerByte);
}

export function plagiarismCheckCost(req: { text: string }): number {
  return COST.base + COST.plagiarismBase + req.text.length * COST.plagiarismChar;
}

/**
 * Characters of candidate sources a local plagiarism check verifies at most (best candidate
 * first; worker/plagiarism/local.ts): its work depends on the corpus, which the request's shape
 * does not show, so the check is bounded and priced at this bound (plagiarismBase). The largest
 * page a 2 MiB ingestion body can hold fits it.
 */
export const PLAGIARISM_SOURCE_CHARS = 2 * 1024 * 1024;

/** The priced routes and the estimate of each (by the validated body). */
export const COST_OF = {
  textScores: textScoresCost,
  wordScores: wordScoresCost,
  autocomplete: autocompleteCost,
  wordAvailabilities: wordAvailabilitiesCost,
  similarityMatrix: similarityMatrixCost,
  tokenize: tokenizationCost,
  wordTranslations: wordTranslationsCost,
  plagiarismCheck: plagiarismCheckCost,
} as const;

export type CostedRoute = keyof typeof COST_OF;

/** The estimate in whole units (at least 1): what `X-Cost-Units` says and the cap and the bucket compare. */
export function estimateUnits<R extends CostedRoute>(route: R, body: Parameters<(typeof COST_OF)[R]>[0]): number {
  const raw = (COST_OF[route] as (b: typeof body) => number)(body);
  return Math.max(1, Math.ceil(raw));
}

/** The default per-request cap (env REQUEST_COST_CAP_UNITS): the largest admitted request of each family runs in 0.5-1.0 s here. */
export const REQUEST_COST_CAP_UNITS_DEFAULT = 1000;

/**
 * The largest charge (tokens, words or checks) a request within `capUnits` can be charged: every
 * charged token costs at least this many units (a text token: at least one character plus a
 * separator; a whitelist word or a translated word: its lookup), so a copy of the allowance that is
 * 100 times this is safe to answer from (decisions.md: the per-isolate allowance shortcut).
 */
export function largestChargeWithin(capUnits: number): number {
  const unitsPerCharged = Math.min(2 * COST.textChar, COST.whitelistWord, COST.tokenizeChar * 2, COST.vocabularyScan);
  return Math.ceil(capUnits / unitsPerCharged);
}
