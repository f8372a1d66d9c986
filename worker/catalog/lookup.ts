/**
 * One model of the catalog by id, without a stale 404: an id missing from the cached catalog is
 * looked up in R2 (one get), and when its manifest is there the catalog is reloaded. Unknown ids
 * leave nothing behind. A model a local first start is still building is 503 MODEL_LOADING
 * (./building.ts). The catalog routes and admission's request checks use it.
 */
import { ApiError, excerpt } from '../../core/problem';
import type { ModelManifest } from '../../core/types';
import type { WaitUntil } from '../../core/shared-load';
import type { Env } from '../env';
import { clip } from '../log';
import { getManifest } from '../sources/models';
import { catalogManifest, getCatalog, refreshCatalog, type Catalog } from './store';
import { buildingModel, modelLoadingOf } from './building';

export function modelNotFound(id: string): ApiError {
  return new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${excerpt(id)}'`);
}

/** The catalog and the manifest of model `id`; 404 EMBEDDING_MODEL_NOT_FOUND when there is none. */
export async function catalogModel(
  env: Env,
  ctx: WaitUntil | undefined,
  id: string,
): Promise<{ catalog: Catalog; manifest: ModelManifest }> {
  let catalog = await getCatalog(env, ctx);
  // Being built by a local first start: 503 until it is there (and listed as loading meanwhile).
  if (buildingModel(catalog, id)) throw modelLoadingOf(id);
  let manifest = catalogManifest(catalog, id);
  if (!manifest) {
    let stored: ModelManifest | null;
    try {
      stored = await getManifest(env, id);
    } catch (err) {
      console.error(
        `[catalog] the manifest of '${excerpt(id)}' could not be read: ${clip(err instanceof Error ? err.message : err, 300)}`,
      );
      throw new ApiError(
        'EMBEDDING_MODEL_UNAVAILABLE',
        `Embedding model '${excerpt(id)}' could not be looked up; nothing was charged, retry the request`,
        { headers: { 'retry-after': '1' } },
      );
    }
    if (stored?.id !== id) throw modelNotFound(id);
    catalog = await refreshCatalog(env, ctx);
    manifest = catalogManifest(catalog, id);
    if (!manifest) throw modelNotFound(id);
  }
  return { catalog, manifest };
}
