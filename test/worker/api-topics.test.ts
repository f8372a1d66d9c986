/**
 * text-scores extensions for dimensions that tell what a text is about, through the Worker
 * (workerd, real R2, real WASM): top-level normalization, representation, seed expansion with
 * explain, and the validation of the new fields (422, nothing charged).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { FLAG } from '../../core/tokenizer/data';
import { tokenize, type LanguageData } from '../../core/tokenizer';
import {
  call,
  centroid64,
  expectProblem,
  makeModel,
  qcos,
  rowOf,
  uploadEnglish,
  uploadModel,
  type SyntheticModel,
} from './support/api';

const WS_PATH = '/api/v1/workspaces/ws_demo';
let m: SyntheticModel;
let lang: LanguageData;

beforeAll(async () => {
  m = makeModel('topics-en', { seed: 21, extra: 40 });
  await uploadModel(m);
  lang = await uploadEnglish();
});

/** The candidate rules by brute force over the synthetic model: best hubness-corrected similarity to the seed centroid first. */
function referenceExpansion(seeds: string[], n: number): string[] {
  const rows = seeds.map((w) => rowOf(m, w)).filter((r) => r >= 0);
  // Ranked by cos(centroid, w) - bg . w, bg the mean vector of the 20,000 most frequent rows (hubness correction).
  const c = centroid64(m, rows);
  const nb = Math.min(20_000, m.words.length);
  const bg = new Float64Array(m.dims);
  for (let r = 0; r < nb; r++) for (let d = 0; d < m.dims; d++) bg[d] += m.vectors[r][d] / nb;
  const q = c.map((x, d) => x - bg[d]);
  const order = m.words.map((_, r) => r).sort((a, b) => qcos(m, b, q) - qcos(m, a, q) || a - b);
  const out: string[] = [];
  for (const r of order) {
    const w = m.words[r];
    if (seeds.includes(w) || !/\p{L}/u.test(w)) continue;
    const t = tokenize(w, lang, { synonyms: false }).tokens;
    if (t.length !== 1 || t[0].isStop || !(lang.has(t[0].token, FLAG.KNOWN) || lang.has(w, FLAG.KNOWN))) continue;
    out.push(w);
    if (out.length === n) break;
  }
  return out;
}

describe('text-scores: expand, explain, representation, normalization', () => {
  const text = 'The happy dog ran to the river and the mountain forest.';

  it('expand adds the nearest dictionary, non-stop words and explain lists them; other dimensions get no expandedWords', async () => {
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      texts: [text, 'zzz'],
      embeddingModelId: m.id,
      dimensions: [
        { id: 1, type: 'manual', words: ['river', 'mountain'], expand: 4 },
        { id: 2, type: 'manual', words: ['science'] },
      ],
      explain: true,
    });
    expect(r.status).toBe(200);
    const ex = r.body.data[0].explanation;
    expect(ex.dimensions['1'].expandedWords).toEqual(referenceExpansion(['river', 'mountain'], 4));
    expect(ex.dimensions['1'].tokens).toEqual(expect.any(Array));
    expect(ex.dimensions['2'].expandedWords).toBeUndefined();
    expect(ex.mappers).toEqual({});
    // A text without scores still carries the request's explanation of the dimensions.
    expect(r.body.data[1].explanation.dimensions['1'].expandedWords).toEqual(ex.dimensions['1'].expandedWords);
    const plain = await call('POST', `${WS_PATH}/text-scores`, {
      texts: [text],
      embeddingModelId: m.id,
      dimensions: [{ id: 1, type: 'manual', words: ['river'] }],
    });
    expect(plain.body.data[0].explanation).toBeUndefined();
  });

  it('representation and top-level normalization change dimensionScores as documented; word-scores accepts expand', async () => {
    const body = (extra: object) => ({
      texts: [text],
      embeddingModelId: m.id,
      dimensions: [{ id: 1, type: 'manual', words: ['river', 'mountain'] }],
      ...extra,
    });
    const mean = (await call('POST', `${WS_PATH}/text-scores`, body({}))).body.data[0].dimensionScores['1'];
    const vec = (await call('POST', `${WS_PATH}/text-scores`, body({ representation: 'meanVector' }))).body.data[0]
      .dimensionScores['1'];
    const z = (await call('POST', `${WS_PATH}/text-scores`, body({ normalization: 'zscore' }))).body.data[0]
      .dimensionScores['1'];
    expect(vec).toBeGreaterThan(mean);
    // zscore over the whole synthetic vocabulary (< 20,000 words).
    const c = centroid64(m, [rowOf(m, 'river'), rowOf(m, 'mountain')]);
    const sample = m.words.map((_, r) => qcos(m, r, c));
    const mu = sample.reduce((a, b) => a + b, 0) / sample.length;
    const sd = Math.sqrt(sample.reduce((a, b) => a + (b - mu) ** 2, 0) / sample.length);
    expect(z).toBeCloseTo(Math.max(-3, Math.min(3, (mean - mu) / sd)) / 3, 5);

    // batchZscore: standardized over the request's texts; with two texts that differ, z = +1 and -1.
    const two = await call('POST', `${WS_PATH}/text-scores`, {
      ...body({ normalization: 'batchZscore' }),
      texts: [text, 'the bank of the river'],
    });
    expect(two.status).toBe(200);
    const zs = two.body.data.map((d: any) => d.dimensionScores['1']);
    expect(zs.map((v: number) => Math.abs(v))).toEqual([1 / 3, 1 / 3]);
    expect(zs[0] + zs[1]).toBe(0);
    // contentMean is accepted (its formula: test/node/text-topics.test.ts).
    const content = await call('POST', `${WS_PATH}/text-scores`, body({ representation: 'contentMean' }));
    expect(content.status).toBe(200);
    expect(typeof content.body.data[0].dimensionScores['1']).toBe('number');

    const w = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['tree'],
      whitelistWords: ['forest', 'bank'],
      embeddingModelId: m.id,
      dimensions: [{ id: 1, type: 'manual', words: ['river'], expand: 3 }],
    });
    expect(w.status).toBe(200);
    expect(w.body.data.map((d: any) => typeof d.dimensionScores['1'])).toEqual(['number', 'number']);
  });

  it('rejects out-of-range expand, unknown representation or normalization, non-boolean explain, expand on axis (422)', async () => {
    const dim = (extra: object) => ({ id: 1, type: 'manual', words: ['river'], ...extra });
    const bad = [
      { dimensions: [dim({ expand: 51 })] },
      { dimensions: [dim({ expand: -1 })] },
      { dimensions: [dim({ expand: 2.5 })] },
      { dimensions: [dim({ expand: '5' })] },
      { dimensions: [{ id: 1, type: 'axis', words: ['good'], oppositeWords: ['bad'], expand: 3 }] },
      { representation: 'cosineOfMean' },
      { representation: null },
      { normalization: 'minmax' },
      { expansion: 'farthest' },
      // batchZscore is a top-level value only (goalConfig normalizes its factors with word statistics).
      { goalConfig: { dimensions: [{ id: 1, weight: 1 }], normalization: 'batchZscore' }, dimensions: [dim({})] },
      { explain: 'yes' },
    ];
    for (const b of bad) {
      expectProblem(
        await call('POST', `${WS_PATH}/text-scores`, { texts: ['the river'], embeddingModelId: m.id, ...b }),
        422,
        'VALIDATION_FAILED',
      );
    }
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, {
        seedWords: ['river'],
        embeddingModelId: m.id,
        dimensions: [dim({ expand: 51 })],
      }),
      422,
      'VALIDATION_FAILED',
    );
    const ok = await call('POST', `${WS_PATH}/text-scores`, {
      texts: ['the river'],
      embeddingModelId: m.id,
      dimensions: [dim({ expand: 50 })],
      representation: 'sif',
      normalization: 'percentile',
      expansion: 'contrastive',
      explain: false,
    });
    expect(ok.status).toBe(200);
    expect(ok.body.data[0].explanation).toBeUndefined();
  });
});
