/**
 * The models cached in IndexedDB (their pointers ['model', id] and data, cache.ts and
 * model-store.ts): listed, evicted, and a replaced version's data dropped.
 */
import { delMany, get, keys } from './cache';
import { removeHeadFiles } from './head-file';
import { idb } from './idb-store';
import { models } from './loaded-models';
import { MODEL_DATA_KINDS } from './model-store';
import type { CachedModelInfo } from './protocol';

export async function listCachedModels(): Promise<CachedModelInfo[]> {
  const all = await keys(idb());
  const ptrs = all.filter((k) => Array.isArray(k) && k[0] === 'model');
  const infos = await Promise.all(ptrs.map((k) => get<CachedModelInfo>(k, idb())));
  return infos.filter((x): x is CachedModelInfo => !!x).sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Removes a model (all versions, with its mapper bundles) from IndexedDB and from this worker. */
export async function evictModel(id: string): Promise<boolean> {
  const all = await keys(idb());
  const mine = all.filter((k) => Array.isArray(k) && (k[0] === 'model' || MODEL_DATA_KINDS.has(k[0])) && k[1] === id);
  await delMany(mine, idb());
  await removeHeadFiles(id);
  models.delete(id);
  return mine.length > 0;
}

/** Drops the data of a cached version that a new download replaces. */
export async function dropVersion(p: CachedModelInfo): Promise<void> {
  const all = await keys(idb());
  const stale = all.filter(
    (k) => Array.isArray(k) && MODEL_DATA_KINDS.has(k[0]) && k[1] === p.id && k[2] === p.version,
  );
  await delMany(stale, idb());
  await removeHeadFiles(p.id); // one copy per model: the new version's is written next
}
