/**
 * Row-sharded models in a model host (docs/architecture.md "Row sharding"; the engine side is
 * core/sharded-index.ts). The host of a sharded model's word map coordinates it: each call gets a
 * view of the model whose rows and scans come from the hosts of its parts (RPC, or this host's own
 * registry for parts placed here). A part is an ordinary model to the registry: loaded, budgeted,
 * evicted and reported like one.
 */
import { LoadedModel as EngineModel } from '../../core/engine';
import type { ShardLayout } from '../../core/placement';
import { FetchedRows, rowsPayload } from '../../core/rows';
import {
  RowCache,
  ROW_CACHE_ROWS,
  rowCacheBytes,
  ShardedCall,
  ShardedView,
  type PartAccess,
  type ShardedModel,
} from '../../core/sharded-index';
import { ApiError } from '../../core/problem';
import type { WaitUntil } from '../../core/shared-load';
import type { TopKOptions } from '../../core/types';
import type { Env } from '../env';
import { getManifest, getModel } from '../sources/models';
import type { LoadedModel } from '../sources/model-entries';
import { callHost } from './router';
import { hostStub } from './placement';

/** Each loaded word map's sharded model (made once per map load; an evicted map takes its row cache with it). */
const models = new WeakMap<LoadedModel, Promise<ShardedModel>>();

function shardedModel(env: Env, id: string, map: LoadedModel): Promise<ShardedModel> {
  let p = models.get(map);
  if (!p) {
    p = (async () => {
      const manifest = await getManifest(env, id);
      if (!manifest) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `Embedding model '${id}' not found`);
      if (map.manifest.shardOf !== manifest.checksum)
        throw new ApiError(
          'EMBEDDING_MODEL_UNAVAILABLE',
          `The word map of '${id}' was cut from build ${map.manifest.shardOf ?? '(none)'}, not from its current build ${manifest.checksum}: run the placement and upload its parts again`,
        );
      const bytes = rowCacheBytes(manifest.dimensions);
      if (!map.index.mayGrow(bytes))
        throw new ApiError(
          'EMBEDDING_MODEL_UNAVAILABLE',
          `No room for the row cache of sharded model '${id}' in this isolate now; retry the request`,
          { headers: { 'retry-after': '1' } },
        );
      const kernels = map.index.kernels;
      return {
        manifest,
        map: map.index,
        parts: [],
        cache: new RowCache(kernels, kernels.allocMatrix(ROW_CACHE_ROWS, manifest.dimensions)),
      };
    })();
    p.catch(() => models.delete(map));
    models.set(map, p);
  }
  return p;
}

/** A part of a sharded model, loaded here, refused when it was cut from another build than `source`. */
export async function loadPart(env: Env, ctx: WaitUntil, id: string, source: string): Promise<LoadedModel> {
  const part = await getModel(env, id, ctx);
  if (part.manifest.shardOf !== source)
    throw new ApiError(
      'EMBEDDING_MODEL_UNAVAILABLE',
      `'${id}' was cut from build ${part.manifest.shardOf ?? '(none)'} of its model, not from its current build ${source}: run the placement and upload its parts again`,
    );
  return part;
}

/** The parts of a sharded model (of build `source`) as its coordinator reaches them. */
function partAccess(env: Env, ctx: WaitUntil, layout: ShardLayout, source: string): PartAccess {
  const local = (p: number) => loadPart(env, ctx, layout.parts[p]!.id, source);
  return {
    async rows(p, rows) {
      const part = layout.parts[p]!;
      const stub = hostStub(env, part.binding);
      if (stub) return callHost(env, part.binding, () => stub.partRows(part.id, source, rows));
      return (await local(p)).index.rawRows(rows);
    },
    async topK(p, query, k, options) {
      const part = layout.parts[p]!;
      const stub = hostStub(env, part.binding);
      if (stub) return callHost(env, part.binding, () => stub.partTopK(part.id, source, query, k, options));
      return partTopK(await local(p), query, k, options);
    },
    async scores(p, query, rows) {
      const part = layout.parts[p]!;
      const stub = hostStub(env, part.binding);
      if (stub) return callHost(env, part.binding, () => stub.partScores(part.id, source, query, rows));
      return (await local(p)).index.scores(query, rows);
    },
  };
}

/** A part's top-k of a query, with the time its scan took. */
export function partTopK(part: LoadedModel, query: Float32Array, k: number, options: TopKOptions) {
  const started = performance.now();
  const result = part.index.topK(query, k, options);
  return { ...result, ms: performance.now() - started };
}

/**
 * Sharded model `id` as this call's engine loads it: a LoadedModel over the call's view, sharing
 * the map's caches (normalization statistics, mapper bundles), which the map's registry entry
 * counts against the budget.
 */
export async function shardedLoaded(
  env: Env,
  ctx: WaitUntil,
  call: ShardedCall,
  id: string,
  layout: ShardLayout,
): Promise<EngineModel> {
  const map = await getModel(env, layout.map.id, ctx);
  const base = await shardedModel(env, id, map);
  const model: ShardedModel = { ...base, parts: layout.parts };
  const view = call.view(
    id,
    (timing) => new ShardedView(model, partAccess(env, ctx, layout, base.manifest.checksum), timing),
  );
  return new EngineModel(id, view, { shareWith: map, mayGrow: (b) => map.index.mayGrow(b) });
}

/** The rows of `words` in sharded model `id` (another host's seed lookups and translations), in a call of their own. */
export async function shardedRows(env: Env, ctx: WaitUntil, id: string, layout: ShardLayout, words: readonly string[]) {
  const call = new ShardedCall();
  const loaded = await shardedLoaded(env, ctx, call, id, layout);
  const payload = await call.run(async () => rowsPayload(loaded.index, words));
  return { manifest: loaded.manifest, rows: new FetchedRows(payload), payload };
}
