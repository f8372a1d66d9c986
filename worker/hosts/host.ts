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
import type { ModelManifest } from '../../core/types';
import type { WaitUntil } from '../../core/shared-load';
import type { Env } from '../env';
import { isolateMemory } from '../health/diagnostics';
import { workerSource } from '../sources';
import { getModel, loadingStatus, releaseRequestModels, type LoadingStatus } from '../sources/models';
import { answer, type HostAnswer, type HostTiming } from './protocol';
import { callHost } from './router';
import { hostStub, routesOf } from './placement';

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

/** The RPC surface of a host as its callers see it. */
export interface HostStub {
  run(method: HostMethod, args: unknown[]): Promise<HostAnswer<unknown>>;
  rows(id: string, words: string[]): Promise<HostAnswer<RowsAnswer>>;
  memory(): Promise<ReturnType<typeof isolateMemory>>;
  statuses(ids: string[]): Promise<LoadingStatus[]>;
}

/**
 * The engine source of a host: the Worker's, plus rows of models placed on other hosts, fetched
 * from them (only the words asked), so a host holds no copy of another host's model.
 */
function hostSource(env: Env, ctx: WaitUntil): EngineSource {
  const source = workerSource(env, ctx);
  return {
    ...source,
    async rows(id, words) {
      const binding = routesOf(env).models.get(id);
      const stub = hostStub(env, binding);
      if (!stub) {
        const model = await getModel(env, id, ctx);
        return { manifest: model.manifest, rows: model.index };
      }
      const a = await callHost(env, binding!, () => stub.rows(id, [...words]));
      return { manifest: a.manifest, rows: new FetchedRows(a) };
    },
  };
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
    run: (method: HostMethod, args: unknown[]): Promise<HostAnswer<unknown>> =>
      held((timing) => {
        let started = performance.now();
        const engine = createEngine(hostSource(env, ctx), {
          validated: true,
          mark: (phase) => {
            const now = performance.now();
            timing[phase] = now - started;
            started = now;
          },
        });
        const fn = engine[method] as (...a: unknown[]) => Promise<unknown>;
        return fn(...args);
      }),
    rows: (id: string, words: string[]): Promise<HostAnswer<RowsAnswer>> =>
      held(async () => {
        const model = await getModel(env, id, ctx);
        return { manifest: model.manifest, ...rowsPayload(model.index, words) };
      }),
    memory: async (): Promise<ReturnType<typeof isolateMemory>> => isolateMemory(env),
    /** Each model's loading status in this isolate, in the order asked. */
    statuses: async (ids: string[]): Promise<LoadingStatus[]> => ids.map((id) => loadingStatus(id)),
  };
}

/** The RPC entrypoint a host's service binding names (entrypoint = "ModelHost"). */
export class ModelHost extends WorkerEntrypoint<Env> implements HostStub {
  run(method: HostMethod, args: unknown[]): Promise<HostAnswer<unknown>> {
    return hostCalls(this.env, this.ctx).run(method, args);
  }

  rows(id: string, words: string[]): Promise<HostAnswer<RowsAnswer>> {
    return hostCalls(this.env, this.ctx).rows(id, words);
  }

  memory(): Promise<ReturnType<typeof isolateMemory>> {
    return hostCalls(this.env, this.ctx).memory();
  }

  statuses(ids: string[]): Promise<LoadingStatus[]> {
    return hostCalls(this.env, this.ctx).statuses(ids);
  }
}
