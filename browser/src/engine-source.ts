/**
 * The offline scorer's engine source (core/engine.ts EngineSource): the engine asks it for
 * models, language data, mapper bundles and stored seeds, and gets the ones this worker loads
 * and caches (model-loader.ts).
 */
import type { EngineSource } from '../../core/engine';
import type { ProgressFn } from './cache';
import { models, type Loaded } from './loaded-models';
import { modelFor } from './model-loader';
import { getKernels } from './early-reads';
import { loadLanguage, loadSubwordTable, storedSeedsOf } from './small-artifacts';

/** Marks a model as used by a running request (final-answer.ts); identity by default. */
export type Use = (m: Loaded) => Loaded;

/**
 * The engine source of one call: its downloads report to `onProgress`, each model it hands out
 * passes `use`. Mapper bundles are the ones loaded with the model (no catalog offline: an unknown
 * key is 422 MAPPER_NOT_FOUND); their SHA-256 was verified when downloaded (no CRC pass per
 * load).
 */
export function offlineSource(onProgress?: ProgressFn, use: Use = (m) => m): EngineSource {
  return {
    model: async (id) => use(await modelFor(id, onProgress)).model,
    languageData: (language) => loadLanguage(language, onProgress),
    mapperBundleBytes: async (model, bundleKey) => (await models.get(model.id)?.bundles.get(bundleKey)) ?? null,
    // Without the stored seeds only dimensions of type `dimension` are affected (422 as unknown).
    storedSeeds: async (ids) => storedSeedsOf(ids),
    subwordTableBytes: (model) => loadSubwordTable(model.id, onProgress),
    subwordKernels: getKernels,
    bundlesVerified: true,
  };
}
