/**
 * The offline scorer's API inside its Web Worker: the Worker's engine (core/engine.ts: the same
 * zod request schemas, problem bodies, core/scoring and kernels.wasm bytes) over the
 * IndexedDB/HTTP source (engine-source.ts, model-loader.ts), so its JSON, errors included,
 * equals the API's. The worker's entry (scorer-worker.ts) imports this chunk and hands every call
 * to it.
 */
import { createEngine, type Engine } from '../../core/engine';
import { sha256Hex } from '../../core/digest';
import { toProblem, type ProgressFn } from './cache';
import { answer } from './final-answer';
import type { FinalAnswer, LoadModelOptions, ScorerConfig } from './protocol';
import { kernelsBytes } from './early-reads';
import { evictModel, listCachedModels } from './cached-models';
import { withBundleHints } from './bundles';
import { offlineSource } from './engine-source';
import { status } from './loaded-models';
import { loadModel, readPointerEarly } from './model-loader';
import { configure } from './scorer-config';

/** The JSON the API would send: a JSON round trip drops undefined fields exactly like c.json(). */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Runs one call; a refusal is thrown as { problem } (Comlink passes a thrown non-Error value through structured clone unchanged). */
async function guarded<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return asJson(await fn());
  } catch (err) {
    throw { problem: toProblem(err) };
  }
}

type OnFinal = (f: FinalAnswer) => unknown;

/**
 * One scoring call on the engine over this call's source (its downloads report to onProgress);
 * an answer from a model's head is followed by the complete model's through onFinal (final-answer.ts).
 */
const scoring = <T>(
  modelId: string | undefined,
  body: unknown,
  onProgress: ProgressFn | undefined,
  onFinal: OnFinal | undefined,
  fn: (engine: Engine) => Promise<T>,
) =>
  guarded(() =>
    withBundleHints(body, async () => {
      const forget = readPointerEarly(modelId ?? (body as { embeddingModelId?: unknown } | null)?.embeddingModelId);
      try {
        return await answer(async (source) => asJson(await fn(createEngine(source))), onProgress, onFinal);
      } finally {
        forget();
      }
    }),
  );

/** The scoring endpoints' request and response shapes, and the cache's management. */
export const api = {
  configure(next: ScorerConfig): void {
    configure(next);
  },
  loadModel: (id: string, options: LoadModelOptions = {}, onProgress?: ProgressFn) =>
    guarded(() => loadModel(id, options, onProgress)),
  listCachedModels: () => guarded(listCachedModels),
  evictModel: (id: string) => guarded(() => evictModel(id)),
  textScores: (body: unknown, onProgress?: ProgressFn, onFinal?: OnFinal) =>
    scoring(undefined, body, onProgress, onFinal, async (e) => (await e.textScores(body)).response),
  wordScores: (body: unknown, onProgress?: ProgressFn, onFinal?: OnFinal) =>
    scoring(undefined, body, onProgress, onFinal, (e) => e.wordScores(body)),
  autocomplete: (body: unknown, onProgress?: ProgressFn, onFinal?: OnFinal) =>
    scoring(undefined, body, onProgress, onFinal, (e) => e.autocomplete(body)),
  wordAvailabilities: (embeddingModelId: string, body: unknown, onProgress?: ProgressFn, onFinal?: OnFinal) =>
    scoring(embeddingModelId, body, onProgress, onFinal, (e) => e.wordAvailabilities(embeddingModelId, body)),
  similarityMatrix: (embeddingModelId: string, body: unknown, onProgress?: ProgressFn, onFinal?: OnFinal) =>
    scoring(embeddingModelId, body, onProgress, onFinal, (e) => e.similarityMatrix(embeddingModelId, body)),
  /** The models in memory (`partial` while only the head is in) and the timed load phases. */
  status: () => guarded(status),
  tokenize: (body: { language: string; text: string }, onProgress?: ProgressFn) =>
    guarded(() => createEngine(offlineSource(onProgress)).tokenize(body)),
  /** Hex SHA-256 of the kernels.wasm bytes this worker runs (compare with the Worker's build). */
  kernelsSha256: () => guarded(() => sha256Hex(kernelsBytes)),
};

export type ScorerApi = typeof api;
