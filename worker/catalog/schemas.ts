/**
 * Response and query schemas of the embedding-model and mapper catalogs.
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { pageNumber, PageSchema, pageSize } from '../http/openapi';

export const CatalogQuerySchema = z.object({
  country: z.string().max(10).optional().openapi({ description: 'ISO 3166-1 alpha-2 filter.' }),
  language: z.string().max(10).optional().openapi({ description: 'ISO 639-1 filter.' }),
  page: pageNumber().openapi({ description: '1-based page number.' }),
  size: pageSize(LIMITS.catalogPageSize).openapi({
    description: `Entries per page, at most ${LIMITS.catalogPageSize}.`,
  }),
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
