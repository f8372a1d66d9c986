/**
 * zod schemas of the scoring, vocabulary and catalog endpoints. The same schemas validate
 * requests (422 VALIDATION_FAILED) and generate the OpenAPI 3.1 document (/api/openapi.json).
 * The request and response schemas of the engine's endpoints are core/requests.ts and
 * core/responses.ts (the offline scorer validates with the same), documented here with
 * `.openapi()`. Limits come from core/limits.ts (decisions.md "Limits").
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { identifier, requestSchemas, type Documenter } from '../../core/requests';
import { responseSchemas } from '../../core/responses';
import { WorkspaceIdParam } from '../ids';

const openapi: Documenter = (schema, doc) => {
  if (typeof doc === 'string') return schema.openapi(doc);
  const { ref, ...metadata } = doc;
  const meta = metadata as NonNullable<Parameters<typeof schema.openapi>[1]>;
  return ref ? schema.openapi(ref, meta) : schema.openapi(meta);
};

/** The request and response schemas of core/requests.ts and core/responses.ts, documented for the OpenAPI document. */
export const requests = requestSchemas(openapi);
export const responses = responseSchemas(openapi);

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
    estimatedUnits: z
      .number()
      .int()
      .optional()
      .openapi({ description: "REQUEST_TOO_EXPENSIVE: the request's estimated cost in work units" }),
    capUnits: z
      .number()
      .int()
      .optional()
      .openapi({ description: 'REQUEST_TOO_EXPENSIVE: the per-request cap in work units' }),
  })
  .openapi('Problem');

/** OpenAPI security requirement of the bearer-token routes (app.ts registers bearerAuth). */
export const security = [{ bearerAuth: [] }];

/** A required JSON request body. */
export const jsonBody = <T>(schema: T) => ({ required: true, content: { 'application/json': { schema } } });

/** An OpenAPI response entry for a problem+json answer (errorResponses). */
const problem = (description: string) => ({
  description,
  content: { 'application/problem+json': { schema: ProblemSchema } },
});

export const PageSchema = z
  .object({
    size: z.number().int(),
    totalElements: z.number().int(),
    totalPages: z.number().int(),
    currentPage: z.number().int(),
  })
  .openapi('Page');

/** The page object of a list answer (1-based; size is echoed as requested). */
export function pageObject(page: number, size: number, totalElements: number): z.infer<typeof PageSchema> {
  return { size, totalElements, totalPages: Math.ceil(totalElements / size), currentPage: page };
}

/** Digits only: what a page, size or path id may be written as (at most 15 digits: an exact JavaScript integer). */
const DECIMAL_INTEGER = /^[0-9]{1,15}$/;

/**
 * An integer query or path parameter written as plain decimal digits (issue 31 #13): a sign,
 * white space, exponent, fraction, hex, octal or binary prefix or digit separator (`+1`, ` 1`,
 * `1e2`, `1.0`, `0x10`, `1_0`) and the empty value are 422 VALIDATION_FAILED, where `Number()`
 * (z.coerce) would read a number into them. In the OpenAPI document an integer from `min` to `max`.
 */
export function decimalInteger(min: number, max?: number) {
  const value = z.number().int().min(min);
  return z
    .string()
    .regex(DECIMAL_INTEGER, 'Expected an integer written with the digits 0-9 only')
    .transform(Number)
    .pipe(max === undefined ? value : value.max(max))
    .openapi({ type: 'integer', minimum: min, ...(max === undefined ? {} : { maximum: max }) });
}

/** A page number query parameter (1-based, default 1). */
export const pageNumber = () => decimalInteger(1).default(1).openapi({ default: 1 });
/** A page size query parameter (1 to `max`, default 20). */
export const pageSize = (max: number) => decimalInteger(1, max).default(20).openapi({ default: 20 });

export const ListQuerySchema = z.object({
  page: pageNumber(),
  size: pageSize(LIMITS.listPageSize),
});

// Path identifiers are validated (pattern, length) before any storage call (decisions.md "Identifiers, bodies and cost").
export const WorkspaceParams = z.object({ workspaceId: WorkspaceIdParam });
export const ModelParams = z.object({
  embeddingModelId: identifier().openapi({
    param: { name: 'embeddingModelId', in: 'path' },
    example: 'en-glove-6b-100d',
  }),
});
export const ModelIdParams = z.object({
  id: identifier().openapi({ param: { name: 'id', in: 'path' }, example: 'en-glove-6b-100d' }),
});

type ProblemResponse = {
  description: string;
  content: { 'application/problem+json': { schema: typeof ProblemSchema } };
};

/**
 * The error responses of a route for the OpenAPI document: a status gets its standard
 * description, an object gives statuses their own ({ 403: 'Wrong workspace, or ...' }).
 */
export function errorResponses(...entries: Array<number | Record<number, string>>): Record<number, ProblemResponse> {
  const descriptions: Record<number, string> = {
    401: 'No or invalid bearer token (UNAUTHORIZED)',
    403: 'Workspace forbidden, or quota exhausted',
    404: 'Unknown embedding model (EMBEDDING_MODEL_NOT_FOUND)',
    413: 'Body over 2 MB (PAYLOAD_TOO_LARGE), or estimated cost above the cap (REQUEST_TOO_EXPENSIVE, with estimatedUnits and capUnits)',
    422: 'Validation failed, unknown mapper or dimension',
    429: 'Daily limit reached (DAILY_LIMIT_REACHED), or the workspace is over its rate (RATE_LIMITED); Retry-After',
    503: 'Model, mapper or language data could not be loaded, or the model host is busy (HOST_BUSY); Retry-After',
  };
  const out: Record<number, ProblemResponse> = {};
  for (const e of entries) {
    if (typeof e === 'number') out[e] = problem(descriptions[e] ?? 'Error');
    else for (const [status, description] of Object.entries(e)) out[Number(status)] = problem(description);
  }
  return out;
}
