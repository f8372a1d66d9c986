/**
 * text-scores through the Worker against float64 references: per-text means over in-vocabulary
 * non-stop tokens, composition rules and explain, goalConfig factors, normalization, validation,
 * request limits, Server-Timing and the request id.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { env } from 'cloudflare:test';
import type { LanguageData } from '../../core/tokenizer';
import { call, centroid64, qcos, englishTokens, expectProblem, f, rowOf, type SyntheticModel } from './support/api';
import { uploadScoringFixtures, WS_PATH } from './support/scoring';

let m: SyntheticModel;
let lang: LanguageData;
let valence: Float64Array;
let arousal: Float64Array;

const close = (a: number, b: number, tol = 1e-6): void =>
  expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(tol);

beforeAll(async () => {
  ({ m, lang, valence, arousal } = await uploadScoringFixtures());
});

/** float64 reference of a scored text. */
function refText(text: string, dims: Record<string, Float64Array>, mappers: Record<string, Float64Array>) {
  const tokens = englishTokens(text, lang);
  const all: number[] = [];
  const content: number[] = [];
  for (const t of tokens) {
    let r = rowOf(m, t.token);
    if (r < 0) r = rowOf(m, t.string);
    if (r < 0) continue;
    all.push(r);
    if (!t.isStop) content.push(r);
  }
  const V = m.words.length;
  const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
  const dimensionScores: Record<string, number | null> = {};
  for (const [k, c] of Object.entries(dims)) dimensionScores[k] = mean(content.map((r) => qcos(m, r, c)));
  const mapperScores: Record<string, number | null> = {};
  for (const [k, vals] of Object.entries(mappers))
    mapperScores[k] = mean(content.map((r) => vals[r]).filter((v) => !Number.isNaN(v)));
  return { tokens, all, content, modelRankScore: mean(all.map((r) => f(r + 1, V))), dimensionScores, mapperScores };
}

describe('text-scores', () => {
  const texts = [
    'The happy cats love good food and fresh bread.',
    'Apples, an apple: the science of computers and data!',
    'zzz qqq',
    '',
    'The dog ran to the river and the mountain.',
  ];
  const dimensions = [
    { id: 1, type: 'manual', words: ['good', 'happy', 'love'], name: 'Joy' },
    { id: 2, type: 'manual', words: ['science', 'computer', 'data'] },
    { id: 3, type: 'manual', words: ['notinvocab'] },
  ];

  it('one element per text, in order; scores are means over in-vocabulary non-stop tokens (lemma first)', async () => {
    // composition "mean": the plain mean (the default "rules" is tested below and in test/node/composition.test.ts).
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      texts,
      embeddingModelId: m.id,
      dimensions,
      mapperKeys: ['emo_valence', 'emo_arousal'],
      composition: 'mean',
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(texts.length);
    const c1 = centroid64(
      m,
      ['good', 'happy', 'love'].map((w) => rowOf(m, w)),
    );
    const c2 = centroid64(
      m,
      ['science', 'computer', 'data'].map((w) => rowOf(m, w)),
    );
    texts.forEach((text, i) => {
      const ref = refText(text, { '1': c1, '2': c2 }, { emo_valence: valence, emo_arousal: arousal });
      const got = r.body.data[i];
      expect(got.goalScoreFactors).toEqual([]);
      expect(got.goalScore).toBeUndefined();
      if (ref.modelRankScore === null) expect(got.modelRankScore).toBeNull();
      else close(got.modelRankScore, ref.modelRankScore);
      for (const k of ['1', '2']) {
        if (ref.dimensionScores[k] === null) expect(got.dimensionScores[k]).toBeUndefined();
        else close(got.dimensionScores[k], ref.dimensionScores[k]!);
      }
      expect(got.dimensionScores['3']).toBeUndefined(); // no seed in the vocabulary
      for (const k of ['emo_valence', 'emo_arousal']) {
        if (ref.mapperScores[k] === null) expect(got.mapperScores[k]).toBeUndefined();
        else close(got.mapperScores[k], ref.mapperScores[k]!, 1e-4);
      }
    });
    // The lemma is used: "Apples" and "computers" count as apple / computer.
    const ref1 = refText(texts[1], {}, {});
    expect(ref1.content).toContain(rowOf(m, 'apple'));
    expect(ref1.content).toContain(rowOf(m, 'computer'));
    // Stop words count for modelRankScore but not for dimensions.
    const ref0 = refText(texts[0], {}, {});
    expect(ref0.all).toContain(rowOf(m, 'the'));
    expect(ref0.content).not.toContain(rowOf(m, 'the'));
    // Texts without in-vocabulary tokens get no entries.
    expect(r.body.data[2].dimensionScores).toEqual({});
    expect(r.body.data[2].modelRankScore).toBeNull();
    expect(r.body.data[3]).toEqual({
      modelRankScore: null,
      goalScoreFactors: [],
      dimensionScores: {},
      mapperScores: {},
    });
  });

  it('composition "rules" (default): negation flips mapper values and damps a manual dimension; explain lists the tokens', async () => {
    const words = ['good', 'food', 'bread', 'river', 'dog', 'cats'].filter((w) => !Number.isNaN(valence[rowOf(m, w)]));
    const text = `${words[0]} ${words[1]}`;
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      texts: [text, `not ${text}`],
      embeddingModelId: m.id,
      dimensions: [dimensions[0]],
      mapperKeys: ['emo_valence'],
      explain: true,
    });
    expect(r.status).toBe(200);
    const [pos, neg] = r.body.data;
    const v = words.slice(0, 2).map((w) => valence[rowOf(m, w)]);
    close(pos.mapperScores.emo_valence, (v[0] + v[1]) / 2, 1e-4);
    close(neg.mapperScores.emo_valence, (-0.74 * v[0] - 0.74 * v[1]) / 2, 1e-4);
    close(neg.dimensionScores['1'], 0.26 * pos.dimensionScores['1'], 1e-5);
    const toks = neg.explanation.mappers.emo_valence.tokens;
    expect(toks.map((t: any) => t.string).sort()).toEqual(words.slice(0, 2).sort());
    for (const t of toks) {
      expect(t.rules).toContain('negated');
      expect(`not ${text}`.slice(t.indexStart, t.indexEnd)).toBe(t.string);
    }
    expect(Object.keys(neg.explanation.dimensions)).toEqual(['1']);
    expect(pos.explanation.mappers.emo_valence.tokens.every((t: any) => t.weight === 1)).toBe(true);
    const bad = await call('POST', `${WS_PATH}/text-scores`, {
      texts: ['a'],
      embeddingModelId: m.id,
      composition: 'median',
    });
    expect(bad.status).toBe(422);
    const bad2 = await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: m.id, explain: 'yes' });
    expect(bad2.status).toBe(422);
  });

  it('goalConfig: goalScore = sum(w*s)/sum(|w|), factors in order summing to goalScore', async () => {
    const goalConfig = {
      modelRankScore: 0.5,
      dimensions: [
        { id: 2, weight: -3 },
        { id: 1, weight: 2 },
        { id: 3, weight: 5 },
      ],
      mappers: [{ id: 'emo_arousal', weight: 1 }],
    };
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      texts,
      embeddingModelId: m.id,
      dimensions,
      mapperKeys: ['emo_arousal'],
      goalConfig,
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(texts.length);
    for (const got of r.body.data) {
      const factors: Array<{ id: string; type: string; field: string; w: number; s: number }> = [];
      if (got.modelRankScore !== null)
        factors.push({ id: 'modelRank', type: 'intrinsic', field: 'modelRank', w: 0.5, s: 2 * got.modelRankScore - 1 });
      if (got.dimensionScores['2'] !== undefined)
        factors.push({ id: '2', type: 'dimension', field: '2', w: -3, s: got.dimensionScores['2'] });
      if (got.dimensionScores['1'] !== undefined)
        factors.push({ id: '1', type: 'dimension', field: 'Joy', w: 2, s: got.dimensionScores['1'] });
      if (got.mapperScores.emo_arousal !== undefined)
        factors.push({
          id: 'emo_arousal',
          type: 'mapper',
          field: 'emo_arousal',
          w: 1,
          s: got.mapperScores.emo_arousal,
        });
      const wsum = factors.reduce((a, x) => a + Math.abs(x.w), 0);
      const expected = wsum > 0 ? factors.reduce((a, x) => a + x.w * x.s, 0) / wsum : 0;
      close(got.goalScore, expected, 1e-12);
      expect(got.goalScoreFactors.map((x: any) => [x.id, x.type, x.field])).toEqual(
        factors.map((x) => [x.id, x.type, x.field]),
      );
      got.goalScoreFactors.forEach((x: any, i: number) => close(x.value, (factors[i].w * factors[i].s) / wsum, 1e-12));
      close(
        got.goalScoreFactors.reduce((a: number, x: any) => a + x.value, 0),
        got.goalScore,
        1e-12,
      );
    }
    // Text 0 has every factor.
    expect(r.body.data[0].goalScoreFactors).toHaveLength(4);
    // A text without scores: goalScore null (a mean over no factor) and no factors.
    expect(r.body.data[3].goalScore).toBeNull();
    expect(r.body.data[3].goalScoreFactors).toEqual([]);
  });

  it('goal factor field: the request name, else the stored dimension name, else the id', async () => {
    // Dimension 1 is the seeded stored dimension "Positive" (migration 0002).
    const stored = await env.DB.prepare('SELECT name FROM dimensions WHERE id = 1').first<{ name: string }>();
    expect(stored?.name).toBeTruthy();
    const body = (named?: string) => ({
      texts: ['The happy cats love good food.'],
      embeddingModelId: m.id,
      dimensions: [
        { id: 1, type: 'dimension', ...(named ? { name: named } : {}) },
        { id: 2, type: 'manual', words: ['science', 'computer'] },
      ],
      goalConfig: {
        dimensions: [
          { id: 1, weight: 1 },
          { id: 2, weight: 1 },
        ],
      },
    });
    const plain = await call('POST', `${WS_PATH}/text-scores`, body());
    expect(plain.status).toBe(200);
    expect(plain.body.data[0].goalScoreFactors.map((f: any) => f.field)).toEqual([stored!.name, '2']);
    const renamed = await call('POST', `${WS_PATH}/text-scores`, body('Mood'));
    expect(renamed.body.data[0].goalScoreFactors.map((f: any) => f.field)).toEqual(['Mood', '2']);
  });

  it('normalization zscore and percentile use the statistics of the most frequent words', async () => {
    const V = m.words.length; // < 20,000: the whole vocabulary
    const c1 = centroid64(
      m,
      ['good', 'happy', 'love'].map((w) => rowOf(m, w)),
    );
    const sample = m.vectors.map((_, r) => qcos(m, r, c1));
    const meanS = sample.reduce((a, b) => a + b, 0) / V;
    const std = Math.sqrt(sample.reduce((a, b) => a + (b - meanS) ** 2, 0) / V);
    const ranks = Array.from({ length: V }, (_, r) => 2 * f(r + 1, V) - 1);
    const meanR = ranks.reduce((a, b) => a + b, 0) / V;
    const stdR = Math.sqrt(ranks.reduce((a, b) => a + (b - meanR) ** 2, 0) / V);
    const z = (x: number, mu: number, sd: number) => Math.max(-3, Math.min(3, (x - mu) / sd)) / 3;
    const pct = (x: number, xs: number[]) =>
      (2 * (xs.filter((y) => y < x).length + xs.filter((y) => y === x).length / 2)) / xs.length - 1;

    const body = (normalization: string) => ({
      texts: [texts[0]],
      embeddingModelId: m.id,
      dimensions,
      goalConfig: { modelRankScore: -1, dimensions: [{ id: 1, weight: 4 }], normalization },
    });
    const zr = await call('POST', `${WS_PATH}/text-scores`, body('zscore'));
    expect(zr.status).toBe(200);
    const t = zr.body.data[0];
    const sDim = z(t.dimensionScores['1'], meanS, std);
    const sRank = z(2 * t.modelRankScore - 1, meanR, stdR);
    close(t.goalScoreFactors[0].value, (-1 * sRank) / 5, 1e-6);
    close(t.goalScoreFactors[1].value, (4 * sDim) / 5, 1e-5);
    close(t.goalScore, (-sRank + 4 * sDim) / 5, 1e-5);

    const pr = await call('POST', `${WS_PATH}/text-scores`, body('percentile'));
    const p = pr.body.data[0];
    close(p.goalScoreFactors[0].value, (-1 * pct(2 * p.modelRankScore - 1, ranks)) / 5, 1e-9);
    close(p.goalScoreFactors[1].value, (4 * pct(p.dimensionScores['1'], sample)) / 5, 0.05); // one rank step of float noise at most
    for (const x of p.goalScoreFactors) expect(Math.abs(x.value)).toBeLessThanOrEqual(1);

    const none = await call('POST', `${WS_PATH}/text-scores`, body('none'));
    close(none.body.data[0].goalScoreFactors[1].value, (4 * none.body.data[0].dimensionScores['1']) / 5, 1e-12);
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, body('minmax')), 422, 'VALIDATION_FAILED');
  });

  it('rejects goalConfig references to absent dimensions or mappers, and weights out of range', async () => {
    const base = { texts: ['good food'], embeddingModelId: m.id, dimensions };
    const bad = [
      { goalConfig: { dimensions: [{ id: 99, weight: 1 }] } },
      { goalConfig: { mappers: [{ id: 'emo_valence', weight: 1 }] } },
      { goalConfig: { dimensions: [{ id: 1, weight: 11 }] } },
      { goalConfig: { dimensions: [{ id: 1, weight: 1.5 }] } },
      { goalConfig: { modelRankScore: 1.5 } },
      {
        goalConfig: {
          dimensions: [
            { id: 1, weight: 1 },
            { id: 1, weight: 2 },
          ],
        },
      },
    ];
    for (const b of bad)
      expectProblem(await call('POST', `${WS_PATH}/text-scores`, { ...base, ...b }), 422, 'VALIDATION_FAILED');
  });

  it('enforces the request limits', async () => {
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, { texts: Array(101).fill('a'), embeddingModelId: m.id }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'.repeat(100_001)], embeddingModelId: m.id }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'] }), 422, 'VALIDATION_FAILED');
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { seedWords: Array(10_001).fill('a'), embeddingModelId: m.id }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, undefined, { raw: '{"texts": [' }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, undefined, {
        raw: JSON.stringify({ texts: ['a'.repeat(100_000)], pad: 'x'.repeat(2 * 1024 * 1024) }),
      }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: 'nope-model' }),
      404,
      'EMBEDDING_MODEL_NOT_FOUND',
    );
  });

  it('reports Server-Timing and a request id', async () => {
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts: ['good food'], embeddingModelId: m.id });
    expect(r.headers.get('server-timing')).toMatch(/total;dur=/);
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });
});
