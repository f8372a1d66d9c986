/**
 * POST /api/v1/workspaces/{workspaceId}/tokenizations (interface: Tokenization).
 * The tokenizer is core/tokenizer (the same code as the browser bundle); its language data is
 * lang/{language}.bin in R2, loaded lazily once per isolate (worker/sources/language-data.ts).
 * Meters `tokens` = tokenCount after the answer is computed; a failed request consumes nothing.
 */
import { createRoute } from '@hono/zod-openapi';
import { charge } from '../quotas/charge';
import { admit, price } from '../admission/admit';
import { requireLanguage } from '../../core/problem';
import { scorerOf } from '../hosts/router';
import { errorResponses, jsonBody, requests, responses, security, WorkspaceParams } from '../http/openapi';
import { newRouter } from '../http/router';

const route = createRoute({
  method: 'post',
  path: '/tokenizations',
  tags: ['Tokenization'],
  summary: 'Split a text into tokens with lemma, stop-word flag and synonyms (en, de, fr, ja)',
  description:
    "Punctuation is not a token; numbers, hyphenated words, URLs and e-mail addresses are one token each; French elisions (L'homme -> L', homme) and English contractions (don't -> do, n't) are split. Japanese is segmented into words. Meters `tokens` = tokenCount.",
  security,
  request: {
    params: WorkspaceParams,
    body: jsonBody(requests.TokenizationRequestSchema),
  },
  responses: {
    200: {
      description: 'Tokens in original order',
      content: { 'application/json': { schema: responses.TokenizationResponseSchema } },
    },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'Wrong workspace, or ERROR_NO_REMAINING_QUOTA',
      404: 'NOT_FOUND: no such workspace',
      413: 'PAYLOAD_TOO_LARGE: body over 2 MB; REQUEST_TOO_EXPENSIVE: estimated cost above the cap',
      422: 'VALIDATION_FAILED (bad body, text over 100,000 characters) or UNSUPPORTED_LANGUAGE (the detail lists the supported languages)',
      429: 'DAILY_LIMIT_REACHED, or RATE_LIMITED (the workspace is over its rate); Retry-After',
      503: 'LANGUAGE_DATA_UNAVAILABLE: the language data could not be loaded from storage; MODEL_LOADING: it is still being built by a local first start (Retry-After); HOST_BUSY: the model host is busy (Retry-After)',
    }),
  },
});

export const tokenizationRoutes = newRouter();

tokenizationRoutes.openapi(route, async (c) => {
  const req = c.req.valid('json');
  price(c, 'tokenize', req);
  requireLanguage(req.language);
  await admit(c, 'tokenize', req, { usageTypeKey: 'tokens' });
  const result = await scorerOf(c).tokenize(req);
  await charge(c, { usageTypeKey: 'tokens', amount: result.tokenCount });
  return c.json(result, 200);
});
