/**
 * The page side of a first score from the cache (docs/offline-browser.md): while the Web Worker
 * starts (its script, ~60-90 ms on the test machine before its first line runs), the page, idle
 * meanwhile, reads the model's pointer from IndexedDB and the two files the first score waits
 * for, the OPFS copies of the model's head and of its language data (opfs.ts), and hands them to
 * the worker without a copy (transferred ArrayBuffers). The reads are asynchronous
 * (File.arrayBuffer(): the browser reads the file, the page's thread only waits). The worker
 * checks them exactly as its own reads (opfs.ts readCopy: the head's SHA-256 against the
 * pointer, lengths and layout; the language copy against IndexedDB later) and reads the files
 * itself when they are missing or do not check out.
 *
 * Kept free of the worker's modules (core/, zod): this file is part of the page bundle.
 */
import { DB_NAME, headFileName, languageFileName, STORE_NAME } from './store-names';

/** The fields of a cached model's pointer (['model', id], cache.ts CachedModelInfo) the page needs. */
export interface PagePointer {
  version: string;
  sha256: string;
  language: string;
}

/** A copy as the page read it (opfs.ts PageCopy). */
export interface PageCopy {
  name: string;
  description: string;
  bytes: ArrayBuffer;
}

/** The page's reads for a cached model: the pointer as IndexedDB holds it and the copies found. */
export interface CopiesOffer {
  /** The whole pointer record (the worker checks it against its own read). */
  pointer: PagePointer & Record<string, unknown>;
  files: PageCopy[];
  /** When the page started, had the pointer and finished (epoch ms), for the worker's phase timings. */
  startedAt: number;
  pointerAt: number;
  endedAt: number;
}

export type PointerRead = { state: 'none' } | { state: 'unknown' } | { state: 'cached'; pointer: unknown };

/**
 * The model's pointer (['model', id]) as IndexedDB holds it: `none` when there is none (no
 * database is created then), `unknown` when it cannot be read now (the worker decides). The
 * connection is closed at once (an open one would block a deleteDatabase of the page).
 */
export function readPointer(id: string): Promise<PointerRead> {
  return new Promise((resolve) => {
    let req: IDBOpenDBRequest;
    try {
      req = indexedDB.open(DB_NAME);
    } catch {
      resolve({ state: 'none' });
      return;
    }
    // No database yet: leave creating it to the worker (idb-keyval creates its object store then).
    req.onupgradeneeded = () => req.transaction?.abort();
    req.onerror = () => resolve({ state: 'none' });
    req.onblocked = () => resolve({ state: 'unknown' });
    req.onsuccess = () => {
      const db = req.result;
      const done = (r: PointerRead): void => {
        db.close();
        resolve(r);
      };
      try {
        const get = db.transaction(STORE_NAME, 'readonly').objectStore(STORE_NAME).get(['model', id]);
        get.onsuccess = () => done(get.result === undefined ? { state: 'none' } : { state: 'cached', pointer: get.result });
        get.onerror = () => done({ state: 'unknown' });
      } catch {
        done(db.objectStoreNames.contains(STORE_NAME) ? { state: 'unknown' } : { state: 'none' });
      }
    };
  });
}

const PREFIX = 4096;

/** One copy (opfs.ts layout: u32 length of the JSON description, the JSON, zero padding to 16, the bytes), or null. */
async function readOne(dir: FileSystemDirectoryHandle, name: string): Promise<PageCopy | null> {
  try {
    const file = await (await dir.getFileHandle(name)).getFile();
    let prefix = new Uint8Array(await file.slice(0, PREFIX).arrayBuffer());
    if (prefix.length < 4) return null;
    const n = new DataView(prefix.buffer).getUint32(0, true);
    const start = Math.ceil((4 + n) / 16) * 16;
    if (start > file.size) return null;
    if (4 + n > prefix.length) prefix = new Uint8Array(await file.slice(0, 4 + n).arrayBuffer());
    if (4 + n > prefix.length) return null;
    const description = new TextDecoder().decode(prefix.subarray(4, 4 + n));
    // The bytes in a buffer of their own (the worker keeps views into it).
    const bytes = await file.slice(start).arrayBuffer();
    return { name, description, bytes };
  } catch {
    return null;
  }
}

/**
 * The OPFS copies of a cached model's head and of its language data, read on the page; null when
 * OPFS is not there or neither copy is.
 */
export async function readCopiesOnPage(
  pointer: unknown,
  id: string,
  startedAt: number,
  pointerAt = performance.timeOrigin + performance.now(),
): Promise<CopiesOffer | null> {
  const p = pointer as Partial<PagePointer> | null;
  if (!p || typeof p.version !== 'string' || typeof p.sha256 !== 'string' || typeof p.language !== 'string')
    return null;
  let dir: FileSystemDirectoryHandle;
  try {
    if (!navigator.storage?.getDirectory) return null;
    dir = await navigator.storage.getDirectory();
  } catch {
    return null;
  }
  const names = [headFileName(id, p.version), ...(p.language ? [languageFileName(p.language)] : [])];
  const files = (await Promise.all(names.map((name) => readOne(dir, name)))).filter((f): f is PageCopy => !!f);
  if (files.length === 0) return null;
  return {
    pointer: p as CopiesOffer['pointer'],
    files,
    startedAt,
    pointerAt,
    endedAt: performance.timeOrigin + performance.now(),
  };
}
