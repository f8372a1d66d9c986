/**
 * Contracts shared by the engine (core/), the Worker (worker/) and the browser bundle (browser/).
 * Runtime-agnostic: nothing here may touch Worker-only or DOM-only APIs.
 *
 * Rows are numbered in the model's frequency order: row r has modelRank r + 1.
 */

/** Manifest of a model artifact: every catalog field of the interface's Embedding model plus format data. */
export interface ModelManifest {
  id: string;
  language: string; // ISO 639-1
  country: string; // ISO 3166-1 alpha-2
  version: string;
  sources: string[];
  features: string[];
  tag: string;
  trainingYear: string; // "2014"
  trainingMonth: string; // "08"
  labels: { label: string; languageLabel: string; countryLabel: string; monthLabel: string };
  tokenCount: number;
  hasTranslation: boolean;
  license: string;
  /**
   * On an aligned model (features `aligned-en`): the English model it was projected onto, its
   * companion for cross-lingual seeds and the default target of its translations. Absent on
   * aligned models built before the field existed: they were projected onto en-glove-6b-100d.
   */
  englishModelId?: string;
  dimensions: number;
  vocabularySize: number;
  quantization: 'int8-rowscale';
  formatVersion: number;
  checksum: string;
  /**
   * On a part or word map of a row-sharded model (build/model-shards.ts): the checksum of the
   * model's artifact it was cut from, so a part left from another build of the model is refused.
   */
  shardOf?: string;
}

export interface TopKResult {
  /** Row ids, best first; ties broken by the lower row id. */
  rows: Int32Array;
  /** Cosine similarities aligned with rows. */
  scores: Float32Array;
}

export interface TopKOptions {
  /** Only rows < rankCutoff are eligible (modelRank <= rankCutoff). */
  rankCutoff?: number;
  /** Only these rows are eligible. */
  rows?: ArrayLike<number>;
}

/** What scoring code needs from a loaded model. Implemented by core/model.ts. */
/**
 * What seed lookups and translations read of a model: its rows by word and their vectors. A loaded
 * index is one; so are rows fetched from the model host that holds the model (core/rows.ts).
 */
export type RowSource = Pick<VectorIndex, 'dims' | 'rowOf' | 'vector'>;

export interface VectorIndex {
  readonly manifest: ModelManifest;
  readonly size: number;
  readonly dims: number;
  /** Rows present when only the model's head is loaded (core/partial-index.ts); absent when complete. */
  readonly rows?: number;
  /** Whether the index's caches may keep `bytes` more (the Worker's memory budget); absent: yes. */
  mayGrow?(bytes: number): boolean;
  /**
   * The object the scoring code's per-index caches are kept under (core/scoring cacheKeyOf);
   * absent: the index itself. The per-call views of a row-sharded model share their word map's.
   */
  readonly cacheKey?: object;
  /**
   * Declares the rows a loop is about to read one by one: a row-sharded model's view fetches them
   * together (core/sharded-index.ts) instead of one run of the engine per row. Absent: nothing to do.
   */
  prefetch?(rows: ArrayLike<number>): void;
  /** Declares the top-k scans (k, no options) a loop is about to make, as prefetch does for rows. */
  prefetchTopK?(queries: readonly Float32Array[], k: number): void;
  /** The vocabulary entry of a row, as stored. */
  word(row: number): string;
  /** Row of a word: exact entry first, then its lower-cased form; -1 when absent. */
  rowOf(word: string): number;
  /**
   * A row past the vocabulary for a word the model lacks, its vector composed of sub-word
   * pieces (core/composing-index.ts, request option subwordFallback); -1 when none. Absent: the
   * request composes nothing. Asked only where a word is scored, never by lookups.
   */
  composeRow?(word: string): number;
  /** Rows whose lower-cased entry starts with the lower-cased prefix, in row (frequency) order, at most limit. */
  prefixRows(prefix: string, limit: number, accept?: (row: number) => boolean): number[];
  /** Vocabulary flags of a row (core/vocab-quality.ts VOCAB_FLAG; artifact section VFLG). */
  flags(row: number): number;
  /** Rows linked to the row as antonyms (artifact section ANTO), ascending. */
  antonyms(row: number): number[];
  /** Rows whose folded entry (lower-cased, diacritics removed) starts with the folded prefix, in row order. */
  foldedPrefixRows(prefix: string): Uint32Array;
  /** Dequantized unit vector of a row. */
  vector(row: number): Float32Array;
  /** Mean of the rows' unit vectors, re-normalized; null for an empty list or a zero mean. */
  centroid(rows: ArrayLike<number>): Float32Array | null;
  /** Fused scan + bounded top-k of cos(query, row) over all (or the restricted) rows; k in 1..1000. */
  topK(query: Float32Array, k: number, options?: TopKOptions): TopKResult;
  /** cos(query, row) for each row. */
  scores(query: Float32Array, rows: ArrayLike<number>): Float32Array;
  /** Row-major n x n cosine matrix of the rows. */
  similarityMatrix(rows: ArrayLike<number>): Float32Array;
}

/** Catalog data of a mapper bundle (interface: Mapper bundle / Mapper catalog entry). */
export interface MapperBundleInfo {
  key: string;
  variables: string[];
  translationKey: string;
  label: string;
  /** null for multilingual bundles. */
  language: string | null;
  country: string | null;
  multilingual: boolean;
  /** The model whose vocabulary rows the values are aligned with. */
  modelId: string;
  /** Documented output scale per variable, e.g. { valence: { min: -1, max: 1, description } }. */
  scales: Record<string, { min: number; max: number; description: string }>;
  lexicon: { name: string; version: string; license: string; url?: string };
  trainingWords: Record<string, number>;
  /** Held-out 10-fold cross-validation figures per variable. */
  metrics: Record<string, { pearsonR: number; spearmanRho: number }>;
  method: string;
  /** ModelManifest.checksum of the model build the values are aligned with. */
  modelChecksum?: string;
  /** How the values are stored (core/mapper-bundle.ts), e.g. 'u16-linear'. */
  valueEncoding?: string;
  /** The linear weights stored in the bundle (ridge) and their own held-out figures. */
  linearModel?: { method: string; metrics: Record<string, { pearsonR: number; spearmanRho: number }> };
  /** Training pipeline version; a change rebuilds the default bundles. */
  trainingVersion?: string;
  /** Held-out 10-fold CV figures of every method measured (ridge, knn, ensemble) per variable. */
  crossValidation?: Record<string, Record<string, { pearsonR: number; spearmanRho: number }>>;
  /** Hyper-parameters of the shipped model per variable (ridge lambda, kNN k and weight power p, ensemble weight alpha). */
  hyperParameters?: Record<string, { lambda: number; k: number; p: number; alpha: number }>;
  /** Variables trained but not shipped (held-out Pearson r under 0.5), with their r. */
  rejected?: Record<string, number>;
  /** Lexicon anchoring per variable (build/mapper/anchoring.ts): membership model and gamma, their cross-validation, held-out lexicon r, neutral-noun check. */
  anchoring?: Record<
    string,
    {
      method: string;
      /**
       * pi = logistic(weights . x + featureWeights . f + bias) on the unit vector x and the row's
       * flag indicators f (named by `features`; absent before training version 4); a non-lexicon
       * value is n + pi^gamma (v - n).
       */
      membership: {
        weights: number[];
        features?: string[];
        featureWeights?: number[];
        bias: number;
        lambda: number;
        gamma: number;
        positives: number;
        negatives: number;
        logLoss: number;
      };
      neutral: number;
      crossValidation: { folds: number; items: number; lexiconItems: number; mse: number; mseUnshrunk: number };
      heldOutLexicon: { pearsonR: number; pearsonRShrunk: number };
      neutralCheck: MapperNeutralCheck;
      /** The same over concrete nouns whatever their other readings (since training version 4). */
      neutralCheckAllReadings?: MapperNeutralCheck;
    }
  >;
}

/** Mean |value - neutral| over a list of concrete nouns no sentiment lexicon lists, against the limit. */
export interface MapperNeutralCheck {
  nouns: number;
  meanAbs: number;
  shareOfHalfRange: number;
  limit: number;
  pass: boolean;
  source: string;
}

/** A loaded mapper bundle: materialized values per vocabulary row. */
export interface MapperValues {
  readonly info: MapperBundleInfo;
  /** Value of a variable for a vocabulary row; NaN when the bundle has none. */
  value(variable: string, row: number): number;
  /** Lexicon-anchored bundles: true when the row is a word of the training lexicon (its value is the lexicon's). */
  isLexiconRow?(row: number): boolean;
}

/** The key of an index's entries in the scoring code's per-index caches (VectorIndex.cacheKey). */
export function cacheKeyOf(index: VectorIndex): object {
  return index.cacheKey ?? index;
}
