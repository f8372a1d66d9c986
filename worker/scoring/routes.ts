/**
 * Workspace-scoped scoring routes (tag Scoring): text-scores, word-scores.
 * Validate (zod) -> load model, language data, mappers, stored dimensions -> core/scoring ->
 * meter -> respond. Auth and the workspace check run in app.ts middleware.
 */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { AppEnv } from '../env';
import { charge } from '../quotas/charge';
import { admit, price } from '../admission/admit';
import { checkScoring } from '../admission/request-checks';
import { scorerOf } from '../hosts/router';
import { metered } from '../http/timing';
import { errorResponses, jsonBody, requests, responses, security, WorkspaceParams } from '../http/openapi';
import { newRouter } from '../http/router';

const textScoresRoute = createRoute({
  method: 'post',
  path: '/text-scores',
  tags: ['Scoring'],
  summary: 'Score texts along dimensions and mappers, with an optional goal score',
  description:
    'By default (`composition: "rules"`, docs/text-scores.md) a text\'s dimension or mapper score is the weighted mean of its token contributions: each in-vocabulary non-stop token (and each stop word that carries sentiment) contributes its value (a mapper\'s value, lexicon-anchored; a dimension\'s cosine), moved from the factor\'s neutral point by the rules around it (negation flips and damps on bipolar scales and damps on unipolar ones; intensifiers, downtoners, all caps and exclamation marks scale; tokens after a contrast word weigh 1.5 and before it 0.5); emoticons and emoji count on bipolar mapper variables. `composition: "mean"` is the plain mean of the token values. Words are looked up by their NFKC form, then their folded form (docs/vocabulary.md). modelRankScore is the mean frequency score f(rank) = 1 - ln(rank)/ln(V) over the in-vocabulary tokens (null when there is none). Meters `tokens` = tokens counted by the tokenizer.',
  security,
  request: { params: WorkspaceParams, body: jsonBody(requests.TextScoresRequestSchema) },
  responses: {
    200: {
      description: 'One scored text per submitted text, in order',
      content: { 'application/json': { schema: responses.TextScoresResponseSchema } },
    },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

const wordScoresRoute = createRoute({
  method: 'post',
  path: '/word-scores',
  tags: ['Scoring'],
  summary: 'Score whitelisted words, or find and score the words closest to the seed centroid',
  description:
    'Find-and-score applies the default vocabulary quality filter (docs/vocabulary.md): the 50,000 most frequent words (`wordrankLimit`), no stop words, pronouns, auxiliaries, numbers or non-dictionary words, candidates sharing a part of speech with the seeds; `wordrankLimit: -1` widens it to everything but stop words, pronouns and entries without a letter; `excludeAntonyms: true` also skips WordNet antonyms of the seeds. Seeds and whitelist words may be phrases. Meters `tokens` = words scored.',
  security,
  request: { params: WorkspaceParams, body: jsonBody(requests.WordScoresRequestSchema) },
  responses: {
    200: {
      description: 'Scored words and averages',
      content: { 'application/json': { schema: responses.WordScoresResponseSchema } },
    },
    ...errorResponses(401, 403, 404, 413, 422, 429, 503),
  },
});

export const scoringRoutes = newRouter();

/**
 * text-scores and word-scores alike: decided before any work (the request's own references, then
 * the workspace, the cost and the rate), computed with the answer serialized where it was computed
 * (worker/hosts/protocol.ts SerializedAnswer), charged (also with 0 tokens: the workspace and its
 * allowance are checked), answered. A core refusal (ScoringError) is rendered by app.ts onError.
 */
async function scored(
  c: Context<AppEnv>,
  method: 'textScores' | 'wordScores',
  req: Parameters<typeof checkScoring>[1] & Parameters<typeof price<typeof method>>[2],
) {
  price(c, method, req);
  await checkScoring(c, req);
  await admit(c, method, req, { usageTypeKey: 'tokens' });
  const { json, amount } = await scorerOf(c).serialized(method, req);
  await metered(c, () => charge(c, { usageTypeKey: 'tokens', amount }));
  // The route's declared 200 schema describes this text; Hono's typed c.json is for objects.
  return c.body(json, 200, { 'content-type': 'application/json' }) as never;
}

scoringRoutes.openapi(textScoresRoute, (c) => scored(c, 'textScores', c.req.valid('json')));
scoringRoutes.openapi(wordScoresRoute, (c) => scored(c, 'wordScores', c.req.valid('json')));
