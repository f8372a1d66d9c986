import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app';

/** Routes of the app that are not API operations, so not in the OpenAPI document (each with why). */
const UNDOCUMENTED: Record<string, string> = {
  'GET /api/openapi.json': 'the document itself',
  'GET /api/docs': 'Swagger UI page rendering the document',
  'GET /api/docs/{asset}': 'Swagger UI assets',
  'GET /': 'playground page (web/ objects in R2)',
  'GET /index.html': 'playground page',
  'GET /sw.js': 'playground service worker',
  'GET /assets/{file}': 'playground assets',
};

/** Every route handler the app registers, as "METHOD /path" with OpenAPI path parameters (middleware excluded). */
function appRoutes(): string[] {
  const app = createApp();
  const out = new Set<string>();
  for (const r of app.routes) {
    if (r.method === 'ALL') continue; // app.use middleware (auth, CORS, body limit, request id)
    const path = r.path.replace(/\/:(\w+)(\{[^}]*\})?/g, '/{$1}');
    out.add(`${r.method} ${path}`);
  }
  return [...out].sort();
}

describe('OpenAPI document and /api/docs', () => {
  it('generates an OpenAPI 3.1 document with every scoring and catalog path', async () => {
    const res = await SELF.fetch('http://x/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toBe('3.1.0');
    for (const [path, method] of [
      ['/api/v1/workspaces/{workspaceId}/text-scores', 'post'],
      ['/api/v1/workspaces/{workspaceId}/word-scores', 'post'],
      ['/api/v1/workspaces/{workspaceId}/autocomplete-suggestions', 'post'],
      ['/api/v1/embedding-models/{embeddingModelId}/word-availabilities', 'post'],
      ['/api/v1/embedding-models/{embeddingModelId}/word-similarity-matrices', 'post'],
      ['/api/v1/embedding-models', 'get'],
      ['/api/v1/embedding-models/{id}', 'get'],
      ['/api/v1/mappers', 'get'],
      ['/api/admin/v1/dimensions', 'post'],
      ['/api/admin/v1/dimensions', 'get'],
    ]) {
      expect(doc.paths[path]?.[method], `${method} ${path}`).toBeTruthy();
    }
    for (const name of [
      'TextScoresRequest',
      'WordScoresRequest',
      'Dimension',
      'GoalConfig',
      'EmbeddingModel',
      'MapperCatalogEntry',
      'Problem',
      'Explanation',
      'ExplainedToken',
    ]) {
      expect(doc.components.schemas[name], name).toBeTruthy();
    }
    // Extensions of issue 13: composition and explain are documented request fields.
    const textReq = doc.components.schemas.TextScoresRequest as {
      properties: Record<string, { enum?: string[]; description?: string }>;
    };
    expect(textReq.properties.composition.enum).toEqual(['rules', 'mean']);
    expect(textReq.properties.explain.description).toMatch(/explanation/);
  });

  it('documents every route the app registers (the list comes from the app, not from this test)', async () => {
    const doc = (await (await SELF.fetch('http://x/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const routes = appRoutes();
    expect(routes.length).toBeGreaterThan(29);
    const missing = routes
      .filter((r) => !Object.hasOwn(UNDOCUMENTED, r))
      .filter((r) => {
        const [method, path] = r.split(' ');
        return !doc.paths[path]?.[method.toLowerCase()];
      });
    expect(missing).toEqual([]);
    // The exceptions are routes that exist, and the document has no operation the app lacks.
    for (const r of Object.keys(UNDOCUMENTED)) expect(routes, r).toContain(r);
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`),
    );
    expect(documented.filter((r) => !routes.includes(r))).toEqual([]);
  });

  it('serves the docs page and every asset it references from the Worker (no CDN)', async () => {
    const res = await SELF.fetch('http://x/api/docs');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const html = await res.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]);
    expect(refs.length).toBeGreaterThanOrEqual(3);
    for (const ref of refs) {
      expect(ref.startsWith('/api/docs/'), `${ref} is served by the Worker`).toBe(true);
      const asset = await SELF.fetch(`http://x${ref}`);
      expect(asset.status, ref).toBe(200);
      const body = await asset.text();
      expect(body.length, ref).toBeGreaterThan(100);
    }
    const bundle = await (await SELF.fetch('http://x/api/docs/swagger-ui-bundle.js')).text();
    expect(bundle).toContain('SwaggerUIBundle');
    const init = await (await SELF.fetch('http://x/api/docs/init.js')).text();
    expect(init).toContain('/api/openapi.json');
    const missing = await SELF.fetch('http://x/api/docs/nope.js');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toContain('application/problem+json');
  });
});
