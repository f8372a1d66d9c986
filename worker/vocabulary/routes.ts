/**
 * The vocabulary routes (tag Vocabulary): autocomplete-suggestions (workspace-scoped,
 * workspaceVocabularyRoutes), and the model-scoped word-availabilities, word-similarity-matrices
 * and word-translations (modelVocabularyRoutes, under /api/v1).
 *
 * Extension: POST /api/v1/embedding-models/{embeddingModelId}/word-translations
 * (docs/multilingual.md). The nearest words of each word in a model sharing its vector space:
 * by default an aligned model's English companion; with `targetModelId` any model of that
 * space (the English model to an aligned one: the reverse direction). Meters `tokens` = words
 * translated (found in the source model), charged to the token's workspace like word-scores.
 */
import { createRoute } from '@hono/zod-openapi';
import { charge } from '../quotas/charge';
import { admit, price } from '../admission/admit';
import { checkModel, checkTranslation } from '../admission/request-checks';
import { ApiError } from '../../core/problem';
import { errorResponses, jsonBody, ModelParams, requests, responses, security, WorkspaceParams } from '../http/openapi';
import { scorerOf } from '../hosts/router';
import { newRouter } from '../http/router';
import { WordTranslationsRequestSchema } from './schemas';

const translationsRoute = createRoute({
  method: 'post',
  path: '/embedding-models/{embeddingModelId}/word-translations',
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

const autocompleteRoute = createRoute({
  method: 'post',
  path: '/autocomplete-suggestions',
  tags: ['Vocabulary'],
  summary: 'Up to ten completions of a prefix from the model vocabulary: dictionary words first, most frequent first',
  description:
    'Matching folds case and diacritics; junk (no letter, rare non-words), stop words, pronouns and auxiliaries are not suggested; proper nouns come capitalized, acronyms in capitals, and a leading capital typed by the user is kept (docs/vocabulary.md).',
  security,
  request: { params: WorkspaceParams, body: jsonBody(requests.AutocompleteRequestSchema) },
  responses: {
    200: {
      description: 'Suggestions, best first',
      content: { 'application/json': { schema: responses.AutocompleteResponseSchema } },
    },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

const availabilitiesRoute = createRoute({
  method: 'post',
  path: '/embedding-models/{embeddingModelId}/word-availabilities',
  tags: ['Vocabulary'],
  summary: 'Which words are in the model vocabulary (and in the allow-list when one is given)',
  security,
  request: { params: ModelParams, body: jsonBody(requests.WordAvailabilitiesRequestSchema) },
  responses: {
    200: {
      description: 'One availability per requested word',
      content: { 'application/json': { schema: responses.WordAvailabilitiesResponseSchema } },
    },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

const matrixRoute = createRoute({
  method: 'post',
  path: '/embedding-models/{embeddingModelId}/word-similarity-matrices',
  tags: ['Vocabulary'],
  summary: 'Pairwise cosine similarity of the in-vocabulary words, rounded to two decimals',
  security,
  request: { params: ModelParams, body: jsonBody(requests.SimilarityMatrixRequestSchema) },
  responses: {
    200: {
      description: 'Square matrix aligned with words',
      content: { 'application/json': { schema: responses.SimilarityMatrixResponseSchema } },
    },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

export const workspaceVocabularyRoutes = newRouter();

workspaceVocabularyRoutes.openapi(autocompleteRoute, async (c) => {
  const req = c.req.valid('json');
  price(c, 'autocomplete', req);
  await checkModel(c, req.embeddingModelId);
  // Free, but like the metered routes only for a workspace that exists (404 NOT_FOUND otherwise), priced and rate limited.
  await admit(c, 'autocomplete', req, { usageTypeKey: null });
  return c.json(await scorerOf(c).autocomplete(req), 200);
});

export const modelVocabularyRoutes = newRouter();

// Not metered; priced, and rate limited for the token's workspace (an admin token without one: the cap only).
modelVocabularyRoutes.openapi(availabilitiesRoute, async (c) => {
  const { embeddingModelId } = c.req.valid('param');
  const req = c.req.valid('json');
  price(c, 'wordAvailabilities', req);
  await checkModel(c, embeddingModelId);
  await admit(c, 'wordAvailabilities', req, { usageTypeKey: null });
  return c.json(await scorerOf(c).wordAvailabilities(embeddingModelId, req), 200);
});

modelVocabularyRoutes.openapi(matrixRoute, async (c) => {
  const { embeddingModelId } = c.req.valid('param');
  const req = c.req.valid('json');
  price(c, 'similarityMatrix', req);
  await checkModel(c, embeddingModelId);
  await admit(c, 'similarityMatrix', req, { usageTypeKey: null });
  return c.json(await scorerOf(c).similarityMatrix(embeddingModelId, req), 200);
});

modelVocabularyRoutes.openapi(translationsRoute, async (c) => {
  const { embeddingModelId } = c.req.valid('param');
  const body = c.req.valid('json');
  const workspaceId = c.get('auth')?.workspaceId;
  if (!workspaceId)
    throw new ApiError('WORKSPACE_FORBIDDEN', 'word-translations is metered: the token needs a workspace claim');
  price(c, 'wordTranslations', body);
  await checkTranslation(c, embeddingModelId, body.targetModelId);
  await admit(c, 'wordTranslations', body, { usageTypeKey: 'tokens', workspaceId });
  const result = await scorerOf(c).wordTranslations(embeddingModelId, body);
  const translated = result.data.filter((d) => d.isAvailable).length;
  if (translated > 0) await charge(c, { usageTypeKey: 'tokens', amount: translated, workspaceId });
  return c.json(result, 200);
});
