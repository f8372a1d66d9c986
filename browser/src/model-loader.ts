/**
 * Loading a model into the offline scorer (core/engine.ts asks for it through engine-source.ts):
 * models, language data, mapper bundles and stored dimension seeds come from the service's
 * artifact endpoints once, verified by SHA-256, and are cached in IndexedDB (cache.ts; a model as
 * its parsed typed arrays, model-store.ts); later loads revalidate them (If-None-Match) or,
 * offline, use the cached copies. Each load phase is timed (phases.ts, status()).
 *
 * A load reads the cached pointer (and the head's OPFS copy) first, then takes one way:
 *   cold-start.ts      nothing cached and `progressive: true`: scores from the downloaded head
 *                      while the rest downloads (answers the rest could change get the complete
 *                      model's answer later, final-answer.ts)
 *   model-version.ts   otherwise the service is asked whether the cached version is current, then
 *   cached-head.ts       a current cached version scores from its cached head, the rest read in the background
 *   complete-model.ts    or the complete model: a new download, or the full cached copy
 */
import { sharedLoad } from '../../core/shared-load';
import type { ProgressFn } from './cache';
import { fromCachedHead } from './cached-head';
import { loadHead } from './cold-start';
import { completeModel } from './complete-model';
import { freeUnused, readEarly, readHeadCopy, readPointer, takeEarlyHead, takeEarlyPointer } from './early-reads';
import { loading, models, type Loaded } from './loaded-models';
import { findVersion, type LoadOptions, type LoadStart } from './model-version';
import { takeOffer } from './offers';
import type { LoadedModelInfo, LoadModelOptions, Progress } from './protocol';
import { config } from './scorer-config';

/** The cached pointer and, when a cached load reads the head first, the head's OPFS copy. */
async function readStart(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<LoadStart> {
  // The reads a scoring call started before its validation (early-reads.ts), else our own: the
  // head's OPFS copy is read while IndexedDB looks up the cached version (its sha256 decides after).
  const early = options.full ? undefined : takeEarlyPointer(id);
  const headCopy = options.full ? undefined : (takeEarlyHead(id) ?? readHeadCopy(id));
  const pointer = await (early ?? readPointer(id));
  const headFirst = !!pointer && !options.full;
  // A head copy read for a model that is not cached (a leftover file) is not used.
  if (!headFirst) void freeUnused(headCopy);
  const report = (phase: Progress['phase'], loaded: number, total: number, fromCache: boolean): void =>
    onProgress?.({ artifact: 'model', name: id, phase, loadedBytes: loaded, totalBytes: total, fromCache });
  return { id, options, onProgress, report, pointer, headFirst, headCopy: headFirst ? headCopy : undefined };
}

async function load(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<Loaded> {
  // The head the page is downloading for this load (head-offer.ts), if it announced one.
  const offer = options.full ? Promise.resolve(null) : takeOffer(id);
  const start = await readStart(id, options, onProgress);
  const loadFull = (o: LoadOptions): Promise<Loaded> => load(id, o, onProgress);
  if (!start.pointer && config.progressive && !options.full) {
    const head = await loadHead(id, onProgress, offer, () => loadFull({ full: true }));
    if (head) return head;
  }
  const found = await findVersion(start);
  if (!found.fresh && !found.cached && found.head) return fromCachedHead({ ...found, head: found.head }, loadFull);
  return completeModel(found);
}

/** One load of a model at a time; once it has settled the next call loads (revalidates) again. */
function loadOnce(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<Loaded> {
  // A head scoring while the rest downloads: that download is the load in progress.
  const partial = models.get(id);
  if (partial?.complete) return Promise.resolve(partial);
  return sharedLoad(
    loading,
    id,
    undefined,
    () => load(id, options, onProgress),
    () => false,
  );
}

/** The model in memory, else loaded (a scoring call's model). */
export async function modelFor(id: string, onProgress?: ProgressFn): Promise<Loaded> {
  const m = models.get(id);
  if (m) return m;
  return loadOnce(id, {}, onProgress);
}

/** loadModel: an explicit load always revalidates (or falls back to the cache when offline). */
export async function loadModel(
  id: string,
  options: LoadModelOptions,
  onProgress?: ProgressFn,
): Promise<LoadedModelInfo> {
  const m = await loadOnce(id, options, onProgress);
  // Only a progressive scorer reports a head as loaded; otherwise loading means the complete model.
  return (m.complete && !config.progressive ? await m.complete : m).info;
}

/**
 * Starts reading the cached pointer of the model a scoring call names, and its head's OPFS copy,
 * before the engine validates the call (early-reads.ts), so those reads run while the request
 * schemas are built and checked (the first call's validation takes ~10-20 ms); the call's load
 * takes them. Nothing to read for a model in memory or loading. Returns the function that forgets
 * the reads once the call has settled.
 */
export function readPointerEarly(id: unknown): () => void {
  if (typeof id === 'string' && (models.has(id) || loading.has(id))) return () => {};
  return readEarly(id);
}
