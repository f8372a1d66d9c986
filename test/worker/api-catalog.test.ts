import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { artifactReadCount } from '../../worker/sources/models';
import {
  call,
  expectProblem,
  makeModel,
  uploadMapper,
  uploadModel,
  type Called,
  type SyntheticModel,
} from './support/api';
import { installGatedArtifacts } from './support/storage-gate';

// Catalog entries of this file use the user-assigned country codes QQ / QR so counts are exact.
const models: SyntheticModel[] = [];
let mapped: SyntheticModel;

beforeAll(async () => {
  for (let i = 0; i < 5; i++) {
    const m = makeModel(`cat-qq-${i}`, { seed: 100 + i, country: 'QQ', language: i < 3 ? 'en' : 'de' });
    models.push(m);
    await uploadModel(m);
  }
  mapped = makeModel('cat-qr-mapped', { seed: 200, country: 'QR', language: 'xx' });
  await uploadModel(mapped);
  const n = mapped.words.length;
  await uploadMapper(
    mapped,
    'loc',
    { valence: Float64Array.from({ length: n }, (_, r) => (r % 7) / 7) },
    { country: 'QR', language: 'xx' },
  );
  await uploadMapper(
    mapped,
    'multi',
    { arousal: Float64Array.from({ length: n }, (_, r) => (r % 5) / 5), dominance: new Float64Array(n) },
    {
      multilingual: true,
      language: null,
      country: null,
    },
  );
  await uploadMapper(mapped, 'otherlocale', { power: new Float64Array(n) }, { country: 'QS', language: 'yy' });
});

describe('GET /api/v1/embedding-models', () => {
  it('filters by country and language, with the page object', async () => {
    const r = await call('GET', '/api/v1/embedding-models?country=QQ');
    expect(r.status).toBe(200);
    expect(r.body.page).toEqual({ size: 20, totalElements: 5, totalPages: 1, currentPage: 1 });
    expect(r.body.data.map((m: any) => m.id)).toEqual(models.map((m) => m.id));
    const de = await call('GET', '/api/v1/embedding-models?country=qq&language=de');
    expect(de.body.data.map((m: any) => m.id)).toEqual(['cat-qq-3', 'cat-qq-4']);
    expect(de.body.page.totalElements).toBe(2);
  });

  it('paginates: size echoed as requested, last page short, beyond the last page empty', async () => {
    const p1 = await call('GET', '/api/v1/embedding-models?country=QQ&size=2&page=1');
    expect(p1.body.page).toEqual({ size: 2, totalElements: 5, totalPages: 3, currentPage: 1 });
    expect(p1.body.data.map((m: any) => m.id)).toEqual(['cat-qq-0', 'cat-qq-1']);
    const p3 = await call('GET', '/api/v1/embedding-models?country=QQ&size=2&page=3');
    expect(p3.body.page).toEqual({ size: 2, totalElements: 5, totalPages: 3, currentPage: 3 });
    expect(p3.body.data.map((m: any) => m.id)).toEqual(['cat-qq-4']);
    const p4 = await call('GET', '/api/v1/embedding-models?country=QQ&size=2&page=4');
    expect(p4.status).toBe(200);
    expect(p4.body.data).toEqual([]);
    expect(p4.body.page).toEqual({ size: 2, totalElements: 5, totalPages: 3, currentPage: 4 });
    const big = await call('GET', '/api/v1/embedding-models?country=QQ&size=100');
    expect(big.status).toBe(200);
    expect(big.body.page.size).toBe(100);
  });

  it('rejects page 0, size 0, size 101 and non-numbers with 422', async () => {
    for (const q of ['page=0', 'size=101', 'size=0', 'page=-1', 'page=abc', 'size=2.5']) {
      expectProblem(await call('GET', `/api/v1/embedding-models?${q}`), 422, 'VALIDATION_FAILED');
    }
  });

  it('returns every field of the interface, with _embedded.mappers', async () => {
    const r = await call('GET', `/api/v1/embedding-models/${mapped.id}`);
    expect(r.status).toBe(200);
    const m = r.body;
    for (const k of [
      'id',
      'language',
      'country',
      'version',
      'tag',
      'trainingYear',
      'trainingMonth',
      'label',
      'languageLabel',
      'countryLabel',
      'monthLabel',
    ]) {
      expect(typeof m[k], k).toBe('string');
    }
    expect(m.id).toBe(mapped.id);
    expect(m.version).toBe('1.0.0-test');
    expect(m.label).toBe(`Synthetic ${mapped.id}`);
    expect(Array.isArray(m.sources) && Array.isArray(m.features)).toBe(true);
    expect(Number.isInteger(m.tokenCount)).toBe(true);
    expect(typeof m.hasTranslation).toBe('boolean');
    expect(m.vocabularySize).toBe(mapped.words.length);
    expect(m._embedded.mappers).toEqual([
      { key: 'loc', variables: ['valence'], translationKey: 'mappers.loc', label: 'Test loc' },
      { key: 'multi', variables: ['arousal', 'dominance'], translationKey: 'mappers.multi', label: 'Test multi' },
      { key: 'otherlocale', variables: ['power'], translationKey: 'mappers.otherlocale', label: 'Test otherlocale' },
    ]);
  });

  it('answers 404 EMBEDDING_MODEL_NOT_FOUND for an unknown id', async () => {
    expectProblem(await call('GET', '/api/v1/embedding-models/no-such-model'), 404, 'EMBEDDING_MODEL_NOT_FOUND');
    expectProblem(
      await call('POST', '/api/v1/embedding-models/no-such-model/word-availabilities', { words: ['a'] }),
      404,
      'EMBEDDING_MODEL_NOT_FOUND',
    );
  });
});

describe('loadingStatus and the per-isolate registry', () => {
  it('goes not loaded -> loaded, loading once under concurrent first requests', async () => {
    const m = makeModel('cat-lazy', { seed: 300 });
    await uploadModel(m);
    expect((await call('GET', `/api/v1/embedding-models/${m.id}`)).body.loadingStatus).toBe('not loaded');
    // Gated R2 holds the artifact read, so the load is in progress while the catalog is asked.
    const gated = installGatedArtifacts();
    let results: Called[];
    try {
      const artifact = gated.hold('get', `models/${m.id}.emb`);
      const calls = [call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: ['cat', 'zzz'] })];
      await artifact.reached();
      calls.push(
        ...Array.from({ length: 7 }, () =>
          call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: ['cat', 'zzz'] }),
        ),
      );
      const during = await call('GET', `/api/v1/embedding-models/${m.id}`);
      expect(during.body.loadingStatus).toBe('loading');
      await artifact.open();
      results = await Promise.all(calls);
      expect(gated.log.filter((l) => l === `get models/${m.id}.emb`)).toHaveLength(1);
    } finally {
      await gated.openAll();
      gated.restore();
    }
    expect(results).toHaveLength(8);
    for (const r of results) {
      expect(r.status).toBe(200);
      expect(r.body.availabilities).toEqual([
        { word: 'cat', isAvailable: true },
        { word: 'zzz', isAvailable: false },
      ]);
    }
    expect(artifactReadCount(m.id)).toBe(1);
    expect((await call('GET', `/api/v1/embedding-models/${m.id}`)).body.loadingStatus).toBe('loaded');
    await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: ['cat'] });
    expect(artifactReadCount(m.id)).toBe(1);
  });

  it('a corrupt artifact gives 503 and status error; a fixed upload loads on the next request', async () => {
    const m = makeModel('cat-broken', { seed: 301 });
    await env.ARTIFACTS.put(`models/${m.id}.json`, JSON.stringify(m.manifest));
    const corrupt = m.bytes.slice();
    corrupt[corrupt.length - 5] ^= 0xff; // checksum mismatch
    await env.ARTIFACTS.put(`models/${m.id}.emb`, corrupt);
    const first = await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: ['cat'] });
    expectProblem(first, 503, 'EMBEDDING_MODEL_UNAVAILABLE');
    expect(first.headers.get('retry-after')).toBeTruthy();
    expect((await call('GET', `/api/v1/embedding-models/${m.id}`)).body.loadingStatus).toBe('error');
    // Same object: fails fast without reading the artifact again.
    const reads = artifactReadCount(m.id);
    expectProblem(
      await call('POST', `/api/v1/workspaces/ws_demo/autocomplete-suggestions`, { word: 'ca', embeddingModelId: m.id }),
      503,
      'EMBEDDING_MODEL_UNAVAILABLE',
    );
    expect(artifactReadCount(m.id)).toBe(reads);
    // A new upload (new etag) is retried at once.
    await env.ARTIFACTS.put(`models/${m.id}.emb`, m.bytes);
    const ok = await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: ['cat'] });
    expect(ok.status).toBe(200);
    expect((await call('GET', `/api/v1/embedding-models/${m.id}`)).body.loadingStatus).toBe('loaded');
  });

  it('a manifest without its artifact gives 503', async () => {
    const m = makeModel('cat-noartifact', { seed: 302 });
    await env.ARTIFACTS.put(`models/${m.id}.json`, JSON.stringify(m.manifest));
    expectProblem(
      await call('POST', `/api/v1/embedding-models/${m.id}/word-similarity-matrices`, { words: ['cat'] }),
      503,
      'EMBEDDING_MODEL_UNAVAILABLE',
    );
    expect((await call('GET', `/api/v1/embedding-models/${m.id}`)).body.loadingStatus).toBe('error');
  });
});

describe('GET /api/v1/mappers', () => {
  it('lists one entry per mapper variable with every field', async () => {
    const r = await call('GET', '/api/v1/mappers?country=QR');
    expect(r.status).toBe(200);
    const byKey = Object.fromEntries(r.body.data.map((e: any) => [e.key, e]));
    expect(byKey.loc_valence).toEqual({
      key: 'loc_valence',
      variables: ['valence'],
      translationKey: 'mappers.loc.valence',
      label: 'Test loc: valence',
      country: 'QR',
      language: 'xx',
      countryLabel: expect.any(String),
      languageLabel: expect.any(String),
      multilingual: false,
    });
    expect(byKey.multi_arousal).toMatchObject({
      variables: ['arousal', 'dominance'],
      country: null,
      language: null,
      countryLabel: null,
      languageLabel: null,
      multilingual: true,
    });
    expect(byKey.multi_dominance).toBeTruthy();
  });

  it('always includes multilingual mappers when filtering, and excludes other locales', async () => {
    const r = await call('GET', '/api/v1/mappers?country=QR&language=xx');
    const keys = r.body.data.map((e: any) => e.key);
    expect(keys).toContain('loc_valence');
    expect(keys).toContain('multi_arousal');
    expect(keys).not.toContain('otherlocale_power');
    const other = await call('GET', '/api/v1/mappers?language=yy');
    const otherKeys = other.body.data.map((e: any) => e.key);
    expect(otherKeys).toContain('otherlocale_power');
    expect(otherKeys).toContain('multi_dominance');
    expect(otherKeys).not.toContain('loc_valence');
    const none = await call('GET', '/api/v1/mappers?country=ZQ');
    expect(none.body.data.every((e: any) => e.multilingual)).toBe(true);
    expect(none.body.data.length).toBeGreaterThanOrEqual(2);
  });

  it('lists a bundle key once per locale: each locale filter finds its own bundle', async () => {
    const us = makeModel('cat-qt-shared', { seed: 301, country: 'QT', language: 'xx' });
    const gb = makeModel('cat-qu-shared', { seed: 302, country: 'QU', language: 'xx' });
    for (const m of [us, gb]) {
      await uploadModel(m);
      await uploadMapper(
        m,
        'sharedkey',
        { valence: new Float64Array(m.words.length) },
        { country: m.manifest.country, language: 'xx', label: `Shared ${m.manifest.country}` },
      );
    }
    for (const country of ['QT', 'QU']) {
      const r = await call('GET', `/api/v1/mappers?country=${country}&size=100`);
      const entries = r.body.data.filter((e: any) => e.key === 'sharedkey_valence');
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ country, language: 'xx', label: `Shared ${country}: valence` });
    }
  });

  it('paginates like the model catalog', async () => {
    const all = await call('GET', '/api/v1/mappers?country=QR&size=100');
    const total = all.body.page.totalElements;
    expect(total).toBe(all.body.data.length);
    const p = await call('GET', `/api/v1/mappers?country=QR&size=1&page=${total}`);
    expect(p.body.page).toEqual({ size: 1, totalElements: total, totalPages: total, currentPage: total });
    expect(p.body.data).toEqual([all.body.data[total - 1]]);
    const beyond = await call('GET', `/api/v1/mappers?country=QR&size=1&page=${total + 1}`);
    expect(beyond.body.data).toEqual([]);
    expectProblem(await call('GET', '/api/v1/mappers?size=101'), 422, 'VALIDATION_FAILED');
    expectProblem(await call('GET', '/api/v1/mappers?page=0'), 422, 'VALIDATION_FAILED');
  });
});
