/**
 * The model registry's state, shared by the loader (models.ts) and the memory budget
 * (memory-budget.ts): one entry per model id this isolate loads or has loaded.
 */
import type { EmbeddingModel } from '../../core/model';
import { LoadedModel as EngineModel } from '../../core/engine';

/** A model in isolate memory with its per-model caches (core/engine.ts) and its LRU state. */
export class LoadedModel extends EngineModel<EmbeddingModel> {
  /** Last getModel of this model (LRU eviction). */
  lastUsed = Date.now();
  /** Requests that hold this model (never evicted while > 0). */
  pins = 0;
  /** Chosen for eviction while requests held it: no new request takes it. */
  draining = false;
  /** Evicted: its matrix is freed (its kernels instance goes with it); getModel loads it again. */
  released = false;

  /** Bytes held outside WASM memory (vocabulary, offsets, sorted index, the lookup table once built). */
  get retainedBytes(): number {
    return this.index.retainedBytes;
  }
}

export interface Entry {
  status: 'loading' | 'loaded' | 'error';
  promise: Promise<LoadedModel>;
  model?: LoadedModel;
  error?: string;
  failedAt?: number;
  failedEtag?: string | null;
  /** Requests awaiting this entry's load (its model is not evicted while they are about to pin it). */
  waiters: number;
  startedAt: number;
}

export const entries = new Map<string, Entry>();
/** Artifact reads started per model id in this isolate (diagnostics; tests check "once per isolate"). */
export const artifactReads = new Map<string, number>();

/** The models in memory (loaded, not evicted). */
export function liveModels(): LoadedModel[] {
  const out: LoadedModel[] = [];
  for (const e of entries.values()) if (e.model && !e.model.released) out.push(e.model);
  return out;
}
