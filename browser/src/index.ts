/**
 * Offline scoring for web apps: the ES module entry of the browser bundle.
 *
 *   const scorer = createOfflineScorer({ baseUrl: 'https://api.example.com', token, onProgress });
 *   await scorer.loadModel('en-distilled-glove-use-100d'); // downloads once, then IndexedDB
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
import { offerHead } from './head-offer';
import type { OfflineScorerApi } from './scorer-worker';
import type {
  CachedModelInfo,
  FinalAnswer,
  LoadedModelInfo,
  LoadModelOptions,
  ModelStatus,
  OfflineProblem,
  PhaseTiming,
  Progress,
  ScorerConfig,
} from './protocol';

export type {
  CachedModelInfo,
  FinalAnswer,
  LoadedModelInfo,
  LoadModelOptions,
  ModelStatus,
  OfflineProblem,
  PhaseTiming,
  Progress,
  ScorerConfig,
};

/**
 * Per call, for a scorer created with `progressive: true`: an answer computed from a model's head
 * that the rest of the model could change is followed by the complete model's answer.
 */
export interface ScoreOptions<T> {
  onFinal?: (final: FinalAnswer<T>) => void;
}
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

type Availabilities = { availabilities: Array<{ word: string; isAvailable: boolean }> };
type Matrix = { words: string[]; matrix: number[][] };

export interface OfflineScorer {
  loadModel(embeddingModelId: string, options?: LoadModelOptions): Promise<LoadedModelInfo>;
  listCachedModels(): Promise<CachedModelInfo[]>;
  evictModel(embeddingModelId: string): Promise<boolean>;
  textScores(body: TextScoresRequest, options?: ScoreOptions<TextScoresResponse>): Promise<TextScoresResponse>;
  wordScores(body: WordScoresRequest, options?: ScoreOptions<WordScoresResponse>): Promise<WordScoresResponse>;
  autocomplete(
    body: AutocompleteRequest,
    options?: ScoreOptions<{ suggestions: string[] }>,
  ): Promise<{ suggestions: string[] }>;
  wordAvailabilities(
    embeddingModelId: string,
    body: WordAvailabilitiesRequest,
    options?: ScoreOptions<Availabilities>,
  ): Promise<Availabilities>;
  similarityMatrix(
    embeddingModelId: string,
    body: SimilarityMatrixRequest,
    options?: ScoreOptions<Matrix>,
  ): Promise<Matrix>;
  /** Models in memory (`partial` while only the head is in) and the timed load phases. */
  status(): Promise<{ models: ModelStatus[]; phases: PhaseTiming[]; timeOrigin: number }>;
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
  const worker =
    options.worker ??
    new Worker(new URL('./scorer-worker.ts', import.meta.url), { type: 'module', name: 'offline-scorer' });
  const remote = Comlink.wrap<OfflineScorerApi>(worker);
  const progress = options.onProgress ? Comlink.proxy(options.onProgress) : undefined;
  const baseUrl = new URL(options.baseUrl, globalThis.location?.href).origin;
  let token = options.token;
  // Not awaited: the worker handles its messages in order and configure runs synchronously, so a
  // call posted now already sees it, without waiting for a round trip (~10-15 ms of a first score).
  const configured = remote.configure({ baseUrl, token, progressive: options.progressive === true });
  configured.catch(() => {}); // a worker that failed to start fails the calls themselves
  const call = <T>(fn: () => Promise<T>): Promise<T> => unwrap(fn());
  // The first call naming a model that is not cached starts its head's download here while the
  // worker starts (progressive scorers), and hands it over without a copy (head-offer.ts).
  const announced = new Set<string>();
  const announce = (id: unknown): void => {
    if (typeof id !== 'string' || id.length === 0 || id.length > 256 || announced.has(id)) return;
    announced.add(id);
    remote.expectHead(id).catch(() => {});
    offerHead(id, { baseUrl, token, progressive: options.progressive === true })
      .catch(() => null)
      .then((offer) => remote.headOffer(id, offer && Comlink.transfer(offer, [offer.bytes])))
      .catch(() => {}); // terminated meanwhile
  };
  /** A call on model `id`: its head read starts here (announce), the call once the worker is configured. */
  const on = <T>(id: unknown, fn: () => Promise<T>): Promise<T> => {
    announce(id);
    return call(fn);
  };
  const named = (body: unknown): unknown => (body as { embeddingModelId?: unknown } | null)?.embeddingModelId;
  const final = <T>(o?: ScoreOptions<T>) =>
    o?.onFinal ? Comlink.proxy(o.onFinal as (f: FinalAnswer) => void) : undefined;
  return {
    loadModel: (id, opts = {}) => on(id, () => remote.loadModel(id, opts, progress)),
    listCachedModels: () => call(() => remote.listCachedModels()),
    evictModel: (id) => call(() => remote.evictModel(id)),
    textScores: (body, o) =>
      on(named(body), () => remote.textScores(body, progress, final(o))) as Promise<TextScoresResponse>,
    wordScores: (body, o) =>
      on(named(body), () => remote.wordScores(body, progress, final(o))) as Promise<WordScoresResponse>,
    autocomplete: (body, o) => on(named(body), () => remote.autocomplete(body, progress, final(o))),
    wordAvailabilities: (id, body, o) => on(id, () => remote.wordAvailabilities(id, body, progress, final(o))),
    similarityMatrix: (id, body, o) => on(id, () => remote.similarityMatrix(id, body, progress, final(o))),
    status: () => call(() => remote.status()),
    tokenize: (body) => call(() => remote.tokenize(body, progress)) as Promise<Tokenization>,
    setToken: (next) => {
      token = next;
      return call(() => remote.configure({ baseUrl: '', token: next }));
    },
    kernelsSha256: () => call(() => remote.kernelsSha256()),
    terminate: () => {
      remote[Comlink.releaseProxy]();
      worker.terminate();
    },
  };
}
