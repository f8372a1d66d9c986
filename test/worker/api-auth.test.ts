import { env } from 'cloudflare:test';
import { SignJWT, UnsecuredJWT, generateKeyPair } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { call, expectProblem, makeModel, mintToken, token, uploadEnglish, uploadModel } from './support/api';

const secret = () => new TextEncoder().encode(env.JWT_SECRET!);
const now = () => Math.floor(Date.now() / 1000);

beforeAll(async () => {
  await uploadModel(makeModel('auth-en', { seed: 31 }));
  await uploadEnglish();
});

// One request per kind of route: workspace-scoped, model-scoped, catalog.
const routes: Array<[string, string, unknown]> = [
  [
    'POST',
    '/api/v1/workspaces/ws_demo/word-scores',
    { seedWords: ['cat'], whitelistWords: ['dog'], embeddingModelId: 'auth-en' },
  ],
  ['POST', '/api/v1/workspaces/ws_demo/text-scores', { texts: ['x'], embeddingModelId: 'auth-en' }],
  ['POST', '/api/v1/embedding-models/auth-en/word-similarity-matrices', { words: ['cat'] }],
  ['GET', '/api/v1/embedding-models', undefined],
  ['GET', '/api/v1/mappers', undefined],
];

async function badTokens(): Promise<Array<[string, string | null, string?]>> {
  const { privateKey } = await generateKeyPair('RS256');
  return [
    ['missing', null],
    ['malformed', 'not-a-jwt'],
    ['malformed scheme', 'x', 'Basic dXNlcjpwYXNz'],
    ['alg none', new UnsecuredJWT({ workspaceId: 'ws_demo' }).setExpirationTime(now() + 600).encode()],
    [
      'wrong key',
      await new SignJWT({ workspaceId: 'ws_demo' })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime(now() + 600)
        .sign(new TextEncoder().encode('another-secret-0123456789abcdef')),
    ],
    [
      'expired',
      await new SignJWT({ workspaceId: 'ws_demo' })
        .setProtectedHeader({ alg: 'HS256' })
        .setExpirationTime(now() - 60)
        .sign(secret()),
    ],
    ['no exp', await new SignJWT({ workspaceId: 'ws_demo' }).setProtectedHeader({ alg: 'HS256' }).sign(secret())],
    [
      'other algorithm (RS256)',
      await new SignJWT({ workspaceId: 'ws_demo' })
        .setProtectedHeader({ alg: 'RS256' })
        .setExpirationTime(now() + 600)
        .sign(privateKey),
    ],
    // Signed with the real secret, so only the algorithm pin can refuse them (jose accepts any key length for HS384/HS512).
    [
      'HS384 with the right secret',
      await new SignJWT({ workspaceId: 'ws_demo' })
        .setProtectedHeader({ alg: 'HS384' })
        .setExpirationTime(now() + 600)
        .sign(secret()),
    ],
    [
      'HS512 with the right secret',
      await new SignJWT({ workspaceId: 'ws_demo' })
        .setProtectedHeader({ alg: 'HS512' })
        .setExpirationTime(now() + 600)
        .sign(secret()),
    ],
  ];
}

describe('bearer authentication on every scoring and catalog route', () => {
  it('rejects missing, malformed, alg none, wrong key, expired and exp-less tokens with 401', async () => {
    for (const [label, tok, header] of await badTokens()) {
      for (const [method, path, body] of routes) {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (header) headers.authorization = header;
        else if (tok) headers.authorization = `Bearer ${tok}`;
        const res = await (
          await import('cloudflare:test')
        ).SELF.fetch(`http://x${path}`, { method, headers, body: body ? JSON.stringify(body) : undefined });
        const parsed = (await res.json()) as any;
        expect(res.status, `${label}: ${method} ${path}`).toBe(401);
        expect(res.headers.get('content-type')).toContain('application/problem+json');
        expect(parsed.code).toBe('UNAUTHORIZED');
        expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
        expect(res.headers.get('x-request-id')).toBeTruthy();
      }
    }
  });

  it('accepts a valid token', async () => {
    for (const [method, path, body] of routes) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}: ${JSON.stringify(r.body)}`).toBe(200);
    }
  });

  it('answers 403 WORKSPACE_FORBIDDEN when the path workspace differs from the claim, or the claim is missing', async () => {
    const other = await mintToken({ workspaceId: 'ws_someone_else' });
    const none = await mintToken({ sub: 'no-workspace' });
    for (const tok of [other, none]) {
      for (const [method, path, body] of routes.filter(([, p]) => p.includes('/workspaces/'))) {
        expectProblem(await call(method, path, body, { token: tok }), 403, 'WORKSPACE_FORBIDDEN');
      }
    }
    // Catalog and model routes need no workspace.
    expect((await call('GET', '/api/v1/embedding-models', undefined, { token: other })).status).toBe(200);
  });

  it('admin routes need the admin scope', async () => {
    expectProblem(await call('GET', '/api/admin/v1/dimensions'), 403, 'ADMIN_SCOPE_REQUIRED');
    expectProblem(await call('GET', '/api/admin/v1/dimensions', undefined, { token: null }), 401, 'UNAUTHORIZED');
    const admin = await mintToken({ scope: 'read admin' });
    expect((await call('GET', '/api/admin/v1/dimensions', undefined, { token: admin })).status).toBe(200);
  });

  it('answers CORS preflights for browser clients', async () => {
    const { SELF } = await import('cloudflare:test');
    const res = await SELF.fetch('http://x/api/v1/workspaces/ws_demo/text-scores', {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(res.status).toBeLessThan(300);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    // Headers a browser client must be able to read on the actual response.
    const get = await SELF.fetch('http://x/api/health', { headers: { origin: 'https://app.example' } });
    const exposed = (get.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    for (const h of ['x-request-id', 'retry-after', 'etag', 'idempotent-replayed', 'location'])
      expect(exposed).toContain(h);
  });

  it('answers a body that is not sent as JSON with 422 VALIDATION_FAILED', async () => {
    const { SELF } = await import('cloudflare:test');
    const res = await SELF.fetch('http://x/api/v1/embedding-models/en-glove-6b-100d/word-availabilities', {
      method: 'POST',
      headers: { authorization: `Bearer ${await token()}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'words=cat',
    });
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const body = (await res.json()) as { code: string; errors: Array<{ path: string }> };
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.errors[0].path).toBe('headers.Content-Type');
  });
});
