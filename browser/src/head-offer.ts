/**
 * The page side of a progressive cold start (docs/offline-browser.md): the first call that names
 * a model that is not cached starts the head's download on the page while the Web Worker is still
 * starting, and hands the bytes to the worker without a copy (a transferred ArrayBuffer). The
 * worker verifies them like its own download (X-Content-SHA256 of the body, cache.ts
 * fetchArtifact) and downloads the head itself when the offer is null or does not match.
 *
 * Only downloads: a cached model's head is read by the worker (an OPFS sync access handle there,
 * head-file.ts), since the page's read (File.arrayBuffer(), IndexedDB) was no faster in
 * `npm run bench:browser` and would run on the page's main thread.
 *
 * Kept free of the worker's modules (core/, zod): this file is part of the page bundle.
 */
import { DB_NAME, STORE_NAME } from './store-names';

/** The head download's answer as the page received it. */
export interface HeadOffer {
  kind: 'http';
  status: number;
  headers: Record<string, string>;
  bytes: ArrayBuffer;
  /** When the page started and finished the download (epoch ms), for the worker's phase timings. */
  startedAt?: number;
  endedAt?: number;
}

/**
 * Whether IndexedDB holds the model's pointer (['model', id]): then the worker loads it from the
 * cache. The connection is closed at once (an open one would block a deleteDatabase of the
 * page), and no database is created when there is none.
 */
function isCached(id: string): Promise<boolean> {
  return new Promise((resolve) => {
    let req: IDBOpenDBRequest;
    try {
      req = indexedDB.open(DB_NAME);
    } catch {
      resolve(false);
      return;
    }
    // No database yet: leave creating it to the worker (idb-keyval creates its object store then).
    req.onupgradeneeded = () => req.transaction?.abort();
    req.onerror = () => resolve(false);
    req.onblocked = () => resolve(true); // unknown: leave it to the worker
    req.onsuccess = () => {
      const db = req.result;
      const done = (cached: boolean): void => {
        db.close();
        resolve(cached);
      };
      try {
        const get = db.transaction(STORE_NAME, 'readonly').objectStore(STORE_NAME).getKey(['model', id]);
        get.onsuccess = () => done(get.result !== undefined);
        get.onerror = () => done(true);
      } catch {
        done(db.objectStoreNames.contains(STORE_NAME));
      }
    };
  });
}

const PICKED = ['etag', 'x-content-sha256', 'x-model-version', 'x-model-checksum', 'content-type'];

/**
 * The head of model `id` downloaded for the worker, or null (cached, not a progressive scorer,
 * or no 200: the worker loads the usual way and handles refusals itself).
 */
export async function offerHead(
  id: string,
  options: { baseUrl: string; token?: string; progressive: boolean },
): Promise<HeadOffer | null> {
  if (!options.progressive) return null;
  const startedAt = performance.timeOrigin + performance.now();
  if (await isCached(id)) return null;
  try {
    const res = await fetch(new URL(`/api/v1/artifacts/models/${encodeURIComponent(id)}/head`, options.baseUrl), {
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      cache: 'no-store',
    });
    if (res.status !== 200) {
      await res.body?.cancel();
      return null;
    }
    const headers: Record<string, string> = {};
    for (const h of PICKED) {
      const v = res.headers.get(h);
      if (v !== null) headers[h] = v;
    }
    const bytes = await res.arrayBuffer();
    return {
      kind: 'http',
      status: 200,
      headers,
      bytes,
      startedAt,
      endedAt: performance.timeOrigin + performance.now(),
    };
  } catch {
    return null;
  }
}
