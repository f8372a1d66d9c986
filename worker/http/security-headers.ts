/**
 * Browser hardening and cache headers of every answer (docs/spec/decisions.md "Admission and cost"):
 *
 *   every answer          X-Content-Type-Options: nosniff, Referrer-Policy: no-referrer
 *   text/html answers     Content-Security-Policy (HTML_CSP below), X-Frame-Options: DENY
 *                         (the playground at /, the API docs at /api/docs, any HTML error page)
 *   API answers           Cache-Control: no-store under /api/v1, /api/usage-service and /api/admin
 *                         (the authenticated API), problem+json errors included; artifact
 *                         downloads (/api/v1/artifacts/..., 200 and 304) keep their
 *                         `private, no-cache` with their ETag
 *
 * Registered once, at the head of the middleware chain (worker/app.ts), so it also sees the
 * answers of app.onError and app.notFound and the ones routes build as Responses of their own.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../env';

/**
 * The decision's policy plus what the pages need: `img-src data:` for Swagger UI's stylesheet
 * (its icons are data: SVGs) and the playground's empty favicon (`data:,`). `base-uri` and
 * `form-action` do not fall back to default-src, so they are set too. The playground's scripts,
 * Web Worker (a module script under /assets) and service worker are same-origin files; its
 * WebAssembly needs 'wasm-unsafe-eval'. No inline script or style attribute on either page.
 */
export const HTML_CSP = [
  "default-src 'self'",
  "script-src 'self' 'wasm-unsafe-eval'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** The prefixes of the authenticated API (worker/app.ts requireAuth). */
const API_PREFIXES = ['/api/v1/', '/api/usage-service/', '/api/admin/'];
const ARTIFACTS_PREFIX = '/api/v1/artifacts/';

/** Sets `headers` on the answer; a Response with immutable headers (one from fetch) is copied first. */
function setHeaders(c: Parameters<MiddlewareHandler<AppEnv>>[0], headers: Array<[string, string]>): void {
  try {
    for (const [name, value] of headers) c.res.headers.set(name, value);
  } catch {
    const copy = new Response(c.res.body, c.res);
    for (const [name, value] of headers) copy.headers.set(name, value);
    // Unset first: Hono's setter would copy the old answer's headers over the new ones.
    c.res = undefined;
    c.res = copy;
  }
}

export const securityHeaders: MiddlewareHandler<AppEnv> = async (c, next) => {
  await next();
  const headers: Array<[string, string]> = [
    ['X-Content-Type-Options', 'nosniff'],
    ['Referrer-Policy', 'no-referrer'],
  ];
  const type = c.res.headers.get('content-type') ?? '';
  if (/^\s*text\/html\b/i.test(type)) {
    headers.push(['Content-Security-Policy', HTML_CSP], ['X-Frame-Options', 'DENY']);
  }
  const path = c.req.path;
  if (c.req.method !== 'OPTIONS' && API_PREFIXES.some((p) => path.startsWith(p))) {
    const download = path.startsWith(ARTIFACTS_PREFIX) && (c.res.status === 200 || c.res.status === 304);
    if (!download || !c.res.headers.has('cache-control')) headers.push(['Cache-Control', 'no-store']);
  }
  setHeaders(c, headers);
};
