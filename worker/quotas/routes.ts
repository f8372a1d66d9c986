/**
 * Usage service (interface "Quota", "Usage type"):
 *   GET /api/usage-service/v1/workspaces/{workspaceId}/quotas
 *   GET /api/usage-service/v1/usage-types
 */
import { createRoute, z } from '@hono/zod-openapi';
import { nowMs } from '../clock';
import { listUsageTypes, type Quota, type UsageType } from './repository';
import { meterQuotas } from './meter-client';
import { QuotaSchema, UsageTypeSchema, WorkspaceIdParam, pageQuery, sizeQuery } from './schemas';
import { PageSchema, errorResponses, listSort, pageObject, security, sortItems, sortQuery } from '../http/openapi';
import { newRouter } from '../http/router';
import { LIMITS } from '../../core/limits';

export const QUOTA_SORT = listSort(
  {
    usageTypeKey: (q: Quota) => q.usageTypeKey,
    limitAmount: (q: Quota) => q.limitAmount,
    limitAmountDaily: (q: Quota) => q.limitAmountDaily,
    usedAmount: (q: Quota) => q.usedAmount,
    usedAmountDaily: (q: Quota) => q.usedAmountDaily,
    availableAmount: (q: Quota) => q.availableAmount,
    bonusAmount: (q: Quota) => q.bonusAmount,
    spilloverAmount: (q: Quota) => q.spilloverAmount,
  },
  'usageTypeKey',
  'usageTypeKey',
);

export const USAGE_TYPE_SORT = listSort(
  {
    key: (t: UsageType) => t.key,
    displayName: (t: UsageType) => t.displayName,
    fairUsePolicyLimit: (t: UsageType) => t.fairUsePolicyLimit,
  },
  'key',
  'key',
);

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
      ...sortQuery(QUOTA_SORT),
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
    query: z.object({ page: pageQuery, size: sizeQuery, ...sortQuery(USAGE_TYPE_SORT) }),
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
  const data = sortItems(all, QUOTA_SORT, q.sort, q.order).slice((q.page - 1) * q.size, q.page * q.size);
  return c.json({ data, page: pageObject(q.page, q.size, all.length) }, 200);
});

quotaRoutes.openapi(usageTypesRoute, async (c) => {
  const q = c.req.valid('query');
  const all = await listUsageTypes(c.env.DB);
  const data = sortItems(all, USAGE_TYPE_SORT, q.sort, q.order).slice((q.page - 1) * q.size, q.page * q.size);
  return c.json({ data, page: pageObject(q.page, q.size, all.length) }, 200);
});
