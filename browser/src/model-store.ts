/**
 * The cached form of a model artifact: its sections as ready-to-use typed arrays (views into the
 * downloaded buffer, which structured clone stores once) plus the SHA-256 verified at download.
 *
 * A download is verified twice, once: its SHA-256 against X-Content-SHA256 (cache.ts) and its
 * section checksums while it is parsed (core/artifact.ts parseArtifact). What goes into IndexedDB
 * is the parse result, so a later load is one IndexedDB read and EmbeddingModel.fromParsed:
 * no re-hash of 40 MB, no re-parse. IndexedDB's own storage is trusted like the browser's
 * memory; `evictModel` and a new version replace the entry.
 *
 * Key: ['model-parts', id, version] -> StoredModel. Caches of earlier releases kept the raw bytes
 * under ['model-bytes', id, version]: such an entry is parsed (and verified) once, stored in the
 * new form and dropped.
 *
 * Beside it, ['model-head', id, version] -> StoredModel of the head (core/model-head.ts: the most
 * frequent 50,000 rows, ~6.6 MB in one buffer, written in the same transaction): a cached load
 * reads only the head before it scores and the full model in the background (cached-head.ts), as the
 * progressive cold start does with the downloaded head.
 */
import { parseArtifact, type ParsedArtifact } from '../../core/artifact';
import { headOf } from '../../core/model-head';
import { del, get, set, setMany } from './cache';
import { idb } from './idb-store';
import { discardHead, readHeadFile, writeHeadFile, type HeadRead, type MatrixPlace } from './head-file';

export const STORED_MODEL_FORMAT = 1;

export interface StoredModel extends ParsedArtifact {
  format: typeof STORED_MODEL_FORMAT;
  /** Hex SHA-256 of the artifact, verified when it was downloaded. */
  sha256: string;
}

export const partsKey = (id: string, version: string): IDBValidKey => ['model-parts', id, version];
export const headKey = (id: string, version: string): IDBValidKey => ['model-head', id, version];
const legacyKey = (id: string, version: string): IDBValidKey => ['model-bytes', id, version];

/** The stored form of a verified, parsed artifact. */
export function toStored(parsed: ParsedArtifact, sha256: string): StoredModel {
  return { ...parsed, format: STORED_MODEL_FORMAT, sha256 };
}

/** Stores a verified, parsed model and its head (IndexedDB, and the head's OPFS copy). */
export async function storeModel(id: string, version: string, model: StoredModel): Promise<void> {
  const parsedHead = headOf(model);
  if (!parsedHead) return set(partsKey(id, version), model, idb());
  const head: StoredModel = { ...parsedHead, format: STORED_MODEL_FORMAT, sha256: model.sha256 };
  await setMany(
    [
      [partsKey(id, version), model],
      [headKey(id, version), head],
    ],
    idb(),
  );
  await writeHeadFile(id, head);
}

/** Adds the head of a stored model (a cache written before heads were stored). */
export async function storeHead(id: string, version: string, model: StoredModel): Promise<void> {
  const parsedHead = headOf(model);
  if (!parsedHead) return;
  const head: StoredModel = { ...parsedHead, format: STORED_MODEL_FORMAT, sha256: model.sha256 };
  await set(headKey(id, version), head, idb());
  await writeHeadFile(id, head);
}

/**
 * The cached head of this version (core/model-head.ts): its copy in the Origin Private File
 * System (head-file.ts, read faster) when that is there and of this artifact, else the IndexedDB
 * entry (whose copy is then written again); undefined when none is stored (a small model, or a
 * cache of an earlier release). With `place`, a copy's rows and scales go straight into WASM
 * memory (head-file.ts; the result's `matrix`). `copy`: the copy's read when it was started
 * before the version was known (model-loader.ts), else it is read now.
 */
export async function readStoredHead(
  id: string,
  version: string,
  sha256: string,
  place?: MatrixPlace,
  copy: Promise<HeadRead | undefined> = readHeadFile(id, place),
): Promise<HeadRead | undefined> {
  const read = await copy;
  if (read && read.format === STORED_MODEL_FORMAT && read.sha256 === sha256) return read;
  if (read) discardHead(read, place!.free);
  const head = await get<StoredModel>(headKey(id, version), idb());
  if (!(head && head.format === STORED_MODEL_FORMAT && head.rows instanceof Int8Array)) return undefined;
  void writeHeadFile(id, head);
  return head;
}

/** The cached model of this version, or undefined (a legacy raw copy is converted on the way). */
export async function readStoredModel(id: string, version: string, sha256: string): Promise<StoredModel | undefined> {
  const stored = await get<StoredModel>(partsKey(id, version), idb());
  if (stored && stored.format === STORED_MODEL_FORMAT && stored.rows instanceof Int8Array) return stored;
  const legacy = await get<ArrayBuffer>(legacyKey(id, version), idb());
  if (!legacy) return undefined;
  let parsed: ParsedArtifact;
  try {
    parsed = parseArtifact(legacy);
  } catch {
    await del(legacyKey(id, version), idb());
    return undefined;
  }
  const converted = toStored(parsed, sha256);
  await storeModel(id, version, converted);
  await del(legacyKey(id, version), idb());
  return converted;
}

/** IndexedDB key kinds holding a model's data (eviction and version replacement drop them). */
export const MODEL_DATA_KINDS: ReadonlySet<unknown> = new Set(['model-parts', 'model-head', 'model-bytes', 'mapper']);
