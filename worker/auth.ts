/**
 * Bearer JWT verification with jose. Algorithms are pinned: HS256 with JWT_SECRET
 * (local development), RS256/ES256 through JWT_JWKS_URL (production). `exp` is required.
 * A JWKS that cannot be fetched or read is the service's failure, not the token's: 503
 * UPSTREAM_FAILED (docs/auth.md), never 401 or 500.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import type { MiddlewareHandler } from 'hono';
import { ApiError, excerpt } from '../core/problem';
import type { AppEnv, AuthContext, Env } from './env';
import { isWellFormed } from './well-formed';

const HS_ALGORITHMS = ['HS256'];
const JWKS_ALGORITHMS = ['RS256', 'ES256'];

// One JWKS fetcher per URL per isolate: jose caches the keys and rate-limits refetches.
const jwksByUrl = new Map<string, JWTVerifyGetKey>();

/**
 * The key lookup of a JWKS URL. jose's errors about the token's key id (no key, or several,
 * for its kid and alg) stay token errors (401); anything else from the lookup (network error,
 * timeout, non-200 answer, not a key set) means the keys are unavailable (503).
 */
function jwksKeys(url: string): JWTVerifyGetKey {
  let keys = jwksByUrl.get(url);
  if (keys) return keys;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ApiError('INTERNAL_ERROR', 'JWT_JWKS_URL is not a URL');
  }
  const remote = createRemoteJWKSet(parsed);
  keys = async (header, token) => {
    try {
      return await remote(header, token);
    } catch (err) {
      if (err instanceof errors.JWKSNoMatchingKey || err instanceof errors.JWKSMultipleMatchingKeys) throw err;
      const reason = err instanceof Error ? err.message : String(err);
      throw new ApiError('UPSTREAM_FAILED', `The token signing keys (JWT_JWKS_URL) could not be loaded: ${reason}`, {
        status: 503,
      });
    }
  };
  jwksByUrl.set(url, keys);
  return keys;
}

async function verify(token: string, env: Env): Promise<JWTPayload> {
  const options = {
    requiredClaims: ['exp'],
    issuer: env.JWT_ISSUER || undefined,
    audience: env.JWT_AUDIENCE || undefined,
  };
  if (env.JWT_JWKS_URL) {
    return notFromTheFuture(
      (await jwtVerify(token, jwksKeys(env.JWT_JWKS_URL), { ...options, algorithms: JWKS_ALGORITHMS })).payload,
    );
  }
  if (!env.JWT_SECRET) throw new ApiError('INTERNAL_ERROR', 'No JWT_SECRET or JWT_JWKS_URL is configured');
  const key = new TextEncoder().encode(env.JWT_SECRET);
  return notFromTheFuture((await jwtVerify(token, key, { ...options, algorithms: HS_ALGORITHMS })).payload);
}

/** Clock skew accepted on `iat` (seconds). */
export const IAT_SKEW_SECONDS = 300;

/** A token issued more than IAT_SKEW_SECONDS in the future is refused (a forged or misconfigured issuer). */
function notFromTheFuture(payload: JWTPayload): JWTPayload {
  if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + IAT_SKEW_SECONDS) {
    throw new Error(`"iat" is more than ${IAT_SKEW_SECONDS} seconds in the future`);
  }
  return payload;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/**
 * Canonical base64url (RFC 7515 section 2, RFC 4648 section 3.5): the URL alphabet, no padding,
 * a length that is not 4n + 1, and the unused low bits of the last character zero, so that
 * re-encoding the decoded bytes gives the same text. jose decodes leniently (padding, the other
 * alphabet, unused bits set), which made one signed token many accepted strings.
 */
export function isCanonicalBase64url(segment: string): boolean {
  if (!/^[A-Za-z0-9_-]*$/.test(segment)) return false;
  const rest = segment.length % 4;
  if (rest === 1) return false;
  if (rest === 0) return true;
  // 2 characters carry 8 bits (4 unused), 3 carry 16 (2 unused).
  const unusedMask = rest === 2 ? 0b1111 : 0b11;
  return (BASE64URL.indexOf(segment[segment.length - 1]) & unusedMask) === 0;
}

/** Characters of a token's `sub` (OpenID Connect Core 1.0: at most 255 ASCII characters). */
export const SUBJECT_MAX_CHARS = 255;

/**
 * The `sub` claim as the audit log and stored dimensions record it (their `actor`, `created_by`):
 * absent, or a well-formed string of 1 to 255 characters without control characters (C0, DEL,
 * C1). Anything else makes the token invalid (401), since D1 would store a lone surrogate as
 * U+FFFD and a NUL or line break would forge log and audit lines.
 */
function subjectOf(payload: JWTPayload): string | null {
  const sub: unknown = payload.sub;
  if (sub === undefined) return null;
  if (
    typeof sub !== 'string' ||
    sub.length === 0 ||
    sub.length > SUBJECT_MAX_CHARS ||
    !isWellFormed(sub) ||
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f-\u009f]/.test(sub)
  ) {
    throw new Error(
      `"sub" must be a well-formed string of 1 to ${SUBJECT_MAX_CHARS} characters without control characters`,
    );
  }
  return sub;
}

function scopesOf(payload: JWTPayload): string[] {
  const raw = payload.scope ?? payload.scp;
  if (typeof raw === 'string') return raw.split(/\s+/).filter(Boolean);
  if (Array.isArray(raw)) return raw.filter((s): s is string => typeof s === 'string');
  return [];
}

/** Requires a valid bearer token; sets c.var.auth. */
export const requireAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  const header = c.req.header('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match)
    throw new ApiError('UNAUTHORIZED', 'Send the header Authorization: Bearer <token>', {
      headers: { 'www-authenticate': 'Bearer' },
    });
  let payload: JWTPayload;
  let subject: string | null;
  try {
    if (!match[1].split('.').every(isCanonicalBase64url))
      throw new Error('every segment must be canonical base64url (no padding, unused bits zero)');
    payload = await verify(match[1], c.env);
    subject = subjectOf(payload);
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const reason = err instanceof Error ? err.message : 'invalid token';
    throw new ApiError('UNAUTHORIZED', `Invalid bearer token: ${reason}`, {
      headers: { 'www-authenticate': 'Bearer error="invalid_token"' },
    });
  }
  const claim = c.env.JWT_WORKSPACE_CLAIM || 'workspaceId';
  const ws = payload[claim];
  const auth: AuthContext = {
    subject,
    workspaceId: typeof ws === 'string' ? ws : null,
    scopes: scopesOf(payload),
  };
  c.set('auth', auth);
  await next();
};

/** For /workspaces/{workspaceId}/... routes: the path must equal the token's workspace claim. */
export const requireWorkspace: MiddlewareHandler<AppEnv> = async (c, next) => {
  const pathWs = c.req.param('workspaceId');
  const auth = c.get('auth');
  if (!auth.workspaceId || auth.workspaceId !== pathWs) {
    throw new ApiError('WORKSPACE_FORBIDDEN', `The token is not valid for workspace '${excerpt(pathWs ?? '')}'`);
  }
  await next();
};

/** Admin routes need the scope `admin`. */
export const requireAdmin: MiddlewareHandler<AppEnv> = async (c, next) => {
  if (!c.get('auth').scopes.includes('admin'))
    throw new ApiError('ADMIN_SCOPE_REQUIRED', 'This route needs a token with scope admin');
  await next();
};
