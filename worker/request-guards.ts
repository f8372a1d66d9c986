/**
 * Cross-cutting request guards (hostile or broken clients must get an answer, not a crash):
 * - requestIds: X-Request-Id is always generated here; a client's value is never used as an id
 *   (it was stored in the usage ledger) and is only echoed, sanitized, in X-Client-Request-Id.
 * - requestBody: reads the whole request body once, before auth and routes, and answers every way
 *   a body can go wrong with a problem (docs/reliability.md, rule "Request bodies"):
 *   - over the limit (declared or streamed): 413; the rest is read and discarded up to DRAIN_BYTES,
 *     because workerd closes a keep-alive connection whose request body the Worker left unread,
 *     without `Connection: close` (and it ignores a Worker's Connection header), so a client that
 *     sent the next request on that connection got ECONNRESET. Bodies declared larger than that are
 *     refused before any byte is read (the runtime then closes the connection);
 *   - no byte for LIMITS.bodyIdleTimeoutMs, or not complete LIMITS.bodyReadTimeoutMs after the
 *     request arrived: 408 REQUEST_TIMEOUT (a stalled upload held a request open for good);
 *   - the body stream fails (malformed chunked framing, the client gone mid-upload): 422
 *     VALIDATION_FAILED, the client's fault, never a 500 and never logged;
 *   - not valid UTF-8 (POST, PUT, PATCH): 422, not silently decoded with U+FFFD.
 *   Routes parse exactly what was read here: the text and bytes fill Hono's body cache (POST, PUT,
 *   PATCH), or become the request's body again (other methods).
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from './env';
import { ApiError } from '../core/problem';
import { LIMITS } from '../core/limits';

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

/**
 * How much of a body over the limit is read and thrown away so the connection stays usable
 * (see above); a larger one is refused unread and its connection closed by the runtime.
 */
export const DRAIN_BYTES = 4 * LIMITS.bodyBytes;

const TIMED_OUT = Symbol('timed out');

/** `promise`, or TIMED_OUT after `ms` (the timer is cleared either way). */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), Math.max(0, ms));
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function tooLarge(maxBytes: number, declared?: number): ApiError {
  return new ApiError(
    'PAYLOAD_TOO_LARGE',
    declared !== undefined
      ? `The request body is larger than ${maxBytes} bytes (Content-Length: ${declared})`
      : `The request body is larger than ${maxBytes} bytes`,
  );
}

/**
 * Reads `stream` to its end: the bytes when they are at most `maxBytes` (and no more were
 * declared); otherwise 413 after discarding up to DRAIN_BYTES. 408 when the body
 * stalls or misses the deadline, 422 when the stream fails. Stops reading (cancels) on any refusal.
 */
async function readBody(
  stream: ReadableStream<Uint8Array>,
  maxBytes: number,
  declared: number | undefined,
  deadline: number,
): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  const stop = (): void => {
    reader.cancel().catch(() => {});
  };
  for (;;) {
    const read = reader.read();
    const remaining = deadline - Date.now();
    let result: ReadableStreamReadResult<Uint8Array> | typeof TIMED_OUT;
    try {
      result = await within(read, Math.min(LIMITS.bodyIdleTimeoutMs, remaining));
    } catch {
      // Only the client feeds this stream: a malformed chunk, a connection lost mid-upload.
      stop();
      throw new ApiError('VALIDATION_FAILED', 'The request body could not be read to its end', {
        errors: [{ path: '(body)', message: 'malformed chunked encoding, or the connection was lost mid-body' }],
      });
    }
    if (result === TIMED_OUT) {
      read.catch(() => {});
      stop();
      if (total > maxBytes) throw tooLarge(maxBytes, declared);
      throw new ApiError(
        'REQUEST_TIMEOUT',
        LIMITS.bodyIdleTimeoutMs < remaining
          ? `No byte of the request body arrived for ${LIMITS.bodyIdleTimeoutMs / 1000} s (${total} bytes received)`
          : `The request body was not complete ${LIMITS.bodyReadTimeoutMs / 1000} s after the request arrived (${total} bytes received)`,
      );
    }
    if (result.done) break;
    total += result.value.byteLength;
    if (total <= maxBytes) chunks.push(result.value);
    else {
      chunks.length = 0; // over the limit: only counted from here on
      if (total > DRAIN_BYTES) {
        stop();
        throw tooLarge(maxBytes, declared);
      }
    }
  }
  reader.releaseLock();
  if (total > maxBytes || (declared !== undefined && declared > maxBytes)) throw tooLarge(maxBytes, declared);
  const bytes = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

const fatalUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

export function requestBody(maxBytes: number): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const stream = c.req.raw.body;
    if (!stream) return next();
    const deadline = Date.now() + LIMITS.bodyReadTimeoutMs;
    const header = c.req.header('content-length')?.trim();
    const declared = header !== undefined && /^\d+$/.test(header) ? Number(header) : undefined;
    // Too large to drain: refused before any byte is read (the runtime then closes the connection).
    if (declared !== undefined && declared > DRAIN_BYTES) throw tooLarge(maxBytes, declared);
    const bytes = await readBody(stream, maxBytes, declared, deadline);
    const m = c.req.method;
    let text: string | undefined;
    if (m === 'POST' || m === 'PUT' || m === 'PATCH') {
      try {
        text = fatalUtf8.decode(bytes);
      } catch {
        throw new ApiError('VALIDATION_FAILED', 'The request body is not valid UTF-8', {
          errors: [{ path: '(body)', message: 'invalid UTF-8 byte sequence' }],
        });
      }
    }
    if (text !== undefined) {
      // The text decoded here and the bytes answer Hono's json()/text()/arrayBuffer() (its body
      // cache, which is what the routes and the validators read), so a 2 MB body is decoded once
      // and not copied again. Hono keeps promises in that cache (its type names the values).
      const cache = c.req.bodyCache as Record<string, Promise<unknown>>;
      cache.text = Promise.resolve(text);
      cache.arrayBuffer = Promise.resolve(bytes.buffer);
    } else if (m !== 'GET' && m !== 'HEAD') {
      // Other methods read these bytes from the request (a GET or HEAD request cannot carry a body).
      c.req.raw = new Request(c.req.raw, { body: bytes });
    }
    await next();
  };
}
