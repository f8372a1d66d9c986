/**
 * Extension: POST /api/v1/embedding-models/{embeddingModelId}/word-translations
 * (docs/multilingual.md). The nearest words of each word in a model sharing its vector space:
 * by default an aligned model's English companion; with `targetModelId` any model of that
 * space (the English model to an aligned one: the reverse direction). Meters `tokens` = words
 * translated (found in the source model), charged to the token's workspace like word-scores.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { ENGLISH_COMPANION_ID } from '../../core/projection';
import { LIMITS } from '../../core/limits';
import { identifier } from '../../core/requests';
import { TRANSLATION_LIMIT_DEFAULT } from '../../core/translation';
import { charge } from '../quotas/charge';
import { ApiError } from '../../core/problem';
import { errorResponses, jsonBody, ModelParams, responses, security } from '../http/openapi';
import { scorerOf } from '../hosts/router';
import { newRouter } from '../http/router';

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
    targetModelId: identifier()
      .optional()
      .openapi({
        description: `A model in the same vector space (features aligned-en, or ${ENGLISH_COMPANION_ID} itself). Default: ${ENGLISH_COMPANION_ID}; required on ${ENGLISH_COMPANION_ID} itself.`,
        example: 'de-aligned-glove-6b-100d',
      }),
  })
  .strict()
  .openapi('WordTranslationsRequest');

const route = createRoute({
  method: 'post',
  path: '/{embeddingModelId}/word-translations',
  tags: ['Vocabulary'],
  summary: 'Extension: nearest words in another language through the shared (aligned) vector space',
  description:
    'For each word, the `limit` nearest words (cosine) of the target model: by default the English companion of an aligned model (features `aligned-en`); on the English model, `targetModelId` names the aligned model to translate into. Words the source model does not know come back with isAvailable false. Meters `tokens` = words translated, charged to the workspace of the token.',
  security,
  request: { params: ModelParams, body: jsonBody(WordTranslationsRequestSchema) },
  responses: {
    200: {
      description: 'One entry per requested word, in order',
      content: { 'application/json': { schema: responses.WordTranslationsResponseSchema } },
    },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

export const translationRoutes = newRouter();

translationRoutes.openapi(route, async (c) => {
  const { embeddingModelId } = c.req.valid('param');
  const body = c.req.valid('json');
  const workspaceId = c.get('auth')?.workspaceId;
  if (!workspaceId)
    throw new ApiError('WORKSPACE_FORBIDDEN', 'word-translations is metered: the token needs a workspace claim');
  const result = await scorerOf(c).wordTranslations(embeddingModelId, body);
  const translated = result.data.filter((d) => d.isAvailable).length;
  if (translated > 0) await charge(c, { usageTypeKey: 'tokens', amount: translated, workspaceId });
  return c.json(result, 200);
});
