/**
 * The isolate's memory budget for models (docs/reliability.md "Memory budget"): everything the
 * isolate keeps for models (WASM memory, buffers outside it, the lookup tables, the per-model
 * caches, the language data) is counted, and nothing is kept that would go over it:
 * - a load is admitted only when its bytes fit: least-recently-used models no request uses are
 *   evicted first; models in use are drained (no new request takes them; they go once their
 *   requests have answered); a request waits for that at most MODEL_WAIT_MS, then gets 503 with
 *   Retry-After, and so does one whose models cannot fit beside the models in use;
 * - caches and lookup tables grow only while the budget has room (core/engine.ts mayGrow);
 * - a model a request holds or waits for is never evicted (pins and waiters), so no request
 *   sees its model's memory freed under it;
 * - every wait has a timer of the waiting request's own, so no request waits on another
 *   request's I/O alone (workerd would cancel it as hung).
 * Loads are placed one at a time, first come first served (takeTurn).
 */
import {
  DEFAULT_MEMORY_BUDGET_BYTES,
  placementBytes,
  SCRATCH_RESERVE_BYTES,
  type Footprint,
} from '../../core/footprint';
import { isShardPart } from '../../core/sharded-index';
import type { WaitUntil } from '../../core/shared-load';
import { ApiError } from '../../core/problem';
import type { Env } from '../env';
import {
  dropLanguageData,
  languageBytes,
  languagesLoading,
  unspokenLanguages,
  type LanguageAdmission,
} from './language-data';
import { entries, liveModels, type LoadedModel } from './model-entries';

/** Isolate memory the models, language data and their caches may take (the isolate limit is 128 MiB). */
export const MEMORY_BUDGET_BYTES = DEFAULT_MEMORY_BUDGET_BYTES;
/** How long a request waits for a model (its load, room in the budget) before 503 with Retry-After. */
export const MODEL_WAIT_MS = 10_000;
/**
 * Between two looks while a request waits (for room, its turn, a draining model): 5 ms, doubling
 * up to 40 ms, so a long wait costs little CPU time.
 */
export function poller(deadline: number): () => Promise<void> {
  let ms = 5;
  return async () => {
    await pause(Math.max(0, Math.min(ms, deadline - Date.now())));
    ms = Math.min(40, ms * 2);
  };
}
/** A load holding the placement turn longer than this is taken as abandoned (its request was cancelled). */
export const TURN_LEASE_MS = 60_000;

/** The configured budget and wait (wrangler vars MODEL_MEMORY_BUDGET_BYTES, MODEL_WAIT_MS). */
function settingOf(value: string | undefined, fallback: number): number {
  const n = Number(value);
  return value !== undefined && Number.isFinite(n) && n > 0 ? n : fallback;
}
/** The budget of the last request (caches ask it without an env). */
let budget = MEMORY_BUDGET_BYTES;

/** The budget of this request's settings (kept for the caches' asks). */
export function budgetOf(env: Env): number {
  budget = settingOf(env.MODEL_MEMORY_BUDGET_BYTES, MEMORY_BUDGET_BYTES);
  return budget;
}

/** When this request's wait for a model ends (its MODEL_WAIT_MS setting from now). */
export function deadlineOf(env: Env): number {
  return Date.now() + settingOf(env.MODEL_WAIT_MS, MODEL_WAIT_MS);
}

/** No room in the budget in time, or none possible beside the models in use: 503 with Retry-After. */
export class NoRoom extends Error {}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** `p`, or NoRoom once `deadline` has passed (a timer of the caller's own request). */
export async function settleBy<T>(p: Promise<T>, deadline: number, why: string): Promise<T> {
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

/** The 503 of a request that found no room in time: the isolate is busy with other models. */
export function busy(
  what: string,
  err: NoRoom,
  code: 'EMBEDDING_MODEL_UNAVAILABLE' | 'LANGUAGE_DATA_UNAVAILABLE' = 'EMBEDDING_MODEL_UNAVAILABLE',
): ApiError {
  return new ApiError(code, `${what} could not be served now: ${err.message}; nothing was charged, retry the request`, {
    headers: { 'retry-after': '1' },
  });
}

let evictions = 0;

/** Models each request holds (pinned until the request ends: releaseRequestModels). */
const held = new WeakMap<object, Set<LoadedModel>>();
/** Requests waiting in getModel or for language data (how many waits each): the models they hold are not drained. */
const waiting = new Map<WaitUntil, number>();
export function enter(ctx: WaitUntil | undefined): void {
  if (ctx) waiting.set(ctx, (waiting.get(ctx) ?? 0) + 1);
}
export function leave(ctx: WaitUntil | undefined): void {
  if (!ctx) return;
  const n = (waiting.get(ctx) ?? 1) - 1;
  if (n > 0) waiting.set(ctx, n);
  else waiting.delete(ctx);
}

export function use(model: LoadedModel, ctx: WaitUntil | undefined): LoadedModel {
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
export function spokenBy(m: { language: string; features?: readonly string[] }): string[] {
  return isShardPart(m) ? [] : [m.language];
}

/** What the budget counts now, with the data of `languages` reserved too (a load about to read it). */
export function usedBytes(languages: readonly string[] = []): number {
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
export function mayGrow(bytes: number): boolean {
  return usedBytes() + bytes <= budget;
}

/**
 * One load places its model at a time, in the order the loads asked (the budget's arithmetic holds
 * only for one placement; first come, first served, so no model starves). A load that gives up
 * leaves the queue; one whose request was cancelled mid-turn is passed over after TURN_LEASE_MS.
 */
const queue: Array<{ since: number }> = [];

export async function takeTurn(deadline: number): Promise<() => void> {
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
export async function admit(
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

export function evict(model: LoadedModel): void {
  if (entries.get(model.id)?.model === model) entries.delete(model.id);
  model.released = true;
  model.index.release();
  evictions++;
  // Its language data goes too when no loaded model speaks that language any more.
  for (const language of spokenBy(model.manifest))
    if (!liveModels().some((m) => spokenBy(m.manifest).includes(language))) dropLanguageData(language);
  console.log(`[models] evicted ${model.id} (least recently used) to stay within ${budget} bytes`);
}

/** The budget's figures now (diagnostics). */
export function budgetFigures(): {
  wasmMemoryBytes: number;
  totalBytes: number;
  evictions: number;
  budgetBytes: number;
} {
  return { wasmMemoryBytes: wasmBytes(), totalBytes: usedBytes(), evictions, budgetBytes: budget };
}

/** Reserves the bytes of the model whose artifact is being read (null: none, or placed). */
export function reservePlacing(footprint: Footprint | null): void {
  placing = footprint;
}
