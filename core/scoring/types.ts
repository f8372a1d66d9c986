/**
 * Types of the scoring functions. The request and response shapes (service-interface.md) are
 * declared once, as the zod schemas of core/requests.ts and core/responses.ts; their types are
 * `z.infer`red there and re-exported here for the scorers, which accept already-validated input.
 * Runtime-agnostic: no Worker- or DOM-only API.
 */
import type { MapperValues } from '../types';

export type {
  DimensionRequest,
  DimensionType,
  GoalConfig,
  Normalization,
  TextNormalization,
  TextScoresRequest,
  WordScoresRequest,
} from '../requests';
export type {
  ExplainedToken,
  Explanation,
  Explanation as TextExplanation,
  GoalScoreFactor,
  ScoredText,
  ScoredWord,
  TextScoresResponse,
  WordScoresAverages,
  WordScoresResponse,
} from '../responses';

/** How a text's tokens become one score per dimension (core/scoring/representation.ts). */
export type Representation = 'meanCosine' | 'meanVector' | 'sif' | 'contentMean';

/**
 * What the text scorer needs from a tokenizer (core/tokenizer tokens satisfy it). Tokens come in
 * text order without overlap, and `string` is the text between indexStart and indexEnd: the
 * composition reads "!", emoticon marks and emoji from the tokens' strings and the gaps between them.
 */
export interface TokenLike {
  token: string;
  string: string;
  isStop: boolean;
  indexStart: number;
  indexEnd: number;
  /** The form the token is looked up by in the model (default: token): a Japanese conjugated word's dictionary form; '' for none (a Japanese auxiliary). */
  lookup?: string;
}

/** What the scorer reads of a token apart from its position (core/tokenizer TokenForm satisfies it). */
export type FormLike = Pick<TokenLike, 'token' | 'string' | 'isStop' | 'lookup'>;

/** A mapper variable id (mapperKeys entry) resolved to its loaded bundle. */
export interface ResolvedMapper {
  id: string;
  variable: string;
  values: MapperValues;
}

/** Stored seeds of dimensions of type `dimension`, by id (from D1 on the Worker). */
/** A stored dimension's seed words and name (admin dimensions, D1). */
export interface StoredSeed {
  words: string[];
  name?: string;
}

export type StoredDimensionSeeds = ReadonlyMap<number, StoredSeed>;

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
