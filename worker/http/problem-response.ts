/**
 * The problem+json Response of an ApiError. The problem table, ApiError and the body are
 * core/problem.ts (shared with the browser's offline scorer).
 */
import { problemBody, type ApiError } from '../../core/problem';

export function problemResponse(
  err: ApiError,
  requestId?: string,
  extraHeaders: Record<string, string> = {},
): Response {
  const headers = new Headers({ 'content-type': 'application/problem+json', ...extraHeaders, ...err.headers });
  return new Response(JSON.stringify(problemBody(err, requestId ? `urn:request:${requestId}` : undefined)), {
    status: err.status,
    headers,
  });
}
