/**
 * The models in this worker's memory (complete, or a head scoring while the rest loads), the
 * loads in progress, and what status() reports of them.
 */
import { LoadedModel } from '../../core/engine';
import type { EmbeddingModel } from '../../core/model';
import { PartialIndex } from '../../core/partial-index';
import type { ModelManifest } from '../../core/types';
import type { Bundles } from './bundles';
import { toProblem } from './cache';
import type { HeadRows } from './head-file';
import { phase, phasesSince } from './phases';
import type { LoadedModelInfo, ModelStatus, OfflineProblem, PhaseTiming } from './protocol';

/** A model in this worker: what loadModel reports, the engine's model, and its mapper bundles' bytes. */
export interface Loaded {
  info: LoadedModelInfo;
  model: LoadedModel;
  bundles: Bundles;
  /** A head (progressive cold start): resolves with the complete model once it is in. */
  complete?: Promise<Loaded>;
  /** Requests running on this head; its matrix is freed when none is left after completion. */
  inflight?: number;
  release?: () => void;
  /** A cached head whose rows are read on first use (head-file.ts). */
  rowSource?: HeadRows;
}

export const models = new Map<string, Loaded>();
/** The load in progress of each model (model-loader.ts: one at a time). */
export const loading = new Map<string, Promise<Loaded>>();
/** Background downloads of the rest of a model (after its head) that failed. */
const failures = new Map<string, OfflineProblem>();

/**
 * A head in `models` as a PartialIndex with the full model's identity (core/partial-index.ts),
 * scoring while `rest` loads the complete model (which replaces this entry in `models`); the
 * head's matrix is freed once the complete model is in and no request runs on the head.
 */
export function partialLoaded(
  id: string,
  headModel: EmbeddingModel,
  full: ModelManifest,
  info: LoadedModelInfo,
  bundles: Bundles,
  rest: () => Promise<Loaded>,
  rowSource?: HeadRows,
): Loaded {
  const loaded: Loaded = {
    info,
    model: new LoadedModel(id, new PartialIndex(headModel, full, rowSource)),
    bundles,
    inflight: 0,
    rowSource,
  };
  let completed = false;
  loaded.release = () => {
    if (completed && loaded.inflight === 0 && loaded.release) {
      loaded.release = undefined;
      rowSource?.close();
      headModel.release();
    }
  };
  loaded.complete = phase('complete-in-background', rest).then(
    (m) => {
      completed = true;
      loaded.release?.();
      return m;
    },
    (err: unknown) => {
      failures.set(id, toProblem(err));
      throw err;
    },
  );
  loaded.complete.catch(() => {});
  models.set(id, loaded);
  return loaded;
}

/** The models in memory (partial or complete) and the timed load phases (ms since the worker started). */
export function status(): { models: ModelStatus[]; phases: PhaseTiming[]; timeOrigin: number } {
  const out: ModelStatus[] = [];
  for (const m of models.values()) {
    const failed = failures.get(m.info.id);
    const index = m.model.index;
    out.push({
      id: m.info.id,
      state: m.complete ? 'partial' : 'complete',
      rows: index instanceof PartialIndex ? index.rows : index.size,
      vocabularySize: index.size,
      fromCache: m.info.fromCache,
      ...(m.complete && m.rowSource ? { rowsRead: m.rowSource.rowsRead } : {}),
      ...(failed && m.complete ? { error: failed } : {}),
    });
  }
  return { models: out, phases: phasesSince(), timeOrigin: performance.timeOrigin };
}
