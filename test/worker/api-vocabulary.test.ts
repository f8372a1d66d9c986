import { beforeAll, describe, expect, it } from 'vitest';
import {
  adminToken,
  call,
  expectProblem,
  makeModel,
  mintToken,
  rowOf,
  uploadModel,
  type SyntheticModel,
} from './support/api';

let m: SyntheticModel;
let big: SyntheticModel;
const WS_PATH = '/api/v1/workspaces/ws_demo';

beforeAll(async () => {
  m = makeModel('vocab-en', { seed: 21 });
  big = makeModel('vocab-big', { seed: 22, extra: 40 });
  await uploadModel(m);
  await uploadModel(big);
});

describe('word-availabilities', () => {
  it('one element per requested word, in order, as sent', async () => {
    const r = await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, {
      words: ['cat', 'Dog', 'zzz', 'cat', ''],
    });
    expect(r.status).toBe(200);
    expect(r.body.availabilities).toEqual([
      { word: 'cat', isAvailable: true },
      { word: 'Dog', isAvailable: true },
      { word: 'zzz', isAvailable: false },
      { word: 'cat', isAvailable: true },
      { word: '', isAvailable: false },
    ]);
  });

  it('with a non-empty whitelist a word must be in both the vocabulary and the allow-list', async () => {
    const r = await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, {
      words: ['cat', 'dog', 'zzz'],
      whitelistWords: ['CAT', 'zzz'],
    });
    expect(r.body.availabilities).toEqual([
      { word: 'cat', isAvailable: true },
      { word: 'dog', isAvailable: false },
      { word: 'zzz', isAvailable: false },
    ]);
    const empty = await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, {
      words: ['dog'],
      whitelistWords: [],
    });
    expect(empty.body.availabilities).toEqual([{ word: 'dog', isAvailable: true }]);
  });

  it('needs a token but no workspace claim', async () => {
    const noWs = await mintToken({ sub: 'x' });
    const r = await call(
      'POST',
      `/api/v1/embedding-models/${m.id}/word-availabilities`,
      { words: ['cat'] },
      { token: noWs },
    );
    expect(r.status).toBe(200);
    expectProblem(
      await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: ['cat'] }, { token: null }),
      401,
      'UNAUTHORIZED',
    );
    expectProblem(
      await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, { words: 'cat' }),
      422,
      'VALIDATION_FAILED',
    );
  });
});

describe('word-similarity-matrices', () => {
  it('drops unknown words, is square and symmetric, rounded to 2 decimals, equal to the float64 cosine', async () => {
    const words = ['cat', 'nope', 'dog', 'bread', 'River', 'cat', 'science'];
    const r = await call('POST', `/api/v1/embedding-models/${m.id}/word-similarity-matrices`, { words });
    expect(r.status).toBe(200);
    expect(r.body.words).toEqual(['cat', 'dog', 'bread', 'River', 'science']);
    const n = r.body.words.length;
    expect(r.body.matrix).toHaveLength(n);
    r.body.words.forEach((a: string, i: number) => {
      expect(r.body.matrix[i]).toHaveLength(n);
      r.body.words.forEach((b: string, j: number) => {
        const v = r.body.matrix[i][j];
        expect(Math.round(v * 100) / 100).toBe(v);
        expect(v).toBe(r.body.matrix[j][i]);
        const va = m.vectors[rowOf(m, a)];
        const vb = m.vectors[rowOf(m, b)];
        let dot = 0;
        for (let d = 0; d < m.dims; d++) dot += va[d] * vb[d];
        // The stored value is round2 of the quantized-vector cosine (float64 of int8 * scale).
        const exact = dot * 100;
        const nearHalf = Math.abs(exact - Math.floor(exact) - 0.5) < 1e-4;
        if (!nearHalf) expect(Math.abs(v - Math.round(exact) / 100)).toBeLessThan(1e-6);
      });
      expect(r.body.matrix[i][i]).toBe(1);
    });
  });

  it('empty or all-unknown input gives an empty matrix; over 500 words is rejected', async () => {
    const e = await call('POST', `/api/v1/embedding-models/${m.id}/word-similarity-matrices`, {
      words: ['zz1', 'zz2'],
    });
    expect(e.body).toEqual({ words: [], matrix: [] });
    expectProblem(
      await call('POST', `/api/v1/embedding-models/${m.id}/word-similarity-matrices`, {
        words: Array(501).fill('cat'),
      }),
      422,
      'VALIDATION_FAILED',
    );
    const ok = await call('POST', `/api/v1/embedding-models/${m.id}/word-similarity-matrices`, {
      words: Array(500).fill('cat'),
    });
    expect(ok.body).toEqual({ words: ['cat'], matrix: [[1]] });
  });

  it('unknown model: 404', async () => {
    expectProblem(
      await call('POST', '/api/v1/embedding-models/nope/word-similarity-matrices', { words: ['cat'] }),
      404,
      'EMBEDDING_MODEL_NOT_FOUND',
    );
  });
});

describe('autocomplete-suggestions', () => {
  it("prefix match, most frequent first, the user's leading capital kept", async () => {
    const r = await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: 'App', embeddingModelId: m.id });
    expect(r.status).toBe(200);
    const expected = m.words.filter((w) => w.startsWith('app')).sort((a, b) => rowOf(m, a) - rowOf(m, b));
    expect(r.body.suggestions).toEqual(expected.map((w) => w[0]!.toUpperCase() + w.slice(1)));
    const lower = await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: 'app', embeddingModelId: m.id });
    expect(lower.body.suggestions).toEqual(expected);
    expect(expected.length).toBeGreaterThan(3);
  });

  it('at most ten suggestions, and a whitelist restricts them', async () => {
    const r = await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: 'w', embeddingModelId: big.id });
    expect(r.body.suggestions).toHaveLength(10);
    expect(r.body.suggestions).toEqual(big.words.filter((w) => w.startsWith('w')).slice(0, 10));
    const wl = await call('POST', `${WS_PATH}/autocomplete-suggestions`, {
      word: 'app',
      embeddingModelId: m.id,
      whitelistWords: ['APPLY', 'apples', 'banana'],
    });
    expect(wl.body.suggestions).toEqual(['apples', 'apply']);
  });

  it('never suggests entries without a letter', async () => {
    const r = await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: '1', embeddingModelId: m.id });
    expect(r.body.suggestions).toEqual([]);
    expect(m.words).toContain('123');
  });

  it('validates and checks the workspace', async () => {
    expectProblem(
      await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: '', embeddingModelId: m.id }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: ' \t ', embeddingModelId: m.id }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: 'a' }), 422, 'VALIDATION_FAILED');
    expectProblem(
      await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word: 'a', embeddingModelId: 'nope' }),
      404,
      'EMBEDDING_MODEL_NOT_FOUND',
    );
    expectProblem(
      await call('POST', '/api/v1/workspaces/ws_other/autocomplete-suggestions', { word: 'a', embeddingModelId: m.id }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
  });
});

describe('stored dimensions (admin)', () => {
  it('lists the seeded set and creates new ones used by type dimension', async () => {
    const admin = await adminToken();
    const list = await call('GET', '/api/admin/v1/dimensions?size=200', undefined, { token: admin });
    expect(list.status).toBe(200);
    const seeded = list.body.data.filter((d: any) => d.id < 100);
    expect(seeded.map((d: any) => d.id)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(seeded[0]).toMatchObject({ name: 'Positive', language: 'en' });
    expect(seeded[0].words).toContain('good');

    const created = await call(
      'POST',
      '/api/admin/v1/dimensions',
      { name: 'Pets', words: ['cat', 'dog'] },
      { token: admin },
    );
    expect(created.status).toBe(201);
    expect(created.body.id).toBeGreaterThanOrEqual(100);
    expect(created.body).toMatchObject({ name: 'Pets', language: 'en', words: ['cat', 'dog'] });
    const fixed = await call(
      'POST',
      '/api/admin/v1/dimensions',
      { id: 4242, name: 'Food 2', words: ['bread'] },
      { token: admin },
    );
    expect(fixed.status).toBe(201);
    expect(fixed.body.id).toBe(4242);
    expectProblem(
      await call('POST', '/api/admin/v1/dimensions', { id: 4242, name: 'again', words: ['x'] }, { token: admin }),
      409,
      'CONFLICT',
    );
    // The Location of a created dimension answers with it; ids below 100 are the seeded set's.
    expect(fixed.headers.get('location')).toBe('/api/admin/v1/dimensions/4242');
    const located = await call('GET', fixed.headers.get('location')!, undefined, { token: admin });
    expect(located.status).toBe(200);
    expect(located.body).toEqual(fixed.body);
    expectProblem(await call('GET', '/api/admin/v1/dimensions/4243', undefined, { token: admin }), 404, 'NOT_FOUND');
    expectProblem(
      await call('POST', '/api/admin/v1/dimensions', { id: 50, name: 'reserved', words: ['x'] }, { token: admin }),
      422,
      'VALIDATION_FAILED',
    );
    // Lone surrogates would be stored as U+FFFD: refused, nothing stored.
    for (const bad of [{ name: 'bad\ud800' }, { description: 'x\udc00' }, { words: ['ok', 'cat\ud83d'] }]) {
      const r = await call(
        'POST',
        '/api/admin/v1/dimensions',
        { id: 4343, name: 'fine', words: ['x'], ...bad },
        { token: admin },
      );
      expectProblem(r, 422, 'VALIDATION_FAILED');
    }
    expectProblem(await call('GET', '/api/admin/v1/dimensions/4343', undefined, { token: admin }), 404, 'NOT_FOUND');
    // The largest id does not push automatic ids out of range: they take the lowest free id >= 100.
    expect(
      (
        await call(
          'POST',
          '/api/admin/v1/dimensions',
          { id: 2_147_483_647, name: 'last', words: ['x'] },
          { token: admin },
        )
      ).status,
    ).toBe(201);
    const auto = await call('POST', '/api/admin/v1/dimensions', { name: 'after last', words: ['y'] }, { token: admin });
    expect(auto.status).toBe(201);
    const ids = new Set(
      (await call('GET', '/api/admin/v1/dimensions?size=100', undefined, { token: admin })).body.data.map(
        (d: any) => d.id,
      ),
    );
    expect(auto.body.id).toBeLessThan(2_147_483_647);
    for (let id = 100; id < auto.body.id; id++) expect(ids.has(id)).toBe(true);
    expectProblem(
      await call('POST', '/api/admin/v1/dimensions', { name: 'empty', words: [] }, { token: admin }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', '/api/admin/v1/dimensions', { name: 'x', words: ['a'] }),
      403,
      'ADMIN_SCOPE_REQUIRED',
    );

    // The stored seeds are what a `dimension` of that id scores with: same as a manual one with those words.
    const stored = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['river'],
      whitelistWords: ['cat', 'bread', 'tree'],
      embeddingModelId: m.id,
      dimensions: [
        { id: created.body.id, type: 'dimension' },
        { id: 1, type: 'manual', words: ['cat', 'dog'] },
      ],
    });
    expect(stored.status).toBe(200);
    expect(stored.body.data).toHaveLength(3);
    for (const d of stored.body.data) expect(d.dimensionScores[String(created.body.id)]).toBe(d.dimensionScores['1']);
  });
});

describe('language data', () => {
  it('text-scores answers 503 LANGUAGE_DATA_UNAVAILABLE while lang/{language}.bin is missing', async () => {
    // This file never uploads lang/en.bin.
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, { texts: ['good cat'], embeddingModelId: m.id }),
      503,
      'LANGUAGE_DATA_UNAVAILABLE',
    );
  });
});
