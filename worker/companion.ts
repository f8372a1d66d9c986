/**
 * The English companion of an aligned model (core/projection.ts): seeds of a dimension that
 * the model's language lacks are looked up there, since both share one vector space.
 */
import { ALIGNED_FEATURE, ENGLISH_COMPANION_ID } from '../core/projection';
import type { DimensionRequest } from '../core/scoring';
import type { Env } from './env';
import { getModel, type LoadedModel } from './models';
import type { WaitUntil } from './shared-load';

/**
 * The companion when the model is aligned to English and the request has dimensions; null
 * otherwise. A companion that cannot be loaded is logged and left out (seeds then come from the
 * model alone), so an aligned model keeps scoring without it.
 */
export async function companionFor(env: Env, model: LoadedModel, dimensions: readonly DimensionRequest[] | undefined, ctx?: WaitUntil): Promise<LoadedModel | null> {
  if (!dimensions?.length || model.id === ENGLISH_COMPANION_ID || !model.manifest.features?.includes(ALIGNED_FEATURE)) return null;
  try {
    return await getModel(env, ENGLISH_COMPANION_ID, ctx);
  } catch (err) {
    console.error(`[companion] ${ENGLISH_COMPANION_ID} for ${model.id}: ${(err as Error).message}`);
    return null;
  }
}
