/**
 * problem+json answers of the Worker. The problem table, ApiError and the body are core/problem.ts
 * (shared with the browser's offline scorer); they are re-exported here for the worker modules.
 */
import { ApiError, problemBody } from '../core/problem';

export { ApiError, asApiError, requireLanguage, validationFailed, type FieldProblem } from '../core/problem';

export function problemResponse(err: ApiError, requestId?: string, extraHeaders: Record<string, string> = {}): Response {
  const headers = new Headers({ 'content-type': 'application/problem+json', ...extraHeaders, ...err.headers });
  return new Response(JSON.stringify(problemBody(err, requestId ? `urn:request:${requestId}` : undefined)), {
    status: err.status,
    headers,
  });
}
