/**
 * The page side of a model's head read (docs/offline-browser.md): the first call that names a
 * model starts reading its head on the page's thread while the Web Worker is still starting, and
 * hands the bytes to the worker without a copy (a transferred ArrayBuffer). Nothing here is
 * trusted more than the worker's own read would be: the worker checks an offered head file like
 * its own OPFS read (layout, the pointer's SHA-256; head-file.ts) and an offered download like its
 * own (X-Content-SHA256 of the body, cache.ts fetchArtifact), takes offered language data as
 * its own IndexedDB read of it (then revalidated as usual), and reads or downloads itself when
 * the offer is null or does not fit.
 *
 *   cached (a model pointer in IndexedDB): the head's OPFS copy (head-file.ts), File.arrayBuffer(),
 *                                           and the model's cached language data (IndexedDB)
 *   not cached, `progressive: true`:       GET /api/v1/artifacts/models/{id}/head
 *
 * Kept free of the worker's modules (core/, zod): this file is part of the page bundle.
 */
import { DB_NAME, headFileName, STORE_NAME } from './store-names';

/** A cached small artifact as the worker stores it (cache.ts StoredArtifact). */
export interface OfferedArtifact {
  etag: string;
  sha256: string;
  bytes: ArrayBuffer;
  headers: Record<string, string>;
  storedAt: string;
}

/** What the page hands to the worker for a model: the head file's bytes, or the head download's answer. */
export type HeadOffer = (
  | {
      kind: 'file';
      version: string;
      bytes: ArrayBuffer;
      /** The cached language data of the model (read in the pointer's transaction). */
      language?: { language: string; artifact: OfferedArtifact };
    }
  | { kind: 'http'; status: number; headers: Record<string, string>; bytes: ArrayBuffer }
) & {
  /** When the page started and finished the read (epoch ms), for the worker's phase timings. */
  startedAt?: number;
  endedAt?: number;
};

interface Pointer {
  version: string;
  language?: string;
}

const isArtifact = (v: unknown): v is OfferedArtifact =>
  !!v && typeof v === 'object' && (v as OfferedArtifact).bytes instanceof ArrayBuffer;

/**
 * The model's pointer (['model', id]) and its language data (['lang', language]) or null; the
 * connection is closed at once (an open one would block a deleteDatabase of the page), and no
 * database is created when there is none.
 */
function readPointer(id: string): Promise<{ pointer: Pointer; language: OfferedArtifact | null } | null> {
  return new Promise((resolve) => {
    let req: IDBOpenDBRequest;
    try {
      req = indexedDB.open(DB_NAME);
    } catch {
      resolve(null);
      return;
    }
    // No database yet: leave creating it to the worker (idb-keyval creates its object store then).
    req.onupgradeneeded = () => req.transaction?.abort();
    req.onerror = () => resolve(null);
    req.onblocked = () => resolve(null);
    req.onsuccess = () => {
      const db = req.result;
      const done = (v: { pointer: Pointer; language: OfferedArtifact | null } | null): void => {
        db.close();
        resolve(v);
      };
      try {
        const store = db.transaction(STORE_NAME, 'readonly').objectStore(STORE_NAME);
        const get = store.get(['model', id]);
        get.onerror = () => done(null);
        get.onsuccess = () => {
          const pointer = get.result as Pointer | undefined;
          if (!(pointer && typeof pointer.version === 'string')) return done(null);
          if (typeof pointer.language !== 'string') return done({ pointer, language: null });
          const lang = store.get(['lang', pointer.language]);
          lang.onerror = () => done({ pointer, language: null });
          lang.onsuccess = () => done({ pointer, language: isArtifact(lang.result) ? lang.result : null });
        };
      } catch {
        done(null);
      }
    };
  });
}

async function readHeadFileBytes(id: string, version: string): Promise<ArrayBuffer | null> {
  try {
    const dir = await navigator.storage.getDirectory();
    const file = await dir.getFileHandle(headFileName(id, version));
    return await (await file.getFile()).arrayBuffer();
  } catch {
    return null;
  }
}

const PICKED = ['etag', 'x-content-sha256', 'x-model-version', 'x-model-checksum', 'content-type'];

async function downloadHead(baseUrl: string, token: string | undefined, id: string): Promise<HeadOffer | null> {
  try {
    const res = await fetch(new URL(`/api/v1/artifacts/models/${encodeURIComponent(id)}/head`, baseUrl).toString(), {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      cache: 'no-store',
    });
    // Refusals and 404 (no head) are the worker's to handle: it asks again itself.
    if (res.status !== 200) return null;
    const headers: Record<string, string> = {};
    for (const h of PICKED) {
      const v = res.headers.get(h);
      if (v !== null) headers[h] = v;
    }
    return { kind: 'http', status: 200, headers, bytes: await res.arrayBuffer() };
  } catch {
    return null;
  }
}

/**
 * The head of model `id` as the worker's load will want it, or null (nothing to offer: the worker
 * reads or downloads itself). `rawModelCache` scorers read no head; only `progressive` ones download it.
 */
export async function offerHead(
  id: string,
  options: { baseUrl: string; token?: string; progressive: boolean; rawModelCache: boolean },
): Promise<HeadOffer | null> {
  if (options.rawModelCache) return null;
  const now = (): number => performance.timeOrigin + performance.now();
  const startedAt = now();
  const cached = await readPointer(id);
  let offer: HeadOffer | null = null;
  if (cached) {
    const { pointer, language } = cached;
    const bytes = await readHeadFileBytes(id, pointer.version);
    offer = bytes
      ? {
          kind: 'file',
          version: pointer.version,
          bytes,
          ...(language && pointer.language ? { language: { language: pointer.language, artifact: language } } : {}),
        }
      : null;
  } else if (options.progressive) {
    offer = await downloadHead(options.baseUrl, options.token, id);
  }
  return offer && { ...offer, startedAt, endedAt: now() };
}

/** The buffers of an offer, moved to the worker (not copied). */
export function transferables(offer: HeadOffer): ArrayBuffer[] {
  const out = [offer.bytes];
  if (offer.kind === 'file' && offer.language) out.push(offer.language.artifact.bytes);
  return out;
}
