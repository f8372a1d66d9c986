/**
 * The embedding-model and mapper catalogs (tag Catalog; global, not workspace-scoped).
 * The catalogs come from the manifest / mapper-info JSON sidecars in R2 (models/*.json,
 * mappers/{modelId}/*.json), cached in isolate memory and KV (worker/catalog/store.ts: staleness and
 * invalidation); loadingStatus is what the model's host answers (worker/hosts/router.ts modelStatuses),
 * or this isolate's registry for a model scored in-process, or `loading` for a model a local first
 * start is still building (./building.ts).
 */
import { createRoute } from '@hono/zod-openapi';
import type { ModelManifest } from '../../core/types';
import { catalogMappersOf, getCatalog, type CatalogMapper } from './store';
import { catalogModel } from './lookup';
import { buildingEntry, listedManifests, withBuildingStatuses } from './building';
import type { LoadingStatus } from '../sources/models';
import { waitUntilOf } from '../sources';
import { modelStatuses } from '../hosts/router';
import { errorResponses, ModelIdParams, pageObject, security, sortItems } from '../http/openapi';
import { newRouter } from '../http/router';
import {
  EmbeddingModelPageSchema,
  EmbeddingModelSchema,
  MAPPER_SORT,
  MapperCatalogQuerySchema,
  MapperPageSchema,
  MODEL_SORT,
  ModelCatalogQuerySchema,
} from './schemas';

/** 1-based pagination; a page beyond the last is empty; size is echoed as requested. */
function paginate<T>(items: T[], page: number, size: number): { page: ReturnType<typeof pageObject>; data: T[] } {
  const start = (page - 1) * size;
  return { page: pageObject(page, size, items.length), data: items.slice(start, start + size) };
}

const matches = (value: string | null | undefined, filter: string | undefined): boolean =>
  filter === undefined || filter === '' || (value ?? '').toLowerCase() === filter.toLowerCase();

/** One Intl.DisplayNames per type for the isolate (built at first use, not per label). */
const displayNames: Partial<Record<'language' | 'region', Intl.DisplayNames>> = {};

function displayName(type: 'language' | 'region', code: string): string {
  try {
    const names = (displayNames[type] ??= new Intl.DisplayNames(['en'], { type }));
    return names.of(type === 'region' ? code.toUpperCase() : code.toLowerCase()) ?? code;
  } catch {
    return code;
  }
}

function modelBody(m: ModelManifest, mappers: CatalogMapper[], status: LoadingStatus) {
  return {
    id: m.id,
    language: m.language,
    country: m.country,
    version: m.version,
    sources: m.sources ?? [],
    features: m.features ?? [],
    tag: m.tag ?? '',
    trainingYear: m.trainingYear,
    trainingMonth: m.trainingMonth,
    label: m.labels?.label ?? m.id,
    languageLabel: m.labels?.languageLabel ?? displayName('language', m.language),
    countryLabel: m.labels?.countryLabel ?? displayName('region', m.country),
    monthLabel: m.labels?.monthLabel ?? '',
    tokenCount: m.tokenCount,
    hasTranslation: m.hasTranslation,
    loadingStatus: status,
    vocabularySize: m.vocabularySize,
    dimensions: m.dimensions,
    license: m.license ?? '',
    _embedded: {
      mappers: mappers.map((b) => ({
        key: b.key,
        variables: b.variables,
        translationKey: b.translationKey,
        label: b.label,
      })),
    },
  };
}

const listModelsRoute = createRoute({
  method: 'get',
  path: '/embedding-models',
  tags: ['Catalog'],
  summary: 'The embedding-model catalog',
  security,
  request: { query: ModelCatalogQuerySchema },
  responses: {
    200: {
      description: 'A page of embedding models, sorted by id unless `sort` says otherwise',
      content: { 'application/json': { schema: EmbeddingModelPageSchema } },
    },
    ...errorResponses(401, 422),
  },
});

const getModelRoute = createRoute({
  method: 'get',
  path: '/embedding-models/{id}',
  tags: ['Catalog'],
  summary: 'One embedding model',
  security,
  request: { params: ModelIdParams },
  responses: {
    200: { description: 'The embedding model', content: { 'application/json': { schema: EmbeddingModelSchema } } },
    ...errorResponses(401, 404),
  },
});

const listMappersRoute = createRoute({
  method: 'get',
  path: '/mappers',
  tags: ['Catalog'],
  summary: 'The mapper catalog: one entry per mapper variable; multilingual mappers always included',
  security,
  request: { query: MapperCatalogQuerySchema },
  responses: {
    200: {
      description: 'A page of mapper variables, sorted by key unless `sort` says otherwise',
      content: { 'application/json': { schema: MapperPageSchema } },
    },
    ...errorResponses(401, 422),
  },
});

export const catalogRoutes = newRouter();

catalogRoutes.openapi(listModelsRoute, async (c) => {
  const q = c.req.valid('query');
  const catalog = await getCatalog(c.env, waitUntilOf(c));
  const manifests = listedManifests(catalog).filter(
    (m) => matches(m.country, q.country) && matches(m.language, q.language),
  );
  const pageOf = paginate(sortItems(manifests, MODEL_SORT, q.sort, q.order), q.page, q.size);
  const statuses = await withBuildingStatuses(
    catalog,
    pageOf.data.map((m) => m.id),
    (ids) => modelStatuses(c.env, ids),
  );
  const data = pageOf.data.map((m) => modelBody(m, catalogMappersOf(catalog, m.id), statuses.get(m.id)!));
  return c.json({ page: pageOf.page, data }, 200);
});

catalogRoutes.openapi(getModelRoute, async (c) => {
  const { id } = c.req.valid('param');
  // No stale 404: a model uploaded since the catalog was cached reloads the catalog (catalog/lookup.ts).
  // A model a local first start is still building is listed as loading (./building.ts).
  const building = await buildingEntry(c.env, waitUntilOf(c), id);
  if (building) return c.json(modelBody(building.manifest, catalogMappersOf(building.catalog, id), 'loading'), 200);
  const { catalog, manifest } = await catalogModel(c.env, waitUntilOf(c), id);
  const statuses = await modelStatuses(c.env, [id]);
  return c.json(modelBody(manifest, catalogMappersOf(catalog, id), statuses.get(id)!), 200);
});

catalogRoutes.openapi(listMappersRoute, async (c) => {
  const q = c.req.valid('query');
  const { mappers: bundles, manifests } = await getCatalog(c.env, waitUntilOf(c));
  // Labels from the model manifests of the same locale, else Intl, else the code.
  const languageLabels = new Map(manifests.map((m) => [m.language, m.labels?.languageLabel]));
  const countryLabels = new Map(manifests.map((m) => [m.country, m.labels?.countryLabel]));
  // One entry per bundle key and locale: bundles of the same key for models of different
  // locales are different scales (a filter by either locale must find its own).
  const byKey = new Map<string, CatalogMapper>();
  for (const b of bundles) {
    const locale = b.multilingual ? '*' : `${b.language ?? ''}|${b.country ?? ''}`;
    if (!byKey.has(`${b.key}|${locale}`)) byKey.set(`${b.key}|${locale}`, b);
  }
  // The catalog normalized language/country (null when absent) and multilingual (a boolean).
  const entries = [...byKey.values()].flatMap((info) => {
    const multilingual = info.multilingual;
    const language = multilingual ? null : info.language;
    const country = multilingual ? null : info.country;
    return info.variables.map((variable) => ({
      key: `${info.key}_${variable}`,
      variables: info.variables,
      translationKey: `${info.translationKey}.${variable}`,
      label: `${info.label}: ${variable}`,
      country,
      language,
      countryLabel: country ? (countryLabels.get(country) ?? displayName('region', country)) : null,
      languageLabel: language ? (languageLabels.get(language) ?? displayName('language', language)) : null,
      multilingual,
    }));
  });
  const filtered = entries.filter(
    (e) => e.multilingual || (matches(e.country, q.country) && matches(e.language, q.language)),
  );
  return c.json(paginate(sortItems(filtered, MAPPER_SORT, q.sort, q.order), q.page, q.size), 200);
});
