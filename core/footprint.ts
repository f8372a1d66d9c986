/**
 * What a model costs an isolate's memory budget, from its artifact's shape alone: the Worker's
 * model registry (worker/sources/models.ts) reserves it before reading the artifact, and the
 * build's placement (build/placement.ts) packs models into model hosts by it.
 */
import { Kernels } from './kernels';

/** The shape of a model as its manifest and its artifact's size give it. */
export interface Footprint {
  vocabularySize: number;
  dimensions: number;
  language: string;
  artifactBytes: number;
}

/**
 * Room above a model's matrix for the kernels' scratch, counted as used: the largest call, a scan
 * over a whole 341k-word candidate list, takes 1.4 MB; a 500-word similarity matrix 1 MB.
 */
export const SCRATCH_RESERVE_BYTES = 1_500_000;

/** A fresh kernels instance's memory below its first matrix (one 64 KiB page). */
export const KERNELS_BASE_BYTES = 65_536;

/**
 * Bytes outside WASM a model keeps before its lookup table: its artifact's sections outside the
 * matrix and scales (vocabulary, indexes, flags) plus 4 bytes a word of offsets (measured on the
 * four shipped models: the estimate is 0.0-0.1 MB above what they hold).
 */
export const retainedEstimate = (n: number, dims: number, artifactBytes: number): number =>
  Math.max(0, artifactBytes - n * (dims + 4)) + 4 * n;

/** Bytes a model adds when placed: its kernels' memory (matrix and scratch) and its buffers outside it. */
export function placementBytes(model: Footprint): number {
  const n = Math.max(0, model.vocabularySize);
  const dims = model.dimensions;
  const matrix = n > 0 && dims > 0 ? Kernels.matrixBytes(n, dims) : 0;
  return (
    KERNELS_BASE_BYTES + matrix + SCRATCH_RESERVE_BYTES + retainedEstimate(n, Math.max(0, dims), model.artifactBytes)
  );
}

/** A Worker isolate's memory (Cloudflare's limit, the same on every plan: developers.cloudflare.com/workers/platform/limits/#memory). */
export const ISOLATE_MEMORY_BYTES = 128 * 1024 * 1024;

/**
 * Bytes an isolate's models, their caches and their language data may hold (wrangler var
 * MODEL_MEMORY_BUDGET_BYTES): the 128 MiB isolate less room for the runtime, the app and requests.
 */
export const DEFAULT_MEMORY_BUDGET_BYTES = 100_000_000;
