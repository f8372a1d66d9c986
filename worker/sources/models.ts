/**
 * Per-isolate model registry: models load lazily from R2 into isolate memory, once per isolate
 * even under concurrent first requests (one in-flight Promise per model id).
 *
 * loadingStatus per isolate: `not loaded` (never requested here) -> `loading` -> `loaded` | `error`.
 * A model in `error` answers 503 EMBEDDING_MODEL_UNAVAILABLE. The next request retries the load
 * when MODEL_RETRY_MS have passed since the failure, or at once when the artifact object in R2
 * changed (another etag, e.g. a fixed upload); otherwise it fails fast without touching the
 * artifact. A model id without a manifest (models/{id}.json) is unknown: 404, no entry kept.
 *
 * The memory budget is a promise (docs/reliability.md "Memory budget"): everything the isolate
 * keeps for models (WASM memory, buffers outside it, the lookup tables, the per-model caches, the
 * language data) is counted, and nothing is kept that would go over it:
 * - a load is admitted only when its bytes fit: least-recently-used models no request uses are
 *   evicted first; models in use are drained (no new request takes them; they go once their
 *   requests have answered); a request waits for that at most MODEL_WAIT_MS, then gets 503 with
 *   Retry-After, and so does one whose models cannot fit beside the models in use;
 * - caches and lookup tables grow only while the budget has room (core/engine.ts mayGrow);
 * - a model a request holds or waits for is never evicted (pins and waiters), so no request
 *   sees its model's memory freed under it;
 * - every wait has a timer of the waiting request's own, so no request waits on another
 *   request's I/O alone (workerd would cancel it as hung).
 * Loads are placed one at a time, first come first served (one R2 read of a model in flight per
 * isolate), each model in a WASM memory of its own, so an evicted model's memory goes with it.
 */
import kernelsWasm from '../../build/generated/kernels.wasm';
import { Kernels } from '../../core/kernels';
import {
  DEFAULT_MEMORY_BUDGET_BYTES,
  placementBytes,
  SCRATCH_RESERVE_BYTES,
  type Footprint,
} from '../../core/footprint';
import { EmbeddingModel } from '../../core/model';
import { isShardPart } from '../../core/sharded-index';
import { LoadedModel as EngineModel } from '../../core/engine';
import { R2_KEYS } from '../../core/storage-keys';
import { type ModelManifest } from '../../core/types';
import { keepAlive, loadsInFlight, type WaitUntil } from '../../core/shared-load';
import { ApiError } from '../../core/problem';
import type { Env } from '../env';
import {
  dropLanguageData,
  languageBytes,
  languageObjectSize,
  languagesLoading,
  unspokenLanguages,
  type LanguageAdmission,
} from './language-data';
import { clip } from '../log';

export type LoadingStatus = 'not loaded' | 'loading' | 'loaded' | 'error';

/** After a failed load, requests fail fast for this long unless the artifact changes. */
export const MODEL_RETRY_MS = 30_000;
/** Isolate memory the models, language data and their caches may take (the isolate limit is 128 MiB). */
export const MEMORY_BUDGET_BYTES = DEFAULT_MEMORY_BUDGET_BYTES;
/** How long a request waits for a model (its load, room in the budget) before 503 with Retry-After. */
export const MODEL_WAIT_MS = 10_000;
/**
 * Between two looks while a request waits (for room, its turn, a draining model): 5 ms, doubling
 * up to 40 ms, so a long wait costs little CPU time.
 */
function poller(deadline: number): () => Promise<void> {
  let ms = 5;
  return async () => {
    await pause(Math.max(0, Math.min(ms, deadline - Date.now())));
    ms = Math.min(40, ms * 2);
  };
}
/** A load holding the placement turn longer than this is taken as abandoned (its request was cancelled). */
const TURN_LEASE_MS = 60_000;

/** The configured budget and wait (wrangler vars MODEL_MEMORY_BUDGET_BYTES, MODEL_WAIT_MS). */
function settingOf(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : fallback;
}
/** The budget of the last request (caches ask it without an env). */
let budget = MEMORY_BUDGET_BYTES;

/** A model in isolate memory with its per-model caches (core/engine.ts) and its LRU state. */
export class LoadedModel extends EngineModel<EmbeddingModel> {
  /** Last getModel of this model (LRU eviction). */
  lastUsed = Date.now();
  /** Requests that hold this model (never evicted while > 0). */
  pins = 0;
  /** Chosen for eviction while requests held it: no new request takes it. */
  draining = false;
  /** Evicted: its matrix is freed (its kernels instance goes with it); getModel loads it again. */
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
  /** Requests awaiting this entry's load (its model is not evicted while they are about to pin it). */
  waiters: number;
  startedAt: number;
}

/**
 * Each model gets a kernels instance of its own (one compiled module, a linear memory per model):
 * WASM memory cannot shrink, so a memory shared by every model kept its high-water mark (two large
 * models once side by side) for the isolate's life. An evicted model's memory goes with it.
 */
function newKernels(): Kernels {
  return Kernels.fromModule(kernelsWasm);
}

const entries = new Map<string, Entry>();
/** Artifact reads started per model id in this isolate (diagnostics; tests check "once per isolate"). */
const artifactReads = new Map<string, number>();
export function artifactReadCount(id: string): number {
  return artifactReads.get(id) ?? 0;
}

/** Distinguishes "no such model" (404) from load failures inside the loader promise. */
class UnknownModel extends Error {}
/** No room in the budget in time, or none possible beside the models in use: 503 with Retry-After. */
class NoRoom extends Error {}

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

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `p`, or NoRoom once `deadline` has passed (a timer of the caller's own request). */
async function settleBy<T>(p: Promise<T>, deadline: number, why: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NoRoom(why)), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

function startLoad(env: Env, id: string, ctx: WaitUntil | undefined, deadline: number): Entry {
  const entry: Entry = {
    status: 'loading',
    promise: undefined as unknown as Promise<LoadedModel>,
    waiters: 0,
    startedAt: Date.now(),
  };
  // Until the manifest is found the id may be unknown: a failure then (R2 down) keeps no entry,
  // so ids that do not exist never accumulate state in the isolate.
  let known = false;
  entry.promise = (async () => {
    const manifest = await getManifest(env, id);
    if (!manifest) throw new UnknownModel(id);
    known = true;
    // Learns the size of the model's language data (reserved with the model: usedBytes), and the
    // artifact's size (its sections outside the matrix are what the model keeps outside WASM).
    await languageObjectSize(env, manifest.language);
    const artifact = await env.ARTIFACTS.head(R2_KEYS.model(id));
    if (!artifact) throw new Error(`artifact ${R2_KEYS.model(id)} is missing`);
    const footprint = { ...manifest, artifactBytes: artifact.size };
    const done = await takeTurn(deadline);
    try {
      const need = (): number => usedBytes(spokenBy(manifest)) + placementBytes(footprint);
      // Reserved from the moment it fits, while the artifact is read: other admissions count it.
      await admit(need, deadline, ctx, `model '${id}'`, false, () => (placing = footprint));
      artifactReads.set(id, (artifactReads.get(id) ?? 0) + 1);
      const obj = await env.ARTIFACTS.get(R2_KEYS.model(id));
      if (!obj) throw new Error(`artifact ${R2_KEYS.model(id)} is missing`);
      entry.failedEtag = obj.etag;
      const buf = await obj.arrayBuffer();
      // Language data read meanwhile (another request's, admitted while this model's bytes were
      // reserved) or a dropped language read again may leave less room than at admission: the
      // read bytes wait for room like the load did.
      placing = null;
      await admit(need, deadline, ctx, `model '${id}'`, false, () => (placing = footprint));
      // From the reservation to the entry holding the model, its bytes are counted without a gap:
      // placing is cleared in the same turn as the model becomes part of usedBytes.
      const index = EmbeddingModel.fromArrayBuffer(buf, newKernels(), { mayGrow });
      const model = new LoadedModel(id, index, { mayGrow });
      placing = null;
      if (entries.get(id) === entry) {
        entry.status = 'loaded';
        entry.model = model;
        entry.failedEtag = undefined;
      }
      return model;
    } finally {
      placing = null;
      done();
    }
  })().then(
    (model) => {
      if (entries.get(id) !== entry) {
        // Replaced while it ran (abandoned: see getModel): its memory goes back at once.
        model.index.release();
        throw new NoRoom(`the load of model '${id}' was abandoned`);
      }
      return model;
    },
    (err: unknown) => {
      if (err instanceof UnknownModel || err instanceof NoRoom || !known) {
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

function unavailable(id: string, entry: { error?: string } | undefined): ApiError {
  return new ApiError(
    'EMBEDDING_MODEL_UNAVAILABLE',
    `Embedding model '${id}' could not be loaded: ${entry?.error ?? 'unknown error'}`,
    {
      headers: { 'retry-after': String(Math.ceil(MODEL_RETRY_MS / 1000)) },
    },
  );
}

/** The 503 of a request that found no room in time: the isolate is busy with other models. */
function busy(
  what: string,
  err: NoRoom,
  code: 'EMBEDDING_MODEL_UNAVAILABLE' | 'LANGUAGE_DATA_UNAVAILABLE' = 'EMBEDDING_MODEL_UNAVAILABLE',
): ApiError {
  return new ApiError(code, `${what} could not be served now: ${err.message}; nothing was charged, retry the request`, {
    headers: { 'retry-after': '1' },
  });
}

/** The loaded model, held (pinned) by the request until it answers; throws 404 or 503. */
export async function getModel(env: Env, id: string, ctx?: WaitUntil): Promise<LoadedModel> {
  budget = settingOf(env.MODEL_MEMORY_BUDGET_BYTES, MEMORY_BUDGET_BYTES);
  const deadline = Date.now() + settingOf(env.MODEL_WAIT_MS, MODEL_WAIT_MS);
  enter(ctx);
  const next = poller(deadline);
  try {
    for (;;) {
      let entry = entries.get(id);
      if (entry?.status === 'loaded') {
        const model = entry.model!;
        if (!model.draining) return use(model, ctx);
        // Chosen for eviction: wait until it has gone (then load it again) or stays.
        if (Date.now() >= deadline) throw busy(`Embedding model '${id}'`, new NoRoom('it is making room for others'));
        await next();
        continue;
      }
      if (entry?.status === 'error') {
        if (!(await shouldRetry(env, id, entry))) throw unavailable(id, entry);
        // Another request may have started the retry while we looked at R2.
        const current = entries.get(id);
        entry = current && current !== entry ? current : startLoad(env, id, ctx, deadline);
      }
      if (!entry) entry = startLoad(env, id, ctx, deadline);
      entry.waiters++;
      try {
        const model = await settleBy(entry.promise, deadline, `waiting for the load of model '${id}'`);
        // Pinned in the same turn as the load's answer: nothing can evict it in between.
        if (!model.released && !model.draining) return use(model, ctx);
      } catch (err) {
        if (err instanceof UnknownModel) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${id}'`);
        if (err instanceof NoRoom) {
          // A load that outlived every wait was abandoned (its request cancelled): start afresh next time.
          if (entries.get(id) === entry && Date.now() - entry.startedAt > TURN_LEASE_MS) entries.delete(id);
          throw busy(`Embedding model '${id}'`, err);
        }
        throw unavailable(
          id,
          entry.error === undefined ? { error: err instanceof Error ? err.message : String(err) } : entry,
        );
      } finally {
        entry.waiters--;
      }
    }
  } finally {
    leave(ctx);
  }
}

/** Memory held by the models loaded in this isolate (diagnostics); totalBytes is what the budget counts. */
export function registryMemory(env: Env): {
  models: Array<{ id: string; retainedBytes: number; cacheBytes: number; draining: boolean }>;
  wasmMemoryBytes: number;
  totalBytes: number;
  evictions: number;
  budgetBytes: number;
} {
  budget = settingOf(env.MODEL_MEMORY_BUDGET_BYTES, MEMORY_BUDGET_BYTES);
  const models: Array<{ id: string; retainedBytes: number; cacheBytes: number; draining: boolean }> = [];
  for (const [id, e] of entries) {
    const m = e.model;
    if (m && !m.released)
      models.push({ id, retainedBytes: m.retainedBytes, cacheBytes: m.cacheBytes, draining: m.draining });
  }
  return {
    models,
    wasmMemoryBytes: wasmBytes(),
    totalBytes: usedBytes(),
    evictions,
    budgetBytes: budget,
  };
}

// ---------------------------------------------------------------------------------------------
// Memory budget (docs/reliability.md "Memory budget")
// ---------------------------------------------------------------------------------------------

let evictions = 0;

/** Models each request holds (pinned until the request ends: releaseRequestModels). */
const held = new WeakMap<object, Set<LoadedModel>>();
/** Requests waiting in getModel or for language data (how many waits each): the models they hold are not drained. */
const waiting = new Map<WaitUntil, number>();
function enter(ctx: WaitUntil | undefined): void {
  if (ctx) waiting.set(ctx, (waiting.get(ctx) ?? 0) + 1);
}
function leave(ctx: WaitUntil | undefined): void {
  if (!ctx) return;
  const n = (waiting.get(ctx) ?? 1) - 1;
  if (n > 0) waiting.set(ctx, n);
  else waiting.delete(ctx);
}

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

function liveModels(): LoadedModel[] {
  const out: LoadedModel[] = [];
  for (const e of entries.values()) if (e.model && !e.model.released) out.push(e.model);
  return out;
}

/** The model whose artifact is being read (admitted, not placed yet): its bytes are reserved. */
let placing: Footprint | null = null;

/** A model's WASM memory as the budget counts it: its size, or more when its scratch room needs growth. */
function wasmBytesOf(m: LoadedModel): number {
  const k = m.index.kernels;
  return Math.max(k.memoryBytes, k.topBytes + SCRATCH_RESERVE_BYTES);
}

/** The WASM memory of the loaded models. */
function wasmBytes(): number {
  let n = 0;
  for (const m of liveModels()) n += wasmBytesOf(m);
  return n;
}

/** The language whose data a model needs beside it: none for a part of a sharded model (it never tokenizes). */
function spokenBy(m: { language: string; features?: readonly string[] }): string[] {
  return isShardPart(m) ? [] : [m.language];
}

/** What the budget counts now, with the data of `languages` reserved too (a load about to read it). */
function usedBytes(languages: readonly string[] = []): number {
  const models = liveModels();
  let n = wasmBytes();
  for (const m of models) n += m.retainedBytes + m.cacheBytes;
  const spoken = [...models.flatMap((m) => spokenBy(m.manifest)), ...languages];
  if (placing) {
    n += placementBytes(placing);
    spoken.push(...spokenBy(placing));
  }
  return n + languageBytes(spoken);
}

/** Whether `bytes` more fit the budget now (lookup tables, caches, mapper bundles ask first). */
function mayGrow(bytes: number): boolean {
  return usedBytes() + bytes <= budget;
}

/**
 * One load places its model at a time, in the order the loads asked (the budget's arithmetic holds
 * only for one placement; first come, first served, so no model starves). A load that gives up
 * leaves the queue; one whose request was cancelled mid-turn is passed over after TURN_LEASE_MS.
 */
const queue: Array<{ since: number }> = [];

async function takeTurn(deadline: number): Promise<() => void> {
  const mine = { since: Date.now() };
  const next = poller(deadline);
  queue.push(mine);
  const leave = (): void => {
    const i = queue.indexOf(mine);
    if (i >= 0) queue.splice(i, 1);
  };
  for (;;) {
    const head = queue[0];
    if (head === mine) {
      mine.since = Date.now();
      return leave;
    }
    if (head && Date.now() - head.since >= TURN_LEASE_MS) queue.shift();
    else if (Date.now() >= deadline) {
      leave();
      throw new NoRoom('other models are being loaded');
    } else if (queue[1] === mine)
      await pause(5); // next in line: take the turn soon after it is free
    else await next();
  }
}

/** Models no request holds or waits for. */
function idle(m: LoadedModel): boolean {
  return m.pins === 0 && (entries.get(m.id)?.waiters ?? 0) === 0;
}

/** Evicts idle models, least recently used first, and unspoken language data, while `need` is over budget. */
function evictIdle(need: () => number): void {
  if (need() <= budget) return;
  const spoken = new Set(liveModels().flatMap((m) => spokenBy(m.manifest)));
  for (const language of unspokenLanguages(spoken)) {
    dropLanguageData(language);
    if (need() <= budget) return;
  }
  for (const m of liveModels().sort((a, b) => a.lastUsed - b.lastUsed)) {
    if (!idle(m)) continue;
    evict(m);
    if (need() <= budget) return;
  }
}

/** Models held by requests that wait themselves: draining them could only end at the deadline. */
function heldByWaiters(): Set<LoadedModel> {
  const out = new Set<LoadedModel>();
  for (const ctx of waiting.keys()) for (const m of held.get(ctx) ?? []) out.add(m);
  return out;
}

/**
 * Waits until `need()` fits the budget: evicts idle models, drains the ones in use by requests
 * that are still computing (they go when those have answered). Throws NoRoom at the deadline, or
 * at once when nothing more can be freed (only models held by waiting requests are left).
 */
async function admit(
  need: () => number,
  deadline: number,
  ctx: WaitUntil | undefined,
  what: string,
  ownLanguage = false,
  reserve?: () => void,
): Promise<void> {
  const drained = new Set<LoadedModel>();
  const next = poller(deadline);
  try {
    for (;;) {
      evictIdle(need);
      if (need() <= budget) {
        reserve?.(); // in the same turn of the event loop as the look at the budget
        return;
      }
      const keep = heldByWaiters();
      for (const m of held.get(ctx as object) ?? []) keep.add(m);
      const live = liveModels();
      const candidates = live.filter((m) => !keep.has(m));
      // Nothing else is held or on its way: it can never fit.
      if (live.length === 0 && !placing && languagesLoading() <= (ownLanguage ? 1 : 0))
        throw new NoRoom(`${what} is larger than this isolate's memory budget (${budget} bytes)`);
      // Drain the least recently used first, as many as could free what is missing.
      const over = need() - budget;
      let freeable = 0;
      for (const m of candidates.sort((x, y) => x.lastUsed - y.lastUsed)) {
        if (freeable >= over) break;
        if (!m.draining) drained.add(m);
        m.draining = true;
        freeable += m.index.matrixBytes + m.retainedBytes + m.cacheBytes;
      }
      if (Date.now() >= deadline)
        throw new NoRoom(`no room for ${what} in time: the models and data in use did not finish`);
      await next();
    }
  } finally {
    // What was not evicted stays, and requests may take it again.
    for (const m of drained) if (!m.released) m.draining = false;
  }
}

/**
 * Room for a language's data before it is read (worker/sources/language-data.ts getLanguageData's
 * `admit`): its bytes are counted from the turn in which the budget has room for them.
 */
export async function admitLanguage(
  env: Env,
  ctx: WaitUntil | undefined,
  language: string,
  load: LanguageAdmission,
): Promise<void> {
  budget = settingOf(env.MODEL_MEMORY_BUDGET_BYTES, MEMORY_BUDGET_BYTES);
  const need = (): number => load.counted(() => usedBytes());
  // Without waiting for the models' turn: a model load may be waiting for this request's model.
  if (need() <= budget) return load.admit();
  const deadline = Date.now() + settingOf(env.MODEL_WAIT_MS, MODEL_WAIT_MS);
  await admit(need, deadline, ctx, `the '${language}' language data`, true, () => load.admit());
}

/**
 * Awaits a shared load (language data) as a waiting request: the models it holds are not
 * drained meanwhile, and the wait ends at the deadline with 503 LANGUAGE_DATA_UNAVAILABLE and
 * Retry-After, on a timer of this request's own.
 */
export async function awaitLanguage<T>(
  env: Env,
  ctx: WaitUntil | undefined,
  language: string,
  load: Promise<T>,
): Promise<T> {
  const deadline = Date.now() + settingOf(env.MODEL_WAIT_MS, MODEL_WAIT_MS);
  enter(ctx);
  try {
    return await settleBy(load, deadline, `waiting for the '${language}' language data`);
  } catch (err) {
    if (err instanceof NoRoom) throw busy(`Language data '${language}'`, err, 'LANGUAGE_DATA_UNAVAILABLE');
    throw err;
  } finally {
    leave(ctx);
  }
}

function evict(model: LoadedModel): void {
  if (entries.get(model.id)?.model === model) entries.delete(model.id);
  model.released = true;
  model.index.release();
  evictions++;
  // Its language data goes too when no loaded model speaks that language any more.
  for (const language of spokenBy(model.manifest))
    if (!liveModels().some((m) => spokenBy(m.manifest).includes(language))) dropLanguageData(language);
  console.log(`[models] evicted ${model.id} (least recently used) to stay within ${budget} bytes`);
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
