/**
 * Request and response shapes of the scoring endpoints (service-interface.md), as plain
 * TypeScript types. The Worker and the browser bundle validate requests with the zod schemas of
 * core/requests.ts; the scoring functions in this folder accept already-validated input.
 * Runtime-agnostic: no Worker- or DOM-only API.
 */
import type { MapperValues } from '../types';

export type DimensionType = 'manual' | 'dimension' | 'axis';

export interface DimensionRequest {
  id: number;
  type: DimensionType;
  words?: string[];
  /** `axis` only: the negative pole. */
  oppositeWords?: string[];
  name?: string;
  /** Extension (manual and dimension types): add this many nearest vocabulary words (0..50) to the seeds (core/scoring/expansion.ts). */
  expand?: number;
}

export type Normalization = 'none' | 'zscore' | 'percentile';

export interface GoalConfig {
  modelRankScore?: number;
  dimensions?: Array<{ id: number; weight: number }>;
  mappers?: Array<{ id: string; weight: number }>;
  normalization?: Normalization;
}

/** How a text's tokens become one score per dimension (core/scoring/representation.ts). */
export type Representation = 'meanCosine' | 'meanVector' | 'sif';

export interface TextScoresRequest {
  texts: string[];
  embeddingModelId: string;
  goalConfig?: GoalConfig;
  dimensions?: DimensionRequest[];
  mapperKeys?: string[];
  /** Extension: normalization of dimensionScores and mapperScores (default none; goalConfig.normalization stays separate). */
  normalization?: Normalization;
  /** Extension: text representation for dimensionScores (default in representation.ts). */
  representation?: Representation;
  /** Extension: add `explanation` to each scored text. */
  explain?: boolean;
}

export interface WordScoresRequest {
  seedWords: string[];
  whitelistWords?: string[];
  embeddingModelId: string;
  limit?: number;
  wordrankLimit?: number;
  seedScore?: number | null;
  dimensions?: DimensionRequest[];
  mapperKeys?: string[];
}

export interface GoalScoreFactor {
  /** Display name: the dimension's name (else its id), the mapper id, or `modelRank`. */
  field: string;
  value: number;
  type: 'dimension' | 'mapper' | 'intrinsic';
  /** Extension: the machine id of the factor (dimension id as string, mapper id, `modelRank`). */
  id: string;
}

/** A token that drove a factor (explain; filled by the composition rules). */
export interface ExplainedToken {
  string: string;
  indexStart: number;
  indexEnd: number;
  value: number;
  rule?: string;
}

/** Per scored factor, what drove it (request `explain: true`). */
export interface TextExplanation {
  dimensions: Record<string, { tokens: ExplainedToken[]; expandedWords?: string[] }>;
  mappers: Record<string, { tokens: ExplainedToken[] }>;
}

export interface ScoredText {
  modelRankScore: number | null;
  goalScoreFactors: GoalScoreFactor[];
  dimensionScores: Record<string, number>;
  mapperScores: Record<string, number>;
  goalScore?: number;
  explanation?: TextExplanation;
}

export interface TextScoresResponse {
  data: ScoredText[];
}

export interface ScoredWord {
  word: string;
  seedScore: number | null;
  modelRank: number;
  seedScoreQuartile: number;
  modelRankQuartile: number;
  dimensionScores: Record<string, number>;
  mapperScores: Record<string, number>;
  goalScore: number | null;
}

export interface WordScoresAverages {
  modelRankScore: number | null;
  seedScore: number | null;
  dimensionScores: Record<string, number>;
  mapperScores: Record<string, number>;
  goalScore: number | null;
}

export interface WordScoresResponse {
  data: ScoredWord[];
  averages: WordScoresAverages;
}

/** What the text scorer needs from a tokenizer (core/tokenizer tokens satisfy it). */
export interface TokenLike {
  token: string;
  string: string;
  isStop: boolean;
}

/** A mapper variable id (mapperKeys entry) resolved to its loaded bundle. */
export interface ResolvedMapper {
  id: string;
  variable: string;
  values: MapperValues;
}

/** Stored seeds of dimensions of type `dimension`, by id (from D1 on the Worker). */
export type StoredDimensionSeeds = ReadonlyMap<number, { words: string[]; name?: string }>;

/** Normalization statistics of one factor over the model's most frequent words. */
export interface FactorStats {
  n: number;
  mean: number;
  std: number;
  /** Ascending factor values (percentile normalization). */
  sorted: Float64Array;
}

/** Cache of FactorStats per model (per isolate on the Worker, per tab in the browser). */
export interface StatsCache {
  get(key: string): FactorStats | undefined;
  set(key: string, stats: FactorStats): void;
}
