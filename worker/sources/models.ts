/**
 * Per-isolate model registry: models load lazily from R2 into isolate memory, once per isolate
 * even under concurrent first requests (one in-flight Promise per model id).
 *
 * loadingStatus per isolate: `not loaded` (never requested here) -> `loading` -> `loaded` | `error`.
 * A model in `error` answers 503 EMBEDDING_MODEL_UNAVAILABLE. The next request retries the load
 * when MODEL_RETRY_MS have passed since the failure, or at once when the artifact object in R2
 * changed (another etag, e.g. a fixed upload); otherwise it fails fast without touching the
 * artifact. A model id without a manifest (models/{id}.json) is unknown: 404, no entry kept.
 */
import kernelsWasm from '../../build/generated/kernels.wasm';
import { Kernels } from '../../core/kernels';
import { EmbeddingModel } from '../../core/model';
import { currentKernels, LoadedModel as EngineModel, sharedKernels } from '../../core/engine';
import { R2_KEYS } from '../../core/storage-keys';
import { type ModelManifest } from '../../core/types';
import { keepAlive, loadsInFlight, type WaitUntil } from '../../core/shared-load';
import { ApiError } from '../../core/problem';
import type { Env } from '../env';
import { dropLanguageData, languageBytes, languageLoaded } from './language-data';
import { clip } from '../log';

export type LoadingStatus = 'not loaded' | 'loading' | 'loaded' | 'error';

/** After a failed load, requests fail fast for this long unless the artifact changes. */
export const MODEL_RETRY_MS = 30_000;

/** A model in isolate memory with its per-model caches (core/engine.ts) and its LRU state. */
export class LoadedModel extends EngineModel<EmbeddingModel> {
  /** Last getModel of this model (LRU eviction). */
  lastUsed = Date.now();
  /** Requests in flight that hold this model (never evicted while > 0). */
  pins = 0;
  /** Evicted: its matrix memory may hold another model now; getModel loads it again. */
  released = false;

  /** Bytes held outside WASM memory (vocabulary, offsets, sorted index, the lookup table once built). */
  get retainedBytes(): number {
    return this.index.retainedBytes;
  }
}

interface Entry {
  status: 'loading' | 'loaded' | 'error';
  promise: Promise<LoadedModel>;
  model?: LoadedModel;
  error?: string;
  failedAt?: number;
  failedEtag?: string | null;
}

/** The isolate's WASM kernels instance (one linear memory holds every loaded model). */
export function getKernels(): Kernels {
  return sharedKernels(() => Kernels.fromModule(kernelsWasm));
}

const entries = new Map<string, Entry>();
/** Artifact reads started per model id in this isolate (diagnostics; tests check "once per isolate"). */
const artifactReads = new Map<string, number>();
export function artifactReadCount(id: string): number {
  return artifactReads.get(id) ?? 0;
}

/** Distinguishes "no such model" (404) from load failures inside the loader promise. */
class UnknownModel extends Error {}

export function loadingStatus(id: string): LoadingStatus {
  return entries.get(id)?.status ?? 'not loaded';
}

/** The model's manifest (models/{id}.json); null when missing or not JSON. */
export async function getManifest(env: Env, id: string): Promise<ModelManifest | null> {
  const obj = await env.ARTIFACTS.get(R2_KEYS.modelManifest(id));
  if (!obj) return null;
  try {
    return (await obj.json()) as ModelManifest;
  } catch {
    return null;
  }
}

function startLoad(env: Env, id: string, ctx: WaitUntil | undefined): Entry {
  const entry: Entry = { status: 'loading', promise: undefined as unknown as Promise<LoadedModel> };
  // Until the manifest is found the id may be unknown: a failure then (R2 down) keeps no entry,
  // so ids that do not exist never accumulate state in the isolate.
  let known = false;
  entry.promise = (async () => {
    const manifest = await getManifest(env, id);
    if (!manifest) throw new UnknownModel(id);
    known = true;
    artifactReads.set(id, (artifactReads.get(id) ?? 0) + 1);
    const obj = await env.ARTIFACTS.get(R2_KEYS.model(id));
    if (!obj) throw new Error(`artifact ${R2_KEYS.model(id)} is missing`);
    entry.failedEtag = obj.etag;
    const buf = await obj.arrayBuffer();
    // Synchronously from here: make room (evict least-recently-used models), then place the matrix.
    makeRoom(manifest, id);
    return new LoadedModel(id, EmbeddingModel.fromArrayBuffer(buf, getKernels()));
  })().then(
    (model) => {
      entry.status = 'loaded';
      entry.model = model;
      entry.failedEtag = undefined;
      return model;
    },
    (err: unknown) => {
      if (err instanceof UnknownModel || !known) {
        if (entries.get(id) === entry) entries.delete(id);
        if (!known && !(err instanceof UnknownModel))
          console.error(`[models] manifest of ${clip(id)} could not be read: ${clip(err)}`);
        throw err;
      }
      entry.status = 'error';
      entry.error = err instanceof Error ? err.message : String(err);
      entry.failedAt = Date.now();
      if (entry.failedEtag === undefined) entry.failedEtag = null;
      console.error(`[models] loading ${clip(id)} failed: ${clip(entry.error)}`);
      throw err;
    },
  );
  // Waiters observe the rejection through getModel; avoid an unhandled rejection here.
  entry.promise.catch(() => {});
  keepAlive(ctx, entry.promise);
  entries.set(id, entry);
  return entry;
}

async function shouldRetry(env: Env, id: string, entry: Entry): Promise<boolean> {
  if (Date.now() - (entry.failedAt ?? 0) >= MODEL_RETRY_MS) return true;
  const head = await env.ARTIFACTS.head(R2_KEYS.model(id));
  const etag = head?.etag ?? null;
  return etag !== entry.failedEtag;
}

function unavailable(id: string, entry: Entry | undefined): ApiError {
  return new ApiError(
    'EMBEDDING_MODEL_UNAVAILABLE',
    `Embedding model '${id}' could not be loaded: ${entry?.error ?? 'unknown error'}`,
    {
      headers: { 'retry-after': String(Math.ceil(MODEL_RETRY_MS / 1000)) },
    },
  );
}

/** The loaded model; throws 404 EMBEDDING_MODEL_NOT_FOUND or 503 EMBEDDING_MODEL_UNAVAILABLE. */
export async function getModel(env: Env, id: string, ctx?: WaitUntil): Promise<LoadedModel> {
  for (let attempt = 0; ; attempt++) {
    const model = await getModelOnce(env, id, ctx);
    // Another request's load may have evicted it between its load and this continuation: load again.
    if (!model.released || attempt >= 2) return use(model, ctx);
  }
}

async function getModelOnce(env: Env, id: string, ctx?: WaitUntil): Promise<LoadedModel> {
  let entry = entries.get(id);
  if (entry?.status === 'loaded') return entry.model!;
  if (entry?.status === 'error') {
    if (!(await shouldRetry(env, id, entry))) throw unavailable(id, entry);
    // Another request may have started the retry while we looked at R2.
    const current = entries.get(id);
    entry = current && current !== entry ? current : startLoad(env, id, ctx);
  }
  if (!entry) entry = startLoad(env, id, ctx);
  try {
    return await entry.promise;
  } catch (err) {
    if (err instanceof UnknownModel) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${id}'`);
    throw unavailable(
      id,
      entry.error === undefined ? { ...entry, error: err instanceof Error ? err.message : String(err) } : entry,
    );
  }
}

/** Memory held by the models loaded in this isolate (bench/diagnostics). */
export function registryMemory(): {
  models: Array<{ id: string; retainedBytes: number }>;
  wasmMemoryBytes: number;
  evictions: number;
  budgetBytes: number;
} {
  const models: Array<{ id: string; retainedBytes: number }> = [];
  for (const [id, e] of entries) if (e.model) models.push({ id, retainedBytes: e.model.retainedBytes });
  return { models, wasmMemoryBytes: currentKernels()?.memoryBytes ?? 0, evictions, budgetBytes: memoryBudget };
}

// ---------------------------------------------------------------------------------------------
// Memory budget: least-recently-used eviction (docs/multilingual.md "Memory")
// ---------------------------------------------------------------------------------------------

/** Isolate memory the models and language data may take (the isolate limit is 128 MiB). */
export const MEMORY_BUDGET_BYTES = 100_000_000;
let memoryBudget = MEMORY_BUDGET_BYTES;
let evictions = 0;
/** Tests: a smaller budget to exercise eviction with small models. */
export function setMemoryBudget(bytes: number): void {
  memoryBudget = bytes;
}

/** Models each request holds (pinned until the request ends: releaseRequestModels). */
const held = new WeakMap<object, Set<LoadedModel>>();

function use(model: LoadedModel, ctx: WaitUntil | undefined): LoadedModel {
  model.lastUsed = Date.now();
  if (ctx) {
    let set = held.get(ctx);
    if (!set) held.set(ctx, (set = new Set()));
    if (!set.has(model)) {
      set.add(model);
      model.pins++;
    }
  }
  return model;
}

/** Unpins the models a request held (app.ts middleware, when the request has answered). */
export function releaseRequestModels(ctx: WaitUntil | undefined): void {
  const set = ctx && held.get(ctx);
  if (!set) return;
  for (const m of set) m.pins--;
  held.delete(ctx);
}

/** Bytes outside WASM a model of n words keeps (vocabulary ~10 B/word, index, offsets, lookup table). */
const retainedEstimate = (n: number): number => 30 * n;
/** Room kept for the model's language data when it is not loaded yet (the largest, de, is 11.3 MB). */
export const LANGUAGE_RESERVE_BYTES = 12_000_000;

/**
 * Before a model of `manifest`'s shape is placed: while WASM memory (after the growth this
 * matrix needs, given the freed regions) + the loaded models' buffers + language data + the new
 * model's buffers exceed the budget, evict the least-recently-used model no request holds.
 * Freed matrices leave regions that later matrices reuse (WASM memory never shrinks), so
 * evicting until the new matrix fits a freed region also stops the memory from growing.
 */
function makeRoom(manifest: ModelManifest, loadingId: string): void {
  const k = getKernels();
  const n = manifest.vocabularySize;
  const dims = manifest.dimensions;
  if (!(n > 0 && dims > 0)) return;
  const need = (): number => {
    let retained = 0;
    for (const e of entries.values()) if (e.model && !e.model.released) retained += e.model.retainedBytes;
    const language = languageLoaded(manifest.language) ? 0 : LANGUAGE_RESERVE_BYTES;
    return k.memoryBytes + k.growthFor(n, dims) + retained + languageBytes() + language + retainedEstimate(n);
  };
  while (need() > memoryBudget) {
    let victim: LoadedModel | null = null;
    for (const [id, e] of entries) {
      const m = e.model;
      if (id === loadingId || e.status !== 'loaded' || !m || m.pins > 0 || m.released) continue;
      if (!victim || m.lastUsed < victim.lastUsed) victim = m;
    }
    if (!victim) break; // everything else is in use: go over budget rather than fail
    evict(victim);
  }
}

function evict(model: LoadedModel): void {
  if (entries.get(model.id)?.model === model) entries.delete(model.id);
  model.released = true;
  model.index.release();
  evictions++;
  // Its language data goes too when no loaded model speaks that language any more.
  const language = model.manifest.language;
  let spoken = false;
  for (const e of entries.values())
    if (e.model && !e.model.released && e.model.manifest.language === language) spoken = true;
  if (!spoken) dropLanguageData(language);
  console.log(`[models] evicted ${model.id} (least recently used) to stay within ${memoryBudget} bytes`);
}

/** Number of model ids this isolate holds state for (tests: unknown ids leave none). */
export function registrySize(): number {
  return entries.size + artifactReads.size;
}

/** Model ids with settled state (loaded or failed; loads in flight are not counted: diagnostics). */
export function settledRegistrySize(): number {
  let n = artifactReads.size;
  for (const e of entries.values()) if (e.status !== 'loading') n++;
  return n;
}

/** Model loads and mapper bundle loads in flight in this isolate (diagnostics). */
export function modelLoadsInFlight(): number {
  let n = 0;
  for (const e of entries.values()) {
    if (e.status === 'loading') n++;
    if (e.model) n += loadsInFlight(e.model.bundles);
  }
  return n;
}

/** Settled entries of the per-model caches (parsed mapper bundles, normalization statistics) over the loaded models. */
export function modelCacheEntries(): number {
  let n = 0;
  for (const e of entries.values())
    if (e.model) n += e.model.bundles.size - loadsInFlight(e.model.bundles) + e.model.stats.size;
  return n;
}
