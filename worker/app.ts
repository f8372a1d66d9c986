/**
 * The Hono application: cross-cutting middleware (request id, CORS, body limit, auth),
 * problem+json errors, and one sub-app per feature folder (scoring/, catalog/, dimensions/,
 * plagiarism/, quotas/, health/, pages/). Data flows request -> zod validation (the route) ->
 * engine (core/engine.ts, with worker/sources/) -> response.
 */
import type { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { HTTPException } from 'hono/http-exception';
import { timing } from 'hono/timing';
import { ApiError, asApiError, excerpt } from '../core/problem';
import { LIMITS } from '../core/limits';
import { requireAdmin, requireAuth, requireWorkspace } from './auth';
import type { AppEnv } from './env';
import { clip } from './log';
import { idempotency } from './idempotency';
import { costHeader } from './admission/admit';
import { requestBody, requestIds } from './request-guards';
import { StorageError, storageGuard } from './storage-guard';
import { problemResponse } from './http/problem-response';
import { newRouter } from './http/router';
import { securityHeaders } from './http/security-headers';
import { releaseRequestModels } from './sources/memory-budget';
import { waitUntilOf } from './sources';
import { healthRoutes } from './health/routes';
import { diagnosticsRoutes } from './health/diagnostics';
import { scoringRoutes } from './scoring/routes';
import { tokenizationRoutes } from './tokenization/routes';
import { modelVocabularyRoutes, workspaceVocabularyRoutes } from './vocabulary/routes';
import { catalogRoutes } from './catalog/routes';
import { artifactRoutes } from './artifacts/routes';
import { dimensionRoutes } from './dimensions/routes';
import { plagiarismCheckRoutes, plagiarismPageRoutes } from './plagiarism/routes';
import { quotaRoutes } from './quotas/routes';
import { adminWorkspaceRoutes } from './quotas/admin';
import { docsRoutes } from './pages/docs';
import { playgroundRoutes } from './pages/playground';

export function createApp(): OpenAPIHono<AppEnv> {
  const app = newRouter();

  // Our own id for every request; a client's X-Request-Id is only echoed (X-Client-Request-Id).
  app.use('*', requestIds);
  // nosniff and no-referrer on every answer, the CSP on HTML, no-store on the API (worker/http/security-headers.ts).
  app.use('*', securityHeaders);
  // Server-Timing: total, and the phases routes mark (load, compute, meter: worker/http/timing.ts).
  app.use('/api/*', timing({ totalDescription: '' }));
  // Every D1/R2/KV call is bounded and its failure is a StorageError (503), never a crash.
  app.use('*', storageGuard);
  app.use(
    '/api/*',
    cors({
      origin: '*',
      allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-None-Match'],
      allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      exposeHeaders: [
        'X-Request-Id',
        'X-Client-Request-Id',
        'Retry-After',
        'ETag',
        'Content-Length',
        'X-Content-SHA256',
        'X-Model-Version',
        'X-Model-Checksum',
        'Idempotent-Replayed',
        'Location',
        'X-Cost-Units',
      ],
      maxAge: 86400,
    }),
  );
  // The body is read here, once: 413 over the limit (drained so the connection stays usable), 408
  // when it stalls, 422 when its stream fails or it is not UTF-8 (worker/request-guards.ts).
  // Every route, the playground's too: a body left unread makes the runtime close the connection.
  app.use('*', requestBody(LIMITS.bodyBytes));

  // Every answer of a priced route carries its estimate, X-Cost-Units (worker/admission/admit.ts).
  app.use('/api/*', costHeader);

  // Models a request used stay pinned (not evicted) until it has answered (worker/sources/models.ts).
  app.use('*', async (c, next) => {
    try {
      await next();
    } finally {
      releaseRequestModels(waitUntilOf(c));
    }
  });

  // Auth: everything under /api/v1, /api/usage-service and /api/admin needs a bearer token.
  for (const prefix of ['/api/v1/*', '/api/usage-service/*', '/api/admin/*']) app.use(prefix, requireAuth);
  app.use('/api/v1/workspaces/:workspaceId/*', requireWorkspace);
  // Idempotency-Key of the workspace POST routes (after auth: only the workspace's own requests).
  app.use('/api/v1/workspaces/:workspaceId/*', idempotency);
  app.use('/api/usage-service/v1/workspaces/:workspaceId/*', requireWorkspace);
  app.use('/api/admin/*', requireAdmin);

  // Each feature is a sub-app with paths relative to its base (the order is the OpenAPI document's).
  const workspace = '/api/v1/workspaces/:workspaceId';
  app.route('/api', healthRoutes);
  app.route(workspace, tokenizationRoutes);
  app.route(workspace, scoringRoutes);
  app.route(workspace, workspaceVocabularyRoutes);
  app.route('/api/v1', catalogRoutes);
  app.route('/api/v1', modelVocabularyRoutes);
  app.route('/api/admin/v1/dimensions', dimensionRoutes);
  app.route('/api/docs', docsRoutes);
  app.route('/api/admin/v1/diagnostics', diagnosticsRoutes);
  app.route(workspace, plagiarismCheckRoutes);
  app.route('/api/admin/v1/plagiarism', plagiarismPageRoutes);
  app.route('/api/usage-service/v1', quotaRoutes);
  app.route('/api/admin/v1/workspaces', adminWorkspaceRoutes);
  app.route('/api/v1/artifacts', artifactRoutes);
  app.route('/', playgroundRoutes);

  app.doc31('/api/openapi.json', {
    openapi: '3.1.0',
    info: {
      title: 'Embedding Edge API',
      version: '1.0.0',
      description: 'Text analysis and word embeddings at the edge.',
    },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', {
    type: 'http',
    scheme: 'bearer',
    bearerFormat: 'JWT',
  });

  app.notFound((c) =>
    problemResponse(
      new ApiError('NOT_FOUND', `No route for ${c.req.method} ${excerpt(new URL(c.req.url).pathname)}`),
      c.get('requestId'),
    ),
  );

  app.onError((err, c) => {
    const rid = c.get('requestId');
    // ApiError, or a core scorer's refusal (ScoringError) as its problem (core/problem.ts asApiError).
    const apiError = asApiError(err);
    if (apiError) return problemResponse(apiError, rid);
    if (err instanceof StorageError) {
      console.error(`[${rid}] ${clip(err.message, 500)}`);
      return problemResponse(
        new ApiError(
          'STORAGE_UNAVAILABLE',
          `Storage did not answer (${err.binding}); nothing was changed or charged, retry the request`,
          { headers: { 'retry-after': '5' } },
        ),
        rid,
      );
    }
    if (err instanceof HTTPException) {
      // Hono's JSON validator throws 400 for a body that is not JSON: the contract says 422.
      if (err.status === 400)
        return problemResponse(new ApiError('VALIDATION_FAILED', err.message || 'Malformed request'), rid);
      if (err.status === 413) return problemResponse(new ApiError('PAYLOAD_TOO_LARGE', err.message), rid);
      // A body that is not sent as JSON is a malformed request like unparsable JSON (decisions.md: 422).
      if (err.status === 415) {
        return problemResponse(
          new ApiError('VALIDATION_FAILED', 'The request body must be JSON, sent with Content-Type: application/json', {
            errors: [{ path: 'headers.Content-Type', message: 'Expected application/json' }],
          }),
          rid,
        );
      }
      return problemResponse(new ApiError('INTERNAL_ERROR', err.message, { status: err.status }), rid);
    }
    console.error(`[${rid}] ${clip(err instanceof Error ? (err.stack ?? err.message) : err, 2000)}`);
    return problemResponse(
      new ApiError('INTERNAL_ERROR', 'Unexpected error; the request id identifies it in the logs'),
      rid,
    );
  });

  return app;
}
