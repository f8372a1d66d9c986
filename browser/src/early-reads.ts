/**
 * What a first score from the cache waits for, started before the scorer's engine is in: the
 * kernels' compile, the OPFS directory, and for the model a call names its cached pointer
 * (IndexedDB), its head's OPFS copy (head-file.ts, read straight into the kernels' memory) and,
 * once the pointer names its version and language, its language data's OPFS copy, the stored
 * dimension seeds and the mapper bundles the call names (IndexedDB; cache.ts takes them).
 *
 * Part of the worker's first chunk (scorer-worker.ts), which is kept small: the engine (zod request
 * schemas, core/scoring, the tokenizer: most of the code) is imported from it as a chunk of its
 * own, and Chromium parses that chunk off the worker's thread while these reads run on it
 * (docs/offline-browser.md). model-loader.ts takes the reads when it loads the model (takeEarlyPointer,
 * takeEarlyHead) and checks the head's sha256 against the pointer's version.
 */
import kernelsBytes from '../../build/generated/kernels.wasm?bytes';
import { get } from 'idb-keyval';
import { Kernels, sharedKernels } from '../../core/kernels';
import { splitMapperVariableId } from '../../core/mapper-bundle';
import { IDENTIFIER } from '../../core/limits';
import { discardHead, readHeadFile, type HeadRead, type MatrixPlace } from './head-file';
import { idb } from './idb-store';
import { opfsRoot, readCopy, type Copy } from './opfs';
import { phase } from './phases';
import type { CachedModelInfo } from './protocol';

// Compiled off the main path from the worker's first moment (kernels.wasm is inlined).
const kernelsModule = phase('wasm-compile', () => WebAssembly.compile(kernelsBytes));
kernelsModule.catch(() => {});
// The OPFS directory, where a first score from the cache reads its copies, and the IndexedDB
// database (its opening is most of a first pointer read), asked for as early.
void opfsRoot();
idb();

/** The bytes of the kernels this worker runs (their SHA-256 is compared with the Worker's build). */
export { kernelsBytes };

export async function getKernels(): Promise<Kernels> {
  const module = await kernelsModule;
  return sharedKernels(() => Kernels.fromModule(module));
}

/** The mapper bundles a request body names (`mapperKeys`: bundle_variable; at most 32 looked at). */
export function namedBundles(body: unknown): Set<string> {
  const named = (body as { mapperKeys?: unknown } | null)?.mapperKeys;
  const keys = new Set<string>();
  if (Array.isArray(named))
    for (const id of named.slice(0, 32)) {
      const split = typeof id === 'string' ? splitMapperVariableId(id) : null;
      if (split) keys.add(split.bundleKey);
    }
  return keys;
}

/** A head's rows and scales go straight into the kernels' memory (no copy after the read). */
export const matrixPlace = (k: Kernels): MatrixPlace => ({
  matrix: (n, dims) => k.allocMatrix(n, dims),
  free: (slot) => k.freeMatrix(slot),
});

/** The cached pointer of a model (IndexedDB ['model', id]). */
export const readPointer = (id: string): Promise<CachedModelInfo | undefined> =>
  phase('idb-pointer', () => get<CachedModelInfo>(['model', id], idb()));

/** Reads a model's head copy from OPFS (head-file.ts), whichever version it is of. */
export function readHeadCopy(id: string): Promise<HeadRead | undefined> {
  const read = phase('opfs-head', async () => readHeadFile(id, matrixPlace(await getKernels())));
  read.catch(() => {});
  return read;
}

/** A head copy read for nothing (no cached version, or not this load's): its WASM memory is freed. */
export async function freeUnused(read: Promise<HeadRead | undefined> | undefined): Promise<void> {
  const head = await read?.catch(() => undefined);
  if (head) discardHead(head, matrixPlace(await getKernels()).free);
}

/** Reads started for a call before its model's load, by model id, until the load takes them. */
const pointers = new Map<string, Promise<CachedModelInfo | undefined>>();
const heads = new Map<string, Promise<HeadRead | undefined>>();
/** Copies of small artifacts (language data) read early, by file name, until cache.ts takes them. */
const copies = new Map<string, Promise<Copy<unknown> | undefined>>();
/** IndexedDB entries of small artifacts (seeds, mapper bundles) read early, by JSON key. */
const entries = new Map<string, Promise<unknown>>();

/** An early read of `key`, taken once (a later load reads afresh). */
function take<V>(reads: Map<string, V>, key: string): V | undefined {
  const read = reads.get(key);
  reads.delete(key);
  return read;
}

/** The IndexedDB entry `key` read early, if one was. */
export const takeEarlyEntry = <T>(key: IDBValidKey) =>
  take(entries, JSON.stringify(key)) as Promise<T | undefined> | undefined;

/** The OPFS copy of a language's data (cache.ts cachedArtifact). */
export const languageCopyName = (language: string): string => `lang-${encodeURIComponent(language)}.bin`;

/** The copy `name` read early, if one was. */
export const takeEarlyCopy = <D>(name: string) => take(copies, name) as Promise<Copy<D> | undefined> | undefined;
export const takeEarlyPointer = (id: string) => take(pointers, id);
export const takeEarlyHead = (id: string) => take(heads, id);

/**
 * Starts reading the cached pointer of model `id` (when it is a valid identifier and no read of it
 * is waiting) and its head's OPFS copy, for a call that will load the model; then
 * what the pointer's version needs beside it (`bundleKeys`: the mapper bundles the call names).
 * Only reads: a call that is refused loads nothing (a head copy read for it is freed). Returns the
 * function that forgets the reads once the call has settled (a later load reads afresh).
 */
export function readEarly(id: unknown, bundleKeys: readonly string[] = []): () => void {
  if (typeof id !== 'string' || !IDENTIFIER.test(id) || pointers.has(id)) return () => {};
  const pointer = readPointer(id);
  pointer.catch(() => {});
  pointers.set(id, pointer);
  // The cached version's language data, seeds and named bundles, read as soon as the pointer is in.
  let language: string | undefined;
  const keys: string[] = [];
  let forgotten = false;
  void pointer.then(
    (p) => {
      // (The load may have taken the pointer already: these reads are still its.)
      if (!p || forgotten) return;
      if (p.language) {
        language = languageCopyName(p.language);
        if (!copies.has(language))
          copies.set(
            language,
            phase('opfs-language', () => readCopy(language!)),
          );
      }
      const cached = new Set(p.mapperBundles.map((b) => b.key));
      for (const key of [
        ['dimensions'],
        ...bundleKeys.filter((k) => cached.has(k)).map((k) => ['mapper', id, p.version, k]),
      ]) {
        const k = JSON.stringify(key);
        if (entries.has(k)) continue;
        const read = get(key, idb());
        read.catch(() => {});
        entries.set(k, read);
        keys.push(k);
      }
    },
    () => {},
  );
  const copy = readHeadCopy(id);
  heads.set(id, copy);
  return () => {
    forgotten = true;
    if (pointers.get(id) === pointer) pointers.delete(id);
    if (language) copies.delete(language);
    for (const k of keys) entries.delete(k);
    if (heads.get(id) === copy) {
      heads.delete(id);
      void freeUnused(copy);
    }
  };
}
