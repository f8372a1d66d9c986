/**
 * Offline scoring for web apps: the ES module entry of the browser bundle.
 *
 *   const scorer = createOfflineScorer({ baseUrl: 'https://api.example.com', token, onProgress });
 *   await scorer.loadModel('en-glove-6b-100d');       // downloads once, then IndexedDB
 *   const { data } = await scorer.textScores({ texts, embeddingModelId, dimensions, goalConfig });
 *
 * Every scoring method takes the request body of the matching endpoint and resolves to the JSON
 * the API would answer; refusals reject with an OfflineScorerError carrying the same problem
 * code. The work runs in a Web Worker (Comlink), so the page stays responsive.
 */
import * as Comlink from 'comlink';
import type {
  AutocompleteRequest,
  SimilarityMatrixRequest,
  TextScoresRequest,
  TextScoresResponse,
  WordAvailabilitiesRequest,
  WordScoresRequest,
  WordScoresResponse,
} from '../../core/scoring';
import type { Tokenization } from '../../core/tokenizer';
import type { OfflineScorerApi } from './worker';
import type { CachedModelInfo, LoadedModelInfo, LoadModelOptions, OfflineProblem, Progress, ScorerConfig } from './protocol';

export type { CachedModelInfo, LoadedModelInfo, LoadModelOptions, OfflineProblem, Progress, ScorerConfig };
export type { TextScoresRequest, TextScoresResponse, WordScoresRequest, WordScoresResponse, Tokenization };

/** A refusal of the offline scorer; `problem` has the API's code/status/translationKey. */
export class OfflineScorerError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(readonly problem: OfflineProblem) {
    super(problem.detail);
    this.name = 'OfflineScorerError';
    this.status = problem.status;
    this.code = problem.code;
  }
}

export interface OfflineScorerOptions extends ScorerConfig {
  /** Download and cache progress of models, language data, mapper bundles and stored seeds. */
  onProgress?: (p: Progress) => void;
  /** A Worker running the bundle's worker file; default: the file next to this module. */
  worker?: Worker;
}

export interface OfflineScorer {
  loadModel(embeddingModelId: string, options?: LoadModelOptions): Promise<LoadedModelInfo>;
  listCachedModels(): Promise<CachedModelInfo[]>;
  evictModel(embeddingModelId: string): Promise<boolean>;
  textScores(body: TextScoresRequest): Promise<TextScoresResponse>;
  wordScores(body: WordScoresRequest): Promise<WordScoresResponse>;
  autocomplete(body: AutocompleteRequest): Promise<{ suggestions: string[] }>;
  wordAvailabilities(embeddingModelId: string, body: WordAvailabilitiesRequest): Promise<{ availabilities: Array<{ word: string; isAvailable: boolean }> }>;
  similarityMatrix(embeddingModelId: string, body: SimilarityMatrixRequest): Promise<{ words: string[]; matrix: number[][] }>;
  tokenize(body: { language: string; text: string }): Promise<Tokenization>;
  /** Replace the bearer token (e.g. after a refresh). */
  setToken(token: string | undefined): Promise<void>;
  /** Hex SHA-256 of the WASM kernels the worker runs. */
  kernelsSha256(): Promise<string>;
  terminate(): void;
}

async function unwrap<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    const prob = (err as { problem?: OfflineProblem } | null)?.problem;
    if (prob && typeof prob.code === 'string') throw new OfflineScorerError(prob);
    throw err;
  }
}

export function createOfflineScorer(options: OfflineScorerOptions): OfflineScorer {
  const worker = options.worker ?? new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'offline-scorer' });
  const remote = Comlink.wrap<OfflineScorerApi>(worker);
  const progress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
  const ready = remote.configure({ baseUrl: new URL(options.baseUrl, globalThis.location?.href).origin, token: options.token });
  const call = <T>(fn: () => Promise<T>): Promise<T> => unwrap(ready.then(fn));
  return {
    loadModel: (id, opts = {}) => call(() => remote.loadModel(id, opts, progress)),
    listCachedModels: () => call(() => remote.listCachedModels()),
    evictModel: (id) => call(() => remote.evictModel(id)),
    textScores: (body) => call(() => remote.textScores(body, progress)) as Promise<TextScoresResponse>,
    wordScores: (body) => call(() => remote.wordScores(body, progress)) as Promise<WordScoresResponse>,
    autocomplete: (body) => call(() => remote.autocomplete(body, progress)),
    wordAvailabilities: (id, body) => call(() => remote.wordAvailabilities(id, body, progress)),
    similarityMatrix: (id, body) => call(() => remote.similarityMatrix(id, body, progress)),
    tokenize: (body) => call(() => remote.tokenize(body, progress)) as Promise<Tokenization>,
    setToken: (token) => call(() => remote.configure({ baseUrl: '', token })),
    kernelsSha256: () => call(() => remote.kernelsSha256()),
    terminate: () => {
      remote[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}
