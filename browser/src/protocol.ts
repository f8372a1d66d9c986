/**
 * Types shared by the page-side entry (index.ts) and the Web Worker (worker.ts).
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
  /** models, languages, mappers, dimensions */
  artifact: 'model' | 'language' | 'mapper' | 'dimensions';
  /** Model id, language code, mapper key, or `dimensions`. */
  name: string;
  phase: 'cache' | 'download' | 'verify' | 'store' | 'ready';
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
