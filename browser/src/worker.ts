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
import type { CachedModelInfo, LoadedModelInfo, LoadModelOptions, OfflineProblem, Progress, ScorerConfig } from './protocol';

/** The Worker's request schemas (core/requests.ts) without their OpenAPI metadata. */
const { AutocompleteRequestSchema, SimilarityMatrixRequestSchema, TextScoresRequestSchema, TokenizationRequestSchema, WordAvailabilitiesRequestSchema, WordScoresRequestSchema } = requestSchemas();

interface Loaded {
  info: LoadedModelInfo;
  index: EmbeddingModel;
  stats: BoundedCache<FactorStats>;
  bundles: Map<string, MapperBundle>;
}

let config: ScorerConfig = { baseUrl: self.location.origin };
let kernels: Kernels | null = null;
const models = new Map<string, Loaded>();
const loading = new Map<string, Promise<Loaded>>();
const languages = new Map<string, Promise<LanguageData>>();
let storedSeeds: Map<number, { words: string[]; name?: string }> | null = null;

function getKernels(): Kernels {
  return (kernels ??= Kernels.fromModule(new WebAssembly.Module(kernelsBytes)));
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

async function load(id: string, options: LoadModelOptions, onProgress?: ProgressFn): Promise<Loaded> {
  const revalidate = options.revalidate !== false;
  const pointer = await get<CachedModelInfo>(['model', id], idb());
  const report = (phase: Progress['phase'], loaded: number, total: number, fromCache: boolean): void =>
    onProgress?.({ artifact: 'model', name: id, phase, loadedBytes: loaded, totalBytes: total, fromCache });
  // The cached bytes are read from IndexedDB while the service is asked whether they are current.
  const cachedBytesP = pointer ? get<ArrayBuffer>(['model-bytes', id, pointer.version], idb()) : Promise.resolve(undefined);
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
    const catalogP = fetchCatalogEntry(id);
    const fetchP = fetchArtifact(config.baseUrl, config.token, modelPath, pointer?.etag, (phase, l, t) => report(phase, l, t, false)).catch(fallback);
    catalog = await catalogP.catch(async (err: unknown) => {
      await fetchP.catch(() => null);
      return fallback(err);
    });
    fetched = await fetchP;
    online = catalog !== null && fetched !== null;
  }
  let cachedBytes = await cachedBytesP;
  if (online && fetched!.status === 304 && !cachedBytes) {
    // The pointer survived but its bytes did not: download again.
    fetched = await fetchArtifact(config.baseUrl, config.token, modelPath, undefined, (phase, l, t) => report(phase, l, t, false));
  }
  if (!online && !(pointer && cachedBytes)) {
    throw problem(503, 'OFFLINE_NOT_CACHED', `Embedding model '${id}' is not cached and the service cannot be reached`);
  }

  const catalogBundles = catalog ? catalog._embedded.mappers.map((m) => ({ key: m.key, variables: m.variables, label: m.label })) : null;
  let bytes: ArrayBuffer;
  let fromCache = false;
  let info: CachedModelInfo;
  let fresh = false;
  if (online && fetched!.status === 200) {
    bytes = fetched!.bytes!;
    fresh = true;
    info = {
      id,
      version: fetched!.headers['x-model-version'] ?? catalog!.version,
      checksum: fetched!.headers['x-model-checksum'] ?? '',
      sha256: fetched!.sha256,
      etag: fetched!.etag,
      language: catalog!.language,
      bytes: bytes.byteLength,
      cachedAt: new Date().toISOString(),
      mapperBundles: catalogBundles!,
    };
  } else {
    bytes = cachedBytes!;
    fromCache = true;
    info = { ...pointer!, mapperBundles: catalogBundles ?? pointer!.mapperBundles };
    report('cache', bytes.byteLength, bytes.byteLength, true);
  }
  cachedBytes = undefined;

  // Small artifacts (language data, mapper bundles, stored seeds) load while the model is parsed.
  const revalidateSmall = online && revalidate;
  const language = info.language || pointer?.language || '';
  const smallP = Promise.all([
    fetchBundles(info, onProgress, revalidateSmall),
    language ? loadLanguage(language, onProgress, revalidateSmall).catch(() => null) : Promise.resolve(null),
    loadStoredSeeds(onProgress, revalidateSmall),
  ]);
  smallP.catch(() => {});

  // The same artifact already in memory (WASM memory is never released): reuse it.
  const current = models.get(id);
  const same = !!current && !!info.checksum && current.info.checksum === info.checksum && current.info.version === info.version;
  const index = same ? current!.index : EmbeddingModel.fromArrayBuffer(bytes, getKernels());
  if (!info.checksum) info.checksum = index.manifest.checksum;
  info.language = index.manifest.language;

  if (fresh) {
    report('store', bytes.byteLength, bytes.byteLength, false);
    if (pointer && pointer.version !== info.version) await dropVersion(pointer);
    await set(['model-bytes', id, info.version], bytes, idb());
  }
  const [bundleBytes] = await smallP;
  if (info.language !== language) await loadLanguage(info.language, onProgress, revalidateSmall).catch(() => null);
  const bundles = new Map<string, MapperBundle>();
  for (const [key, buf] of bundleBytes) {
    bundles.set(key, parseMapperBundle(buf, { id: info.id, vocabularySize: index.size, checksum: index.manifest.checksum }));
  }
  await set(['model', id], info, idb());
  report('ready', bytes.byteLength, bytes.byteLength, fromCache);
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
      bytes: bytes.byteLength,
    },
    index,
    stats: same ? current!.stats : new BoundedCache<FactorStats>(256),
    bundles,
  };
  models.set(id, loaded);
  return loaded;
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
  const stale = all.filter((k) => Array.isArray(k) && (k[0] === 'model-bytes' || k[0] === 'mapper') && k[1] === p.id && k[2] === p.version);
  await delMany(stale, idb());
}

async function modelFor(id: string, onProgress?: ProgressFn): Promise<Loaded> {
  const m = models.get(id);
  if (m) return m;
  return loadModelInternal(id, {}, onProgress);
}

function loadModelInternal(id: string, options: LoadModelOptions, onProgress?: ProgressFn): Promise<Loaded> {
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
      const mine = all.filter((k) => Array.isArray(k) && (k[0] === 'model' || k[0] === 'model-bytes' || k[0] === 'mapper') && k[1] === id);
      await delMany(mine, idb());
      models.delete(id);
      return mine.length > 0;
    });
  },

  textScores(body: unknown, onProgress?: ProgressFn) {
    return guarded(async () => {
      const req = validate(TextScoresRequestSchema, body);
      const m = await modelFor(req.embeddingModelId, onProgress);
      const lang = await languageFor(m.info.language, onProgress);
      const tokenize = (text: string): TokenLike[] => tokenizeText(text, lang, { synonyms: false }).tokens;
      const mappers = resolveMappers(m, req.mapperKeys);
      const { response } = scoreTexts(req, { index: m.index, tokenize, mappers, storedDimensions: seedsFor(), stats: m.stats, lexicon: languageLexicon(lang) });
      return asJson(response);
    });
  },

  wordScores(body: unknown, onProgress?: ProgressFn) {
    return guarded(async () => {
      const req = validate(WordScoresRequestSchema, body);
      const m = await modelFor(req.embeddingModelId, onProgress);
      const mappers = resolveMappers(m, req.mapperKeys);
      // The language data (stop words, dictionary) only when a dimension asks for seed expansion.
      const lexicon = req.dimensions?.some((d) => d.expand) ? languageLexicon(await languageFor(m.info.language, onProgress)) : undefined;
      return asJson(scoreWords(req, { index: m.index, mappers, storedDimensions: seedsFor(), lexicon }));
    });
  },

  autocomplete(body: unknown, onProgress?: ProgressFn) {
    return guarded(async () => {
      const req = validate(AutocompleteRequestSchema, body);
      const m = await modelFor(req.embeddingModelId, onProgress);
      return asJson(autocompleteCore(m.index, req));
    });
  },

  wordAvailabilities(embeddingModelId: string, body: unknown, onProgress?: ProgressFn) {
    return guarded(async () => {
      const req = validate(WordAvailabilitiesRequestSchema, body);
      const m = await modelFor(embeddingModelId, onProgress);
      return asJson(wordAvailabilitiesCore(m.index, req));
    });
  },

  similarityMatrix(embeddingModelId: string, body: unknown, onProgress?: ProgressFn) {
    return guarded(async () => {
      const req = validate(SimilarityMatrixRequestSchema, body);
      const m = await modelFor(embeddingModelId, onProgress);
      return asJson(similarityMatrixCore(m.index, req));
    });
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
