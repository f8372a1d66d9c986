/**
 * The offline scorer's engine source (core/engine.ts): models, language data, mapper bundles and
 * stored dimension seeds come from the service's artifact endpoints once, verified by SHA-256,
 * and are cached in IndexedDB (cache.ts; a model as its parsed typed arrays, model-store.ts);
 * later loads revalidate them (If-None-Match) or, offline, use the cached copies. The kernels are
 * the Worker's kernels.wasm bytes, inlined at build time and compiled as the worker starts.
 *
 * With `progressive: true` a model that is not cached scores from its head first (the most
 * frequent 50,000 rows, core/partial-index.ts) while the rest downloads (loadHead); answers the
 * rest could change get the complete model's answer later (final-answer.ts). Each load phase is
 * timed (phases.ts, status()).
 */
import { parseArtifact } from '../../core/artifact';
import { LoadedModel, type EngineSource } from '../../core/engine';
import { EmbeddingModel } from '../../core/model';
import { PartialIndex, type HeadManifest } from '../../core/partial-index';
import { ApiError } from '../../core/problem';
import { HEAD_ROWS } from '../../core/model-head';
import type { ModelManifest } from '../../core/types';
import { sharedLoad } from '../../core/shared-load';
import type { StoredDimensionSeeds, StoredSeed } from '../../core/scoring';
import { parseLanguageData, type LanguageData } from '../../core/tokenizer';
import {
  cachedArtifact,
  delMany,
  fetchArtifact,
  type Fetched,
  get,
  keys,
  NetworkUnavailable,
  problem,
  ProblemError,
  set,
  toProblem,
  type ProgressFn,
} from './cache';
import {
  freeUnused,
  getKernels,
  languageCopyName,
  matrixPlace,
  namedBundles,
  readEarly,
  readHeadCopy,
  readPointer,
  takeEarlyHead,
  takeEarlyPointer,
} from './early-reads';
import { discardHead, removeHeadFiles, type HeadRows } from './head-file';
import { idb } from './idb-store';
import type { HeadOffer } from './head-offer';
import { takeOffer } from './offers';
import { MODEL_DATA_KINDS, readStoredHead, readStoredModel, storeHead, storeModel, toStored } from './model-store';
import { mark, phase, phasesSince } from './phases';
import type {
  CachedModelInfo,
  LoadedModelInfo,
  LoadModelOptions,
  ModelStatus,
  OfflineProblem,
  PhaseTiming,
  Progress,
  ScorerConfig,
} from './protocol';

/** A model in this worker: what loadModel reports, the engine's model, and its mapper bundles' bytes. */
export interface Loaded {
  info: LoadedModelInfo;
  model: LoadedModel;
  bundles: Bundles;
  /** A head (progressive cold start): resolves with the complete model once it is in. */
  complete?: Promise<Loaded>;
  /** Requests running on this head; its matrix is freed when none is left after completion. */
  inflight?: number;
  release?: () => void;
  /** A cached head whose rows are read on first use (head-file.ts). */
  rowSource?: HeadRows;
}

let config: ScorerConfig = { baseUrl: self.location.origin };
const models = new Map<string, Loaded>();
const loading = new Map<string, Promise<Loaded>>();
const languages = new Map<string, Promise<LanguageData>>();
/** Background downloads of the rest of a model (after its head) that failed. */
const failures = new Map<string, OfflineProblem>();
let storedSeeds: Map<number, StoredSeed> | null = null;

export function configure(next: ScorerConfig): void {
  config = { ...config, ...next, baseUrl: next.baseUrl || config.baseUrl };
}

interface CatalogEntry {
  version: string;
  language: string;
  dimensions?: number;
  vocabularySize?: number;
  _embedded: { mappers: Array<{ key: string; variables: string[]; label: string }> };
}

async function fetchCatalogEntry(id: string): Promise<CatalogEntry | null> {
  let res: Response;
  try {
    res = await fetch(new URL(`/api/v1/embedding-models/${encodeURIComponent(id)}`, config.baseUrl).toString(), {
      headers: config.token ? { authorization: `Bearer ${config.token}` } : {},
      cache: 'no-store',
    });
  } catch {
    return null;
  }
  if (res.status === 404) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${id}'`);
  if (!res.ok) {
    const body = (await res.json().catch(() => ({}))) as Partial<OfflineProblem>;
    throw new ProblemError({
      status: res.status,
      code: body.code ?? 'HTTP_ERROR',
      translationKey: body.translationKey ?? 'httpError',
      title: body.title ?? res.statusText,
      detail: body.detail ?? `GET /api/v1/embedding-models/${id} answered ${res.status}`,
    });
  }
  return (await res.json()) as CatalogEntry;
}

function loadLanguage(
  language: string,
  onProgress?: ProgressFn,
  revalidate: boolean | Promise<boolean> = true,
): Promise<LanguageData> {
  return sharedLoad(languages, language, undefined, async () => {
    const { artifact } = await cachedArtifact(
      ['lang', language],
      config.baseUrl,
      config.token,
      `/api/v1/artifacts/languages/${language}`,
      { artifact: 'language', name: language, onProgress },
      revalidate,
      // Read first from its OPFS copy: with the model's head, what a first score from the cache waits for.
      languageCopyName(language),
    );
    return phase('language-parse', () => parseLanguageData(artifact.bytes));
  });
}

async function loadStoredSeeds(onProgress?: ProgressFn, revalidate: boolean | Promise<boolean> = true): Promise<void> {
  try {
    const { artifact } = await cachedArtifact(
      ['dimensions'],
      config.baseUrl,
      config.token,
      '/api/v1/artifacts/dimensions',
      { artifact: 'dimensions', name: 'dimensions', onProgress },
      revalidate,
    );
    const parsed = JSON.parse(new TextDecoder().decode(artifact.bytes)) as {
      data: Array<{ id: number; name: string; words: string[] }>;
    };
    storedSeeds = new Map(parsed.data.map((d) => [d.id, { words: d.words, name: d.name }]));
  } catch (err) {
    // Without the stored seeds only dimensions of type `dimension` are affected (422 as unknown).
    if (!storedSeeds) storedSeeds = new Map();
    if (!(err instanceof ProblemError)) throw err;
  }
}

/**
 * `full`: the background load after a head (never a head again); `bundles`: the mapper bundles
 * of that head (read once).
 */
type LoadOptions = LoadModelOptions & { full?: boolean; bundles?: Bundles };

/**
 * Language data and stored seeds (cached; revalidated when `revalidate` says so: a promise lets
 * the IndexedDB reads start before the service has answered).
 */
function loadSmall(
  language: string,
  onProgress: ProgressFn | undefined,
  revalidate: boolean | Promise<boolean>,
): Promise<[unknown, void]> {
  const p = Promise.all([
    language
      ? phase('language-data', () => loadLanguage(language, onProgress, revalidate)).catch(() => null)
      : Promise.resolve(null),
    phase('stored-seeds', () => loadStoredSeeds(onProgress, revalidate)),
  ]);
  p.catch(() => {});
  return p;
}

const sameBundles = (a: CachedModelInfo, b: CachedModelInfo): boolean =>
  a.id === b.id &&
  a.version === b.version &&
  a.mapperBundles.map((m) => m.key).join('\n') === b.mapperBundles.map((m) => m.key).join('\n');

async function load(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<Loaded> {
  const revalidate = options.revalidate !== false;
  // The head the page is downloading for this load (head-offer.ts), if it announced one.
  const offer = options.full ? Promise.resolve(null) : takeOffer(id);
  // The reads a scoring call started before its validation (early-reads.ts), else our own: the
  // head's OPFS copy is read while IndexedDB looks up the cached version (its sha256 decides after).
  const early = options.full ? undefined : takeEarlyPointer(id);
  const headCopy = options.full || config.rawModelCache ? undefined : (takeEarlyHead(id) ?? readHeadCopy(id));
  const pointer = await (early ?? readPointer(id));
  const report = (phase: Progress['phase'], loaded: number, total: number, fromCache: boolean): void =>
    onProgress?.({ artifact: 'model', name: id, phase, loadedBytes: loaded, totalBytes: total, fromCache });
  const headFirst = !!pointer && !options.full && !config.rawModelCache;
  // A head copy read for a model that is not cached (a leftover file) is not used.
  if (!headFirst) void freeUnused(headCopy);
  // Progressive cold start: nothing cached, so score from the head while the rest downloads.
  if (!pointer && config.progressive && !options.full) {
    const head = await loadHead(id, onProgress, offer);
    if (head) return head;
  }
  // A cached model is read head first (model-store.ts: the 50,000 most frequent rows, ~6.6 MB of
  // the ~43 MB) and the rest in the background, like the progressive cold start; the full parsed
  // typed arrays (verified when downloaded) when there is no head, for the background read and
  // for the bench's raw-cache baseline. Both are read while the service is asked whether the
  // version is current.
  // The head's rows go into the kernels' memory when a request first uses them (head-file.ts).
  const headP = headFirst
    ? phase('idb-head', async () =>
        readStoredHead(id, pointer.version, pointer.sha256, matrixPlace(await getKernels()), headCopy),
      )
    : Promise.resolve(undefined);
  const cachedP = pointer
    ? headP.then((head) =>
        head
          ? undefined
          : phase('idb-model', () => readStoredModel(id, pointer.version, pointer.sha256, config.rawModelCache)),
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
  if (bundles && !options.full) for (const key of hintedBundles.keys()) bundles.get(key).catch(() => {});
  const modelPath = `/api/v1/artifacts/models/${encodeURIComponent(id)}`;

  // Without a usable answer (offline, or e.g. an expired token) a cached copy is used; an
  // unknown model (404) is an error either way.
  const ask = async (): Promise<[CatalogEntry | null, Fetched | null]> => {
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
      fetchArtifact(config.baseUrl, config.token, modelPath, pointer?.etag, (phase, l, t) =>
        report(phase, l, t, false),
      ),
    ).catch(fallback);
    const entry = await catalogP.catch(async (err: unknown) => {
      await fetchP.catch(() => null);
      return fallback(err);
    });
    return [entry, await fetchP];
  };
  let answered: [CatalogEntry | null, Fetched | null] = [null, null];
  try {
    answered = await ask();
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
    fetched = await fetchArtifact(config.baseUrl, config.token, modelPath, undefined, (phase, l, t) =>
      report(phase, l, t, false),
    );
  }
  if (!online && !(pointer && (cached || head))) {
    throw problem('OFFLINE_NOT_CACHED', `Embedding model '${id}' is not cached and the service cannot be reached`);
  }

  const catalogBundles = catalog
    ? catalog._embedded.mappers.map((m) => ({ key: m.key, variables: m.variables, label: m.label }))
    : null;
  let fromCache = false;
  let info: CachedModelInfo;
  let fresh = false;
  if (online && fetched!.status === 200) {
    // A new version: the cached head read into WASM memory is not used (freed before anything here may throw).
    discardHead(head, matrixPlace(await getKernels()).free);
    // Verified once here (SHA-256 in fetchArtifact, section checksums in parseArtifact), then cached parsed.
    const parsed = phase('parse-verify', () => parseArtifact(fetched!.bytes!));
    cached = toStored(parsed, fetched!.sha256);
    fresh = true;
    info = {
      id,
      version: fetched!.headers['x-model-version'] ?? catalog!.version,
      checksum: fetched!.headers['x-model-checksum'] ?? '',
      sha256: fetched!.sha256,
      etag: fetched!.etag,
      language: catalog!.language,
      bytes: parsed.byteLength,
      cachedAt: new Date().toISOString(),
      mapperBundles: catalogBundles!,
    };
  } else {
    fromCache = true;
    info = { ...pointer!, mapperBundles: catalogBundles ?? pointer!.mapperBundles };
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
  const k = await getKernels();

  if (!fresh && !cached && head) {
    // The cached head scores at once; the full model is read from IndexedDB in the background.
    const full = (head.manifest as HeadManifest).partialOf!;
    const headModel = phase('build-head', () =>
      EmbeddingModel.fromParsed(head, k, { retainBuffer: true, matrix: head.matrix }),
    );
    try {
      await smallP;
      if (full.language !== smallLanguage)
        await loadLanguage(full.language, onProgress, revalidateSmall).catch(() => null);
      if (JSON.stringify(info) !== JSON.stringify(pointer))
        await phase('idb-pointer-store', () => set(['model', id], info, idb()));
    } catch (err) {
      // The load fails: the head's matrix would stay allocated in WASM memory.
      head.rowSource?.close();
      headModel.release();
      throw err;
    }
    report('partial', head.byteLength, info.bytes, true);
    const headBundles = bundles;
    return partialLoaded(
      id,
      headModel,
      full,
      {
        id,
        version: info.version,
        checksum: info.checksum || full.checksum,
        language: full.language,
        vocabularySize: full.vocabularySize,
        dimensions: headModel.dims,
        mapperBundles: info.mapperBundles,
        fromCache: true,
        online,
        bytes: info.bytes,
        partial: true,
      },
      headBundles,
      // From IndexedDB (the version this load checked: online as it was); should the full record be unreadable, from the service.
      () =>
        load(id, { full: true, revalidate: false, bundles: headBundles }, onProgress).then(
          (m) => {
            m.info.online = online;
            return m;
          },
          () => load(id, { full: true, bundles: headBundles }, onProgress),
        ),
      // The head's rows are read from its copy as requests use them (head-file.ts).
      head.rowSource,
    );
  }
  // The head was read but is not used (the complete model was read instead; freeing twice is a no-op).
  discardHead(head, matrixPlace(k).free);
  if (!fresh) report('cache', cached!.byteLength, cached!.byteLength, true);
  const stored = cached!;

  // The same artifact already in memory (a complete model): reuse it.
  const current = models.get(id);
  const same =
    !!current &&
    !current.complete &&
    !!info.checksum &&
    current.info.checksum === info.checksum &&
    current.info.version === info.version;
  const index = same
    ? (current!.model.index as EmbeddingModel)
    : phase('build-model', () => EmbeddingModel.fromParsed(stored, k));
  if (!info.checksum) info.checksum = index.manifest.checksum;
  info.language = index.manifest.language;
  info.bytes = stored.byteLength;

  if (fresh) {
    report('store', stored.byteLength, stored.byteLength, false);
    if (pointer && pointer.version !== info.version) await dropVersion(pointer);
    await phase('idb-store', () => storeModel(id, info.version, stored, config.rawModelCache));
  }
  await smallP;
  if (info.language !== smallLanguage) await loadLanguage(info.language, onProgress, revalidateSmall).catch(() => null);
  // A cache of an earlier release has no head yet: written once, after this load.
  if (headFirst && !fresh) void phase('idb-head-store', () => storeHead(id, info.version, stored)).catch(() => {});
  // A cached load rewrites the pointer only when it changed (an IndexedDB write before the first score).
  if (fresh || !pointer || JSON.stringify(info) !== JSON.stringify(pointer))
    await phase('idb-pointer-store', () => set(['model', id], info, idb()));
  report('ready', stored.byteLength, stored.byteLength, fromCache);
  const loaded: Loaded = {
    info: {
      id,
      version: info.version,
      checksum: info.checksum,
      language: info.language,
      vocabularySize: index.size,
      dimensions: index.dims,
      mapperBundles: info.mapperBundles,
      fromCache,
      online,
      bytes: stored.byteLength,
    },
    // The engine parses the bundles when a request names them (core/engine.ts).
    model: new LoadedModel(id, index, { stats: same ? current!.model.stats : undefined }),
    bundles,
  };
  models.set(id, loaded);
  return loaded;
}

/**
 * Progressive cold start: the head artifact, verified like every download, as a PartialIndex
 * (core/partial-index.ts) with the full model's identity; the full artifact follows in the
 * background (a plain load, which replaces this entry in `models`). Null when the model has no
 * head or the service cannot be reached (the caller then loads the usual way).
 */
async function loadHead(
  id: string,
  onProgress?: ProgressFn,
  offered: Promise<HeadOffer | null> = Promise.resolve(null),
): Promise<Loaded | null> {
  const headPath = `/api/v1/artifacts/models/${encodeURIComponent(id)}/head`;
  const report = (phase: Progress['phase'], loaded: number, total: number): void =>
    onProgress?.({
      artifact: 'model',
      name: `${id}#head`,
      phase,
      loadedBytes: loaded,
      totalBytes: total,
      fromCache: false,
    });
  const catalogP = phase('catalog', () => fetchCatalogEntry(id));
  // The page's download of the head (head-offer.ts), started while this worker was starting, or our own.
  const headP = phase('download-head', async () => {
    const offer = await offered;
    if (offer?.kind === 'http') {
      // Verified like our own download; should it not match (damaged on the way), we download it again.
      const fromPage = await fetchArtifact(config.baseUrl, config.token, headPath, undefined, report, offer).catch(
        () => null,
      );
      if (fromPage) {
        mark('head-from-page', performance.now());
        return fromPage;
      }
    }
    return fetchArtifact(config.baseUrl, config.token, headPath, undefined, report);
  }).catch((err: unknown) => {
    if (err instanceof NetworkUnavailable || (err instanceof ProblemError && err.problem.status === 404)) return null;
    throw err;
  });
  const catalog = await catalogP.catch(async (err: unknown) => {
    await headP.catch(() => null);
    throw err;
  });
  if (!catalog) {
    await headP.catch(() => null);
    return null;
  }
  const info: CachedModelInfo = {
    id,
    version: catalog.version,
    checksum: '',
    sha256: '',
    etag: '',
    language: catalog.language,
    bytes: 0,
    cachedAt: new Date().toISOString(),
    mapperBundles: catalog._embedded.mappers.map((m) => ({ key: m.key, variables: m.variables, label: m.label })),
  };
  // Language data, stored seeds and the bundles the waiting requests name download (and are
  // cached) beside the head: the first answer needs them, and after the head they would share the
  // link with the full model's download. The other bundles come with the full model.
  const smallP = loadSmall(catalog.language, onProgress, true);
  const bundles = new Bundles(info, onProgress, true, true);
  for (const key of hintedBundles.keys()) bundles.get(key).catch(() => {});
  // While the head downloads, the memory its matrix will be copied into is mapped (~20 ms of page
  // faults that would otherwise come after the download, before the first score).
  if (catalog.dimensions && catalog.vocabularySize)
    void getKernels()
      .then((k) =>
        phase('prefault', () => k.prefault(Math.min(HEAD_ROWS, catalog.vocabularySize!), catalog.dimensions!)),
      )
      .catch(() => {});
  const head = await headP;
  if (!head || head.status !== 200) {
    await smallP.catch(() => null);
    return null;
  }
  const parsed = phase('parse-verify-head', () => parseArtifact(head.bytes!));
  const full = (parsed.manifest as HeadManifest).partialOf;
  // A head of another version than the catalog's (replaced meanwhile): load the usual way.
  if (!full || full.id !== id || full.version !== catalog.version) {
    await smallP.catch(() => null);
    return null;
  }
  const k = await getKernels();
  // Views into the downloaded head, no copies (the head is dropped once the full model is in).
  const headModel = phase('build-head', () => EmbeddingModel.fromParsed(parsed, k, { retainBuffer: true }));
  await smallP;
  report('partial', head.bytes!.byteLength, head.bytes!.byteLength);
  return partialLoaded(
    id,
    headModel,
    full,
    {
      id,
      version: full.version ?? catalog.version,
      checksum: full.checksum,
      language: full.language,
      vocabularySize: full.vocabularySize,
      dimensions: headModel.dims,
      mapperBundles: info.mapperBundles,
      fromCache: false,
      online: true,
      bytes: head.bytes!.byteLength,
      partial: true,
    },
    bundles,
    // The complete model gets (downloads and caches) the full bundles.
    () => load(id, { full: true }, onProgress),
  );
}

/**
 * A head in `models` as a PartialIndex with the full model's identity (core/partial-index.ts),
 * scoring while `rest` loads the complete model (which replaces this entry in `models`); the
 * head's matrix is freed once the complete model is in and no request runs on the head.
 */
function partialLoaded(
  id: string,
  headModel: EmbeddingModel,
  full: ModelManifest,
  info: LoadedModelInfo,
  bundles: Bundles,
  rest: () => Promise<Loaded>,
  rowSource?: HeadRows,
): Loaded {
  const loaded: Loaded = {
    info,
    model: new LoadedModel(id, new PartialIndex(headModel, full, rowSource)),
    bundles,
    inflight: 0,
    rowSource,
  };
  let completed = false;
  loaded.release = () => {
    if (completed && loaded.inflight === 0 && loaded.release) {
      loaded.release = undefined;
      rowSource?.close();
      headModel.release();
    }
  };
  loaded.complete = phase('complete-in-background', rest).then(
    (m) => {
      completed = true;
      loaded.release?.();
      return m;
    },
    (err: unknown) => {
      failures.set(id, toProblem(err));
      throw err;
    },
  );
  loaded.complete.catch(() => {});
  models.set(id, loaded);
  return loaded;
}

/** Mapper bundle keys named by the requests in progress (withBundleHints), counted. */
const hintedBundles = new Map<string, number>();

/**
 * Runs a scoring call whose request names mapper variables (`mapperKeys`): a model loaded
 * meanwhile reads their bundles from IndexedDB beside the model instead of after it. Only a
 * hint: the engine validates the request and resolves the mappers as always.
 */
export async function withBundleHints<T>(body: unknown, fn: () => Promise<T>): Promise<T> {
  const keys = namedBundles(body);
  for (const k of keys) hintedBundles.set(k, (hintedBundles.get(k) ?? 0) + 1);
  try {
    return await fn();
  } finally {
    for (const k of keys) {
      const n = (hintedBundles.get(k) ?? 1) - 1;
      if (n > 0) hintedBundles.set(k, n);
      else hintedBundles.delete(k);
    }
  }
}

/**
 * The mapper bundles of a model version: each read once, from IndexedDB (revalidated when
 * `revalidate` says so) or downloaded, when a request names it or all at once (`all`). A bundle
 * neither cached nor downloadable is null.
 *
 * `heads`: the bundles of a downloaded model head (progressive cold start) are the bundles' heads
 * (GET .../mappers/{id}/{key}/head: the values of the head's rows, ~7x fewer bytes before the
 * first score; not cached, the complete model downloads and caches the full bundles); a server
 * without them gets the full bundle.
 */
export class Bundles {
  private readonly read = new Map<string, Promise<ArrayBuffer | null>>();

  constructor(
    readonly info: CachedModelInfo,
    private readonly onProgress: ProgressFn | undefined,
    private readonly revalidate: boolean | Promise<boolean>,
    private readonly heads = false,
  ) {}

  get(key: string): Promise<ArrayBuffer | null> {
    const known = this.read.get(key);
    if (known) return known;
    if (!this.info.mapperBundles.some((b) => b.key === key)) return Promise.resolve(null);
    const p = this.heads
      ? fetchArtifact(config.baseUrl, config.token, `${this.path(key)}/head`, undefined, (phase, loaded, total) =>
          this.onProgress?.({
            artifact: 'mapper',
            name: `${key}#head`,
            phase,
            loadedBytes: loaded,
            totalBytes: total,
            fromCache: false,
          }),
        ).then(
          (f) => f.bytes!,
          // No head (404, an older server) or its download failed: the full bundle, as without heads.
          () => this.full(key),
        )
      : this.full(key);
    this.read.set(key, p);
    // A read that failed (e.g. offline) is tried again by the next call, not remembered.
    p.catch(() => {
      if (this.read.get(key) === p) this.read.delete(key);
    });
    return p;
  }

  private path(key: string): string {
    return `/api/v1/artifacts/mappers/${encodeURIComponent(this.info.id)}/${encodeURIComponent(key)}`;
  }

  private full(key: string): Promise<ArrayBuffer | null> {
    return cachedArtifact(
      ['mapper', this.info.id, this.info.version, key],
      config.baseUrl,
      config.token,
      this.path(key),
      { artifact: 'mapper', name: key, onProgress: this.onProgress },
      this.revalidate,
    ).then(
      ({ artifact }) => artifact.bytes,
      (err: unknown) => {
        if (!(err instanceof ProblemError)) throw err;
        return null;
      },
    );
  }

  async all(): Promise<void> {
    await Promise.all(this.info.mapperBundles.map((b) => this.get(b.key)));
  }
}

async function dropVersion(p: CachedModelInfo): Promise<void> {
  const all = await keys(idb());
  const stale = all.filter(
    (k) => Array.isArray(k) && MODEL_DATA_KINDS.has(k[0]) && k[1] === p.id && k[2] === p.version,
  );
  await delMany(stale, idb());
  await removeHeadFiles(p.id); // one copy per model: the new version's is written next
}

async function modelFor(id: string, onProgress?: ProgressFn): Promise<Loaded> {
  const m = models.get(id);
  if (m) return m;
  return loadModelInternal(id, {}, onProgress);
}

/** One load of a model at a time; once it has settled the next call loads (revalidates) again. */
function loadModelInternal(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<Loaded> {
  // A head scoring while the rest downloads: that download is the load in progress.
  const partial = models.get(id);
  if (partial?.complete) return Promise.resolve(partial);
  return sharedLoad(
    loading,
    id,
    undefined,
    () => load(id, options, onProgress),
    () => false,
  );
}

/**
 * Starts reading the cached pointer of the model a scoring call names, and its head's OPFS copy,
 * before the engine validates the call (early-reads.ts), so those reads run while the request
 * schemas are built and checked (the first call's validation takes ~10-20 ms); the call's load
 * takes them. Nothing to read for a model in memory or loading. Returns the function that forgets
 * the reads once the call has settled.
 */
export function readPointerEarly(id: unknown): () => void {
  if (typeof id === 'string' && (models.has(id) || loading.has(id))) return () => {};
  return readEarly(id, !config.rawModelCache);
}

/** Marks a model as used by a running request (final-answer.ts); identity by default. */
export type Use = (m: Loaded) => Loaded;

/**
 * The engine source of one call: its downloads report to `onProgress`, each model it hands out
 * passes `use`. Mapper bundles are the ones loaded with the model (no catalog offline: an unknown
 * key is 422 MAPPER_NOT_FOUND); their SHA-256 was verified when downloaded (no CRC pass per
 * load, except for the bench's rawModelCache baseline, which makes it as earlier releases did).
 */
export function offlineSource(onProgress?: ProgressFn, use: Use = (m) => m): EngineSource {
  return {
    model: async (id) => use(await modelFor(id, onProgress)).model,
    languageData: (language) => loadLanguage(language, onProgress),
    mapperBundleBytes: async (model, bundleKey) => (await models.get(model.id)?.bundles.get(bundleKey)) ?? null,
    async storedSeeds(ids): Promise<StoredDimensionSeeds> {
      // Without the stored seeds only dimensions of type `dimension` are affected (422 as unknown).
      const out = new Map<number, StoredSeed>();
      for (const id of ids) {
        const seeds = storedSeeds?.get(id);
        if (seeds) out.set(id, seeds);
      }
      return out;
    },
    bundlesVerified: config.rawModelCache !== true,
  };
}

/** loadModel: an explicit load always revalidates (or falls back to the cache when offline). */
export async function loadModel(
  id: string,
  options: LoadModelOptions,
  onProgress?: ProgressFn,
): Promise<LoadedModelInfo> {
  const m = await loadModelInternal(id, options, onProgress);
  // Only a progressive scorer reports a head as loaded; otherwise loading means the complete model.
  return (m.complete && !config.progressive ? await m.complete : m).info;
}

/** Whether partial answers go out (`progressive: true`); otherwise a call waits for the complete model when it needs it. */
export const progressive = (): boolean => config.progressive === true;

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

/** The models in memory (partial or complete) and the timed load phases (ms since the worker started). */
export function status(): { models: ModelStatus[]; phases: PhaseTiming[]; timeOrigin: number } {
  const out: ModelStatus[] = [];
  for (const m of models.values()) {
    const failed = failures.get(m.info.id);
    const index = m.model.index;
    out.push({
      id: m.info.id,
      state: m.complete ? 'partial' : 'complete',
      rows: index instanceof PartialIndex ? index.rows : index.size,
      vocabularySize: index.size,
      fromCache: m.info.fromCache,
      ...(m.complete && m.rowSource ? { rowsRead: m.rowSource.rowsRead } : {}),
      ...(failed && m.complete ? { error: failed } : {}),
    });
  }
  return { models: out, phases: phasesSince(), timeOrigin: performance.timeOrigin };
}
