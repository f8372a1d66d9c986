/**
 * The vocabulary routes' own request schema (word-translations, a Worker extension); the shared
 * request and response schemas are core/requests.ts and core/responses.ts.
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { identifier } from '../../core/requests';
import { TRANSLATION_LIMIT_DEFAULT } from '../../core/translation';

export const WordTranslationsRequestSchema = z
  .object({
    words: z
      .array(z.string().max(LIMITS.wordCharacters))
      .min(1)
      .max(LIMITS.translationWords)
      .openapi({
        description: `1 to ${LIMITS.translationWords} words of the source model's language.`,
        example: ['Haus', 'Hund'],
      }),
    limit: z
      .number()
      .int()
      .min(1)
      .max(LIMITS.translationsPerWord)
      .optional()
      .openapi({
        description: `Translations per word, 1..${LIMITS.translationsPerWord} (default ${TRANSLATION_LIMIT_DEFAULT}).`,
        example: 5,
      }),
    targetModelId: identifier().optional().openapi({
      description:
        'A model in the same vector space: the English model an aligned model was projected onto (its companion, `englishModelId` in its manifest; en-glove-6b-100d when absent) or another model aligned to it. Default on an aligned model: its companion; required on an English model.',
      example: 'de-aligned-glove-6b-100d',
    }),
  })
  .strict()
  .openapi('WordTranslationsRequest');
