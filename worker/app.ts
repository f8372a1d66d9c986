/**
 * The Hono application: cross-cutting middleware (request id, CORS, body limit, auth),
 * problem+json errors, and the route modules. Data flows request -> zod validation ->
 * engine (core/) -> response.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { cors } from 'hono/cors';
import { bodyLimit } from 'hono/body-limit';
import { HTTPException } from 'hono/http-exception';
import type { Hook } from '@hono/zod-openapi';
import { ApiError, asApiError, problemResponse, validationFailed } from './problem';
import { requireAdmin, requireAuth, requireWorkspace } from './auth';
import type { AppEnv } from './env';
import { clip } from './log';
import { idempotency } from './idempotency';
import { declaredLengthLimit, requestIds, utf8Body } from './request-guards';
import { StorageError, storageGuard } from './storage-guard';
import { LIMITS } from '../core/limits';
import { registerHealth } from './routes/health';
import { registerTokenizations } from './routes/tokenizations';
import { registerScoring } from './routes/scoring';
import { releaseRequestModels } from './sources/models';
import { waitUntilOf } from './sources';
import { registerTranslations } from './routes/translations';
import { registerCatalog } from './routes/catalog';
import { registerDimensionAdmin } from './routes/dimensions';
import { registerDocs } from './routes/docs';
import { registerDiagnostics } from './routes/diagnostics';
import { registerPlagiarismRoutes } from './routes/plagiarism';
import { registerQuotaRoutes } from './quotas/routes';
import { registerAdminWorkspaceRoutes } from './quotas/admin-routes';
import { registerArtifacts } from './routes/artifacts';
import { registerPlayground } from './routes/playground';

/** Validation failures of any zod-openapi route become 422 VALIDATION_FAILED. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (!result.success) throw validationFailed(result.error.issues);
};

export function newRouter(): OpenAPIHono<AppEnv> {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

export function createApp(): OpenAPIHono<AppEnv> {
  const app = newRouter();

  // Our own id for every request; a client's X-Request-Id is only echoed (X-Client-Request-Id).
  app.use('*', requestIds);
  // Every D1/R2/KV call is bounded and its failure is a StorageError (503), never a crash.
  app.use('*', storageGuard);
  app.use(
    '/api/*',
    cors({
      origin: '*',
      allowHeaders: ['Authorization', 'Content-Type', 'Idempotency-Key', 'X-Request-Id', 'If-None-Match'],
      allowMethods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      exposeHeaders: ['X-Request-Id', 'X-Client-Request-Id', 'Retry-After', 'ETag', 'Content-Length', 'X-Content-SHA256', 'X-Model-Version', 'X-Model-Checksum', 'Idempotent-Replayed', 'Location'],
      maxAge: 86400,
    }),
  );
  // A declared Content-Length over the limit is refused before the body is read.
  app.use('/api/*', declaredLengthLimit(LIMITS.bodyBytes));
  app.use(
    '/api/*',
    bodyLimit({
      maxSize: LIMITS.bodyBytes,
      onError: () => {
        throw new ApiError('PAYLOAD_TOO_LARGE', `The request body is larger than ${LIMITS.bodyBytes} bytes`);
      },
    }),
  );

  // Bodies must be UTF-8 (JSON and JSON lines): invalid bytes are 422, never replaced by U+FFFD.
  app.use('/api/*', utf8Body);

  // Models a request used stay pinned (not evicted) until it has answered (worker/models.ts).
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

  registerHealth(app);
  registerTokenizations(app);
  registerScoring(app);
  registerCatalog(app);
  registerTranslations(app);
  registerDimensionAdmin(app);
  registerDocs(app);
  registerDiagnostics(app);
  registerPlagiarismRoutes(app);
  registerQuotaRoutes(app);
  registerAdminWorkspaceRoutes(app);
  registerArtifacts(app);
  registerPlayground(app);

  app.doc31('/api/openapi.json', {
    openapi: '3.1.0',
    info: { title: 'Embedding Edge API', version: '1.0.0', description: 'Text analysis and word embeddings at the edge.' },
  });
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' });

  app.notFound((c) => problemResponse(new ApiError('NOT_FOUND', `No route for ${c.req.method} ${new URL(c.req.url).pathname}`), c.get('requestId')));

  app.onError((err, c) => {
    const rid = c.get('requestId');
    // ApiError, or a core scorer's refusal (ScoringError) as its problem (core/problem.ts asApiError).
    const apiError = asApiError(err);
    if (apiError) return problemResponse(apiError, rid);
    if (err instanceof StorageError) {
      console.error(`[${rid}] ${clip(err.message, 500)}`);
      return problemResponse(
        new ApiError('STORAGE_UNAVAILABLE', `Storage did not answer (${err.binding}); nothing was changed or charged, retry the request`, { headers: { 'retry-after': '5' } }),
        rid,
      );
    }
    if (err instanceof HTTPException) {
      // Hono's JSON validator throws 400 for a body that is not JSON: the contract says 422.
      if (err.status === 400) return problemResponse(new ApiError('VALIDATION_FAILED', err.message || 'Malformed request'), rid);
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
    return problemResponse(new ApiError('INTERNAL_ERROR', 'Unexpected error; the request id identifies it in the logs'), rid);
  });

  return app;
}
