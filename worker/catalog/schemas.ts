/**
 * Response and query schemas of the embedding-model and mapper catalogs.
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import type { ModelManifest } from '../../core/types';
import { listSort, pageNumber, PageSchema, pageSize, sortQuery, type ListSort, type SortValue } from '../http/openapi';

const catalogQuery = <F extends string>(spec: ListSort<F, unknown>) =>
  z.object({
    country: z.string().max(10).optional().openapi({ description: 'ISO 3166-1 alpha-2 filter.' }),
    language: z.string().max(10).optional().openapi({ description: 'ISO 639-1 filter.' }),
    page: pageNumber().openapi({ description: '1-based page number.' }),
    size: pageSize(LIMITS.catalogPageSize).openapi({
      description: `Entries per page, at most ${LIMITS.catalogPageSize}.`,
    }),
    ...sortQuery(spec),
  });

export const MapperBundleSchema = z
  .object({ key: z.string(), variables: z.array(z.string()), translationKey: z.string(), label: z.string() })
  .openapi('MapperBundle');

export const EmbeddingModelSchema = z
  .object({
    id: z.string(),
    language: z.string(),
    country: z.string(),
    version: z.string(),
    sources: z.array(z.string()),
    features: z.array(z.string()),
    tag: z.string(),
    trainingYear: z.string(),
    trainingMonth: z.string(),
    label: z.string(),
    languageLabel: z.string(),
    countryLabel: z.string(),
    monthLabel: z.string(),
    tokenCount: z.number().int(),
    hasTranslation: z.boolean(),
    loadingStatus: z.enum(['loaded', 'not loaded', 'loading', 'error']),
    vocabularySize: z.number().int().openapi({ description: 'Extension: words in the vocabulary.' }),
    dimensions: z.number().int().openapi({ description: 'Extension: vector dimensions.' }),
    license: z.string().openapi({ description: 'Extension: license of the vectors.' }),
    _embedded: z.object({ mappers: z.array(MapperBundleSchema) }),
  })
  .openapi('EmbeddingModel');

export const EmbeddingModelPageSchema = z
  .object({ page: PageSchema, data: z.array(EmbeddingModelSchema) })
  .openapi('EmbeddingModelPage');

export const MapperCatalogEntrySchema = z
  .object({
    key: z.string(),
    variables: z.array(z.string()),
    translationKey: z.string(),
    label: z.string(),
    country: z.string().nullable(),
    language: z.string().nullable(),
    countryLabel: z.string().nullable(),
    languageLabel: z.string().nullable(),
    multilingual: z.boolean(),
  })
  .openapi('MapperCatalogEntry');

export const MapperPageSchema = z
  .object({ page: PageSchema, data: z.array(MapperCatalogEntrySchema) })
  .openapi('MapperPage');

/** Sort fields of the model catalog (values of the manifest; models are unique by id). */
export const MODEL_SORT = listSort<
  'id' | 'language' | 'country' | 'label' | 'version' | 'tokenCount' | 'vocabularySize' | 'dimensions',
  (m: ModelManifest) => SortValue
>(
  {
    id: (m) => m.id,
    language: (m) => m.language,
    country: (m) => m.country,
    label: (m) => m.labels?.label ?? m.id,
    version: (m) => m.version,
    tokenCount: (m) => m.tokenCount,
    vocabularySize: (m) => m.vocabularySize,
    dimensions: (m) => m.dimensions,
  },
  'id',
  'id',
);

type MapperCatalogEntry = z.infer<typeof MapperCatalogEntrySchema>;

/**
 * Sort fields of the mapper catalog. Entries of one key for different locales keep the
 * catalog's order (by model id) after the key tie-break, as without `sort`.
 */
export const MAPPER_SORT = listSort<
  'key' | 'label' | 'translationKey' | 'language' | 'country',
  (e: MapperCatalogEntry) => SortValue
>(
  {
    key: (e) => e.key,
    label: (e) => e.label,
    translationKey: (e) => e.translationKey,
    language: (e) => e.language,
    country: (e) => e.country,
  },
  'key',
  'key',
);

export const ModelCatalogQuerySchema = catalogQuery(MODEL_SORT);
export const MapperCatalogQuerySchema = catalogQuery(MAPPER_SORT);
