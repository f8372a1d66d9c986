/**
 * Workspace-scoped scoring routes: text-scores, word-scores, autocomplete-suggestions.
 * Validate (zod) -> load model, language data, mappers, stored dimensions -> core/scoring ->
 * meter -> respond. Auth and the workspace check run in app.ts middleware.
 */
import { createRoute, type OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../env';
import { charge } from '../metering';
import { engineOf } from '../sources';
import { Timing } from '../timing';
import {
  AutocompleteRequestSchema,
  AutocompleteResponseSchema,
  errorResponses,
  jsonBody,
  TextScoresRequestSchema,
  TextScoresResponseSchema,
  WordScoresRequestSchema,
  WordScoresResponseSchema,
  WorkspaceParams,
  security,
} from '../schemas';


const textScoresRoute = createRoute({
  method: 'post',
  path: '/api/v1/workspaces/{workspaceId}/text-scores',
  tags: ['Scoring'],
  summary: 'Score texts along dimensions and mappers, with an optional goal score',
  description:
    "A text's dimension or mapper score is the mean over its in-vocabulary non-stop tokens (lemma first, then surface form, lower-cased); modelRankScore is the mean frequency score f(rank) = 1 - ln(rank)/ln(V) over its in-vocabulary tokens. Meters `tokens` = tokens counted by the tokenizer.",
  security,
  request: { params: WorkspaceParams, body: jsonBody(TextScoresRequestSchema) },
  responses: {
    200: { description: 'One scored text per submitted text, in order', content: { 'application/json': { schema: TextScoresResponseSchema } } },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

const wordScoresRoute = createRoute({
  method: 'post',
  path: '/api/v1/workspaces/{workspaceId}/word-scores',
  tags: ['Scoring'],
  summary: 'Score whitelisted words, or find and score the words closest to the seed centroid',
  description:
    'Find-and-score applies the default vocabulary quality filter (docs/vocabulary.md): the 50,000 most frequent words (`wordrankLimit`), no stop words, pronouns, auxiliaries, numbers or non-dictionary words, candidates sharing a part of speech with the seeds; `wordrankLimit: -1` widens it to everything but stop words, pronouns and entries without a letter; `excludeAntonyms: true` also skips WordNet antonyms of the seeds. Seeds and whitelist words may be phrases. Meters `tokens` = words scored.',
  security,
  request: { params: WorkspaceParams, body: jsonBody(WordScoresRequestSchema) },
  responses: {
    200: { description: 'Scored words and averages', content: { 'application/json': { schema: WordScoresResponseSchema } } },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

const autocompleteRoute = createRoute({
  method: 'post',
  path: '/api/v1/workspaces/{workspaceId}/autocomplete-suggestions',
  tags: ['Vocabulary'],
  summary: 'Up to ten completions of a prefix from the model vocabulary: dictionary words first, most frequent first',
  description:
    'Matching folds case and diacritics; junk (no letter, rare non-words), stop words, pronouns and auxiliaries are not suggested; proper nouns come capitalized, acronyms in capitals, and a leading capital typed by the user is kept (docs/vocabulary.md).',
  security,
  request: { params: WorkspaceParams, body: jsonBody(AutocompleteRequestSchema) },
  responses: {
    200: { description: 'Suggestions, best first', content: { 'application/json': { schema: AutocompleteResponseSchema } } },
    ...errorResponses(401, 403, 404, 413, 422, 503),
  },
});

export function registerScoring(app: OpenAPIHono<AppEnv>): void {
  app.openapi(textScoresRoute, async (c) => {
    const timing = new Timing();
    // A core refusal (ScoringError) is rendered by app.ts onError.
    const { response, tokenCount } = await engineOf(c, { mark: (p) => timing.mark(p) }).textScores(c.req.valid('json'));
    // Also with 0 tokens: the workspace and its allowance are checked (nothing is deducted then).
    await charge(c, { usageTypeKey: 'tokens', amount: tokenCount });
    timing.mark('meter');
    c.header('Server-Timing', timing.header());
    return c.json(response, 200);
  });

  app.openapi(wordScoresRoute, async (c) => {
    const timing = new Timing();
    const response = await engineOf(c, { mark: (p) => timing.mark(p) }).wordScores(c.req.valid('json'));
    await charge(c, { usageTypeKey: 'tokens', amount: response.data.length });
    timing.mark('meter');
    c.header('Server-Timing', timing.header());
    return c.json(response, 200);
  });

  app.openapi(autocompleteRoute, async (c) => {
    return c.json(await engineOf(c).autocomplete(c.req.valid('json')), 200);
  });
}
