/**
 * zod schemas of the scoring, vocabulary and catalog endpoints. The same schemas validate
 * requests (422 VALIDATION_FAILED) and generate the OpenAPI 3.1 document (/api/openapi.json).
 * The request schemas the offline scorer validates with too are core/requests.ts, documented
 * here with `.openapi()`. Limits come from core/limits.ts (decisions.md "Limits").
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { ID_MAX_CHARS, identifier, requestSchemas, WORD_MAX_CHARS, type Documenter } from '../../core/requests';
import { WorkspaceIdParam } from '../ids';
import { ILL_FORMED_MESSAGE, isWellFormed } from '../well-formed';

const openapi: Documenter = (schema, doc) => (typeof doc === 'string' ? schema.openapi(doc) : schema.openapi(doc as Parameters<typeof schema.openapi>[0]));

export const {
  TextScoresRequestSchema,
  WordScoresRequestSchema,
  AutocompleteRequestSchema,
  WordAvailabilitiesRequestSchema,
  SimilarityMatrixRequestSchema,
  TokenizationRequestSchema,
} = requestSchemas(openapi);

export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    translationKey: z.string(),
    instance: z.string().optional(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi('Problem');

/** OpenAPI security requirement of the bearer-token routes (app.ts registers bearerAuth). */
export const security = [{ bearerAuth: [] }];

/** A required JSON request body. */
export const jsonBody = <T>(schema: T) => ({ required: true, content: { 'application/json': { schema } } });

/** An OpenAPI response entry for a problem+json answer (errorResponses). */
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } });

const scoreMap = z.record(z.string(), z.number());
export const GoalScoreFactorSchema = z
  .object({
    field: z.string(),
    value: z.number(),
    type: z.enum(['dimension', 'mapper', 'intrinsic']),
    id: z.string().openapi({ description: 'Extension: dimension id as string, mapper id, or modelRank.' }),
  })
  .openapi('GoalScoreFactor');

export const ExplainedTokenSchema = z
  .object({
    string: z.string(),
    token: z.string(),
    indexStart: z.number().int(),
    indexEnd: z.number().int(),
    value: z.number().openapi({ description: "The token's composed value on the factor's scale." }),
    weight: z.number().openapi({ description: 'Its weight in the weighted mean (contrast: 0.5 before, 1.5 after).' }),
    rules: z.array(z.string()).openapi({ description: 'negated, intensified, downtoned, contrast, caps, exclamation, emoticon, emoji; mappers: lexicon or shrunk.' }),
  })
  .openapi('ExplainedToken');

export const ExplanationSchema = z
  .object({
    dimensions: z.record(z.string(), z.object({ tokens: z.array(ExplainedTokenSchema), expandedWords: z.array(z.string()).optional() })),
    mappers: z.record(z.string(), z.object({ tokens: z.array(ExplainedTokenSchema) })),
  })
  .openapi('Explanation', { description: 'Extension (explain: true): per dimension id and mapper id at most 10 tokens by |weight x (value - neutral)|; expandedWords: the words `expand` added to the seeds, best first.' });

export const ScoredTextSchema = z
  .object({
    modelRankScore: z.number().nullable(),
    goalScoreFactors: z.array(GoalScoreFactorSchema),
    dimensionScores: scoreMap,
    mapperScores: scoreMap,
    goalScore: z.number().optional(),
    explanation: ExplanationSchema.optional(),
  })
  .openapi('ScoredText');

export const TextScoresResponseSchema = z.object({ data: z.array(ScoredTextSchema) }).openapi('TextScoresResponse');

export const ScoredWordSchema = z
  .object({
    word: z.string(),
    seedScore: z.number().nullable(),
    modelRank: z.number().int(),
    seedScoreQuartile: z.number().int(),
    modelRankQuartile: z.number().int(),
    dimensionScores: scoreMap,
    mapperScores: scoreMap,
    goalScore: z.number().nullable(),
  })
  .openapi('ScoredWord');

export const WordScoresResponseSchema = z
  .object({
    data: z.array(ScoredWordSchema),
    averages: z.object({
      modelRankScore: z.number().nullable(),
      seedScore: z.number().nullable(),
      dimensionScores: scoreMap,
      mapperScores: scoreMap,
      goalScore: z.number().nullable(),
    }),
  })
  .openapi('WordScoresResponse');

export const AutocompleteResponseSchema = z.object({ suggestions: z.array(z.string()).max(LIMITS.autocompleteSuggestions) }).openapi('AutocompleteResponse');

export const WordAvailabilitiesResponseSchema = z
  .object({ availabilities: z.array(z.object({ word: z.string(), isAvailable: z.boolean() })) })
  .openapi('WordAvailabilitiesResponse');

export const SimilarityMatrixResponseSchema = z
  .object({ words: z.array(z.string()), matrix: z.array(z.array(z.number())) })
  .openapi('SimilarityMatrixResponse');

export const PageSchema = z
  .object({ size: z.number().int(), totalElements: z.number().int(), totalPages: z.number().int(), currentPage: z.number().int() })
  .openapi('Page');

/** The page object of a list answer (1-based; size is echoed as requested). */
export function pageObject(page: number, size: number, totalElements: number): z.infer<typeof PageSchema> {
  return { size, totalElements, totalPages: Math.ceil(totalElements / size), currentPage: page };
}

export const CatalogQuerySchema = z.object({
  country: z.string().max(10).optional().openapi({ description: 'ISO 3166-1 alpha-2 filter.' }),
  language: z.string().max(10).optional().openapi({ description: 'ISO 639-1 filter.' }),
  page: z.coerce.number().int().min(1).default(1).openapi({ description: '1-based page number.' }),
  size: z.coerce.number().int().min(1).max(LIMITS.catalogPageSize).default(20).openapi({ description: 'Entries per page, at most 100.' }),
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

export const EmbeddingModelPageSchema = z.object({ page: PageSchema, data: z.array(EmbeddingModelSchema) }).openapi('EmbeddingModelPage');

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

export const MapperPageSchema = z.object({ page: PageSchema, data: z.array(MapperCatalogEntrySchema) }).openapi('MapperPage');

export const StoredDimensionSchema = z
  .object({
    id: z.number().int(),
    name: z.string(),
    language: z.string(),
    description: z.string(),
    words: z.array(z.string()),
    createdAt: z.string(),
  })
  .openapi('StoredDimension');

/** Ids below this are reserved for the dimensions seeded by migrations. */
export const FIRST_CREATED_DIMENSION_ID = 100;
export const MAX_DIMENSION_ID = 2_147_483_647;

export const CreateDimensionSchema = z
  .object({
    id: z
      .number()
      .int()
      .min(FIRST_CREATED_DIMENSION_ID)
      .max(MAX_DIMENSION_ID)
      .optional()
      .openapi({ description: `Omit to take the lowest free id >= ${FIRST_CREATED_DIMENSION_ID}; ids below it are reserved for the seeded set.` }),
    // Stored in D1: well-formed Unicode only (worker/well-formed.ts).
    name: z.string().min(1).max(ID_MAX_CHARS).refine(isWellFormed, ILL_FORMED_MESSAGE),
    language: z.string().regex(/^[a-z]{2}$/).default('en'),
    description: z.string().max(2000).refine(isWellFormed, ILL_FORMED_MESSAGE).optional(),
    words: z.array(z.string().trim().min(1).max(WORD_MAX_CHARS).refine(isWellFormed, ILL_FORMED_MESSAGE)).min(1).max(LIMITS.seedOrWhitelistWords),
  })
  .openapi('CreateDimension');

export const ListQuerySchema = z.object({
  page: z.coerce.number().int().min(1).default(1),
  size: z.coerce.number().int().min(1).max(LIMITS.listPageSize).default(20),
});

// Path identifiers are validated (pattern, length) before any storage call (decisions.md "Identifiers, bodies and cost").
export const WorkspaceParams = z.object({ workspaceId: WorkspaceIdParam });
export const ModelParams = z.object({ embeddingModelId: identifier().openapi({ param: { name: 'embeddingModelId', in: 'path' }, example: 'en-glove-6b-100d' }) });
export const ModelIdParams = z.object({ id: identifier().openapi({ param: { name: 'id', in: 'path' }, example: 'en-glove-6b-100d' }) });

type ProblemResponse = { description: string; content: { 'application/problem+json': { schema: typeof ProblemSchema } } };

/**
 * The error responses of a route for the OpenAPI document: a status gets its standard
 * description, an object gives statuses their own ({ 403: 'Wrong workspace, or ...' }).
 */
export function errorResponses(...entries: Array<number | Record<number, string>>): Record<number, ProblemResponse> {
  const descriptions: Record<number, string> = {
    401: 'No or invalid bearer token (UNAUTHORIZED)',
    403: 'Workspace forbidden, or quota exhausted',
    404: 'Unknown embedding model (EMBEDDING_MODEL_NOT_FOUND)',
    413: 'Body over 2 MB (PAYLOAD_TOO_LARGE)',
    422: 'Validation failed, unknown mapper or dimension',
    429: 'Daily limit reached (DAILY_LIMIT_REACHED)',
    503: 'Model, mapper or language data could not be loaded',
  };
  const out: Record<number, ProblemResponse> = {};
  for (const e of entries) {
    if (typeof e === 'number') out[e] = problem(descriptions[e] ?? 'Error');
    else for (const [status, description] of Object.entries(e)) out[Number(status)] = problem(description);
  }
  return out;
}
