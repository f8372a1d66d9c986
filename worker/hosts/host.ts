/**
 * A model host (docs/architecture.md "Model hosts"): the same Worker script, deployed once per
 * host of the placement with its own HOST_BINDING, whose isolates hold only the models placed on
 * it. The API Worker calls it through a service binding (RPC): the engine's scoring methods on
 * requests the API Worker has validated (and charges for after the answer), the rows of a few
 * words for another host (a projected model's English companion, a translation's source), and
 * its memory and loading status for diagnostics and the catalog.
 */
import { WorkerEntrypoint } from 'cloudflare:workers';
import { createEngine, type EngineSource } from '../../core/engine';
import { FetchedRows, rowsPayload, type RowsPayload } from '../../core/rows';
import { ApiError } from '../../core/problem';
import { RowCacheBusy, RowCacheFull, ShardedCall, TooManyRuns, type ShardTiming } from '../../core/sharded-index';
import type { ModelManifest, TopKOptions, TopKResult } from '../../core/types';
import type { WaitUntil } from '../../core/shared-load';
import type { Env } from '../env';
import { isolateMemory } from '../health/diagnostics';
import { workerSource } from '../sources';
import { getModel, loadingStatus, type LoadingStatus } from '../sources/models';
import { releaseRequestModels } from '../sources/memory-budget';
import { answer, serializedSteps, type HostAnswer, type HostTiming } from './protocol';
import { drain, paced } from '../../core/scoring/steps';
import { isolateGate } from './gate';
import { callHost } from './router';
import { hostStub, routesOf } from './placement';
import { loadPart, partTopK, shardedLoaded, shardedRows } from './sharded';

/** What the API Worker tells a host of a request it admitted: its estimate and how long it waits for the answer. */
export interface HostAdmission {
  units: number;
  timeoutMs: number;
  /** textScores, wordScores: answer the body serialized (protocol.ts SerializedAnswer). */
  serialized?: boolean;
}

/** The engine methods a host runs, with their arguments. */
export type HostMethod =
  | 'textScores'
  | 'wordScores'
  | 'autocomplete'
  | 'wordAvailabilities'
  | 'similarityMatrix'
  | 'tokenize'
  | 'wordTranslations';

export interface RowsAnswer extends RowsPayload {
  manifest: ModelManifest;
}

/** A part's top-k answer (local rows) with its scan time. */
export type PartTopK = TopKResult & { ms: number };

/** The RPC surface of a host as its callers see it: what hostCalls answers, method by method. */
export type HostStub = ReturnType<typeof hostCalls>;

/**
 * The engine source of a host for one call: the Worker's, plus rows of models placed on other
 * hosts, fetched from them (only the words asked), so a host holds no copy of another host's
 * model; a row-sharded model is the call's view of it (worker/hosts/sharded.ts).
 */
function hostSource(env: Env, ctx: WaitUntil, call: ShardedCall): EngineSource {
  const source = workerSource(env, ctx);
  const routes = routesOf(env);
  return {
    ...source,
    async model(id) {
      const layout = routes.sharded.get(id);
      return layout ? shardedLoaded(env, ctx, call, id, layout) : source.model(id);
    },
    async rows(id, words) {
      const binding = routes.models.get(id);
      const stub = hostStub(env, binding);
      if (!stub) {
        const layout = routes.sharded.get(id);
        // Its own call: a nested run must not release the rows of the call that asked.
        if (layout) return shardedRows(env, ctx, id, layout, words);
        const model = await getModel(env, id, ctx);
        return { manifest: model.manifest, rows: model.index };
      }
      const a = await callHost(env, binding!, () => stub.rows(id, [...words]));
      return { manifest: a.manifest, rows: new FetchedRows(a) };
    },
  };
}

/** A sharded model's fetches as Server-Timing metrics (ms; `shard-rounds` counts engine runs). */
function shardTiming(timing: HostTiming, t: ShardTiming): void {
  timing.shards = { ...t };
}

/**
 * A sharded model's limits as a refusal: 413 for a call that needs more rows at once than its row
 * cache holds; 503 with Retry-After when the rows would fit but calls in progress hold its slots;
 * 503 for a call that still lacked data after MAX_ROUNDS runs of the engine.
 */
function rowCacheRefusal(err: unknown): never {
  if (err instanceof RowCacheFull)
    throw new ApiError('PAYLOAD_TOO_LARGE', `${err.message}: send fewer words or texts per request`);
  if (err instanceof TooManyRuns)
    throw new ApiError('EMBEDDING_MODEL_UNAVAILABLE', `${err.message}; nothing was charged`);
  if (err instanceof RowCacheBusy)
    throw new ApiError('EMBEDDING_MODEL_UNAVAILABLE', `${err.message}; nothing was charged, retry the request`, {
      headers: { 'retry-after': '1' },
    });
  throw err;
}

/**
 * What a host answers, for one call: `ctx` is the call's own (its waitUntil keeps shared loads
 * running; the models the call loads are pinned to it until it has answered).
 */
export function hostCalls(env: Env, ctx: WaitUntil) {
  /** Runs a call with the models it loads pinned until it has answered (as app.ts does per request). */
  const held = async <T>(work: (timing: HostTiming) => Promise<T>): Promise<HostAnswer<T>> => {
    try {
      return await answer(work);
    } finally {
      releaseRequestModels(ctx);
    }
  };
  return {
    run: (method: HostMethod, args: unknown[], admission?: HostAdmission): Promise<HostAnswer<unknown>> =>
      held(async (timing) => {
        // Admitted by this host's gate first (503 HOST_BUSY at once when it cannot finish in time).
        const ticket = admission ? isolateGate.admit(admission.units, admission.timeoutMs) : null;
        const call = new ShardedCall();
        const source = hostSource(env, ctx, call);
        try {
          // Run again while a sharded model's view lacks rows or scans (core/sharded-index.ts).
          return await call.run(async () => {
            let started = performance.now();
            const engine = createEngine(source, {
              validated: true,
              mark: (phase) => {
                const now = performance.now();
                timing[phase] = now - started;
                started = now;
              },
              pace: ticket?.pace,
            });
            const fn = engine[method] as (...a: unknown[]) => Promise<unknown>;
            const value = await fn(...args);
            if (!admission?.serialized || (method !== 'textScores' && method !== 'wordScores')) return value;
            const steps = serializedSteps(method, value);
            return ticket ? paced(steps, ticket.pace) : drain(steps);
          });
        } catch (err) {
          return rowCacheRefusal(err);
        } finally {
          ticket?.done();
          if (call.touched) shardTiming(timing, call.timing);
        }
      }),
    rows: (id: string, words: string[]): Promise<HostAnswer<RowsAnswer>> =>
      held(async () => {
        const layout = routesOf(env).sharded.get(id);
        if (layout) {
          const { manifest, payload } = await shardedRows(env, ctx, id, layout, words).catch(rowCacheRefusal);
          return { manifest, ...payload };
        }
        const model = await getModel(env, id, ctx);
        return { manifest: model.manifest, ...rowsPayload(model.index, words) };
      }),
    /** Int8 rows and scales of these local rows of a sharded model's part placed here. */
    partRows: (id: string, source: string, rows: number[]) =>
      held(async () => (await loadPart(env, ctx, id, source)).index.rawRows(rows)),
    /** A part's top-k of a query over its local rows. */
    partTopK: (id: string, source: string, query: Float32Array, k: number, options: TopKOptions) =>
      held(async () => partTopK(await loadPart(env, ctx, id, source), query, k, options)),
    /** cos(query, row) for these local rows of a part. */
    partScores: (id: string, source: string, query: Float32Array, rows: Int32Array) =>
      held(async () => (await loadPart(env, ctx, id, source)).index.scores(query, rows)),
    memory: async (): Promise<ReturnType<typeof isolateMemory>> => isolateMemory(env),
    /** Each model's loading status in this isolate, in the order asked (a sharded model's: its word map's). */
    statuses: async (ids: string[]): Promise<LoadingStatus[]> => {
      const sharded = routesOf(env).sharded;
      return ids.map((id) => loadingStatus(sharded.get(id)?.map.id ?? id));
    },
  };
}

/** The RPC entrypoint a host's service binding names (entrypoint = "ModelHost"). */
export class ModelHost extends WorkerEntrypoint<Env> implements HostStub {
  run(method: HostMethod, args: unknown[], admission?: HostAdmission): Promise<HostAnswer<unknown>> {
    return hostCalls(this.env, this.ctx).run(method, args, admission);
  }

  rows(id: string, words: string[]): Promise<HostAnswer<RowsAnswer>> {
    return hostCalls(this.env, this.ctx).rows(id, words);
  }

  partRows(id: string, source: string, rows: number[]): Promise<HostAnswer<{ rows: Int8Array; scales: Float32Array }>> {
    return hostCalls(this.env, this.ctx).partRows(id, source, rows);
  }

  partTopK(
    id: string,
    source: string,
    query: Float32Array,
    k: number,
    options: TopKOptions,
  ): Promise<HostAnswer<PartTopK>> {
    return hostCalls(this.env, this.ctx).partTopK(id, source, query, k, options);
  }

  partScores(id: string, source: string, query: Float32Array, rows: Int32Array): Promise<HostAnswer<Float32Array>> {
    return hostCalls(this.env, this.ctx).partScores(id, source, query, rows);
  }

  memory(): Promise<ReturnType<typeof isolateMemory>> {
    return hostCalls(this.env, this.ctx).memory();
  }

  statuses(ids: string[]): Promise<LoadingStatus[]> {
    return hostCalls(this.env, this.ctx).statuses(ids);
  }
}
