/**
 * The aligned de/fr/ja models (build/aligned-models.ts) served end to end in workerd: the real
 * artifacts, multilingual mapper bundles and language data built by the ensure step
 * (build/generated via FIXTURES) put into R2, then the catalog, text-scores with the German
 * tokenizer, cross-lingual seeds, and the word-translations extension (validation, metering).
 * Without apt-get the Debian-built models do not exist: the file skips with one line.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ModelManifest } from '../../core/types';
import { foldKey } from '../../core/vocab-quality';
import { invalidateCatalog } from '../../worker/catalog/store';
import { adminToken, call, expectProblem, WS } from './support/api';
import { createWorkspace, quotaOf, uniqueWorkspaceId, workspaceToken } from './support/quotas';
import { fixture, putModel } from './support/model-fixtures';

const EN = 'en-glove-6b-100d';
const DE = 'de-aligned-glove-6b-100d';
const ALIGNED = ['de-aligned-glove-6b-100d', 'fr-aligned-glove-6b-100d', 'ja-aligned-glove-6b-100d'];
const KEYS = ['afinn', 'pattern', 'sentiment'];

const built = (await env.FIXTURES.fetch(`http://f/models/${DE}.json`)).status === 200;
if (!built)
  console.warn(
    `[multilingual.test] skipped: build/generated/models/${DE}.emb is missing (the aligned models need apt-get: Debian/Ubuntu as root)`,
  );

const WS_PATH = `/api/v1/workspaces/${WS}`;

describe.skipIf(!built)('aligned models in workerd', () => {
  const manifests = new Map<string, ModelManifest>();

  beforeAll(async () => {
    for (const id of [EN, ...ALIGNED]) {
      const got = await putModel(id, KEYS);
      if (got) manifests.set(id, got.manifest);
    }
    for (const lang of ['en', 'de']) await env.ARTIFACTS.put(`lang/${lang}.bin`, (await fixture(`lang/${lang}.bin`))!);
    await invalidateCatalog(env);
  });

  it('lists the aligned models with their language, country, features, sources, licence and dictionary date', async () => {
    const expected: Record<string, { language: string; country: string; license: RegExp }> = {
      [ALIGNED[0]!]: { language: 'de', country: 'DE', license: /GPL-2\.0-or-later/ },
      [ALIGNED[1]!]: { language: 'fr', country: 'FR', license: /CC-BY-SA-3\.0/ },
      [ALIGNED[2]!]: { language: 'ja', country: 'JP', license: /CC-BY-SA-3\.0/ },
    };
    for (const id of ALIGNED.filter((i) => manifests.has(i))) {
      const r = await call('GET', `/api/v1/embedding-models/${id}`);
      expect(r.status).toBe(200);
      expect(r.body.language).toBe(expected[id]!.language);
      expect(r.body.country).toBe(expected[id]!.country);
      expect(r.body.features).toEqual(expect.arrayContaining(['dictionary-projected', 'aligned-en', 'int8-quantized']));
      expect(r.body.hasTranslation).toBe(true);
      expect(r.body.license).toMatch(expected[id]!.license);
      expect(r.body.sources.some((s: string) => /debian:/.test(s))).toBe(true);
      expect(r.body.trainingYear).toMatch(/^20(2[1-3])$/);
      expect(r.body.dimensions).toBe(100);
      // The English-trained bundles are listed under every aligned model.
      expect(r.body._embedded.mappers.map((m: { key: string }) => m.key).sort()).toEqual(KEYS);
    }
    const list = await call('GET', '/api/v1/embedding-models?language=de');
    expect(list.body.data.map((m: { id: string }) => m.id)).toEqual([DE]);
  });

  it('marks the applied bundles multilingual in the mapper catalog', async () => {
    const r = await call('GET', '/api/v1/mappers?size=100');
    expect(r.status).toBe(200);
    const multi = r.body.data.filter((m: { multilingual: boolean }) => m.multilingual);
    expect(multi.map((m: { key: string }) => m.key)).toEqual(
      expect.arrayContaining(['sentiment_valence', 'afinn_valence']),
    );
    for (const m of multi) {
      expect(m.language).toBeNull();
      expect(m.country).toBeNull();
    }
    // A German filter still finds them (multilingual entries match every locale).
    const de = await call('GET', '/api/v1/mappers?language=de&size=100');
    expect(
      de.body.data.some((m: { key: string; multilingual: boolean }) => m.key === 'sentiment_valence' && m.multilingual),
    ).toBe(true);
  });

  it('scores German text with the German tokenizer and the multilingual sentiment mapper', async () => {
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      embeddingModelId: DE,
      texts: [
        'Ein wunderbarer, glücklicher Tag voller Freude und Liebe.',
        'Ein schrecklicher, trauriger Tag voller Angst und Hass.',
      ],
      mapperKeys: ['sentiment_valence'],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [pos, neg] = r.body.data;
    expect(pos.mapperScores.sentiment_valence).toBeGreaterThan(neg.mapperScores.sentiment_valence);
  });

  it('answers word-scores, autocomplete, availabilities and matrices on the German model (compound fallback included)', async () => {
    const av = await call('POST', `/api/v1/embedding-models/${DE}/word-availabilities`, {
      words: ['Haus', 'Kinderspielplatz', 'xqzzyq'],
    });
    expect(av.body.availabilities.map((a: { isAvailable: boolean }) => a.isAvailable)).toEqual([true, true, false]);
    const ac = await call('POST', `${WS_PATH}/autocomplete-suggestions`, { embeddingModelId: DE, word: 'hau' });
    expect(ac.status).toBe(200);
    expect(ac.body.suggestions.length).toBeGreaterThan(0);
    // Matching folds diacritics (docs/vocabulary.md): "hau" also finds "häufig".
    for (const s of ac.body.suggestions) expect(foldKey(s).startsWith('hau'), s).toBe(true);
    const m = await call('POST', `/api/v1/embedding-models/${DE}/word-similarity-matrices`, {
      words: ['Hund', 'Katze', 'Steuer'],
    });
    expect(m.status).toBe(200);
    expect(m.body.matrix[0][1]).toBeGreaterThan(m.body.matrix[0][2]);
    const ws = await call('POST', `${WS_PATH}/word-scores`, {
      embeddingModelId: DE,
      seedWords: ['Hund'],
      whitelistWords: ['Katze', 'Steuer'],
    });
    expect(ws.status).toBe(200);
    expect(ws.body.data[0].seedScore).toBeGreaterThan(ws.body.data[1].seedScore);
  });

  it('looks up seed words the German model lacks in the English companion', async () => {
    const seeds = ['joyful', 'cheerful', 'delighted'];
    const av = await call('POST', `/api/v1/embedding-models/${DE}/word-availabilities`, { words: seeds });
    // The test means something only if the German vocabulary lacks these English words.
    expect(av.body.availabilities.every((a: { isAvailable: boolean }) => !a.isAvailable)).toBe(true);
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      embeddingModelId: DE,
      seedWords: [],
      whitelistWords: ['fröhlich', 'traurig'],
      dimensions: [{ id: 1, type: 'manual', words: seeds }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [happy, sad] = r.body.data;
    expect(happy.dimensionScores['1']).not.toBeNull();
    expect(happy.dimensionScores['1']).toBeGreaterThan(sad.dimensionScores['1']);
    // On the English model the same seeds are its own words: the German model's dimension is the same query.
    const en = await call('POST', `${WS_PATH}/word-scores`, {
      embeddingModelId: EN,
      seedWords: [],
      whitelistWords: ['happy'],
      dimensions: [{ id: 1, type: 'manual', words: seeds }],
    });
    expect(en.body.data[0].dimensionScores['1']).not.toBeNull();
  });

  it('text-scores with English companion seeds fit the default memory budget for every aligned model', async () => {
    await env.ARTIFACTS.put('lang/ja.bin', (await fixture('lang/ja.bin'))!);
    await env.ARTIFACTS.put('lang/fr.bin', (await fixture('lang/fr.bin'))!);
    const texts: Record<string, string> = {
      [DE]: 'Die Kinder sind fröhlich',
      'fr-aligned-glove-6b-100d': 'Les enfants sont heureux',
      'ja-aligned-glove-6b-100d': '子供たちは幸せです',
    };
    for (const id of ALIGNED) {
      if (!manifests.has(id)) continue;
      const r = await call('POST', `${WS_PATH}/text-scores`, {
        texts: [texts[id]],
        embeddingModelId: id,
        dimensions: [{ id: 1, type: 'manual', words: ['joyful', 'cheerful', 'delighted'] }],
      });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
      const m = await call('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
      // The model and its English companion side by side, within the budget (issue 31).
      expect(m.body.models.map((x: { id: string }) => x.id)).toEqual(expect.arrayContaining([id, EN]));
      expect(m.body.totalBytes).toBeLessThanOrEqual(m.body.budgetBytes);
    }
  });

  it('translates German words to English and back through the shared space', async () => {
    const r = await call('POST', `/api/v1/embedding-models/${DE}/word-translations`, {
      words: ['Hund', 'Haus', 'xqzzyq'],
      limit: 5,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.targetModelId).toBe(EN);
    const [hund, haus, none] = r.body.data;
    expect(hund.translations.map((t: { word: string }) => t.word)).toContain('dog');
    expect(haus.translations.map((t: { word: string }) => t.word)).toContain('house');
    expect(hund.translations).toHaveLength(5);
    expect(none).toEqual({ word: 'xqzzyq', isAvailable: false, translations: [] });
    // The reverse direction: German words whose vectors are nearest to "dog" (rare words with
    // "dog" as their only translation come first: they sit exactly on it); each translates back to "dog".
    const back = await call('POST', `/api/v1/embedding-models/${EN}/word-translations`, {
      words: ['dog'],
      targetModelId: DE,
      limit: 3,
    });
    expect(back.status).toBe(200);
    const german = back.body.data[0].translations.map((t: { word: string }) => t.word);
    expect(german).toHaveLength(3);
    const roundTrip = await call('POST', `/api/v1/embedding-models/${DE}/word-translations`, {
      words: german,
      limit: 3,
    });
    for (const d of roundTrip.body.data) expect(d.translations.map((t: { word: string }) => t.word)).toContain('dog');
  });

  it('validates word-translations requests', async () => {
    const path = `/api/v1/embedding-models/${DE}/word-translations`;
    expectProblem(await call('POST', path, { words: [] }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', path, { words: ['Hund'], limit: 0 }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', path, { words: ['Hund'], limit: 51 }), 422, 'VALIDATION_FAILED');
    expectProblem(
      await call('POST', path, { words: Array.from({ length: 101 }, (_, i) => `w${i}`) }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(await call('POST', path, { words: 'Hund' }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', path, { words: ['Hund'], targetModelId: DE }), 422, 'VALIDATION_FAILED');
    expectProblem(
      await call('POST', path, { words: ['Hund'], targetModelId: 'no-such-model' }),
      404,
      'EMBEDDING_MODEL_NOT_FOUND',
    );
    expectProblem(
      await call('POST', `/api/v1/embedding-models/${EN}/word-translations`, { words: ['dog'] }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(await call('POST', path, { words: ['Hund'] }, { token: null }), 401, 'UNAUTHORIZED');
  });

  it('meters translated words to the token workspace and refuses beyond the quota without charging', async () => {
    const ws = uniqueWorkspaceId('tr');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 3, limitAmountDaily: 1000 }]);
    const token = await workspaceToken(ws);
    const path = `/api/v1/embedding-models/${DE}/word-translations`;
    const ok = await call('POST', path, { words: ['Hund', 'Katze', 'xqzzyq'] }, { token });
    expect(ok.status).toBe(200);
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2); // the unknown word is not charged
    const over = await call('POST', path, { words: ['Hund', 'Katze'] }, { token });
    expectProblem(over, 403, 'ERROR_NO_REMAINING_QUOTA');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
  });
});
