/**
 * Request and response schemas of the stored dimensions (admin API).
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { ILL_FORMED_MESSAGE, isWellFormed } from '../well-formed';

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
      .openapi({
        description: `Omit to take the lowest free id >= ${FIRST_CREATED_DIMENSION_ID}; ids below it are reserved for the seeded set.`,
      }),
    // Stored in D1: well-formed Unicode only (worker/well-formed.ts).
    name: z.string().min(1).max(LIMITS.nameCharacters).refine(isWellFormed, ILL_FORMED_MESSAGE),
    language: z
      .string()
      .regex(/^[a-z]{2}$/)
      .default('en'),
    description: z
      .string()
      .max(LIMITS.dimensionDescriptionCharacters)
      .refine(isWellFormed, ILL_FORMED_MESSAGE)
      .optional(),
    words: z
      .array(z.string().trim().min(1).max(LIMITS.wordCharacters).refine(isWellFormed, ILL_FORMED_MESSAGE))
      .min(1)
      .max(LIMITS.seedOrWhitelistWords),
  })
  .openapi('CreateDimension');
