/**
 * Types shared by the page-side entry (index.ts) and the Web Worker (scorer-worker.ts).
 */

/** A refusal, shaped like the API's problem+json body (same code and translationKey). */
export interface OfflineProblem {
  status: number;
  code: string;
  translationKey: string;
  title: string;
  detail: string;
  errors?: Array<{ path: string; message: string }>;
}

/** Download / cache progress of one artifact. */
export interface Progress {
  /** models, languages, mappers, dimensions, a model's sub-word table */
  artifact: 'model' | 'language' | 'mapper' | 'dimensions' | 'subword';
  /** Model id (model, subword), language code, mapper key, or `dimensions`. */
  name: string;
  /** `partial`: a model's head is in and scores (progressive cold start); `ready` follows once complete. */
  phase: 'cache' | 'download' | 'verify' | 'store' | 'partial' | 'ready';
  loadedBytes: number;
  /** Content-Length when known, else 0. */
  totalBytes: number;
  fromCache: boolean;
}

export interface ScorerConfig {
  /** Origin of the service, e.g. https://api.example.com (no trailing slash needed). */
  baseUrl: string;
  /** Bearer token (JWT with the workspace claim); needed to download, not to score offline. */
  token?: string;
  /**
   * Progressive cold start: a model that is not cached scores as soon as its most frequent
   * 50,000 rows are in (status `partial`), while the rest downloads in the background. Answers
   * that the rest could change are followed by the complete model's answer (ScoreOptions.onFinal).
   * Default false: scoring waits for the complete model.
   */
  progressive?: boolean;
}

/** The complete model's answer to a request answered from a partial model. */
export interface FinalAnswer<T = unknown> {
  response: T;
  /** False when it equals the partial answer. */
  changed: boolean;
}

/** One timed load phase, in ms since the Web Worker started. */
export interface PhaseTiming {
  name: string;
  start: number;
  end: number;
}

/** What the scorer holds of a model (status()). */
export interface ModelStatus {
  id: string;
  /** `partial`: scoring from the head while the rest downloads; `complete`: the whole model. */
  state: 'partial' | 'complete';
  /** Rows in memory (the head's size while partial). */
  rows: number;
  /**
   * A head read from the cache (while partial): how many of its rows have been read so far; the
   * others are read from its copy when a request first uses them (browser/src/head-file.ts).
   */
  rowsRead?: number;
  vocabularySize: number;
  fromCache: boolean;
  /** Set when the background download of the rest failed (the head keeps scoring). */
  error?: OfflineProblem;
}

export interface LoadModelOptions {
  /**
   * Revalidate the cached copy with the service (If-None-Match) before using it. Default true;
   * a network failure always falls back to the cache.
   */
  revalidate?: boolean;
}

export interface LoadedModelInfo {
  id: string;
  version: string;
  checksum: string;
  language: string;
  vocabularySize: number;
  dimensions: number;
  /** Mapper bundle keys available offline for this model. */
  mapperBundles: Array<{ key: string; variables: string[]; label: string }>;
  /** True when the model bytes came from IndexedDB (no download). */
  fromCache: boolean;
  /** Whether the service could be reached while loading. */
  online: boolean;
  bytes: number;
  /** True while only the model's head is in (progressive cold start). */
  partial?: boolean;
}

export interface CachedModelInfo {
  id: string;
  version: string;
  checksum: string;
  sha256: string;
  etag: string;
  language: string;
  bytes: number;
  cachedAt: string;
  mapperBundles: Array<{ key: string; variables: string[]; label: string }>;
}
