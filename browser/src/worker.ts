/**
 * The offline scorer, a Web Worker exposed with Comlink: the Worker's engine (core/engine.ts:
 * the same zod request schemas, problem bodies, core/scoring and kernels.wasm bytes) over the
 * IndexedDB/HTTP source (source.ts), so its JSON, errors included, equals the API's.
 */
import * as Comlink from 'comlink';
import { createEngine } from '../../core/engine';
import { sha256Hex } from '../../core/digest';
import { ApiError, asApiError } from '../../core/problem';
import { offlineProblem, ProblemError, type ProgressFn } from './cache';
import type { LoadModelOptions, OfflineProblem, ScorerConfig } from './protocol';
import { configure, evictModel, kernelsBytes, listCachedModels, loadModel, offlineSource } from './source';

/** The JSON the API would send: a JSON round trip drops undefined fields exactly like c.json(). */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Errors cross the Comlink boundary as plain problem objects (index.ts rethrows them). */
function toProblem(err: unknown): OfflineProblem {
  if (err instanceof ProblemError) return err.problem;
  return offlineProblem(asApiError(err) ?? new ApiError('INTERNAL_ERROR', err instanceof Error ? err.message : String(err)));
}

/** Runs one call; a refusal is thrown as { problem } (Comlink passes a thrown non-Error value through structured clone unchanged). */
async function guarded<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return asJson(await fn());
  } catch (err) {
    throw { problem: toProblem(err) };
  }
}

/** The engine of one call (its downloads report to onProgress). */
const engine = (onProgress?: ProgressFn) => createEngine(offlineSource(onProgress));

/** The exposed API: the scoring endpoints' request and response shapes. */
const api = {
  configure(next: ScorerConfig): void {
    configure(next);
  },
  loadModel: (id: string, options: LoadModelOptions = {}, onProgress?: ProgressFn) => guarded(() => loadModel(id, options, onProgress)),
  listCachedModels: () => guarded(listCachedModels),
  evictModel: (id: string) => guarded(() => evictModel(id)),
  textScores: (body: unknown, onProgress?: ProgressFn) => guarded(async () => (await engine(onProgress).textScores(body)).response),
  wordScores: (body: unknown, onProgress?: ProgressFn) => guarded(() => engine(onProgress).wordScores(body)),
  autocomplete: (body: unknown, onProgress?: ProgressFn) => guarded(() => engine(onProgress).autocomplete(body)),
  wordAvailabilities: (embeddingModelId: string, body: unknown, onProgress?: ProgressFn) => guarded(() => engine(onProgress).wordAvailabilities(embeddingModelId, body)),
  similarityMatrix: (embeddingModelId: string, body: unknown, onProgress?: ProgressFn) => guarded(() => engine(onProgress).similarityMatrix(embeddingModelId, body)),
  tokenize: (body: { language: string; text: string }, onProgress?: ProgressFn) => guarded(() => engine(onProgress).tokenize(body)),
  /** Hex SHA-256 of the kernels.wasm bytes this worker runs (compare with the Worker's build). */
  kernelsSha256: () => guarded(() => sha256Hex(kernelsBytes)),
};

export type OfflineScorerApi = typeof api;

Comlink.expose(api);
