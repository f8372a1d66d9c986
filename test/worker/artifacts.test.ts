/**
 * Artifact endpoints (worker/artifacts/routes.ts): auth, bytes identical to R2, SHA-256 header
 * equal to a digest computed here, ETag / If-None-Match -> 304, unknown ids, OpenAPI entries,
 * stored-dimension seeds, and the playground route serving web/ objects from R2.
 */
import { env, SELF } from 'cloudflare:test';
import { createApp } from '../../worker/app';
import { mapperBundleHead, parseMapperBundle } from '../../core/mapper-bundle';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  adminToken,
  call,
  expectProblem,
  makeModel,
  token,
  uploadEnglish,
  uploadMapper,
  uploadModel,
  type SyntheticModel,
} from './support/api';

const hex = (buf: ArrayBuffer): string => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');
const sha256 = async (bytes: ArrayBuffer | Uint8Array): Promise<string> =>
  hex(await crypto.subtle.digest('SHA-256', bytes));

/** Byte-for-byte equality; on a difference, names the first differing offset (not a multi-MB diff). */
function expectSameBytes(got: ArrayBuffer | Uint8Array, want: ArrayBuffer | Uint8Array): void {
  const a = got instanceof Uint8Array ? got : new Uint8Array(got);
  const b = want instanceof Uint8Array ? want : new Uint8Array(want);
  expect(a.byteLength).toBe(b.byteLength);
  let first = -1;
  for (let i = 0; i < a.length && first < 0; i++) if (a[i] !== b[i]) first = i;
  expect(first, `first differing byte at ${first}`).toBe(-1);
}

/** A gzip answer's body decoded (the runtime may already have decoded it: then as it came). */
async function decodedBody(res: Response): Promise<ArrayBuffer | Uint8Array> {
  const raw = new Uint8Array(await res.arrayBuffer());
  return raw[0] === 0x1f && raw[1] === 0x8b
    ? new Response(new Blob([raw]).stream().pipeThrough(new DecompressionStream('gzip'))).arrayBuffer()
    : raw;
}

async function get(
  path: string,
  headers: Record<string, string> = {},
  tok: string | null | undefined = undefined,
): Promise<Response> {
  const t = tok === undefined ? await token() : tok;
  return SELF.fetch(`http://x${path}`, { headers: { ...(t ? { authorization: `Bearer ${t}` } : {}), ...headers } });
}

let model: SyntheticModel;

beforeAll(async () => {
  model = makeModel('art-model', { seed: 11 });
  await uploadModel(model);
  const values = new Float64Array(model.words.length).map((_, r) => (r % 7) / 7 - 0.5);
  await uploadMapper(model, 'tone', { valence: values });
  await uploadEnglish();
});

describe('GET /api/v1/artifacts/models/{id}', () => {
  it('needs a bearer token', async () => {
    const res = await get('/api/v1/artifacts/models/art-model', {}, null);
    expect(res.status).toBe(401);
    await res.arrayBuffer();
  });

  it('streams the exact R2 bytes with ETag, SHA-256, length and the manifest version', async () => {
    const res = await get('/api/v1/artifacts/models/art-model');
    expect(res.status).toBe(200);
    expectSameBytes(await res.arrayBuffer(), model.bytes);
    expect(res.headers.get('content-length')).toBe(String(model.bytes.length));
    expect(res.headers.get('x-content-sha256')).toBe(await sha256(model.bytes));
    const head = await env.ARTIFACTS.head('models/art-model.emb');
    expect(res.headers.get('etag')).toBe(head!.httpEtag);
    expect(res.headers.get('x-model-version')).toBe(model.manifest.version);
    expect(res.headers.get('x-model-checksum')).toBe(model.manifest.checksum);
  });

  it('answers 304 to a matching If-None-Match and 200 to a stale one', async () => {
    const first = await get('/api/v1/artifacts/models/art-model');
    const etag = first.headers.get('etag')!;
    await first.arrayBuffer();
    const again = await get('/api/v1/artifacts/models/art-model', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.headers.get('etag')).toBe(etag);
    expect(again.headers.get('x-content-sha256')).toBe(first.headers.get('x-content-sha256'));
    expect((await again.arrayBuffer()).byteLength).toBe(0);
    const stale = await get('/api/v1/artifacts/models/art-model', { 'if-none-match': '"0000", W/"1111"' });
    expect(stale.status).toBe(200);
    await stale.arrayBuffer();
  });

  it('still answers with the checksum when KV (only a cache of it) fails', async () => {
    const m = makeModel('art-model-kv', { seed: 14 });
    await uploadModel(m);
    const failingKv = {
      get: () => Promise.reject(new Error('KV unavailable')),
      put: () => Promise.reject(new Error('KV write limit')),
    };
    const res = await createApp().request(
      '/api/v1/artifacts/models/art-model-kv',
      { headers: { authorization: `Bearer ${await token()}` } },
      { ...env, CACHE: failingKv as unknown as KVNamespace },
    );
    expect(res.status).toBe(200);
    expectSameBytes(await res.arrayBuffer(), m.bytes);
    expect(res.headers.get('x-content-sha256')).toBe(await sha256(m.bytes));
  });

  it('follows a new upload: new ETag and checksum', async () => {
    const other = makeModel('art-model2', { seed: 12 });
    await uploadModel(other);
    const a = await get('/api/v1/artifacts/models/art-model2');
    await a.arrayBuffer();
    const changed = makeModel('art-model2', { seed: 13 });
    await uploadModel(changed);
    const b = await get('/api/v1/artifacts/models/art-model2', { 'if-none-match': a.headers.get('etag')! });
    expect(b.status).toBe(200);
    expectSameBytes(await b.arrayBuffer(), changed.bytes);
    expect(b.headers.get('x-content-sha256')).toBe(await sha256(changed.bytes));
    expect(b.headers.get('x-content-sha256')).not.toBe(a.headers.get('x-content-sha256'));
  });

  it('404 for an unknown model, 422 for a malformed id', async () => {
    expectProblem(await call('GET', '/api/v1/artifacts/models/nope'), 404, 'EMBEDDING_MODEL_NOT_FOUND');
    expectProblem(await call('GET', '/api/v1/artifacts/models/..%2Fx'), 422, 'VALIDATION_FAILED');
  });
});

describe('GET /api/v1/artifacts/models/{id}/head', () => {
  it('serves the head object with its checksum and the full model version headers; 404 without a head', async () => {
    expectProblem(await call('GET', '/api/v1/artifacts/models/art-model/head'), 404, 'NOT_FOUND');
    const bytes = new Uint8Array(4096).map((_, i) => (i * 31) & 0xff);
    await env.ARTIFACTS.put('model-heads/art-model.emb', bytes);
    const res = await get('/api/v1/artifacts/models/art-model/head');
    expect(res.status).toBe(200);
    expectSameBytes(await res.arrayBuffer(), bytes);
    expect(res.headers.get('x-content-sha256')).toBe(await sha256(bytes));
    expect(res.headers.get('x-model-version')).toBe(model.manifest.version);
    expect(res.headers.get('x-model-checksum')).toBe(model.manifest.checksum);
    const again = await get('/api/v1/artifacts/models/art-model/head', { 'if-none-match': res.headers.get('etag')! });
    expect(again.status).toBe(304);
    // Gzipped when accepted (the cold start waits for the head); the digest is the decoded body's.
    const gz = await get('/api/v1/artifacts/models/art-model/head', { 'accept-encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gz.headers.get('x-content-sha256')).toBe(await sha256(bytes));
    const decoded = await decodedBody(gz);
    expectSameBytes(decoded, bytes);
    expectProblem(await call('GET', '/api/v1/artifacts/models/nope/head'), 404, 'EMBEDDING_MODEL_NOT_FOUND');
    await env.ARTIFACTS.delete('model-heads/art-model.emb');
  });
});

describe('language data and mapper bundles', () => {
  it('serves lang/en.bin with its checksum; unsupported language 422, missing data 404', async () => {
    const res = await get('/api/v1/artifacts/languages/en');
    expect(res.status).toBe(200);
    const bytes = await res.arrayBuffer();
    const stored = await (await env.ARTIFACTS.get('lang/en.bin'))!.arrayBuffer();
    expectSameBytes(bytes, stored);
    expect(res.headers.get('x-content-sha256')).toBe(await sha256(stored));
    // gzip when accepted (the runtime compresses); the digest is the decoded body's.
    const gz = await get('/api/v1/artifacts/languages/en', { 'accept-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expect(gz.headers.get('x-content-sha256')).toBe(await sha256(stored));
    const decoded = await decodedBody(gz);
    expectSameBytes(decoded, stored);
    const refused = await get('/api/v1/artifacts/languages/en', { 'accept-encoding': 'gzip;q=0, identity' });
    expect(refused.headers.get('content-encoding')).toBeNull();
    expectSameBytes(await refused.arrayBuffer(), stored);
    // On Cloudflare the Worker always sees "br, gzip"; the client's own header is cf.clientAcceptEncoding.
    const viaEdge = (clientAcceptEncoding: string) =>
      token().then((t) =>
        SELF.fetch('http://x/api/v1/artifacts/languages/en', {
          headers: { authorization: `Bearer ${t}`, 'accept-encoding': 'br, gzip' },
          cf: { clientAcceptEncoding },
        } as RequestInit),
      );
    const plain = await viaEdge('identity');
    expect(plain.headers.get('content-encoding')).toBeNull();
    expectSameBytes(await plain.arrayBuffer(), stored);
    const zipped = await viaEdge('gzip, deflate, br');
    expect(zipped.headers.get('content-encoding')).toBe('gzip');
    expectSameBytes(await decodedBody(zipped), stored);
    expectProblem(await call('GET', '/api/v1/artifacts/languages/xx'), 422, 'VALIDATION_FAILED');
    await env.ARTIFACTS.delete('lang/ja.bin');
    expectProblem(await call('GET', '/api/v1/artifacts/languages/ja'), 404, 'NOT_FOUND');
  });

  it('serves a mapper bundle; unknown key 404', async () => {
    const res = await get('/api/v1/artifacts/mappers/art-model/tone');
    expect(res.status).toBe(200);
    const bytes = await res.arrayBuffer();
    const stored = await (await env.ARTIFACTS.get('mappers/art-model/tone.bin'))!.arrayBuffer();
    expectSameBytes(bytes, stored);
    expect(res.headers.get('x-content-sha256')).toBe(await sha256(stored));
    expectProblem(await call('GET', '/api/v1/artifacts/mappers/art-model/none'), 404, 'NOT_FOUND');
  });

  it("serves a mapper bundle's head (the values of the model's head rows), gzipped when accepted; 404 without one", async () => {
    expectProblem(await call('GET', '/api/v1/artifacts/mappers/art-model/tone/head'), 404, 'NOT_FOUND');
    const full = new Uint8Array(await (await env.ARTIFACTS.get('mappers/art-model/tone.bin'))!.arrayBuffer());
    const head = mapperBundleHead(full, 3);
    await env.ARTIFACTS.put('mapper-heads/art-model/tone.bin', head);
    const res = await get('/api/v1/artifacts/mappers/art-model/tone/head');
    expect(res.status).toBe(200);
    expectSameBytes(await res.arrayBuffer(), head);
    expect(res.headers.get('x-content-sha256')).toBe(await sha256(head));
    const gz = await get('/api/v1/artifacts/mappers/art-model/tone/head', { 'accept-encoding': 'gzip' });
    expect(gz.headers.get('content-encoding')).toBe('gzip');
    expectSameBytes(await decodedBody(gz), head);
    // It is the full bundle's head: the same values for its rows, accepted only for a model's head.
    const parsedFull = parseMapperBundle(full);
    const parsedHead = parseMapperBundle(head, {
      id: 'art-model',
      vocabularySize: parsedFull.vocabularySize,
      rowsPresent: 3,
    });
    for (const v of parsedFull.info.variables)
      for (let r = 0; r < 3; r++) expect(parsedHead.value(v, r)).toBe(parsedFull.value(v, r));
    expect(() => parseMapperBundle(head, { id: 'art-model', vocabularySize: parsedFull.vocabularySize })).toThrow(
      /covers 3 rows/,
    );
    expectProblem(await call('GET', '/api/v1/artifacts/mappers/art-model/none/head'), 404, 'NOT_FOUND');
    expectProblem(await call('GET', '/api/v1/artifacts/mappers/art-model/..%2Fx/head'), 422, 'VALIDATION_FAILED');
    await env.ARTIFACTS.delete('mapper-heads/art-model/tone.bin');
  });
});

describe('GET /api/v1/artifacts/dimensions', () => {
  it('lists stored seeds with an ETag that changes when a dimension is added', async () => {
    const first = await get('/api/v1/artifacts/dimensions');
    expect(first.status).toBe(200);
    const text1 = await first.text();
    expect(first.headers.get('x-content-sha256')).toBe(await sha256(new TextEncoder().encode(text1)));
    const etag = first.headers.get('etag')!;
    const same = await get('/api/v1/artifacts/dimensions', { 'if-none-match': etag });
    expect(same.status).toBe(304);
    const id = 9000 + Math.floor(Math.random() * 900);
    const created = await call(
      'POST',
      '/api/admin/v1/dimensions',
      { id, name: 'warmth', language: 'en', words: ['sun', 'fire'] },
      { token: await adminToken() },
    );
    expect(created.status).toBe(201);
    const after = await get('/api/v1/artifacts/dimensions', { 'if-none-match': etag });
    expect(after.status).toBe(200);
    const body = (await after.json()) as { data: Array<{ id: number; words: string[] }> };
    expect(body.data.find((d) => d.id === id)?.words).toEqual(['sun', 'fire']);
  });
});

describe('OpenAPI and the playground route', () => {
  it('documents the artifact endpoints', async () => {
    const doc = (await call('GET', '/api/openapi.json', undefined, { token: null })).body;
    for (const p of [
      '/api/v1/artifacts/models/{id}',
      '/api/v1/artifacts/languages/{language}',
      '/api/v1/artifacts/mappers/{modelId}/{key}',
      '/api/v1/artifacts/mappers/{modelId}/{key}/head',
      '/api/v1/artifacts/models/{id}/head',
      '/api/v1/artifacts/dimensions',
    ]) {
      expect(doc.paths[p]?.get, p).toBeTruthy();
    }
  });

  it('serves web/ objects from R2 at / and /assets/*, 503 page when not built', async () => {
    await env.ARTIFACTS.delete('web/index.html');
    const missing = await SELF.fetch('http://x/');
    expect(missing.status).toBe(503);
    await missing.text();
    const html = `<!doctype html><p>playground ${Math.random()}</p>`;
    await env.ARTIFACTS.put('web/index.html', html);
    await env.ARTIFACTS.put('web/assets/app-abc.js', 'console.log(1)');
    const page = await SELF.fetch('http://x/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(await page.text()).toBe(html);
    const js = await SELF.fetch('http://x/assets/app-abc.js');
    expect(js.headers.get('content-type')).toContain('javascript');
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).toBe('console.log(1)');
    const nf = await SELF.fetch('http://x/assets/none.js');
    expect(nf.status).toBe(404);
    await nf.text();
  });
});
