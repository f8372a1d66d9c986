/**
 * Downloads of the service's artifact endpoints (GET /api/v1/artifacts/...) and their IndexedDB
 * cache (idb-keyval, one object store). A download is verified against X-Content-SHA256 before
 * it is cached; a cached copy is revalidated with If-None-Match (304 = keep) when the service is
 * reachable and used as is when it is not.
 *
 * Keys: ['model', id] -> CachedModelInfo (the current version of a model),
 *       ['model-parts', id, version] -> the parsed artifact, ['model-head', id, version] -> its head (model-store.ts),
 *       ['mapper', id, version, key], ['lang', language], ['dimensions'], ['subword', id] -> StoredArtifact.
 */
import { del, delMany, get, keys, set, setMany } from 'idb-keyval';
import { sha256Hex } from '../../core/digest';
import { ApiError, asApiError, problemBody, type ProblemCode } from '../../core/problem';
import { takeEarlyCopy, takeEarlyEntry } from './early-reads';
import { readCopy, removeCopy, writeCopy } from './opfs';
import type { OfflineProblem, Progress } from './protocol';
import { idb } from './idb-store';
import { DB_NAME } from './store-names';

export { DB_NAME };

export interface StoredArtifact {
  etag: string;
  sha256: string;
  bytes: ArrayBuffer;
  headers: Record<string, string>;
  storedAt: string;
}

/** Thrown inside the worker; index.ts turns it into an OfflineScorerError. */
export class ProblemError extends Error {
  constructor(readonly problem: OfflineProblem) {
    super(problem.detail);
  }
}

/** The problem object of an ApiError (core/problem.ts: the API's code, translationKey and title). */
export function offlineProblem(err: ApiError): OfflineProblem {
  const b = problemBody(err);
  return {
    status: b.status,
    code: b.code,
    translationKey: b.translationKey,
    title: b.title,
    detail: b.detail,
    ...(b.errors ? { errors: b.errors } : {}),
  };
}

/** Any error as the problem object that crosses the Comlink boundary (index.ts rethrows it). */
export function toProblem(err: unknown): OfflineProblem {
  if (err instanceof ProblemError) return err.problem;
  return offlineProblem(
    asApiError(err) ?? new ApiError('INTERNAL_ERROR', err instanceof Error ? err.message : String(err)),
  );
}

/** A refusal of the offline scorer itself (OFFLINE_NOT_CACHED, ARTIFACT_CHECKSUM_MISMATCH). */
export function problem(code: ProblemCode, detail: string): ProblemError {
  return new ProblemError(offlineProblem(new ApiError(code, detail)));
}

/** The service could not be reached (offline, DNS, CORS): callers fall back to the cache. */
export class NetworkUnavailable extends Error {}

export type ProgressFn = (p: Progress) => void;

export interface Fetched {
  status: 200 | 304;
  etag: string;
  sha256: string;
  headers: Record<string, string>;
  bytes?: ArrayBuffer;
}

const PROGRESS_STEP = 1 << 20;

/**
 * GET an artifact. 304 when `etag` still matches; 200 with the verified bytes otherwise.
 * Throws NetworkUnavailable when the request cannot be made, ProblemError for an error answer
 * or a checksum mismatch.
 */
export async function fetchArtifact(
  baseUrl: string,
  token: string | undefined,
  path: string,
  etag: string | undefined,
  report: (phase: Progress['phase'], loaded: number, total: number) => void,
  offered?: { headers: Record<string, string>; bytes: ArrayBuffer },
): Promise<Fetched> {
  if (offered) {
    // A 200 the page received (head-offer.ts): verified here like one of ours.
    report('download', offered.bytes.byteLength, offered.bytes.byteLength);
    return verified(path, offered.headers, offered.bytes, report);
  }
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (etag) headers['if-none-match'] = etag;
  let res: Response;
  try {
    res = await fetch(new URL(path, baseUrl).toString(), { headers, cache: 'no-store' });
  } catch (err) {
    throw new NetworkUnavailable(`GET ${path}: ${(err as Error).message}`);
  }
  const picked: Record<string, string> = {};
  for (const h of ['etag', 'x-content-sha256', 'x-model-version', 'x-model-checksum', 'content-type']) {
    const v = res.headers.get(h);
    if (v !== null) picked[h] = v;
  }
  if (res.status === 304)
    return { status: 304, etag: picked.etag ?? etag ?? '', sha256: picked['x-content-sha256'] ?? '', headers: picked };
  if (!res.ok) {
    let body: Partial<OfflineProblem> = {};
    try {
      body = (await res.json()) as Partial<OfflineProblem>;
    } catch {
      // not problem+json
    }
    throw new ProblemError({
      status: res.status,
      code: body.code ?? 'HTTP_ERROR',
      translationKey: body.translationKey ?? 'httpError',
      title: body.title ?? res.statusText,
      detail: body.detail ?? `GET ${path} answered ${res.status}`,
      ...(body.errors ? { errors: body.errors } : {}),
    });
  }
  const total = Number(res.headers.get('content-length') ?? 0) || 0;
  const bytes = await readBody(res, total, (loaded) => report('download', loaded, total));
  return verified(path, picked, bytes, report);
}

/** A 200's body checked against its X-Content-SHA256 (ARTIFACT_CHECKSUM_MISMATCH otherwise). */
async function verified(
  path: string,
  picked: Record<string, string>,
  bytes: ArrayBuffer,
  report: (phase: Progress['phase'], loaded: number, total: number) => void,
): Promise<Fetched> {
  const expected = (picked['x-content-sha256'] ?? '').toLowerCase();
  report('verify', bytes.byteLength, bytes.byteLength);
  const actual = await sha256Hex(bytes);
  if (!expected || actual !== expected) {
    throw problem(
      'ARTIFACT_CHECKSUM_MISMATCH',
      `GET ${path}: the body's SHA-256 ${actual} does not match X-Content-SHA256 '${expected}'`,
    );
  }
  return { status: 200, etag: picked.etag ?? '', sha256: actual, headers: picked, bytes };
}

async function readBody(res: Response, total: number, onBytes: (loaded: number) => void): Promise<ArrayBuffer> {
  if (!res.body) return res.arrayBuffer();
  const reader = res.body.getReader();
  let buf = new Uint8Array(total > 0 ? total : 1 << 16);
  let loaded = 0;
  let nextReport = 0;
  onBytes(0);
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (err) {
      throw new NetworkUnavailable(`download interrupted: ${(err as Error).message}`);
    }
    if (chunk.done) break;
    const v = chunk.value;
    if (loaded + v.length > buf.length) {
      const grown = new Uint8Array(Math.max(buf.length * 2, loaded + v.length));
      grown.set(buf.subarray(0, loaded));
      buf = grown;
    }
    buf.set(v, loaded);
    loaded += v.length;
    if (loaded >= nextReport) {
      onBytes(loaded);
      nextReport = loaded + PROGRESS_STEP;
    }
  }
  onBytes(loaded);
  return loaded === buf.length ? buf.buffer : buf.slice(0, loaded).buffer;
}

/**
 * A small artifact (language data, mapper bundle, stored seeds) through the cache: revalidated
 * when online, the cached copy when offline. `revalidate` may be a promise (the IndexedDB read
 * starts at once, the request only once it says so). Returns null when neither is available and
 * `optional` is set.
 */
export async function cachedArtifact(
  key: IDBValidKey,
  baseUrl: string,
  token: string | undefined,
  path: string,
  progress: { artifact: Progress['artifact']; name: string; onProgress?: ProgressFn },
  revalidate: boolean | Promise<boolean> = true,
  /** Also kept as an OPFS copy of this name (opfs.ts), read before IndexedDB. */
  copyName?: string,
): Promise<{ artifact: StoredArtifact; fromCache: boolean; online: boolean }> {
  let cached = copyName ? await readArtifactCopy(copyName) : undefined;
  const fromCopy = cached !== undefined;
  if (!cached) {
    cached = await (takeEarlyEntry<StoredArtifact>(key) ?? get<StoredArtifact>(key, idb()));
    // A cache written before copies were kept gets its copy now (in the background).
    if (cached && copyName) void writeArtifactCopy(copyName, cached);
  }
  /**
   * The copy answered without the service confirming it: IndexedDB is the cache of record, so
   * should its entry differ (a newer version written while the copy could not be replaced, e.g.
   * by another worker), the copy is dropped; checked once the first answer is out of the way.
   * (A 304 or a new download settles it without reading the 2.2 MB entry again.)
   */
  const checkCopy = (): void => {
    if (!fromCopy || !copyName) return;
    const etag = cached!.etag;
    setTimeout(() => {
      get<StoredArtifact>(key, idb())
        .then((entry) => (entry?.etag === etag ? undefined : removeCopy(copyName)))
        .catch(() => {});
    }, COPY_CHECK_DELAY_MS);
  };
  const report = (phase: Progress['phase'], loaded: number, total: number, fromCache: boolean): void =>
    progress.onProgress?.({
      artifact: progress.artifact,
      name: progress.name,
      phase,
      loadedBytes: loaded,
      totalBytes: total,
      fromCache,
    });
  if (cached && !(await revalidate)) {
    checkCopy();
    report('ready', cached.bytes.byteLength, cached.bytes.byteLength, true);
    return { artifact: cached, fromCache: true, online: false };
  }
  let fetched: Fetched;
  try {
    fetched = await fetchArtifact(baseUrl, token, path, cached?.etag, (phase, l, t) => report(phase, l, t, false));
  } catch (err) {
    // Offline, or a failed answer (e.g. an expired token): the cached copy; 404 = really gone.
    if (cached && (err instanceof NetworkUnavailable || (err instanceof ProblemError && err.problem.status !== 404))) {
      checkCopy();
      report('ready', cached.bytes.byteLength, cached.bytes.byteLength, true);
      return { artifact: cached, fromCache: true, online: false };
    }
    if (err instanceof NetworkUnavailable)
      throw problem(
        'OFFLINE_NOT_CACHED',
        `${progress.artifact} '${progress.name}' is not cached and the service cannot be reached (${err.message})`,
      );
    throw err;
  }
  if (fetched.status === 304 && cached) {
    report('ready', cached.bytes.byteLength, cached.bytes.byteLength, true);
    return { artifact: cached, fromCache: true, online: true };
  }
  const artifact: StoredArtifact = {
    etag: fetched.etag,
    sha256: fetched.sha256,
    bytes: fetched.bytes!,
    headers: fetched.headers,
    storedAt: new Date().toISOString(),
  };
  report('store', artifact.bytes.byteLength, artifact.bytes.byteLength, false);
  // The old copy goes first: should the new one not be written (a closed tab, an error), no copy is
  // read before IndexedDB's newer entry.
  if (copyName) await removeCopy(copyName);
  await set(key, artifact, idb());
  if (copyName) void writeArtifactCopy(copyName, artifact);
  report('ready', artifact.bytes.byteLength, artifact.bytes.byteLength, false);
  return { artifact, fromCache: false, online: true };
}

/** When a copy read is checked against IndexedDB (ms after it). */
const COPY_CHECK_DELAY_MS = 3000;

interface CopyDescription extends Omit<StoredArtifact, 'bytes'> {
  byteLength: number;
}

/** The OPFS copy of a cached artifact, or undefined (none, or not intact). */
async function readArtifactCopy(name: string): Promise<StoredArtifact | undefined> {
  // Read early (early-reads.ts) when the worker's entry knew the name before this load.
  const copy = await (takeEarlyCopy<CopyDescription>(name) ?? readCopy<CopyDescription>(name));
  if (!copy || copy.bytes.byteLength !== copy.description.byteLength) return undefined;
  const { byteLength: _n, ...rest } = copy.description;
  return { ...rest, bytes: copy.bytes.buffer };
}

/**
 * Writes the OPFS copy of a cached artifact. Should the write fail (e.g. another worker holds the
 * file open), the old copy is removed: a stale copy must not be read before IndexedDB's newer one.
 */
async function writeArtifactCopy(name: string, a: StoredArtifact): Promise<void> {
  const { bytes, ...rest } = a;
  const description: CopyDescription = { ...rest, byteLength: bytes.byteLength };
  if (!(await writeCopy(name, description, new Uint8Array(bytes)))) await removeCopy(name);
}

export { get, set, setMany, del, delMany, keys };
