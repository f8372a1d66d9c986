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
 * Every model counts against the isolate's memory budget (memory-budget.ts); each has a WASM
 * memory of its own, so an evicted model's memory goes with it.
 */
import kernelsWasm from '../../build/generated/kernels.wasm';
import { Kernels } from '../../core/kernels';
import { placementBytes } from '../../core/footprint';
import { EmbeddingModel } from '../../core/model';
import { R2_KEYS } from '../../core/storage-keys';
import { type ModelManifest } from '../../core/types';
import { keepAlive, loadsInFlight, type WaitUntil } from '../../core/shared-load';
import { ApiError } from '../../core/problem';
import type { Env } from '../env';
import { languageObjectSize } from './language-data';
import { clip } from '../log';
import {
  admit,
  budgetFigures,
  budgetOf,
  busy,
  deadlineOf,
  enter,
  leave,
  mayGrow,
  NoRoom,
  poller,
  reservePlacing,
  settleBy,
  spokenBy,
  takeTurn,
  TURN_LEASE_MS,
  use,
  usedBytes,
} from './memory-budget';
import { artifactReads, entries, LoadedModel, type Entry } from './model-entries';

export type LoadingStatus = 'not loaded' | 'loading' | 'loaded' | 'error';

/** After a failed load, requests fail fast for this long unless the artifact changes. */
export const MODEL_RETRY_MS = 30_000;

/**
 * Each model gets a kernels instance of its own (one compiled module, a linear memory per model):
 * WASM memory cannot shrink, so a memory shared by every model kept its high-water mark (two large
 * models once side by side) for the isolate's life. An evicted model's memory goes with it.
 */
export function newKernels(): Kernels {
  return Kernels.fromModule(kernelsWasm);
}

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
      await admit(need, deadline, ctx, `model '${id}'`, false, () => reservePlacing(footprint));
      artifactReads.set(id, (artifactReads.get(id) ?? 0) + 1);
      const obj = await env.ARTIFACTS.get(R2_KEYS.model(id));
      if (!obj) throw new Error(`artifact ${R2_KEYS.model(id)} is missing`);
      entry.failedEtag = obj.etag;
      const buf = await obj.arrayBuffer();
      // Language data read meanwhile (another request's, admitted while this model's bytes were
      // reserved) or a dropped language read again may leave less room than at admission: the
      // read bytes wait for room like the load did.
      reservePlacing(null);
      await admit(need, deadline, ctx, `model '${id}'`, false, () => reservePlacing(footprint));
      // From the reservation to the entry holding the model, its bytes are counted without a gap:
      // placing is cleared in the same turn as the model becomes part of usedBytes.
      const index = EmbeddingModel.fromArrayBuffer(buf, newKernels(), { mayGrow });
      const model = new LoadedModel(id, index, { mayGrow });
      reservePlacing(null);
      if (entries.get(id) === entry) {
        entry.status = 'loaded';
        entry.model = model;
        entry.failedEtag = undefined;
      }
      return model;
    } finally {
      reservePlacing(null);
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

/** The loaded model, held (pinned) by the request until it answers; throws 404 or 503. */
export async function getModel(env: Env, id: string, ctx?: WaitUntil): Promise<LoadedModel> {
  budgetOf(env);
  const deadline = deadlineOf(env);
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
  budgetOf(env);
  const models: Array<{ id: string; retainedBytes: number; cacheBytes: number; draining: boolean }> = [];
  for (const [id, e] of entries) {
    const m = e.model;
    if (m && !m.released)
      models.push({ id, retainedBytes: m.retainedBytes, cacheBytes: m.cacheBytes, draining: m.draining });
  }
  return { models, ...budgetFigures() };
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
