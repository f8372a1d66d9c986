import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';

describe('OpenAPI document and /api/docs', () => {
  it('generates an OpenAPI 3.1 document with every scoring and catalog path', async () => {
    const res = await SELF.fetch('http://x/api/openapi.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBeTruthy();
    const doc = (await res.json()) as { openapi: string; paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } };
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
    for (const name of ['TextScoresRequest', 'WordScoresRequest', 'Dimension', 'GoalConfig', 'EmbeddingModel', 'MapperCatalogEntry', 'Problem', 'Explanation', 'ExplainedToken']) {
      expect(doc.components.schemas[name], name).toBeTruthy();
    }
    // Extensions of issue 13: composition and explain are documented request fields.
    const textReq = doc.components.schemas.TextScoresRequest as { properties: Record<string, { enum?: string[]; description?: string }> };
    expect(textReq.properties.composition.enum).toEqual(['rules', 'mean']);
    expect(textReq.properties.explain.description).toMatch(/explanation/);
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
