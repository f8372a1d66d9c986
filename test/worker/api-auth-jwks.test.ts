/**
 * Production authentication (worker/auth.ts): RS256/ES256 tokens verified against a JWKS that a
 * fake identity provider serves (test/support/upstreams/jwks.ts, reached by the Worker's real outbound
 * fetch), with JWT_ISSUER and JWT_AUDIENCE. The real app runs with the production variables;
 * nothing of ours is mocked. Each test uses its own JWKS URL, so jose's per-URL cache
 * (one per isolate) starts empty.
 */
import { env } from 'cloudflare:test';
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type CryptoKey, type JWK } from 'jose';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createApp } from '../../worker/app';
import type { Env } from '../../worker/env';

const ISSUER = 'https://idp.example/';
const AUDIENCE = 'embedding-edge';
const now = () => Math.floor(Date.now() / 1000);

interface Key {
  kid: string;
  alg: string;
  privateKey: CryptoKey;
  jwk: JWK;
}

async function newKey(alg: string, kid: string): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' } };
}

let urls = 0;
/** A JWKS URL of its own on the fake identity provider. */
const jwksUrl = (): string => `https://jwks.test/tenant-${++urls}-${crypto.randomUUID()}/jwks.json`;

/** Sets what the fake identity provider answers at `url`. */
async function publish(
  url: string,
  answer: { keys: Key[] } | { status: number; body: unknown } | { network: true },
): Promise<void> {
  const body = 'keys' in answer ? { status: 200, body: { keys: answer.keys.map((k) => k.jwk) } } : answer;
  const res = await fetch(url, { method: 'PUT', body: JSON.stringify(body) });
  expect(res.status).toBe(204);
}

/** GET requests the fake identity provider has received at `url`. */
async function hits(url: string): Promise<number> {
  const u = new URL(url);
  return (await (await fetch(`https://jwks.test/__hits${u.pathname}`)).json()) as number;
}

async function sign(
  key: Key,
  claims: Record<string, unknown> = {},
  header: Record<string, unknown> = {},
): Promise<string> {
  return new SignJWT({ workspaceId: 'ws_demo', sub: 'jwks-user', ...claims })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setExpirationTime(now() + 600)
    .sign(key.privateKey);
}

/** The real app with the production auth variables. JWT_SECRET stays set (a left-over development secret): the JWKS takes precedence. */
function productionEnv(url: string): Env {
  return { ...(env as unknown as Env), JWT_JWKS_URL: url, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE };
}

interface Answer {
  status: number;
  body: { code?: string; detail?: string; data?: unknown[] };
  headers: Headers;
}

/** A workspace route (token claim must match the path) and a catalog route. */
async function request(url: string, token: string, path = '/api/usage-service/v1/usage-types'): Promise<Answer> {
  const res = await createApp().request(path, { headers: { authorization: `Bearer ${token}` } }, productionEnv(url));
  return { status: res.status, body: (await res.json()) as Answer['body'], headers: res.headers };
}

function expectUnauthorized(r: Answer, label: string): void {
  expect(r.status, `${label}: ${JSON.stringify(r.body)}`).toBe(401);
  expect(r.body.code).toBe('UNAUTHORIZED');
  expect(r.headers.get('www-authenticate')).toMatch(/^Bearer/);
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** Date.now() as jose sees it, `ms` later than the real clock (its JWKS cooldown and cache age read Date.now). */
function advanceClock(ms: number): void {
  const real = Date.now.bind(Date);
  vi.spyOn(Date, 'now').mockImplementation(() => real() + ms);
}

describe('JWKS authentication (JWT_JWKS_URL, JWT_ISSUER, JWT_AUDIENCE)', () => {
  it('accepts RS256 and ES256 tokens signed by keys of the JWKS, with the workspace claim enforced', async () => {
    const url = jwksUrl();
    const rsa = await newKey('RS256', 'rsa-1');
    const ec = await newKey('ES256', 'ec-1');
    await publish(url, { keys: [rsa, ec] });
    for (const key of [rsa, ec]) {
      const tok = await sign(key);
      const r = await request(url, tok, '/api/usage-service/v1/workspaces/ws_demo/quotas');
      expect(r.status, `${key.alg}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(Array.isArray(r.body.data)).toBe(true);
      const other = await request(url, tok, '/api/usage-service/v1/workspaces/ws_other/quotas');
      expect(other.status, key.alg).toBe(403);
      expect(other.body.code).toBe('WORKSPACE_FORBIDDEN');
    }
    // One fetch served both keys (jose's cache).
    expect(await hits(url)).toBe(1);
  });

  it('refuses HS256 (even signed with JWT_SECRET) and alg none when a JWKS is configured', async () => {
    const url = jwksUrl();
    await publish(url, { keys: [await newKey('RS256', 'rsa-1')] });
    const secret = new TextEncoder().encode((env as unknown as Env).JWT_SECRET!);
    const hs = await new SignJWT({ workspaceId: 'ws_demo' })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(now() + 600)
      .sign(secret);
    expectUnauthorized(await request(url, hs), 'HS256');
    // The same token is fine for the development configuration, so only the algorithm pin refuses it.
    const dev = await createApp().request(
      '/api/usage-service/v1/usage-types',
      { headers: { authorization: `Bearer ${hs}` } },
      { ...(env as unknown as Env), JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
    );
    expect(dev.status).toBe(200);
    await dev.arrayBuffer();
    // An RS384 token from a key the set publishes for RS384: the pin refuses it too.
    const rs384 = await newKey('RS384', 'rsa-384');
    await publish(url, { keys: [rs384] });
    const t384 = await sign(rs384);
    expectUnauthorized(await request(url, t384), 'RS384');
    const none = new UnsecuredJWT({ workspaceId: 'ws_demo' })
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setExpirationTime(now() + 600)
      .encode();
    expectUnauthorized(await request(url, none), 'alg none');
  });

  it('refuses a wrong or missing issuer or audience, and an expired token, with 401', async () => {
    const url = jwksUrl();
    const key = await newKey('ES256', 'ec-1');
    await publish(url, { keys: [key] });
    expect((await request(url, await sign(key))).status).toBe(200);
    const cases: Array<[string, string]> = [
      [
        'wrong iss',
        await new SignJWT({ workspaceId: 'ws_demo' })
          .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
          .setIssuer('https://evil.example/')
          .setAudience(AUDIENCE)
          .setExpirationTime(now() + 600)
          .sign(key.privateKey),
      ],
      [
        'no iss',
        await new SignJWT({ workspaceId: 'ws_demo' })
          .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
          .setAudience(AUDIENCE)
          .setExpirationTime(now() + 600)
          .sign(key.privateKey),
      ],
      [
        'wrong aud',
        await new SignJWT({ workspaceId: 'ws_demo' })
          .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
          .setIssuer(ISSUER)
          .setAudience('another-service')
          .setExpirationTime(now() + 600)
          .sign(key.privateKey),
      ],
      [
        'no aud',
        await new SignJWT({ workspaceId: 'ws_demo' })
          .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
          .setIssuer(ISSUER)
          .setExpirationTime(now() + 600)
          .sign(key.privateKey),
      ],
      [
        'expired',
        await new SignJWT({ workspaceId: 'ws_demo' })
          .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .setExpirationTime(now() - 60)
          .sign(key.privateKey),
      ],
      [
        'no exp',
        await new SignJWT({ workspaceId: 'ws_demo' })
          .setProtectedHeader({ alg: 'ES256', kid: 'ec-1' })
          .setIssuer(ISSUER)
          .setAudience(AUDIENCE)
          .sign(key.privateKey),
      ],
    ];
    for (const [label, tok] of cases) expectUnauthorized(await request(url, tok), label);
  });

  it('refuses a token whose kid is not in the JWKS, and one signed by another key under a known kid, with 401', async () => {
    const url = jwksUrl();
    const known = await newKey('RS256', 'rsa-1');
    await publish(url, { keys: [known] });
    expect((await request(url, await sign(known))).status).toBe(200);
    const stranger = await newKey('RS256', 'rsa-unknown');
    expectUnauthorized(await request(url, await sign(stranger)), 'unknown kid');
    const impostor = await newKey('RS256', 'rsa-1');
    expectUnauthorized(await request(url, await sign(impostor)), 'known kid, other key');
  });

  it('key rotation: a second key in the set is accepted; a key published later is fetched once the 30 s cooldown has passed', async () => {
    const url = jwksUrl();
    const first = await newKey('RS256', 'key-2025');
    const second = await newKey('ES256', 'key-2026');
    await publish(url, { keys: [first] });
    expect((await request(url, await sign(first))).status).toBe(200);
    expect(await hits(url)).toBe(1);

    // The provider publishes the next key. Within jose's 30 s refetch cooldown the isolate still
    // has the old set: a token with the new kid is refused (401, documented in docs/auth.md).
    await publish(url, { keys: [first, second] });
    expectUnauthorized(await request(url, await sign(second)), 'new kid within the cooldown');
    expect(await hits(url)).toBe(1);
    // After the cooldown the unknown kid makes jose fetch the set again, and the new key works;
    // the old one too, while it stays in the set.
    advanceClock(31_000);
    const rotated = await request(url, await sign(second));
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(await hits(url)).toBe(2);
    expect((await request(url, await sign(first))).status).toBe(200);

    // The old key is withdrawn: once the cached set is older than jose's 10 min cacheMaxAge, it is refused.
    await publish(url, { keys: [second] });
    vi.restoreAllMocks();
    advanceClock(31_000 + 11 * 60_000);
    expectUnauthorized(await request(url, await sign(first)), 'withdrawn key');
    expect((await request(url, await sign(second))).status).toBe(200);
    expect(await hits(url)).toBe(3);
  });

  it('a JWKS that cannot be fetched or read is 503 UPSTREAM_FAILED (never 401 or 500); the next request after recovery is accepted', async () => {
    const key = await newKey('RS256', 'rsa-1');
    const tok = await sign(key);
    const failures: Array<[string, Parameters<typeof publish>[1]]> = [
      ['HTTP 500', { status: 500, body: 'boom' }],
      ['HTTP 404', { status: 404, body: { error: 'not found' } }],
      ['not JSON', { status: 200, body: '<html>login</html>' }],
      ['not a key set', { status: 200, body: { keyz: [] } }],
      ['connection fails', { network: true }],
    ];
    for (const [label, answer] of failures) {
      const url = jwksUrl();
      await publish(url, answer);
      const r = await request(url, tok);
      expect(r.status, `${label}: ${JSON.stringify(r.body)}`).toBe(503);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(r.body.code, label).toBe('UPSTREAM_FAILED');
      expect(r.body.detail, label).toContain('JWT_JWKS_URL');
      expect(await hits(url), label).toBe(1);
      // A failed fetch is not cached: once the provider answers again, the same token is accepted.
      await publish(url, { keys: [key] });
      const ok = await request(url, tok);
      expect(ok.status, `${label}, recovered: ${JSON.stringify(ok.body)}`).toBe(200);
      expect(await hits(url), label).toBe(2);
    }
  });
});
