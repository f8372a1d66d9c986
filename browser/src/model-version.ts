/**
 * Which version of a model a load uses (model-loader.ts): the cached version's data is read from
 * IndexedDB (its head first, model-store.ts) while the service is asked whether that version is
 * current (catalog + If-None-Match); a 200 is a new version, downloaded, verified and parsed here.
 * Without a usable answer (offline, or e.g. an expired token) the cached copy is used; an unknown
 * model (404) is an error either way.
 */
import { parseArtifact } from '../../core/artifact';
import { ApiError } from '../../core/problem';
import type { Kernels } from '../../core/kernels';
import { Bundles, readHintedBundles, sameBundles } from './bundles';
import { fetchArtifact, type Fetched, NetworkUnavailable, problem, ProblemError, type ProgressFn } from './cache';
import { catalogBundles, fetchCatalogEntry, modelPath, type CatalogEntry } from './catalog';
import { freeUnused, getKernels, matrixPlace } from './early-reads';
import { discardHead, type HeadRead } from './head-file';
import { readStoredHead, readStoredModel, toStored, type StoredModel } from './model-store';
import { phase } from './phases';
import type { CachedModelInfo, LoadModelOptions, Progress } from './protocol';
import { config } from './scorer-config';
import { loadSmall } from './small-artifacts';

/**
 * `full`: the background load after a head (never a head again); `bundles`: the mapper bundles
 * of that head (read once).
 */
export type LoadOptions = LoadModelOptions & { full?: boolean; bundles?: Bundles };

/** Progress of the model itself (not of its head or small artifacts). */
export type ReportModel = (phase: Progress['phase'], loaded: number, total: number, fromCache: boolean) => void;

/** What a load knows before it asks the service. */
export interface LoadStart {
  id: string;
  options: LoadOptions;
  onProgress?: ProgressFn;
  report: ReportModel;
  /** The cached version, if any. */
  pointer?: CachedModelInfo;
  /** The cached head (its OPFS copy being read) is read before the full model. */
  headFirst: boolean;
  headCopy?: Promise<HeadRead | undefined>;
}

/** The version a load uses, with what was read or downloaded of it. */
export interface Found extends LoadStart {
  info: CachedModelInfo;
  /** Whether the service answered (catalog and model). */
  online: boolean;
  /** A new download (not the cached copy). */
  fresh: boolean;
  /** The cached head, read instead of the full model when `headFirst`. */
  head?: HeadRead;
  /** The full model: downloaded, or read from the cache when there was no head. */
  cached?: StoredModel;
  bundles: Bundles;
  /** Language data and stored seeds (with a new download, every mapper bundle too). */
  smallP: Promise<unknown>;
  /** The language whose data smallP loads. */
  smallLanguage?: string;
  /** Whether the small artifacts and bundles are revalidated (the service answered). */
  revalidateSmall: boolean;
  kernels: Kernels;
}

type Answer = [CatalogEntry | null, Fetched | null];

/** The catalog entry and the model's download or revalidation; nulls without a usable answer. */
async function askService(start: LoadStart, revalidate: boolean): Promise<Answer> {
  const { id, pointer, report } = start;
  if (!(revalidate || !pointer)) return [null, null];
  // The browser knows it is offline: the cached copy without requests that can only fail.
  if (pointer && self.navigator?.onLine === false) return [null, null];
  const fallback = (err: unknown): null => {
    const notFound = err instanceof ApiError || (err instanceof ProblemError && err.problem.status === 404);
    if (err instanceof NetworkUnavailable || (pointer && !notFound)) return null;
    throw err;
  };
  const catalogP = phase('catalog', () => fetchCatalogEntry(id));
  const fetchP = phase(pointer ? 'revalidate-model' : 'download-model', () =>
    fetchArtifact(config.baseUrl, config.token, modelPath(id), pointer?.etag, (phase, l, t) =>
      report(phase, l, t, false),
    ),
  ).catch(fallback);
  const entry = await catalogP.catch(async (err: unknown) => {
    await fetchP.catch(() => null);
    return fallback(err);
  });
  return [entry, await fetchP];
}

/** A new version (200): verified once here (SHA-256 in fetchArtifact, section checksums in parseArtifact), then cached parsed. */
function downloadedVersion(
  id: string,
  catalog: CatalogEntry,
  fetched: Fetched,
): { info: CachedModelInfo; cached: StoredModel } {
  const parsed = phase('parse-verify', () => parseArtifact(fetched.bytes!));
  const info: CachedModelInfo = {
    id,
    version: fetched.headers['x-model-version'] ?? catalog.version,
    checksum: fetched.headers['x-model-checksum'] ?? '',
    sha256: fetched.sha256,
    etag: fetched.etag,
    language: catalog.language,
    bytes: parsed.byteLength,
    cachedAt: new Date().toISOString(),
    mapperBundles: catalogBundles(catalog),
  };
  return { info, cached: toStored(parsed, fetched.sha256) };
}

export async function findVersion(start: LoadStart): Promise<Found> {
  const { id, options, onProgress, pointer, headFirst, report } = start;
  const revalidate = options.revalidate !== false;
  // A cached model is read head first (model-store.ts: the 50,000 most frequent rows, ~6.6 MB of
  // the ~43 MB) and the rest in the background, like the progressive cold start; the full parsed
  // typed arrays (verified when downloaded) when there is no head, and for the background read.
  // Both are read while the service is asked whether the version is current.
  // The head's rows go into the kernels' memory when a request first uses them (head-file.ts).
  const headP = headFirst
    ? phase('idb-head', async () =>
        readStoredHead(id, pointer!.version, pointer!.sha256, matrixPlace(await getKernels()), start.headCopy),
      )
    : Promise.resolve(undefined);
  const cachedP = pointer
    ? headP.then((head) =>
        head ? undefined : phase('idb-model', () => readStoredModel(id, pointer.version, pointer.sha256)),
      )
    : Promise.resolve(undefined);
  headP.catch(() => {});
  cachedP.catch(() => {});
  // The cached version's language data, seeds and bundles are read from IndexedDB beside the
  // model, and revalidated once the service has answered (when it did).
  let settleOnline: (online: boolean) => void = () => {};
  const revalidateP = new Promise<boolean>((resolve) => (settleOnline = resolve));
  let small = pointer ? loadSmall(pointer.language, onProgress, revalidateP) : null;
  let smallLanguage = pointer?.language;
  let bundles = options.bundles ?? (pointer ? new Bundles(pointer, onProgress, revalidateP) : null);
  // The bundles the waiting requests name are read now, not after the model.
  if (bundles && !options.full) readHintedBundles(bundles);

  let answered: Answer = [null, null];
  try {
    answered = await askService(start, revalidate);
  } catch (err) {
    // An error answer (e.g. the model is gone): the head read meanwhile is not used.
    void freeUnused(headP);
    throw err;
  } finally {
    settleOnline(revalidate && answered[0] !== null && answered[1] !== null);
  }
  const catalog = answered[0];
  let fetched = answered[1];
  const online = catalog !== null && fetched !== null;
  const head = await headP.catch(() => undefined);
  let cached = await cachedP.catch(() => undefined);
  if (online && fetched!.status === 304 && !cached && !head) {
    // The pointer survived but its data did not: download again.
    fetched = await fetchArtifact(config.baseUrl, config.token, modelPath(id), undefined, (phase, l, t) =>
      report(phase, l, t, false),
    );
  }
  if (!online && !(pointer && (cached || head))) {
    throw problem('OFFLINE_NOT_CACHED', `Embedding model '${id}' is not cached and the service cannot be reached`);
  }

  let info: CachedModelInfo;
  let fresh = false;
  if (online && fetched!.status === 200) {
    // A new version: the cached head read into WASM memory is not used (freed before anything here may throw).
    discardHead(head, matrixPlace(await getKernels()).free);
    ({ info, cached } = downloadedVersion(id, catalog!, fetched!));
    fresh = true;
  } else {
    info = { ...pointer!, mapperBundles: catalog ? catalogBundles(catalog) : pointer!.mapperBundles };
  }

  // Small artifacts (language data, stored seeds) load while the model is built; the mapper
  // bundles of another version or bundle list than the cached pointer's are loaded anew. A new
  // download fetches (and caches) every bundle now; a cached load reads a bundle when a request
  // names it (and revalidates them all in the background when online).
  const revalidateSmall = online && revalidate;
  if (!small) {
    small = loadSmall(info.language, onProgress, revalidateSmall);
    smallLanguage = info.language;
  }
  if (!bundles || !sameBundles(info, bundles.info)) bundles = new Bundles(info, onProgress, revalidateSmall);
  const allBundles = fresh || revalidateSmall ? phase('mapper-bundles', () => bundles.all()) : null;
  allBundles?.catch(() => {});
  const smallP = fresh ? Promise.all([small, allBundles]) : small;
  const kernels = await getKernels();
  return {
    ...start,
    info,
    online,
    fresh,
    head,
    cached,
    bundles,
    smallP,
    smallLanguage,
    revalidateSmall,
    kernels,
  };
}
