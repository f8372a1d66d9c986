import { SELF } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';

describe('worker skeleton', () => {
  it('answers the health probe with a request id', async () => {
    const res = await SELF.fetch('http://x/api/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
    expect(res.headers.get('x-request-id')).toMatch(/.+/);
  });

  it('renders unknown routes as problem+json 404', async () => {
    const res = await SELF.fetch('http://x/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const body = (await res.json()) as { code: string };
    expect(body.code).toBe('NOT_FOUND');
  });

  it('refuses /api/v1 without a bearer token', async () => {
    const res = await SELF.fetch('http://x/api/v1/embedding-models');
    expect(res.status).toBe(401);
    expect(((await res.json()) as { code: string }).code).toBe('UNAUTHORIZED');
  });
});
