/**
 * Usage service (interface "Quota", "Usage type"):
 *   GET /api/usage-service/v1/workspaces/{workspaceId}/quotas
 *   GET /api/usage-service/v1/usage-types
 */
import { createRoute, z } from '@hono/zod-openapi';
import { nowMs } from '../clock';
import { listUsageTypes, type Quota, type UsageType } from './repository';
import { meterQuotas } from './meter-client';
import { QuotaSchema, UsageTypeSchema, WorkspaceIdParam, orderQuery, pageQuery, sizeQuery } from './schemas';
import { PageSchema, errorResponses, pageObject, security } from '../http/openapi';
import { newRouter } from '../http/router';
import { LIMITS } from '../../core/limits';

export const QUOTA_SORT_FIELDS = [
  'usageTypeKey',
  'limitAmount',
  'limitAmountDaily',
  'usedAmount',
  'usedAmountDaily',
  'availableAmount',
  'bonusAmount',
  'spilloverAmount',
] as const;

export const USAGE_TYPE_SORT_FIELDS = ['key', 'displayName'] as const;

/** Sorts by `field` in `order`, ties by `tie` ascending; returns one page. */
export function sortAndPage<T, K extends keyof T>(
  items: T[],
  field: K,
  order: 'asc' | 'desc',
  tie: keyof T,
  page: number,
  size: number,
): T[] {
  const dir = order === 'desc' ? -1 : 1;
  const cmp = (a: unknown, b: unknown): number =>
    typeof a === 'number' && typeof b === 'number' ? a - b : String(a) < String(b) ? -1 : String(a) > String(b) ? 1 : 0;
  const sorted = [...items].sort((a, b) => dir * cmp(a[field], b[field]) || cmp(a[tie], b[tie]));
  return sorted.slice((page - 1) * size, page * size);
}

const quotasRoute = createRoute({
  method: 'get',
  path: '/workspaces/{workspaceId}/quotas',
  tags: ['Usage service'],
  summary: "List the workspace's quotas",
  description:
    'Every field is computed at the time of the request: daily counters reset at midnight UTC and billing cycles roll over on the ' +
    "workspace's anchor day (unused credits, capped at limitAmount, become spilloverAmount).",
  security,
  request: {
    params: z.object({ workspaceId: WorkspaceIdParam }),
    query: z.object({
      usageTypeKey: z
        .string()
        .max(LIMITS.usageTypeKeyCharacters)
        .optional()
        .openapi({ param: { name: 'usageTypeKey', in: 'query' }, example: 'tokens' }),
      page: pageQuery,
      size: sizeQuery,
      sort: z
        .enum(QUOTA_SORT_FIELDS)
        .default('usageTypeKey')
        .openapi({ param: { name: 'sort', in: 'query' }, description: 'Field to sort by (default usageTypeKey)' }),
      order: orderQuery,
    }),
  },
  responses: {
    200: {
      description: 'One page of quotas',
      content: { 'application/json': { schema: z.object({ data: z.array(QuotaSchema), page: PageSchema }) } },
    },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'The token is for another workspace',
      404: 'The workspace does not exist',
      422: 'Invalid query parameters',
    }),
  },
});

const usageTypesRoute = createRoute({
  method: 'get',
  path: '/usage-types',
  tags: ['Usage service'],
  summary: 'List the metered usage types',
  security,
  request: {
    query: z.object({
      page: pageQuery,
      size: sizeQuery,
      sort: z
        .enum(USAGE_TYPE_SORT_FIELDS)
        .default('key')
        .openapi({ param: { name: 'sort', in: 'query' }, description: 'Field to sort by (default key)' }),
      order: orderQuery,
    }),
  },
  responses: {
    200: {
      description: 'One page of usage types',
      content: { 'application/json': { schema: z.object({ data: z.array(UsageTypeSchema), page: PageSchema }) } },
    },
    ...errorResponses({
      401: 'Missing or invalid token',
      422: 'Invalid query parameters',
    }),
  },
});

export const quotaRoutes = newRouter();

quotaRoutes.openapi(quotasRoute, async (c) => {
  const { workspaceId } = c.req.valid('param');
  const q = c.req.valid('query');
  // Live and exact: the workspace's meter holds the counters (D1 receives them within seconds).
  const all = (await meterQuotas(c.env, workspaceId, nowMs(), q.usageTypeKey)).quotas;
  const data = sortAndPage<Quota, keyof Quota>(all, q.sort, q.order ?? 'asc', 'usageTypeKey', q.page, q.size);
  return c.json({ data, page: pageObject(q.page, q.size, all.length) }, 200);
});

quotaRoutes.openapi(usageTypesRoute, async (c) => {
  const q = c.req.valid('query');
  const all = await listUsageTypes(c.env.DB);
  const data = sortAndPage<UsageType, keyof UsageType>(all, q.sort, q.order ?? 'asc', 'key', q.page, q.size);
  return c.json({ data, page: pageObject(q.page, q.size, all.length) }, 200);
});
