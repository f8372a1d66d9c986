/**
 * The aligned models on each English base (build/aligned-specs.ts, issue 36) served in workerd:
 * the GloVe-based ones answer as their artifact bytes say (the ids of before #36, unchanged), and
 * every aligned model routes to the English model it was projected onto (its manifest's
 * `englishModelId`, GloVe when absent) for translations and for the seed words it lacks, within
 * the memory budget beside that companion. Without apt-get the Debian-built models do not exist:
 * the file skips with one line.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeWord, parseArtifact } from '../../core/artifact';
import { englishCompanionOf } from '../../core/projection';
import type { ModelManifest } from '../../core/types';
import { invalidateCatalog } from '../../worker/catalog/store';
import { adminToken, call, WS } from './support/api';
import { fixture, putModel } from './support/model-fixtures';

const GLOVE = 'en-glove-6b-100d';
const DE_GLOVE = 'de-aligned-glove-6b-100d';
const ALIGNED = [
  DE_GLOVE,
  'fr-aligned-glove-6b-100d',
  'ja-aligned-glove-6b-100d',
  'de-aligned-distilled-100d',
  'fr-aligned-distilled-100d',
  'ja-aligned-distilled-100d',
];
const DE_DEFAULT = 'de-aligned-distilled-100d';
const KEYS = ['afinn', 'pattern', 'sentiment'];
const WS_PATH = `/api/v1/workspaces/${WS}`;

const built = (await env.FIXTURES.fetch(`http://f/models/${DE_DEFAULT}.json`)).status === 200;
if (!built)
  console.warn(
    `[multilingual-bases.test] skipped: build/generated/models/${DE_DEFAULT}.emb is missing (the aligned models need apt-get: Debian/Ubuntu as root)`,
  );

/** Unit-length rows of an artifact as its bytes hold them (int8 x row scale), and its words. */
function readRows(bytes: ArrayBuffer): { words: string[]; dims: number; vector: (r: number) => Float64Array } {
  const a = parseArtifact(bytes);
  const words = Array.from({ length: a.size }, (_, r) => decodeWord(a.vocab, a.wordOffsets, r));
  return {
    words,
    dims: a.dims,
    vector: (r) => {
      const v = new Float64Array(a.dims);
      for (let d = 0; d < a.dims; d++) v[d] = a.rows[r * a.dims + d]! * a.scales[r]!;
      return v;
    },
  };
}

const dot = (a: Float64Array, b: Float64Array): number => a.reduce((s, x, i) => s + x * b[i]!, 0);
const cosine = (a: Float64Array, b: Float64Array): number => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));

describe.skipIf(!built)('aligned models on each English base in workerd', () => {
  const manifests = new Map<string, ModelManifest>();
  const bytes = new Map<string, ArrayBuffer>();

  beforeAll(async () => {
    const put = async (id: string): Promise<void> => {
      const got = await putModel(id, KEYS);
      if (!got) return;
      manifests.set(id, got.manifest);
      bytes.set(id, got.bytes);
    };
    for (const id of ALIGNED) await put(id);
    // Each aligned model's companion (GloVe for the ones without englishModelId).
    const companions = new Set([...manifests.values()].map((m) => englishCompanionOf(m)!));
    for (const id of companions) if (!manifests.has(id)) await put(id);
    for (const lang of ['en', 'de', 'fr', 'ja'])
      await env.ARTIFACTS.put(`lang/${lang}.bin`, (await fixture(`lang/${lang}.bin`))!);
    await invalidateCatalog(env);
  });

  it('the GloVe-based German model answers as its artifact bytes say: similarities and translations into GloVe', async () => {
    const de = readRows(bytes.get(DE_GLOVE)!);
    const en = readRows(bytes.get(GLOVE)!);
    expect(manifests.get(DE_GLOVE)!.englishModelId).toBeUndefined();
    const words = ['Hund', 'Katze', 'Haus', 'Steuer'];
    const rows = words.map((w) => de.words.indexOf(w));
    expect(rows.every((r) => r >= 0)).toBe(true);
    const m = await call('POST', `/api/v1/embedding-models/${DE_GLOVE}/word-similarity-matrices`, { words });
    expect(m.status).toBe(200);
    for (let i = 0; i < words.length; i++)
      for (let j = 0; j < words.length; j++)
        expect(m.body.matrix[i][j]).toBeCloseTo(cosine(de.vector(rows[i]!), de.vector(rows[j]!)), 2);

    // Translations: the nearest GloVe words of the German vector, brute force over GloVe's rows.
    const query = de.vector(rows[0]!);
    const scored: Array<[string, number]> = [];
    for (let r = 0; r < en.words.length; r++)
      if (/\p{L}/u.test(en.words[r]!)) scored.push([en.words[r]!, cosine(query, en.vector(r))]);
    scored.sort((a, b) => b[1] - a[1]);
    const t = await call('POST', `/api/v1/embedding-models/${DE_GLOVE}/word-translations`, {
      words: ['Hund'],
      limit: 5,
    });
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    expect(t.body.targetModelId).toBe(GLOVE);
    const got = t.body.data[0].translations as Array<{ word: string; similarity: number }>;
    expect(got.map((x) => x.word)).toEqual(scored.slice(0, 5).map(([w]) => w));
    got.forEach((x, i) => expect(x.similarity).toBeCloseTo(scored[i]![1], 4));
  });

  it('each aligned model names its English companion in the catalog and translates into it by default', async () => {
    for (const id of ALIGNED.filter((i) => manifests.has(i))) {
      const companion = englishCompanionOf(manifests.get(id)!)!;
      const r = await call('GET', `/api/v1/embedding-models/${id}`);
      expect(r.status).toBe(200);
      expect(r.body.features).toEqual(expect.arrayContaining(['dictionary-projected', 'aligned-en']));
      expect(r.body.sources.join(' ')).toContain(companion);
      expect(r.body._embedded.mappers.map((b: { key: string }) => b.key).sort()).toEqual(KEYS);
      const [word, english] = { de: ['Hund', 'dog'], fr: ['chien', 'dog'], ja: ['水', 'water'] }[
        r.body.language as 'de' | 'fr' | 'ja'
      ];
      const t = await call('POST', `/api/v1/embedding-models/${id}/word-translations`, { words: [word], limit: 10 });
      expect(t.status, `${id}: ${JSON.stringify(t.body)}`).toBe(200);
      expect(t.body.targetModelId).toBe(companion);
      const translations = t.body.data[0].translations.map((x: { word: string }) => x.word);
      expect(translations, id).toContain(english);
      // Words, not the companion's phrase rows.
      for (const w of translations) expect(w, id).not.toMatch(/ /);
    }
    // The default German model is projected onto the default English model, not GloVe, once it exists.
    const de = manifests.get(DE_DEFAULT)!;
    if (manifests.has('en-distilled-glove-use-100d')) expect(de.englishModelId).toBe('en-distilled-glove-use-100d');
  });

  it('scores a German text on the default German model with English seed words from its companion, within the budget', async () => {
    const companion = englishCompanionOf(manifests.get(DE_DEFAULT)!)!;
    const seeds = ['joyful', 'cheerful', 'delighted'];
    const av = await call('POST', `/api/v1/embedding-models/${DE_DEFAULT}/word-availabilities`, { words: seeds });
    // The test means something only if the German vocabulary lacks these English words.
    expect(av.body.availabilities.every((a: { isAvailable: boolean }) => !a.isAvailable)).toBe(true);
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      embeddingModelId: DE_DEFAULT,
      texts: ['Die Kinder sind fröhlich und glücklich.', 'Die Kinder sind traurig und unglücklich.'],
      dimensions: [{ id: 1, type: 'manual', words: seeds }],
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const [happy, sad] = r.body.data;
    expect(happy.dimensionScores['1']).not.toBeNull();
    expect(happy.dimensionScores['1']).toBeGreaterThan(sad.dimensionScores['1']);
    const m = await call('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
    const held = m.body.models.map((x: { id: string }) => x.id);
    // Its own companion beside it (not another English model), within the budget.
    expect(held).toEqual(expect.arrayContaining([DE_DEFAULT, companion]));
    expect(m.body.totalBytes).toBeLessThanOrEqual(m.body.budgetBytes);
  });

  it('fits each default aligned model, its companion and their language data in the default budget', async () => {
    const texts: Record<string, string> = {
      'fr-aligned-distilled-100d': 'Les enfants sont heureux',
      'ja-aligned-distilled-100d': '子供たちは幸せです',
    };
    for (const id of Object.keys(texts).filter((i) => manifests.has(i))) {
      const r = await call('POST', `${WS_PATH}/text-scores`, {
        texts: [texts[id]],
        embeddingModelId: id,
        dimensions: [{ id: 1, type: 'manual', words: ['joyful', 'cheerful', 'delighted'] }],
      });
      expect(r.status, `${id}: ${JSON.stringify(r.body)}`).toBe(200);
      const m = await call('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
      expect(m.body.models.map((x: { id: string }) => x.id)).toEqual(
        expect.arrayContaining([id, englishCompanionOf(manifests.get(id)!)]),
      );
      expect(m.body.totalBytes).toBeLessThanOrEqual(m.body.budgetBytes);
    }
  });
});
