/**
 * Browser hardening and cache headers (worker/http/security-headers.ts): HTML pages (the
 * playground, the API docs, the "not built" page) carry the Content-Security-Policy,
 * X-Frame-Options, X-Content-Type-Options and Referrer-Policy; every other answer nosniff and
 * no-referrer; the authenticated API (/api/v1, /api/usage-service, /api/admin) answers
 * Cache-Control: no-store, problem+json included, while artifact downloads keep
 * `private, no-cache` with their ETag (200 and 304).
 */
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { HTML_CSP } from '../../worker/http/security-headers';
import { uploadEnglish } from './support/api';
import { adminToken, createWorkspace, mintToken, uniqueWorkspaceId } from './support/quotas';

async function get(path: string, headers: Record<string, string> = {}): Promise<Response> {
  const res = await SELF.fetch(`http://x${path}`, { headers });
  await res.arrayBuffer();
  return res;
}

async function send(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await SELF.fetch(`http://x${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res;
}

/** The decision's directives, and nothing that would let inline or foreign code run. */
function expectHtmlHeaders(what: string, res: Response): void {
  expect(res.headers.get('content-type'), what).toMatch(/^text\/html/);
  const csp = res.headers.get('content-security-policy');
  expect(csp, what).toBe(HTML_CSP);
  const directives = new Map(
    csp!.split(';').map((d) => {
      const [name, ...values] = d.trim().split(/\s+/);
      return [name, values] as const;
    }),
  );
  expect(directives.get('default-src')).toEqual(["'self'"]);
  expect(directives.get('script-src')).toEqual(["'self'", "'wasm-unsafe-eval'"]);
  expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
  for (const [name, values] of directives) {
    for (const bad of ["'unsafe-inline'", "'unsafe-eval'", '*', 'http:', 'https:', 'blob:'])
      expect(values, `${what}: ${name}`).not.toContain(bad);
  }
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
  expect(res.headers.get('x-frame-options'), what).toBe('DENY');
}

function expectNoCsp(what: string, res: Response): void {
  expect(res.headers.get('content-security-policy'), what).toBeNull();
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('referrer-policy'), what).toBe('no-referrer');
}

function expectNoStore(what: string, res: Response): void {
  expect(res.headers.get('cache-control'), `${what} (${res.status})`).toBe('no-store');
  expect(res.headers.get('x-content-type-options'), what).toBe('nosniff');
  expect(res.headers.get('content-security-policy'), what).toBeNull();
}

let ws = '';
let user = '';
let admin = '';

beforeAll(async () => {
  await uploadEnglish();
  admin = await adminToken();
  ws = uniqueWorkspaceId('hdr');
  await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
  user = await mintToken({ workspaceId: ws });
});

describe('HTML pages: CSP, X-Frame-Options, nosniff, no-referrer', () => {
  it('the API docs page', async () => {
    const res = await get('/api/docs');
    expect(res.status).toBe(200);
    expectHtmlHeaders('/api/docs', res);
    // Its assets are no HTML: nosniff and no-referrer, no CSP; their own cache policy stays.
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'init.js']) {
      const a = await get(`/api/docs/${asset}`);
      expect(a.status).toBe(200);
      expectNoCsp(asset, a);
      expect(a.headers.get('cache-control')).toBe('public, max-age=86400');
    }
  });

  it('the playground page (200, 304, and the page that says it is not built), its service worker and assets', async () => {
    await env.ARTIFACTS.delete('web/index.html');
    const missing = await get('/');
    expect(missing.status).toBe(503);
    expectHtmlHeaders('/ not built', missing);

    await env.ARTIFACTS.put('web/index.html', '<!doctype html><title>playground</title><p>headers</p>');
    await env.ARTIFACTS.put('web/sw.js', 'self.addEventListener("fetch", () => {});');
    await env.ARTIFACTS.put('web/assets/app-0001.js', 'console.log(1)');
    for (const path of ['/', '/index.html']) {
      const page = await get(path);
      expect(page.status).toBe(200);
      expectHtmlHeaders(path, page);
      expect(page.headers.get('cache-control')).toBe('no-cache');
      const again = await get(path, { 'if-none-match': page.headers.get('etag')! });
      expect(again.status).toBe(304);
      expectHtmlHeaders(`${path} 304`, again);
    }
    const sw = await get('/sw.js');
    expect(sw.status).toBe(200);
    expect(sw.headers.get('content-type')).toMatch(/^text\/javascript/);
    expectNoCsp('/sw.js', sw);
    expect(sw.headers.get('cache-control')).toBe('no-cache');
    const asset = await get('/assets/app-0001.js');
    expectNoCsp('asset', asset);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
  });

  it('answers that are not HTML get nosniff and no-referrer only: health, the OpenAPI document, a 404', async () => {
    for (const path of ['/api/health', '/api/openapi.json', '/nowhere', '/api/nowhere']) {
      const res = await get(path);
      expect(res.status).toBeLessThan(500);
      expectNoCsp(path, res);
      expect(res.headers.get('x-frame-options')).toBeNull();
    }
  });
});

describe('the authenticated API: Cache-Control no-store', () => {
  it('JSON answers of /api/v1, /api/usage-service and /api/admin', async () => {
    const answers: Array<[string, Response, number]> = [
      ['catalog', await send('GET', '/api/v1/embedding-models', user), 200],
      ['mappers', await send('GET', '/api/v1/mappers', user), 200],
      [
        'tokenizations',
        await send('POST', `/api/v1/workspaces/${ws}/tokenizations`, user, { language: 'en', text: 'cat dog' }),
        200,
      ],
      ['quotas', await send('GET', `/api/usage-service/v1/workspaces/${ws}/quotas`, user), 200],
      ['usage types', await send('GET', '/api/usage-service/v1/usage-types', user), 200],
      ['admin workspace', await send('GET', `/api/admin/v1/workspaces/${ws}`, admin), 200],
      ['admin dimensions', await send('GET', '/api/admin/v1/dimensions', admin), 200],
      ['admin plagiarism pages', await send('GET', '/api/admin/v1/plagiarism/pages', admin), 200],
    ];
    for (const [what, res, status] of answers) {
      expect(res.status, what).toBe(status);
      expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
      expectNoStore(what, res);
    }
  });

  it('problem+json answers: 401, 403, 404, 422', async () => {
    const answers: Array<[string, Response, number]> = [
      ['bad token', await send('GET', '/api/v1/embedding-models', 'not-a-token'), 401],
      ['wrong workspace', await send('GET', '/api/usage-service/v1/workspaces/ws_other/quotas', user), 403],
      ['not admin', await send('GET', '/api/admin/v1/dimensions', user), 403],
      ['unknown model', await send('GET', '/api/v1/embedding-models/no-such-model', user), 404],
      ['no route', await send('GET', '/api/v1/nowhere', user), 404],
      ['invalid body', await send('POST', `/api/v1/workspaces/${ws}/tokenizations`, user, { text: 1 }), 422],
      ['unknown artifact', await send('GET', '/api/v1/artifacts/models/no-such-model', user), 404],
      ['invalid artifact id', await send('GET', '/api/v1/artifacts/languages/xx', user), 422],
    ];
    for (const [what, res, status] of answers) {
      expect(res.status, what).toBe(status);
      expect(res.headers.get('content-type'), what).toContain('application/problem+json');
      expectNoStore(what, res);
    }
    // Without a token at all the refusal is not stored either.
    expectNoStore('no token', await get('/api/v1/embedding-models'));
  });

  it('artifact downloads keep private, no-cache with their ETag (200 and 304)', async () => {
    for (const path of ['/api/v1/artifacts/languages/en', '/api/v1/artifacts/dimensions']) {
      const res = await send('GET', path, user);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('private, no-cache');
      const etag = res.headers.get('etag');
      expect(etag, path).toMatch(/^"[^"]+"$/);
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
      const again = await SELF.fetch(`http://x${path}`, {
        headers: { authorization: `Bearer ${user}`, 'if-none-match': etag! },
      });
      await again.arrayBuffer();
      expect(again.status, path).toBe(304);
      expect(again.headers.get('cache-control'), path).toBe('private, no-cache');
      expect(again.headers.get('etag'), path).toBe(etag);
    }
  });
});
