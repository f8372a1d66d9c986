/**
 * zod schemas of the scoring, vocabulary and catalog endpoints. The same schemas validate
 * requests (422 VALIDATION_FAILED) and generate the OpenAPI 3.1 document (/api/openapi.json).
 * The request and response schemas of the engine's endpoints are core/requests.ts and
 * core/responses.ts (the offline scorer validates with the same), documented here with
 * `.openapi()`. Limits come from core/limits.ts (decisions.md "Limits").
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { excerpt } from '../../core/problem';
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
 * An integer query or path parameter written as plain decimal digits (so `1e2` or `0x10` never
 * page silently): a sign,
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

export type SortOrder = 'asc' | 'desc';
/** What a list sorts by: a value of the entity (null first in ascending order). */
export type SortValue = string | number | boolean | null | undefined;

/**
 * The sort fields of one list (decisions.md "Contract precision (turn 4)"): per field its value
 * (`(item) => value` for a list sorted in memory, a column name for one sorted in SQL), the
 * default field (the list's order without `sort`) and the tie-break field (the entity's id or key).
 */
export interface ListSort<F extends string, V> {
  readonly fields: readonly [F, ...F[]];
  readonly defaultSort: F;
  readonly tie: F;
  /** A Map: the field named in the query is never looked up on a plain object. */
  readonly byField: ReadonlyMap<string, V>;
}

export function listSort<const F extends string, V>(
  byField: Record<F, V>,
  defaultSort: NoInfer<F>,
  tie: NoInfer<F>,
): ListSort<F, V> {
  const entries = Object.entries(byField) as Array<[F, V]>;
  return {
    fields: entries.map(([field]) => field) as unknown as readonly [F, ...F[]],
    defaultSort,
    tie,
    byField: new Map(entries),
  };
}

/**
 * The `sort` and `order` query parameters of a list: `sort` one of its fields (default: its
 * order without them), `order` asc (default) or desc; anything else is 422 VALIDATION_FAILED.
 */
export function sortQuery<F extends string>(spec: ListSort<F, unknown>) {
  const fields = spec.fields.join(', ');
  return {
    sort: z
      .enum(spec.fields, {
        error: (issue) => `Unknown sort field '${excerpt(String(issue.input))}'; sort by one of: ${fields}`,
      })
      .default(spec.defaultSort)
      .openapi({
        description: `Field to sort by: ${fields}. Default ${spec.defaultSort}; equal values by ${spec.tie} ascending.`,
      }),
    order: z
      .enum(['asc', 'desc'], { error: (issue) => `Unknown order '${excerpt(String(issue.input))}'; asc or desc` })
      .default('asc')
      .openapi({ description: 'Sort direction: asc or desc.' }),
  };
}

/** The query of a list: page, size (at most `maxSize`), sort and order. */
export function listQuery<F extends string>(spec: ListSort<F, unknown>, maxSize: number = LIMITS.listPageSize) {
  return z.object({ page: pageNumber(), size: pageSize(maxSize), ...sortQuery(spec) });
}

function compareValues(a: SortValue, b: SortValue): number {
  const an = a === null || a === undefined;
  const bn = b === null || b === undefined;
  if (an || bn) return an === bn ? 0 : an ? -1 : 1;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = String(a);
  const sb = String(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/**
 * A sorted copy of `items` by `sort` in `order`, ties by the list's tie field ascending (then in
 * the given order: the sort is stable). Lists sort before they page.
 */
export function sortItems<T, F extends string>(
  items: readonly T[],
  spec: ListSort<F, (item: T) => SortValue>,
  sort: F,
  order: SortOrder,
): T[] {
  const value = spec.byField.get(sort);
  const tie = spec.byField.get(spec.tie);
  if (!value || !tie) throw new Error(`no sort field ${sort}`);
  const dir = order === 'desc' ? -1 : 1;
  return [...items].sort((a, b) => dir * compareValues(value(a), value(b)) || compareValues(tie(a), tie(b)));
}

/** The ORDER BY terms of a list sorted in SQL (columns from the spec only; NULL sorts first in ASC, as sortItems). */
export function sqlOrderBy<F extends string>(spec: ListSort<F, string>, sort: F, order: SortOrder): string {
  const column = spec.byField.get(sort);
  const tie = spec.byField.get(spec.tie);
  if (!column || !tie) throw new Error(`no sort field ${sort}`);
  const dir = order === 'desc' ? 'DESC' : 'ASC';
  return column === tie ? `${column} ${dir}` : `${column} ${dir}, ${tie} ASC`;
}

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
    503: 'Model, mapper or language data could not be loaded, or is still being built by a local first start (MODEL_LOADING), or the model host is busy (HOST_BUSY); Retry-After',
  };
  const out: Record<number, ProblemResponse> = {};
  for (const e of entries) {
    if (typeof e === 'number') out[e] = problem(descriptions[e] ?? 'Error');
    else for (const [status, description] of Object.entries(e)) out[Number(status)] = problem(description);
  }
  return out;
}
