/**
 * Cross-cutting request guards (issue 12):
 * - requestIds: X-Request-Id is always generated here; a client's value is never used as an id
 *   (it was stored in the usage ledger) and is only echoed, sanitized, in X-Client-Request-Id.
 * - declaredLengthLimit: a Content-Length over the body limit is refused with 413 before any
 *   byte of the body is read (also when a Transfer-Encoding header is present too).
 * - utf8Body: a request body that is not valid UTF-8 is 422, not silently decoded with U+FFFD.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env';
import { ApiError } from '../core/problem';

/** Printable ASCII, at most 200 characters: what is echoed of a client's X-Request-Id. */
const CLIENT_REQUEST_ID = /^[\x21-\x7e](?:[\x20-\x7e]{0,198}[\x21-\x7e])?$/;

export const requestIds: MiddlewareHandler<AppEnv> = async (c, next) => {
  const id = crypto.randomUUID();
  c.set('requestId', id);
  const client = c.req.header('x-request-id');
  const echo = client !== undefined && CLIENT_REQUEST_ID.test(client) ? client : undefined;
  c.header('X-Request-Id', id);
  if (echo) c.header('X-Client-Request-Id', echo);
  await next();
  // Responses made outside c (a replayed answer, an R2 body) get the headers here as well.
  if (c.res.headers.get('x-request-id') !== id) {
    try {
      c.res.headers.set('X-Request-Id', id);
      if (echo) c.res.headers.set('X-Client-Request-Id', echo);
    } catch {
      const res = new Response(c.res.body, c.res);
      res.headers.set('X-Request-Id', id);
      if (echo) res.headers.set('X-Client-Request-Id', echo);
      c.res = res;
    }
  }
};

export function declaredLengthLimit(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const declared = c.req.header('content-length');
    if (declared !== undefined && /^\d+$/.test(declared.trim()) && Number(declared.trim()) > maxBytes) {
      throw new ApiError(
        'PAYLOAD_TOO_LARGE',
        `The request body is larger than ${maxBytes} bytes (Content-Length: ${declared.trim()})`,
      );
    }
    await next();
  };
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export const utf8Body: MiddlewareHandler<AppEnv> = async (c, next) => {
  const m = c.req.method;
  if ((m === 'POST' || m === 'PUT' || m === 'PATCH') && c.req.raw.body) {
    // Hono caches the bytes, so the route's JSON validator parses these same bytes afterwards.
    const bytes = await c.req.arrayBuffer();
    try {
      fatalUtf8.decode(bytes);
    } catch {
      throw new ApiError('VALIDATION_FAILED', 'The request body is not valid UTF-8', {
        errors: [{ path: '(body)', message: 'invalid UTF-8 byte sequence' }],
      });
    }
  }
  await next();
};
