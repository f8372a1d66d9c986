/**
 * The complete model of a load (model-version.ts found it): a new download, stored in IndexedDB
 * (parsed, with its head, model-store.ts), or the full model read from the cache; the same
 * artifact already in memory is reused.
 */
import { LoadedModel } from '../../core/engine';
import { EmbeddingModel } from '../../core/model';
import { set } from './cache';
import { dropVersion } from './cached-models';
import { matrixPlace } from './early-reads';
import { discardHead } from './head-file';
import { idb } from './idb-store';
import { models, type Loaded } from './loaded-models';
import { storeHead, storeModel } from './model-store';
import type { Found } from './model-version';
import { phase } from './phases';
import { loadLanguage } from './small-artifacts';

export async function completeModel(found: Found): Promise<Loaded> {
  const { id, info, pointer, fresh, report, kernels: k } = found;
  // The head was read but is not used (the complete model was read instead; freeing twice is a no-op).
  discardHead(found.head, matrixPlace(k).free);
  if (!fresh) report('cache', found.cached!.byteLength, found.cached!.byteLength, true);
  const stored = found.cached!;

  // The same artifact already in memory (a complete model): reuse it.
  const current = models.get(id);
  const same =
    !!current &&
    !current.complete &&
    !!info.checksum &&
    current.info.checksum === info.checksum &&
    current.info.version === info.version;
  const index = same
    ? (current!.model.index as EmbeddingModel)
    : phase('build-model', () => EmbeddingModel.fromParsed(stored, k));
  if (!info.checksum) info.checksum = index.manifest.checksum;
  info.language = index.manifest.language;
  info.bytes = stored.byteLength;

  if (fresh) {
    report('store', stored.byteLength, stored.byteLength, false);
    if (pointer && pointer.version !== info.version) await dropVersion(pointer);
    await phase('idb-store', () => storeModel(id, info.version, stored));
  }
  await found.smallP;
  if (info.language !== found.smallLanguage)
    await loadLanguage(info.language, found.onProgress, found.revalidateSmall).catch(() => null);
  // A cache of an earlier release has no head yet: written once, after this load.
  if (found.headFirst && !fresh)
    void phase('idb-head-store', () => storeHead(id, info.version, stored)).catch(() => {});
  // A cached load rewrites the pointer only when it changed (an IndexedDB write before the first score).
  if (fresh || !pointer || JSON.stringify(info) !== JSON.stringify(pointer))
    await phase('idb-pointer-store', () => set(['model', id], info, idb()));
  report('ready', stored.byteLength, stored.byteLength, !fresh);
  const loaded: Loaded = {
    info: {
      id,
      version: info.version,
      checksum: info.checksum,
      language: info.language,
      vocabularySize: index.size,
      dimensions: index.dims,
      mapperBundles: info.mapperBundles,
      fromCache: !fresh,
      online: found.online,
      bytes: stored.byteLength,
    },
    // The engine parses the bundles when a request names them (core/engine.ts).
    model: new LoadedModel(id, index, { stats: same ? current!.model.stats : undefined }),
    bundles: found.bundles,
  };
  models.set(id, loaded);
  return loaded;
}
