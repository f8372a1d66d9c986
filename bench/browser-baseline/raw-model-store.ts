/**
 * The model cache of releases before the parsed cache, standing in for browser/src/model-store.ts
 * in the baseline worker of `npm run bench:browser` (build.ts): the raw artifact is stored, and
 * parsed and verified (40 MB of section checksums) on every load; no head is stored, so a cached
 * load reads the full model before its first score.
 */
import { parseArtifact } from '../../core/artifact';
import { get, set } from '../../browser/src/cache';
import { idb } from '../../browser/src/idb-store';
import * as parsedCache from '../../browser/src/model-store';

// Everything else (keys, formats, toStored) is the production module's.
export * from '../../browser/src/model-store';

/** Where earlier releases kept the raw artifact (the production cache still converts such an entry). */
const rawKey = (id: string, version: string): IDBValidKey => ['model-bytes', id, version];

export const storeModel: typeof parsedCache.storeModel = (id, version, model) =>
  set(rawKey(id, version), model.rows.buffer, idb());

export const storeHead: typeof parsedCache.storeHead = async () => {};

export const readStoredHead: typeof parsedCache.readStoredHead = async () => undefined;

export const readStoredModel: typeof parsedCache.readStoredModel = async (id, version, sha256) => {
  const bytes = await get<ArrayBuffer>(rawKey(id, version), idb());
  return bytes ? parsedCache.toStored(parseArtifact(bytes), sha256) : undefined;
};
