/**
 * The offline scorer's engine source (core/engine.ts): models, language data, mapper bundles and
 * stored dimension seeds come from the service's artifact endpoints once, verified by SHA-256,
 * and are cached in IndexedDB (cache.ts); later loads revalidate them (If-None-Match) or, offline,
 * use the cached copies. The kernels are the Worker's kernels.wasm bytes, inlined at build time.
 */
import kernelsBytes from '../../build/generated/kernels.wasm?bytes';
import { LoadedModel, sharedKernels, type EngineSource } from '../../core/engine';
import { Kernels } from '../../core/kernels';
import { EmbeddingModel } from '../../core/model';
import { ApiError } from '../../core/problem';
import { sharedLoad } from '../../core/shared-load';
import type { StoredDimensionSeeds } from '../../core/scoring';
import { parseLanguageData, type LanguageData } from '../../core/tokenizer';
import { cachedArtifact, delMany, fetchArtifact, get, idb, keys, NetworkUnavailable, problem, ProblemError, set, type ProgressFn } from './cache';
import type { CachedModelInfo, LoadedModelInfo, LoadModelOptions, OfflineProblem, Progress, ScorerConfig } from './protocol';

/** A model in this worker: what loadModel reports, the engine's model, and its mapper bundles' bytes. */
interface Loaded {
  info: LoadedModelInfo;
  model: LoadedModel;
  bundleBytes: Map<string, ArrayBuffer>;
}

let config: ScorerConfig = { baseUrl: self.location.origin };
const models = new Map<string, Loaded>();
const loading = new Map<string, Promise<Loaded>>();
const languages = new Map<string, Promise<LanguageData>>();
let storedSeeds: Map<number, { words: string[]; name?: string }> | null = null;

function getKernels(): Kernels {
  return sharedKernels(() => Kernels.fromModule(new WebAssembly.Module(kernelsBytes)));
}

/** The bytes of the kernels this worker runs (their SHA-256 is compared with the Worker's build). */
export { kernelsBytes };

export function configure(next: ScorerConfig): void {
  config = { ...config, ...next, baseUrl: next.baseUrl || config.baseUrl };
}

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

function loadLanguage(language: string, onProgress?: ProgressFn, revalidate = true): Promise<LanguageData> {
  return sharedLoad(languages, language, undefined, async () => {
    const { artifact } = await cachedArtifact(['lang', language], config.baseUrl, config.token, `/api/v1/artifacts/languages/${language}`, { artifact: 'language', name: language, onProgress }, revalidate);
    return parseLanguageData(artifact.bytes);
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
    throw problem('OFFLINE_NOT_CACHED', `Embedding model '${id}' is not cached and the service cannot be reached`);
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
  // Drop the reference so the cached 40 MB copy can be collected while the model is parsed.
  // eslint-disable-next-line no-useless-assignment
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
  const index = same ? current!.model.index : EmbeddingModel.fromArrayBuffer(bytes, getKernels());
  if (!info.checksum) info.checksum = index.manifest.checksum;
  info.language = index.manifest.language;

  if (fresh) {
    report('store', bytes.byteLength, bytes.byteLength, false);
    if (pointer && pointer.version !== info.version) await dropVersion(pointer);
    await set(['model-bytes', id, info.version], bytes, idb());
  }
  const [bundleBytes] = await smallP;
  if (info.language !== language) await loadLanguage(info.language, onProgress, revalidateSmall).catch(() => null);
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
    // The engine parses the bundles when a request names them (core/engine.ts).
    model: new LoadedModel(id, index, same ? current!.model.stats : undefined),
    bundleBytes: new Map(bundleBytes),
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

/** One load of a model at a time; once it has settled the next call loads (revalidates) again. */
function loadModelInternal(id: string, options: LoadModelOptions, onProgress?: ProgressFn): Promise<Loaded> {
  return sharedLoad(loading, id, undefined, () => load(id, options, onProgress), () => false);
}

/**
 * The engine source of one call: its downloads report to `onProgress`. Mapper bundles are the
 * ones loaded with the model (no catalog offline: an unknown key is 422 MAPPER_NOT_FOUND).
 */
export function offlineSource(onProgress?: ProgressFn): EngineSource {
  return {
    model: async (id) => (await modelFor(id, onProgress)).model,
    languageData: (language) => loadLanguage(language, onProgress),
    mapperBundleBytes: async (model, bundleKey) => models.get(model.id)?.bundleBytes.get(bundleKey) ?? null,
    async storedSeeds(ids): Promise<StoredDimensionSeeds> {
      // Without the stored seeds only dimensions of type `dimension` are affected (422 as unknown).
      const out = new Map<number, { words: string[]; name?: string }>();
      for (const id of ids) {
        const seeds = storedSeeds?.get(id);
        if (seeds) out.set(id, seeds);
      }
      return out;
    },
  };
}

/** loadModel: an explicit load always revalidates (or falls back to the cache when offline). */
export async function loadModel(id: string, options: LoadModelOptions, onProgress?: ProgressFn): Promise<LoadedModelInfo> {
  return (await loadModelInternal(id, options, onProgress)).info;
}

export async function listCachedModels(): Promise<CachedModelInfo[]> {
  const all = await keys(idb());
  const ptrs = all.filter((k) => Array.isArray(k) && k[0] === 'model');
  const infos = await Promise.all(ptrs.map((k) => get<CachedModelInfo>(k, idb())));
  return infos.filter((x): x is CachedModelInfo => !!x).sort((a, b) => (a.id < b.id ? -1 : 1));
}

/** Removes a model (all versions, with its mapper bundles) from IndexedDB and from this worker. */
export async function evictModel(id: string): Promise<boolean> {
  const all = await keys(idb());
  const mine = all.filter((k) => Array.isArray(k) && (k[0] === 'model' || k[0] === 'model-bytes' || k[0] === 'mapper') && k[1] === id);
  await delMany(mine, idb());
  models.delete(id);
  return mine.length > 0;
}
