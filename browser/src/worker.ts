/**
 * The offline scorer, a Web Worker exposed with Comlink. It runs the same code as the Cloudflare
 * Worker: the same kernels.wasm bytes (inlined into this file at build time, instantiated with
 * `new WebAssembly.Instance(module, {})`), EmbeddingModel, the tokenizer, mapper bundles, the
 * zod request schemas (core/requests.ts), the problem bodies (core/problem.ts) and the
 * core/scoring functions, so its JSON, errors included, equals the API's.
 *
 * Models, language data, mapper bundles and stored dimension seeds come from the service's
 * artifact endpoints once, verified by SHA-256, and are cached in IndexedDB (cache.ts).
 */
import * as Comlink from 'comlink';
import kernelsBytes from '../../build/generated/kernels.wasm?bytes';
import { Kernels } from '../../core/kernels';
import { EmbeddingModel } from '../../core/model';
import { parseArtifact } from '../../core/artifact';
import type { VectorIndex } from '../../core/types';
import { ALIGNED_FEATURE, ENGLISH_COMPANION_ID } from '../../core/projection';
import { parseMapperBundle, splitMapperVariableId, type MapperBundle } from '../../core/mapper-bundle';
import { parseLanguageData, tokenize as tokenizeText, type LanguageData } from '../../core/tokenizer';
import {
  autocomplete as autocompleteCore,
  BoundedCache,
  languageLexicon,
  scoreTexts,
  scoreWords,
  similarityMatrix as similarityMatrixCore,
  wordAvailabilities as wordAvailabilitiesCore,
  type FactorStats,
  type ResolvedMapper,
  type StoredDimensionSeeds,
  type TokenLike,
} from '../../core/scoring';
import { requestSchemas } from '../../core/requests';
import { ApiError, asApiError, problemBody, requireLanguage, validationFailed, type ZodIssues } from '../../core/problem';
import { cachedArtifact, delMany, fetchArtifact, get, idb, keys, NetworkUnavailable, problem, ProblemError, set, sha256Hex, type ProgressFn } from './cache';
import { MODEL_DATA_KINDS, readStoredModel, storeModel, toStored } from './model-store';
import { incompleteAccesses, PartialIndex, type HeadManifest } from './progressive';
import { phase, phasesSince } from './phases';
import type { CachedModelInfo, FinalAnswer, LoadedModelInfo, LoadModelOptions, ModelStatus, OfflineProblem, PhaseTiming, Progress, ScorerConfig } from './protocol';

/** The Worker's request schemas (core/requests.ts) without their OpenAPI metadata. */
const { AutocompleteRequestSchema, SimilarityMatrixRequestSchema, TextScoresRequestSchema, TokenizationRequestSchema, WordAvailabilitiesRequestSchema, WordScoresRequestSchema } = requestSchemas();

interface Loaded {
  info: LoadedModelInfo;
  index: VectorIndex;
  stats: BoundedCache<FactorStats>;
  bundles: Map<string, MapperBundle>;
  /** A head (progressive cold start): resolves with the complete model once it is in. */
  complete?: Promise<Loaded>;
  /** Requests running on this head; its matrix is freed when none is left after completion. */
  inflight?: number;
  release?: () => void;
}

let config: ScorerConfig = { baseUrl: self.location.origin };
let kernels: Kernels | null = null;
const models = new Map<string, Loaded>();
const loading = new Map<string, Promise<Loaded>>();
const languages = new Map<string, Promise<LanguageData>>();
/** Background downloads of the rest of a model (after its head) that failed. */
const failures = new Map<string, OfflineProblem>();
let storedSeeds: Map<number, { words: string[]; name?: string }> | null = null;

// Compiled off the main path from the worker's first moment (kernels.wasm is inlined).
const kernelsModule = phase('wasm-compile', () => WebAssembly.compile(kernelsBytes));
kernelsModule.catch(() => {});

async function getKernels(): Promise<Kernels> {
  return (kernels ??= Kernels.fromModule(await kernelsModule));
}

type ZodLike<T> = { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: ZodIssues } } };

/** Same validation and the same 422 body as the Worker's validationHook. */
function validate<T>(schema: ZodLike<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (!r.success) throw validationFailed(r.error.issues);
  return r.data;
}

/** The JSON the API would send: a JSON round trip drops undefined fields exactly like c.json(). */
const asJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

/** Errors cross the Comlink boundary as plain problem objects (index.ts rethrows them). */
function toProblem(err: unknown): OfflineProblem {
  if (err instanceof ProblemError) return err.problem;
  const apiError = asApiError(err);
  if (apiError) {
    const b = problemBody(apiError);
    return { status: b.status, code: b.code, translationKey: b.translationKey, title: b.title, detail: b.detail, ...(b.errors ? { errors: b.errors } : {}) };
  }
  const detail = err instanceof Error ? err.message : String(err);
  return problem(500, 'INTERNAL_ERROR', detail).problem;
}

async function guarded<T>(fn: () => Promise<T> | T): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    // Comlink passes a thrown non-Error value through structured clone unchanged.
    throw { problem: toProblem(err) };
  }
}

// ---------------------------------------------------------------------------------------------
// Loading
// ---------------------------------------------------------------------------------------------

interface CatalogEntry {
  version: string;
  language: string;
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

async function loadLanguage(language: string, onProgress?: ProgressFn, revalidate = true): Promise<LanguageData> {
  let p = languages.get(language);
  if (!p) {
    p = (async () => {
      const { artifact } = await cachedArtifact(['lang', language], config.baseUrl, config.token, `/api/v1/artifacts/languages/${language}`, { artifact: 'language', name: language, onProgress }, revalidate);
      return parseLanguageData(artifact.bytes);
    })();
    languages.set(language, p);
    p.catch(() => languages.delete(language));
  }
  return p;
}

/** The language data a request needs; a download failure is the API's 503 LANGUAGE_DATA_UNAVAILABLE. */
function languageFor(language: string, onProgress?: ProgressFn): Promise<LanguageData> {
  return loadLanguage(language, onProgress).catch((err: unknown) => {
    throw err instanceof ProblemError ? new ApiError('LANGUAGE_DATA_UNAVAILABLE', `Tokenizer data for language '${language}' could not be loaded: ${err.message}`) : err;
  });
}

async function loadStoredSeeds(onProgress?: ProgressFn, revalidate = true): Promise<void> {
  try {
    const { artifact } = await cachedArtifact(['dimensions'], config.baseUrl, config.token, '/api/v1/artifacts/dimensions', { artifact: 'dimensions', name: 'dimensions', onProgress }, revalidate);
    const parsed = JSON.parse(new TextDecoder().decode(artifact.bytes)) as { data: Array<{ id: number; name: string; words: string[] }> };
    storedSeeds = new Map(parsed.data.map((d) => [d.id, { words: d.words, name: d.name }]));
  } catch (err) {
    // Without the stored seeds only dimensions of type `dimension` are affected (422 as unknown).
    if (!storedSeeds) storedSeeds = new Map();
    if (!(err instanceof ProblemError)) throw err;
  }
}

/** `full`: the background load after a head (never a head again). */
type LoadOptions = LoadModelOptions & { full?: boolean };

async function load(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<Loaded> {
  const revalidate = options.revalidate !== false;
  const pointer = await phase('idb-pointer', () => get<CachedModelInfo>(['model', id], idb()));
  const report = (phase: Progress['phase'], loaded: number, total: number, fromCache: boolean): void =>
    onProgress?.({ artifact: 'model', name: id, phase, loadedBytes: loaded, totalBytes: total, fromCache });
  // Progressive cold start: nothing cached, so score from the head while the rest downloads.
  if (!pointer && config.progressive && !options.full) {
    const head = await loadHead(id, onProgress);
    if (head) return head;
  }
  // The cached model (parsed typed arrays, verified when downloaded: model-store.ts) is read from
  // IndexedDB while the service is asked whether it is current.
  const cachedP = pointer ? phase('idb-model', () => readStoredModel(id, pointer.version, pointer.sha256, config.rawModelCache)) : Promise.resolve(undefined);
  cachedP.catch(() => {});
  const modelPath = `/api/v1/artifacts/models/${encodeURIComponent(id)}`;

  let online = false;
  let catalog: CatalogEntry | null = null;
  let fetched: Awaited<ReturnType<typeof fetchArtifact>> | null = null;
  if (revalidate || !pointer) {
    // Without a usable answer (offline, or e.g. an expired token) a cached copy is used; an
    // unknown model (404) is an error either way.
    const fallback = (err: unknown): null => {
      const notFound = err instanceof ApiError || (err instanceof ProblemError && err.problem.status === 404);
      if (err instanceof NetworkUnavailable || (pointer && !notFound)) return null;
      throw err;
    };
    const catalogP = phase('catalog', () => fetchCatalogEntry(id));
    const fetchP = phase(pointer ? 'revalidate-model' : 'download-model', () =>
      fetchArtifact(config.baseUrl, config.token, modelPath, pointer?.etag, (phase, l, t) => report(phase, l, t, false)),
    ).catch(fallback);
    catalog = await catalogP.catch(async (err: unknown) => {
      await fetchP.catch(() => null);
      return fallback(err);
    });
    fetched = await fetchP;
    online = catalog !== null && fetched !== null;
  }
  let cached = await cachedP.catch(() => undefined);
  if (online && fetched!.status === 304 && !cached) {
    // The pointer survived but its data did not: download again.
    fetched = await fetchArtifact(config.baseUrl, config.token, modelPath, undefined, (phase, l, t) => report(phase, l, t, false));
  }
  if (!online && !(pointer && cached)) {
    throw problem(503, 'OFFLINE_NOT_CACHED', `Embedding model '${id}' is not cached and the service cannot be reached`);
  }

  const catalogBundles = catalog ? catalog._embedded.mappers.map((m) => ({ key: m.key, variables: m.variables, label: m.label })) : null;
  let fromCache = false;
  let info: CachedModelInfo;
  let fresh = false;
  if (online && fetched!.status === 200) {
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
    report('cache', cached!.byteLength, cached!.byteLength, true);
  }
  const stored = cached!;

  // Small artifacts (language data, mapper bundles, stored seeds) load while the model is built.
  const revalidateSmall = online && revalidate;
  const language = info.language || pointer?.language || '';
  const smallP = Promise.all([
    phase('mapper-bundles', () => fetchBundles(info, onProgress, revalidateSmall)),
    language ? phase('language-data', () => loadLanguage(language, onProgress, revalidateSmall)).catch(() => null) : Promise.resolve(null),
    phase('stored-seeds', () => loadStoredSeeds(onProgress, revalidateSmall)),
  ]);
  smallP.catch(() => {});

  // The same artifact already in memory (a complete model): reuse it.
  const current = models.get(id);
  const same = !!current && !current.complete && !!info.checksum && current.info.checksum === info.checksum && current.info.version === info.version;
  const k = await getKernels();
  const index = same ? (current!.index as EmbeddingModel) : phase('build-model', () => EmbeddingModel.fromParsed(stored, k));
  if (!info.checksum) info.checksum = index.manifest.checksum;
  info.language = index.manifest.language;
  info.bytes = stored.byteLength;

  if (fresh) {
    report('store', stored.byteLength, stored.byteLength, false);
    if (pointer && pointer.version !== info.version) await dropVersion(pointer);
    await phase('idb-store', () => storeModel(id, info.version, stored, config.rawModelCache));
  }
  const [bundleBytes] = await smallP;
  if (info.language !== language) await loadLanguage(info.language, onProgress, revalidateSmall).catch(() => null);
  const bundles = phase('parse-bundles', () => parseBundles(bundleBytes, info.id, index.size, index.manifest.checksum));
  // A cached load rewrites the pointer only when it changed (an IndexedDB write before the first score).
  if (fresh || !pointer || JSON.stringify(info) !== JSON.stringify(pointer)) await phase('idb-pointer-store', () => set(['model', id], info, idb()));
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
    index,
    stats: same ? current!.stats : new BoundedCache<FactorStats>(256),
    bundles,
  };
  models.set(id, loaded);
  return loaded;
}

function parseBundles(bundleBytes: Array<[string, ArrayBuffer]>, id: string, vocabularySize: number, checksum: string): Map<string, MapperBundle> {
  const bundles = new Map<string, MapperBundle>();
  // Every bundle's SHA-256 was verified when it was downloaded (cache.ts): no CRC pass on each
  // load (the bench's rawModelCache baseline still makes it, as earlier releases did).
  for (const [key, buf] of bundleBytes) bundles.set(key, parseMapperBundle(buf, { id, vocabularySize, checksum }, config.rawModelCache === true));
  return bundles;
}

/**
 * Progressive cold start (progressive.ts): the head artifact, verified like every download, as a
 * PartialIndex with the full model's identity; the full artifact follows in the background
 * (a plain load, which replaces this entry in `models`). Null when the model has no head or the
 * service cannot be reached (the caller then loads the usual way).
 */
async function loadHead(id: string, onProgress?: ProgressFn): Promise<Loaded | null> {
  const headPath = `/api/v1/artifacts/models/${encodeURIComponent(id)}/head`;
  const report = (phase: Progress['phase'], loaded: number, total: number): void =>
    onProgress?.({ artifact: 'model', name: `${id}#head`, phase, loadedBytes: loaded, totalBytes: total, fromCache: false });
  const catalogP = phase('catalog', () => fetchCatalogEntry(id));
  const headP = phase('download-head', () => fetchArtifact(config.baseUrl, config.token, headPath, undefined, report)).catch((err: unknown) => {
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
  // Language data, mapper bundles and stored seeds download (and are cached) beside the head.
  const smallP = Promise.all([
    phase('mapper-bundles', () => fetchBundles(info, onProgress, true)),
    phase('language-data', () => loadLanguage(catalog.language, onProgress, true)).catch(() => null),
    phase('stored-seeds', () => loadStoredSeeds(onProgress, true)),
  ]);
  smallP.catch(() => {});
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
  const headModel = phase('build-head', () => EmbeddingModel.fromParsed(parsed, k));
  const index = new PartialIndex(headModel, full);
  const [bundleBytes] = await smallP;
  const bundles = phase('parse-bundles', () => parseBundles(bundleBytes, id, full.vocabularySize, full.checksum));
  report('partial', head.bytes!.byteLength, head.bytes!.byteLength);
  const loaded: Loaded = {
    info: {
      id,
      version: full.version ?? catalog.version,
      checksum: full.checksum,
      language: full.language,
      vocabularySize: full.vocabularySize,
      dimensions: index.dims,
      mapperBundles: info.mapperBundles,
      fromCache: false,
      online: true,
      bytes: head.bytes!.byteLength,
      partial: true,
    },
    index,
    stats: new BoundedCache<FactorStats>(256),
    bundles,
    inflight: 0,
  };
  let completed = false;
  loaded.release = () => {
    if (completed && loaded.inflight === 0 && loaded.release) {
      loaded.release = undefined;
      headModel.release();
    }
  };
  loaded.complete = phase('complete-in-background', () => load(id, { full: true }, onProgress)).then(
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

/**
 * The English companion of an aligned model when the request has dimensions (seeds the model
 * lacks are looked up there, as on the Worker: worker/companion.ts); null when it cannot be loaded.
 */
async function companionFor(m: Loaded, dimensions: readonly unknown[] | undefined, onProgress?: ProgressFn, use: Use = (x) => x): Promise<VectorIndex | null> {
  if (!dimensions?.length || m.info.id === ENGLISH_COMPANION_ID || !m.index.manifest.features?.includes(ALIGNED_FEATURE)) return null;
  try {
    return use(await modelFor(ENGLISH_COMPANION_ID, onProgress)).index;
  } catch {
    return null;
  }
}

/** The bytes of the model's mapper bundles (a bundle neither cached nor downloadable is left out). */
async function fetchBundles(info: CachedModelInfo, onProgress: ProgressFn | undefined, revalidate: boolean): Promise<Array<[string, ArrayBuffer]>> {
  const out = await Promise.all(
    info.mapperBundles.map(async (b): Promise<[string, ArrayBuffer] | null> => {
      try {
        const { artifact } = await cachedArtifact(
          ['mapper', info.id, info.version, b.key],
          config.baseUrl,
          config.token,
          `/api/v1/artifacts/mappers/${encodeURIComponent(info.id)}/${encodeURIComponent(b.key)}`,
          { artifact: 'mapper', name: b.key, onProgress },
          revalidate,
        );
        return [b.key, artifact.bytes];
      } catch (err) {
        if (!(err instanceof ProblemError)) throw err;
        return null;
      }
    }),
  );
  return out.filter((x): x is [string, ArrayBuffer] => x !== null);
}

async function dropVersion(p: CachedModelInfo): Promise<void> {
  const all = await keys(idb());
  const stale = all.filter((k) => Array.isArray(k) && MODEL_DATA_KINDS.has(k[0]) && k[1] === p.id && k[2] === p.version);
  await delMany(stale, idb());
}

async function modelFor(id: string, onProgress?: ProgressFn): Promise<Loaded> {
  const m = models.get(id);
  if (m) return m;
  return loadModelInternal(id, {}, onProgress);
}

function loadModelInternal(id: string, options: LoadOptions, onProgress?: ProgressFn): Promise<Loaded> {
  // A head scoring while the rest downloads: that download is the load in progress.
  const partial = models.get(id);
  if (partial?.complete) return Promise.resolve(partial);
  let p = loading.get(id);
  if (!p) {
    p = load(id, options, onProgress).finally(() => loading.delete(id));
    loading.set(id, p);
  }
  return p;
}

/** Same semantics as worker/resources.ts resolveMappers for the bundles available offline. */
function resolveMappers(m: Loaded, keysIn: readonly string[] | undefined): ResolvedMapper[] {
  const out: ResolvedMapper[] = [];
  const seen = new Set<string>();
  for (const [i, id] of (keysIn ?? []).entries()) {
    if (seen.has(id)) continue;
    seen.add(id);
    const split = splitMapperVariableId(id);
    const bundle = split ? m.bundles.get(split.bundleKey) : undefined;
    if (split && bundle && bundle.has(split.variable)) {
      out.push({ id, variable: split.variable, values: bundle });
      continue;
    }
    throw new ApiError('MAPPER_NOT_FOUND', `No mapper '${id}' for embedding model '${m.info.id}'`, {
      errors: [{ path: `mapperKeys.${i}`, message: 'unknown mapper key' }],
    });
  }
  return out;
}

function seedsFor(): StoredDimensionSeeds {
  return storedSeeds ?? new Map();
}

/** Marks a model as used by the running request (see answer). */
type Use = (m: Loaded) => Loaded;

/**
 * Runs a scoring computation. When it ran on a head (progressive.ts) and looked past it, its
 * answer is partial: the complete model's answer follows through onFinal once the rest is in.
 * A computation that failed on a head after looking past it waits for the complete model and
 * answers from it. Everything else (no head involved, or only head rows read) is final as is.
 */
async function answer<T>(compute: (use: Use) => Promise<T>, onFinal?: (f: FinalAnswer<T>) => unknown): Promise<T> {
  const used: Loaded[] = [];
  const use: Use = (m) => {
    if (m.complete) {
      m.inflight = (m.inflight ?? 0) + 1;
      used.push(m);
    }
    return m;
  };
  const before = incompleteAccesses();
  const complete = (): Promise<unknown> => Promise.all(used.map((m) => m.complete));
  let result: T;
  try {
    result = await compute(use);
  } catch (err) {
    if (used.length === 0 || incompleteAccesses() === before) throw err;
    await complete();
    return compute((m) => m);
  } finally {
    for (const m of used) {
      m.inflight = (m.inflight ?? 1) - 1;
      m.release?.();
    }
  }
  if (used.length === 0 || incompleteAccesses() === before) return result;
  complete()
    .then(() => compute((m) => m))
    .then((response) => onFinal?.({ response, changed: JSON.stringify(response) !== JSON.stringify(result) }))
    .catch(() => {});
  return result;
}

// ---------------------------------------------------------------------------------------------
// The exposed API (mirrors the scoring endpoints: same request and response shapes)
// ---------------------------------------------------------------------------------------------

const api = {
  configure(next: ScorerConfig): void {
    config = { ...config, ...next, baseUrl: next.baseUrl || config.baseUrl };
  },

  loadModel(id: string, options: LoadModelOptions = {}, onProgress?: ProgressFn): Promise<LoadedModelInfo> {
    return guarded(async () => {
      // An explicit load always revalidates (or falls back to the cache when offline).
      return (await loadModelInternal(id, options, onProgress)).info;
    });
  },

  listCachedModels(): Promise<CachedModelInfo[]> {
    return guarded(async () => {
      const all = await keys(idb());
      const ptrs = all.filter((k) => Array.isArray(k) && k[0] === 'model');
      const infos = await Promise.all(ptrs.map((k) => get<CachedModelInfo>(k, idb())));
      return infos.filter((x): x is CachedModelInfo => !!x).sort((a, b) => (a.id < b.id ? -1 : 1));
    });
  },

  /** Removes a model (all versions, with its mapper bundles) from IndexedDB and from this worker. */
  evictModel(id: string): Promise<boolean> {
    return guarded(async () => {
      const all = await keys(idb());
      const mine = all.filter((k) => Array.isArray(k) && (k[0] === 'model' || MODEL_DATA_KINDS.has(k[0])) && k[1] === id);
      await delMany(mine, idb());
      models.delete(id);
      return mine.length > 0;
    });
  },

  textScores(body: unknown, onProgress?: ProgressFn, onFinal?: (f: FinalAnswer) => unknown) {
    return guarded(async () => {
      const req = validate(TextScoresRequestSchema, body);
      return answer(async (use) => {
        const m = use(await modelFor(req.embeddingModelId, onProgress));
        const lang = await languageFor(m.info.language, onProgress);
        const tokenize = (text: string): TokenLike[] => tokenizeText(text, lang, { synonyms: false }).tokens;
        const mappers = resolveMappers(m, req.mapperKeys);
        const companion = await companionFor(m, req.dimensions, onProgress, use);
        const { response } = scoreTexts(req, { index: m.index, tokenize, mappers, storedDimensions: seedsFor(), stats: m.stats, lexicon: languageLexicon(lang), companion, composition: lang.meta.composition });
        return asJson(response);
      }, onFinal);
    });
  },

  wordScores(body: unknown, onProgress?: ProgressFn, onFinal?: (f: FinalAnswer) => unknown) {
    return guarded(async () => {
      const req = validate(WordScoresRequestSchema, body);
      return answer(async (use) => {
        const m = use(await modelFor(req.embeddingModelId, onProgress));
        const mappers = resolveMappers(m, req.mapperKeys);
        // The language data (stop words, dictionary) only when a dimension asks for seed expansion.
        const lexicon = req.dimensions?.some((d) => d.expand) ? languageLexicon(await languageFor(m.info.language, onProgress)) : undefined;
        const companion = await companionFor(m, req.dimensions, onProgress, use);
        return asJson(scoreWords(req, { index: m.index, mappers, storedDimensions: seedsFor(), lexicon, companion }));
      }, onFinal);
    });
  },

  autocomplete(body: unknown, onProgress?: ProgressFn, onFinal?: (f: FinalAnswer) => unknown) {
    return guarded(async () => {
      const req = validate(AutocompleteRequestSchema, body);
      return answer(async (use) => asJson(autocompleteCore(use(await modelFor(req.embeddingModelId, onProgress)).index, req)), onFinal);
    });
  },

  wordAvailabilities(embeddingModelId: string, body: unknown, onProgress?: ProgressFn, onFinal?: (f: FinalAnswer) => unknown) {
    return guarded(async () => {
      const req = validate(WordAvailabilitiesRequestSchema, body);
      return answer(async (use) => asJson(wordAvailabilitiesCore(use(await modelFor(embeddingModelId, onProgress)).index, req)), onFinal);
    });
  },

  similarityMatrix(embeddingModelId: string, body: unknown, onProgress?: ProgressFn, onFinal?: (f: FinalAnswer) => unknown) {
    return guarded(async () => {
      const req = validate(SimilarityMatrixRequestSchema, body);
      return answer(async (use) => asJson(similarityMatrixCore(use(await modelFor(embeddingModelId, onProgress)).index, req)), onFinal);
    });
  },

  /** The models in memory (partial or complete) and the timed load phases (ms since the worker started). */
  status(): { models: ModelStatus[]; phases: PhaseTiming[]; timeOrigin: number } {
    const out: ModelStatus[] = [];
    for (const m of models.values()) {
      const failed = failures.get(m.info.id);
      out.push({
        id: m.info.id,
        state: m.complete ? 'partial' : 'complete',
        rows: m.index instanceof PartialIndex ? m.index.rows : m.index.size,
        vocabularySize: m.index.size,
        fromCache: m.info.fromCache,
        ...(failed && m.complete ? { error: failed } : {}),
      });
    }
    return { models: out, phases: phasesSince(0), timeOrigin: performance.timeOrigin };
  },

  tokenize(body: { language: string; text: string }, onProgress?: ProgressFn) {
    return guarded(async () => {
      validate(TokenizationRequestSchema, body);
      const data = await languageFor(requireLanguage(body.language), onProgress);
      return asJson(tokenizeText(body.text, data));
    });
  },

  /** Hex SHA-256 of the kernels.wasm bytes this worker runs (compare with the Worker's build). */
  kernelsSha256(): Promise<string> {
    return guarded(async () => {
      return sha256Hex(kernelsBytes);
    });
  },
};

export type OfflineScorerApi = typeof api;

Comlink.expose(api);
