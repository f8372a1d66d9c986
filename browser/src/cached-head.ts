/**
 * A cached model that is still current scores from its cached head (model-store.ts: the most
 * frequent 50,000 rows, read from its OPFS copy) at once; the full model is read from IndexedDB
 * in the background and replaces the head, as after a progressive cold start.
 */
import { EmbeddingModel } from '../../core/model';
import type { HeadManifest } from '../../core/partial-index';
import { set } from './cache';
import type { HeadRead } from './head-file';
import { idb } from './idb-store';
import { partialLoaded, type Loaded } from './loaded-models';
import type { Found, LoadOptions } from './model-version';
import { phase } from './phases';
import { loadLanguage } from './small-artifacts';

/** `found.head` as a model in `models`; `load` loads the complete model (the same model id). */
export async function fromCachedHead(
  found: Found & { head: HeadRead },
  load: (options: LoadOptions) => Promise<Loaded>,
): Promise<Loaded> {
  const { id, head, info, pointer, onProgress, online } = found;
  const full = (head.manifest as HeadManifest).partialOf!;
  const headModel = phase('build-head', () =>
    EmbeddingModel.fromParsed(head, found.kernels, { retainBuffer: true, matrix: head.matrix }),
  );
  try {
    await found.smallP;
    if (full.language !== found.smallLanguage)
      await loadLanguage(full.language, onProgress, found.revalidateSmall).catch(() => null);
    if (JSON.stringify(info) !== JSON.stringify(pointer))
      await phase('idb-pointer-store', () => set(['model', id], info, idb()));
  } catch (err) {
    // The load fails: the head's matrix would stay allocated in WASM memory.
    head.rowSource?.close();
    headModel.release();
    throw err;
  }
  found.report('partial', head.byteLength, info.bytes, true);
  const headBundles = found.bundles;
  return partialLoaded(
    id,
    headModel,
    full,
    {
      id,
      version: info.version,
      checksum: info.checksum || full.checksum,
      language: full.language,
      vocabularySize: full.vocabularySize,
      dimensions: headModel.dims,
      mapperBundles: info.mapperBundles,
      fromCache: true,
      online,
      bytes: info.bytes,
      partial: true,
    },
    headBundles,
    // From IndexedDB (the version this load checked: online as it was); should the full record be unreadable, from the service.
    () =>
      load({ full: true, revalidate: false, bundles: headBundles }).then(
        (m) => {
          m.info.online = online;
          return m;
        },
        () => load({ full: true, bundles: headBundles }),
      ),
    // The head's rows are read from its copy as requests use them (head-file.ts).
    head.rowSource,
  );
}
