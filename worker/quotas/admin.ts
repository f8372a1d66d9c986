/**
 * Admin workspace routes under /api/admin/v1/ (token scope `admin`, enforced by the app's
 * requireAdmin middleware). Every change is appended to the audit log.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { nowMs } from '../clock';
import { ApiError, excerpt } from '../../core/problem';
import { isoDate, nextCycleStartMs } from './cycle';
import { meterQuotas, syncMeter } from './meter-client';
import type { MeterQuotas } from './meter-do';
import {
  addBonus,
  createWorkspace,
  currentCycleStart,
  AUDIT_SORT,
  LEDGER_SORT,
  listAudit,
  listLedger,
  listQuotas,
  listUsageTypes,
  requireWorkspaceRow,
  setQuotaLimits,
  updateWorkspace,
  type AuditContext,
  type QuotaLimits,
  type Workspace,
} from './repository';
import {
  AddBonusSchema,
  AuditEntrySchema,
  CreateWorkspaceSchema,
  LedgerEntrySchema,
  QuotaSchema,
  SetLimitsSchema,
  UpdateWorkspaceSchema,
  UsageTypeKeyParam,
  WorkspaceIdParam,
  WorkspaceSchema,
  pageQuery,
  sizeQuery,
} from './schemas';
import { PageSchema, errorResponses, jsonBody, pageObject, security, sortQuery } from '../http/openapi';
import { newRouter } from '../http/router';
import { LIMITS } from '../../core/limits';

const TAG = 'Admin';
const json = <T extends z.ZodTypeAny>(schema: T) => ({ 'application/json': { schema } });
const adminErrors = errorResponses({
  401: 'Missing or invalid token',
  403: 'The token lacks scope admin',
});
const wsParams = z.object({ workspaceId: WorkspaceIdParam });
const quotaParams = z.object({ workspaceId: WorkspaceIdParam, usageTypeKey: UsageTypeKeyParam });

function auditContext(c: Context<AppEnv>, atMs: number): AuditContext {
  const auth = c.get('auth');
  const actor = auth.subject ?? (auth.workspaceId ? `workspace:${auth.workspaceId}` : null);
  return { actor, requestId: c.get('requestId') ?? null, atMs };
}

/** The view of a workspace just created in D1 (its meter is not involved yet: counters are 0). */
async function workspaceView(db: D1Database, ws: Workspace, atMs: number) {
  const cycleStart = await currentCycleStart(db, ws, atMs);
  return {
    ...ws,
    cycleStart,
    // The first anchor date after the running cycle's start.
    nextCycleStart: isoDate(nextCycleStartMs(Date.parse(`${cycleStart}T00:00:00.000Z`), ws.anchorDay)),
    quotas: await listQuotas(db, ws, atMs),
  };
}

/** The view of an existing workspace: name from D1, cycle and counters live from its meter. */
function meteredView(ws: Workspace, m: MeterQuotas) {
  return {
    ...ws,
    cycleStart: m.cycleStart,
    nextCycleStart: isoDate(nextCycleStartMs(Date.parse(`${m.cycleStart}T00:00:00.000Z`), ws.anchorDay)),
    quotas: m.quotas,
  };
}

async function requireUsageType(db: D1Database, key: string): Promise<void> {
  const types = await listUsageTypes(db);
  if (!types.some((t) => t.key === key)) throw new ApiError('NOT_FOUND', `Usage type '${excerpt(key)}' does not exist`);
}

const createRouteDef = createRoute({
  method: 'post',
  path: '/',
  tags: [TAG],
  summary: 'Create a workspace with its plan limits and anchor day',
  description:
    'Every usage type gets a quota row; types missing from `quotas` get limits 0 (every metered call for them is refused).',
  security,
  request: { body: jsonBody(CreateWorkspaceSchema) },
  responses: {
    201: { description: 'Created', content: json(WorkspaceSchema) },
    ...adminErrors,
    ...errorResponses({
      409: 'A workspace with this id exists',
      422: 'Invalid body or unknown usage type',
    }),
  },
});

const getRouteDef = createRoute({
  method: 'get',
  path: '/{workspaceId}',
  tags: [TAG],
  summary: 'Read a workspace, its cycle and its quotas',
  security,
  request: { params: wsParams },
  responses: {
    200: { description: 'The workspace', content: json(WorkspaceSchema) },
    ...adminErrors,
    ...errorResponses({ 404: 'No such workspace' }),
  },
});

const patchRouteDef = createRoute({
  method: 'patch',
  path: '/{workspaceId}',
  tags: [TAG],
  summary: 'Rename a workspace or change its anchor day',
  description:
    'A new anchor day applies from the running cycle on: the cycle ends at the first anchor date of the new day after the cycle start ' +
    '(at once if that date has already passed).',
  security,
  request: { params: wsParams, body: jsonBody(UpdateWorkspaceSchema) },
  responses: {
    200: { description: 'The updated workspace', content: json(WorkspaceSchema) },
    ...adminErrors,
    ...errorResponses({
      404: 'No such workspace',
      422: 'Invalid body',
    }),
  },
});

const limitsRouteDef = createRoute({
  method: 'put',
  path: '/{workspaceId}/quotas/{usageTypeKey}',
  tags: [TAG],
  summary: 'Set the monthly and daily limits of one usage type',
  description: 'Takes effect at once; usage of the running cycle and day is kept.',
  security,
  request: { params: quotaParams, body: jsonBody(SetLimitsSchema) },
  responses: {
    200: { description: 'The quota after the change', content: json(QuotaSchema) },
    ...adminErrors,
    ...errorResponses({
      404: 'No such workspace or usage type',
      422: 'Invalid body',
    }),
  },
});

const bonusRouteDef = createRoute({
  method: 'post',
  path: '/{workspaceId}/quotas/{usageTypeKey}/bonus',
  tags: [TAG],
  summary: 'Add bonus credits to the running cycle',
  description:
    'Bonus credits belong to the running cycle; what is unused at its end counts towards the spillover (capped at limitAmount).',
  security,
  request: { params: quotaParams, body: jsonBody(AddBonusSchema) },
  responses: {
    200: { description: 'The quota after the change', content: json(QuotaSchema) },
    ...adminErrors,
    ...errorResponses({
      404: 'No such workspace, usage type or quota',
      422: 'Invalid body',
    }),
  },
});

const ledgerRouteDef = createRoute({
  method: 'get',
  path: '/{workspaceId}/usage-ledger',
  tags: [TAG],
  summary: 'Read the usage ledger (one entry per charged request)',
  security,
  request: {
    params: wsParams,
    query: z.object({
      usageTypeKey: z
        .string()
        .max(LIMITS.usageTypeKeyCharacters)
        .optional()
        .openapi({ param: { name: 'usageTypeKey', in: 'query' } }),
      page: pageQuery,
      size: sizeQuery,
      ...sortQuery(LEDGER_SORT),
    }),
  },
  responses: {
    200: {
      description: 'One page of ledger entries, oldest first unless sort or order say otherwise',
      content: json(z.object({ data: z.array(LedgerEntrySchema), page: PageSchema })),
    },
    ...adminErrors,
    ...errorResponses({
      404: 'No such workspace',
      422: 'Invalid query parameters',
    }),
  },
});

const auditRouteDef = createRoute({
  method: 'get',
  path: '/{workspaceId}/audit-log',
  tags: [TAG],
  summary: 'Read the audit log of admin changes',
  security,
  request: { params: wsParams, query: z.object({ page: pageQuery, size: sizeQuery, ...sortQuery(AUDIT_SORT) }) },
  responses: {
    200: {
      description: 'One page of audit entries, oldest first unless sort or order say otherwise',
      content: json(z.object({ data: z.array(AuditEntrySchema), page: PageSchema })),
    },
    ...adminErrors,
    ...errorResponses({
      404: 'No such workspace',
      422: 'Invalid query parameters',
    }),
  },
});

export const adminWorkspaceRoutes = newRouter();

adminWorkspaceRoutes.openapi(createRouteDef, async (c) => {
  const body = c.req.valid('json');
  const atMs = nowMs();
  const types = await listUsageTypes(c.env.DB);
  const known = new Set(types.map((t) => t.key));
  const errors = body.quotas.flatMap((q, i) => {
    if (!known.has(q.usageTypeKey))
      return [{ path: `quotas.${i}.usageTypeKey`, message: `Unknown usage type '${excerpt(q.usageTypeKey)}'` }];
    if (body.quotas.findIndex((o) => o.usageTypeKey === q.usageTypeKey) !== i)
      return [{ path: `quotas.${i}.usageTypeKey`, message: `Usage type '${excerpt(q.usageTypeKey)}' is listed twice` }];
    return [];
  });
  if (errors.length > 0) throw new ApiError('VALIDATION_FAILED', 'Invalid quotas', { errors });
  const quotas: QuotaLimits[] = types.map(
    (t) =>
      body.quotas.find((q) => q.usageTypeKey === t.key) ?? { usageTypeKey: t.key, limitAmount: 0, limitAmountDaily: 0 },
  );
  const ws = await createWorkspace(
    c.env.DB,
    { id: body.id, name: body.name ?? body.id, anchorDay: body.anchorDay, quotas },
    auditContext(c, atMs),
  );
  return c.json(await workspaceView(c.env.DB, ws, atMs), 201);
});

adminWorkspaceRoutes.openapi(getRouteDef, async (c) => {
  const ws = await requireWorkspaceRow(c.env.DB, c.req.valid('param').workspaceId);
  return c.json(meteredView(ws, await meterQuotas(c.env, ws.id, nowMs())), 200);
});

adminWorkspaceRoutes.openapi(patchRouteDef, async (c) => {
  const { workspaceId } = c.req.valid('param');
  const atMs = nowMs();
  const ws = await updateWorkspace(c.env.DB, workspaceId, c.req.valid('json'), auditContext(c, atMs));
  // D1 (with its audit row) first, then the meter applies the change.
  return c.json(meteredView(ws, await syncMeter(c.env, ws.id, atMs)), 200);
});

adminWorkspaceRoutes.openapi(limitsRouteDef, async (c) => {
  const { workspaceId, usageTypeKey } = c.req.valid('param');
  const body = c.req.valid('json');
  const atMs = nowMs();
  await requireUsageType(c.env.DB, usageTypeKey);
  const ws = await setQuotaLimits(c.env.DB, workspaceId, { usageTypeKey, ...body }, auditContext(c, atMs));
  const quota = (await syncMeter(c.env, ws.id, atMs)).quotas.find((q) => q.usageTypeKey === usageTypeKey);
  return c.json(quota!, 200);
});

adminWorkspaceRoutes.openapi(bonusRouteDef, async (c) => {
  const { workspaceId, usageTypeKey } = c.req.valid('param');
  const body = c.req.valid('json');
  const atMs = nowMs();
  await requireUsageType(c.env.DB, usageTypeKey);
  const ws = await addBonus(
    c.env.DB,
    workspaceId,
    usageTypeKey,
    body.amount,
    body.reason ?? null,
    auditContext(c, atMs),
  );
  if (!ws)
    throw new ApiError(
      'NOT_FOUND',
      `Workspace '${excerpt(workspaceId)}' has no ${excerpt(usageTypeKey)} quota; set its limits first`,
    );
  const quota = (await syncMeter(c.env, ws.id, atMs)).quotas.find((q) => q.usageTypeKey === usageTypeKey);
  return c.json(quota!, 200);
});

adminWorkspaceRoutes.openapi(ledgerRouteDef, async (c) => {
  const { workspaceId } = c.req.valid('param');
  const q = c.req.valid('query');
  await requireWorkspaceRow(c.env.DB, workspaceId);
  const { total, entries } = await listLedger(c.env.DB, workspaceId, {
    usageTypeKey: q.usageTypeKey,
    offset: (q.page - 1) * q.size,
    limit: q.size,
    sort: q.sort,
    order: q.order,
  });
  return c.json({ data: entries, page: pageObject(q.page, q.size, total) }, 200);
});

adminWorkspaceRoutes.openapi(auditRouteDef, async (c) => {
  const { workspaceId } = c.req.valid('param');
  const q = c.req.valid('query');
  await requireWorkspaceRow(c.env.DB, workspaceId);
  const { total, entries } = await listAudit(c.env.DB, workspaceId, {
    offset: (q.page - 1) * q.size,
    limit: q.size,
    sort: q.sort,
    order: q.order,
  });
  return c.json({ data: entries, page: pageObject(q.page, q.size, total) }, 200);
});
