/**
 * The Worker's engine source (core/engine.ts): models, mapper bundles and sub-word tables from R2 (the isolate's
 * model registry, ./models.ts), language data from R2 (./language-data.ts), stored dimension
 * seeds from D1 (worker/dimensions/store.ts), mapper owners from the cached catalog (worker/catalog/store.ts).
 * One source per request: shared loads run under the request's waitUntil (core/shared-load.ts).
 */
import type { Context } from 'hono';
import { createEngine, type EngineSource } from '../../core/engine';
import type { WaitUntil } from '../../core/shared-load';
import type { Pace } from '../../core/scoring/steps';
import { KERNELS_BASE_BYTES } from '../../core/footprint';
import { R2_KEYS } from '../../core/storage-keys';
import { getCatalog } from '../catalog/store';
import { derivedLoading, languageLoading } from '../catalog/building';
import { storedSeeds } from '../dimensions/store';
import type { AppEnv, Env } from '../env';
import { phases } from '../http/timing';
import { getLanguageData } from './language-data';
import { getModel, newKernels } from './models';
import { admit, admitLanguage, awaitLanguage, busy, deadlineOf, NoRoom, usedBytes } from './memory-budget';

export function workerSource(env: Env, ctx: WaitUntil | undefined): EngineSource {
  return {
    waitUntil: ctx,
    model: (id) => getModel(env, id, ctx),
    languageData: (language) =>
      awaitLanguage(
        env,
        ctx,
        language,
        getLanguageData(env, language, ctx, (l, load) => admitLanguage(env, ctx, l, load)),
      ).catch(async (err: unknown) => {
        // Still being built by a local first start: 503 MODEL_LOADING (catalog/building.ts).
        throw (await languageLoading(env, ctx, language)) ?? err;
      }),
    async mapperBundleBytes(model, bundleKey) {
      const obj = await env.ARTIFACTS.get(R2_KEYS.mapper(model.id, bundleKey));
      if (obj) return obj.arrayBuffer();
      const loading = await derivedLoading(env, ctx, model.id, `The mapper bundles of embedding model '${model.id}'`);
      if (loading) throw loading;
      return null;
    },
    // The sub-word table (subwordFallback) from R2, in a kernels memory of its own that goes with
    // its model; its bytes count in the model's cacheBytes (core/engine.ts). Room is made for it
    // first as for a model load: idle models are evicted, ones in use drained.
    async subwordTableBytes(model) {
      const key = R2_KEYS.subwordTable(model.id);
      const head = await env.ARTIFACTS.head(key);
      const what = `The sub-word table of model '${model.id}'`;
      if (!head) {
        // Still being built: composing no word now would answer otherwise than later.
        const loading = await derivedLoading(env, ctx, model.id, what);
        if (loading) throw loading;
        return null;
      }
      try {
        await admit(() => usedBytes() + head.size + KERNELS_BASE_BYTES, deadlineOf(env), ctx, what);
      } catch (err) {
        throw err instanceof NoRoom ? busy(what, err) : err;
      }
      const obj = await env.ARTIFACTS.get(key);
      return obj ? obj.arrayBuffer() : null;
    },
    subwordKernels: newKernels,
    storedSeeds: (ids) => storedSeeds(env, ids),
    async mapperOwners(bundleKey, variable) {
      const catalog = await getCatalog(env, ctx);
      return catalog.mappers.filter((b) => b.key === bundleKey && b.variables.includes(variable)).map((b) => b.modelId);
    },
  };
}

/**
 * The engine of a request: bodies validated by the route's zod-openapi hook, phases timed
 * (Server-Timing), computed at the pace of the isolate's gate when one is given (worker/hosts/gate.ts).
 */
export function engineOf(c: Context<AppEnv>, pace?: Pace) {
  return createEngine(workerSource(c.env, waitUntilOf(c)), { validated: true, mark: phases(c), pace });
}

/** The request's ExecutionContext, or undefined when it has none (Hono throws on access then). */
export function waitUntilOf(c: Context): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}
