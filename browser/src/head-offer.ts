/**
 * The page side of a first call naming a model (docs/offline-browser.md), while the Web Worker is
 * still starting. A progressive cold start: the first call that names a model that is not cached
 * starts the head's download on the page and hands the bytes to the worker without a copy (a
 * transferred ArrayBuffer). The worker verifies them like its own download (X-Content-SHA256 of
 * the body, cache.ts fetchArtifact) and downloads the head itself when the offer is null or does
 * not match. A cached model: the page reads its OPFS copies (page-copies.ts).
 *
 * Kept free of the worker's modules (core/, zod): this file is part of the page bundle.
 */
import { readCopiesOnPage, readPointer, type CopiesOffer } from './page-copies';

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

const PICKED = ['etag', 'x-content-sha256', 'x-model-version', 'x-model-checksum', 'content-type'];

/**
 * The page's reads for the first call naming model `id`, while the worker starts. A cached model:
 * its pointer and OPFS copies go to `sendCopies` (page-copies.ts; null when there are none), and
 * the result is null. A model that is not cached: `sendCopies(null)` at once, and for a progressive
 * scorer the head downloaded for the worker, else null (no 200: the worker loads the usual way and
 * handles refusals itself). `sendCopies` is called exactly once.
 */
export async function offerHead(
  id: string,
  options: { baseUrl: string; token?: string; progressive: boolean; rawModelCache: boolean },
  sendCopies: (copies: CopiesOffer | null) => void,
): Promise<HeadOffer | null> {
  const startedAt = performance.timeOrigin + performance.now();
  // The raw-cache baseline of the bench reads as releases before did (no head, no copies).
  if (options.rawModelCache) {
    sendCopies(null);
    return null;
  }
  let pointer: Awaited<ReturnType<typeof readPointer>> = { state: 'unknown' };
  try {
    pointer = await readPointer(id);
  } finally {
    if (pointer.state !== 'cached') sendCopies(null);
  }
  if (pointer.state === 'cached') {
    sendCopies(await readCopiesOnPage(pointer.pointer, id, startedAt).catch(() => null));
    return null;
  }
  if (pointer.state === 'unknown' || !options.progressive) return null;
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
