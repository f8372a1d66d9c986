/** Zod/OpenAPI schemas of the usage service and the admin workspace routes. */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { ILL_FORMED_MESSAGE, isWellFormed } from '../well-formed';
import { pageNumber, pageSize } from '../http/openapi';

// The workspace id (worker/ids.ts: no import of ../schemas, which imports it too).
import { WORKSPACE_ID, WorkspaceIdParam } from '../ids';
export { WORKSPACE_ID, WorkspaceIdParam };

export const UsageTypeKeyParam = z
  .string()
  .min(1)
  .max(LIMITS.usageTypeKeyCharacters)
  .openapi({ param: { name: 'usageTypeKey', in: 'path' }, example: 'tokens' });

export const pageQuery = pageNumber().openapi({
  param: { name: 'page', in: 'query' },
  description: '1-based page number',
  example: 1,
  type: 'integer',
});

export const sizeQuery = pageSize(LIMITS.listPageSize).openapi({
  param: { name: 'size', in: 'query' },
  description: `Elements per page, at most ${LIMITS.listPageSize}`,
  example: 20,
  type: 'integer',
});

export const QuotaSchema = z
  .object({
    id: z.string(),
    workspaceId: z.string(),
    usageTypeKey: z.string(),
    limitAmount: z.number().int().describe('Monthly limit (plan base) for the usage type'),
    limitAmountDaily: z.number().int().describe('Daily limit; resets at midnight UTC'),
    usedAmount: z.number().int().describe('Consumed in the current billing cycle'),
    usedAmountDaily: z.number().int().describe('Consumed since midnight UTC today'),
    availableAmount: z.number().int().describe('max(0, limitAmount + bonusAmount + spilloverAmount - usedAmount)'),
    bonusAmount: z.number().int().describe('Bonus credits of the current cycle'),
    spilloverAmount: z
      .number()
      .int()
      .describe('Unused credits carried over from the previous cycle, at most limitAmount'),
    fairUseLimitReached: z
      .boolean()
      .describe("usedAmount >= the usage type's fairUsePolicyLimit (false when it has none)"),
    dailyRefreshed: z.string().describe('ISO date (UTC) on which the daily counter last reset'),
  })
  .openapi('Quota');

export const UsageTypeSchema = z
  .object({
    id: z.string(),
    key: z.string(),
    displayName: z.string(),
    fairUsePolicyLimit: z.number().int().nullable(),
    permissionKeyDailyLimit: z.string(),
    permissionKeyMonthlyLimit: z.string(),
  })
  .openapi('UsageType');

const amount = z.number().int().min(0).max(LIMITS.quotaAmountMax);
// Stored in D1: well-formed Unicode only (worker/well-formed.ts).
const workspaceName = z.string().min(1).max(LIMITS.workspaceNameCharacters).refine(isWellFormed, ILL_FORMED_MESSAGE);
const anchorDay = z.number().int().min(1).max(31);

export const QuotaLimitsSchema = z
  .object({
    usageTypeKey: z.string().min(1).max(LIMITS.usageTypeKeyCharacters),
    limitAmount: amount,
    limitAmountDaily: amount,
  })
  .openapi('QuotaLimits');

export const CreateWorkspaceSchema = z
  .object({
    id: z.string().regex(WORKSPACE_ID),
    name: workspaceName.optional(),
    anchorDay: anchorDay
      .default(1)
      .describe('Day of the month on which billing cycles start (29-31: the last day in shorter months)'),
    quotas: z
      .array(QuotaLimitsSchema)
      .max(LIMITS.quotasPerWorkspace)
      .default([])
      .describe('Limits per usage type; usage types not listed get limits 0'),
  })
  .openapi('CreateWorkspace');

export const UpdateWorkspaceSchema = z
  .object({
    name: workspaceName.optional(),
    anchorDay: anchorDay.optional(),
  })
  .refine((v) => v.name !== undefined || v.anchorDay !== undefined, { message: 'Send name and/or anchorDay' })
  .openapi('UpdateWorkspace');

export const SetLimitsSchema = z.object({ limitAmount: amount, limitAmountDaily: amount }).openapi('SetQuotaLimits');

export const AddBonusSchema = z
  .object({
    amount: z.number().int().min(1).max(LIMITS.quotaAmountMax),
    reason: z.string().max(LIMITS.bonusReasonCharacters).optional(),
  })
  .openapi('AddBonus');

export const WorkspaceSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    anchorDay: z.number().int(),
    createdAt: z.string(),
    updatedAt: z.string(),
    cycleStart: z.string().describe('ISO date: first day of the current billing cycle'),
    nextCycleStart: z.string().describe('ISO date: first day of the next billing cycle'),
    quotas: z.array(QuotaSchema),
  })
  .openapi('AdminWorkspace');

export const LedgerEntrySchema = z
  .object({
    id: z.number().int(),
    workspaceId: z.string(),
    usageTypeKey: z.string(),
    amount: z.number().int(),
    requestId: z.string(),
    idempotencyKey: z.string().nullable(),
    cycleStart: z.string(),
    createdAt: z.string(),
  })
  .openapi('UsageLedgerEntry');

export const AuditEntrySchema = z
  .object({
    id: z.number().int(),
    workspaceId: z.string(),
    action: z.string(),
    usageTypeKey: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    actor: z.string().nullable(),
    requestId: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi('AdminAuditEntry');
