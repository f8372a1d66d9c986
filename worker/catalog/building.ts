/**
 * What a local first start is still building (core/building.ts), as the catalog holds it: the
 * models being built are listed with loadingStatus `loading`, and a request for one of them, or
 * for language data, a mapper bundle, a sub-word table or a head that is still being built, is
 * 503 MODEL_LOADING with Retry-After rather than a 404 or 422 that would stop being true minutes
 * later. Nothing is being built in production: every check here is then a no-op.
 */
import { MODEL_LOADING_RETRY_S, type BuildingModel } from '../../core/building';
import { ApiError, excerpt } from '../../core/problem';
import type { WaitUntil } from '../../core/shared-load';
import type { ModelManifest } from '../../core/types';
import type { Env } from '../env';
import type { LoadingStatus } from '../sources/models';
import { getCatalog, type Catalog } from './store';

/** The 503 of something still being built; `what` starts the detail ("Embedding model 'x'"). */
export function modelLoading(what: string): ApiError {
  return new ApiError(
    'MODEL_LOADING',
    `${what}: still being built by a local first start; nothing was charged, retry in ${MODEL_LOADING_RETRY_S} s`,
    { headers: { 'retry-after': String(MODEL_LOADING_RETRY_S) } },
  );
}

export const modelLoadingOf = (id: string): ApiError => modelLoading(`Embedding model '${excerpt(id)}'`);

/** The model `id` when it is being built. */
export function buildingModel(catalog: Catalog, id: string): BuildingModel | undefined {
  return catalog.building?.models.find((m) => m.id === id);
}

/** A model being built as a catalog entry: its known fields, the rest empty (vocabularySize 0) until built. */
function asManifest(m: BuildingModel, built: ModelManifest | undefined): ModelManifest {
  if (built) return built;
  return {
    version: '',
    sources: [],
    features: [],
    tag: '',
    trainingYear: '',
    trainingMonth: '',
    tokenCount: 0,
    hasTranslation: false,
    license: '',
    dimensions: 0,
    ...m,
    labels: m.labels ?? { label: m.id, languageLabel: '', countryLabel: '', monthLabel: '' },
    vocabularySize: 0,
    quantization: 'int8-rowscale',
    formatVersion: 0,
    checksum: '',
  };
}

/** The catalog's models and the ones being built (a model being rebuilt keeps its manifest), sorted by id. */
export function listedManifests(catalog: Catalog): ModelManifest[] {
  const building = catalog.building?.models ?? [];
  if (building.length === 0) return catalog.manifests;
  const byId = new Map(catalog.manifests.map((m) => [m.id, m]));
  for (const m of building) byId.set(m.id, asManifest(m, byId.get(m.id)));
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** The loading status of each model: `loading` while it is being built, else what `statusesOf` answers. */
export async function withBuildingStatuses(
  catalog: Catalog,
  ids: readonly string[],
  statusesOf: (ids: readonly string[]) => Promise<Map<string, LoadingStatus>>,
): Promise<Map<string, LoadingStatus>> {
  const building = ids.filter((id) => buildingModel(catalog, id));
  const out = await statusesOf(ids.filter((id) => !building.includes(id)));
  for (const id of building) out.set(id, 'loading');
  return out;
}

/** A model being built as its catalog entry (GET /embedding-models/{id}); undefined when it is not. */
export async function buildingEntry(
  env: Env,
  ctx: WaitUntil | undefined,
  id: string,
): Promise<{ catalog: Catalog; manifest: ModelManifest } | undefined> {
  const catalog = await getCatalog(env, ctx);
  const m = buildingModel(catalog, id);
  return m
    ? {
        catalog,
        manifest: asManifest(
          m,
          catalog.manifests.find((x) => x.id === id),
        ),
      }
    : undefined;
}

/** Whether model `modelId`'s mapper bundles, sub-word table or head may still be being built. */
export function derivedPending(catalog: Catalog, modelId: string): boolean {
  return !!catalog.building?.derived.includes(modelId) || !!buildingModel(catalog, modelId);
}

/**
 * 503 MODEL_LOADING when model `modelId`'s mapper bundles, sub-word table or head may still be
 * being built (asked only once one was not found); null otherwise.
 */
export async function derivedLoading(
  env: Env,
  ctx: WaitUntil | undefined,
  modelId: string,
  what: string,
): Promise<ApiError | null> {
  return derivedPending(await getCatalog(env, ctx), modelId) ? modelLoading(what) : null;
}

/** 503 MODEL_LOADING when the tokenizer data of `language` is still being built (asked once it was not found); null otherwise. */
export async function languageLoading(
  env: Env,
  ctx: WaitUntil | undefined,
  language: string,
): Promise<ApiError | null> {
  const building = (await getCatalog(env, ctx)).building;
  return building?.languages.includes(language) ? modelLoading(`Tokenizer data for language '${language}'`) : null;
}
