/**
 * word-scores through the Worker against float64 references: whitelist and find-and-score modes,
 * quartiles, goal scores, wordrankLimit and limit, manual/stored/axis dimensions and mapper values,
 * and their validation.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { call, centroid64, qcos, expectProblem, f, rowOf, unit, type SyntheticModel } from './support/api';
import { uploadScoringFixtures, WS_PATH } from './support/scoring';

let m: SyntheticModel;
let big: SyntheticModel;
let valence: Float64Array;
let arousal: Float64Array;

const close = (a: number, b: number, tol = 1e-6): void =>
  expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(tol);

beforeAll(async () => {
  ({ m, big, valence, arousal } = await uploadScoringFixtures());
});

/** Reference quartiles: 1..4 by position in the sorted order; ties share the better one. */
function refQuartiles(values: Array<number | null>, desc: boolean): number[] {
  const idx = values.map((_, i) => i).filter((i) => values[i] !== null);
  idx.sort(
    (a, b) =>
      (desc ? (values[b] as number) - (values[a] as number) : (values[a] as number) - (values[b] as number)) || a - b,
  );
  const out = values.map(() => -1);
  idx.forEach((i, p) => {
    let first = p;
    while (first > 0 && values[idx[first - 1]] === values[i]) first--;
    out[i] = Math.floor((4 * first) / idx.length) + 1;
  });
  return out;
}

describe('word-scores, whitelist mode', () => {
  it('scores only the whitelisted in-vocabulary words, as written, with float64-exact seed similarity', async () => {
    const seeds = ['good', 'great', 'notaword'];
    const whitelist = ['happy', 'SAD', 'cat', 'unknownzz', 'happy', 'bread'];
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: seeds,
      whitelistWords: whitelist,
      embeddingModelId: m.id,
    });
    expect(r.status).toBe(200);
    // Each word as the request wrote it (SAD found as sad), a repeated one once.
    const words = ['happy', 'SAD', 'cat', 'bread'];
    expect(r.body.data.map((d: any) => d.word)).toEqual(words);
    const c = centroid64(m, [rowOf(m, 'good'), rowOf(m, 'great')]);
    r.body.data.forEach((d: any) => {
      close(d.seedScore, qcos(m, rowOf(m, d.word.toLowerCase()), c));
      expect(d.modelRank).toBe(rowOf(m, d.word.toLowerCase()) + 1);
      expect(d.goalScore).toBeNull(); // seedScore weight not sent
      expect(d.dimensionScores).toEqual({});
      expect(d.mapperScores).toEqual({});
    });
    const sq = refQuartiles(
      r.body.data.map((d: any) => d.seedScore),
      true,
    );
    const rq = refQuartiles(
      r.body.data.map((d: any) => d.modelRank),
      false,
    );
    expect(r.body.data.map((d: any) => d.seedScoreQuartile)).toEqual(sq);
    expect(r.body.data.map((d: any) => d.modelRankQuartile)).toEqual(rq);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    close(r.body.averages.seedScore, mean(r.body.data.map((d: any) => d.seedScore)));
    close(r.body.averages.modelRankScore, mean(r.body.data.map((d: any) => f(d.modelRank, m.words.length))));
    expect(r.body.averages.goalScore).toBeNull();
  });

  it('limit and wordrankLimit are ignored, whatever integer they are; without a whitelist the same values are 422', async () => {
    for (const extra of [{ limit: 0 }, { limit: 100_000 }, { wordrankLimit: 0 }, { wordrankLimit: -2 }]) {
      const body = { seedWords: ['good'], embeddingModelId: m.id, ...extra };
      const r = await call('POST', `${WS_PATH}/word-scores`, { ...body, whitelistWords: ['happy', 'cat'] });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data.map((d: any) => d.word)).toEqual(['happy', 'cat']);
      expectProblem(await call('POST', `${WS_PATH}/word-scores`, body), 422, 'VALIDATION_FAILED');
    }
    const wrongType = { seedWords: ['good'], whitelistWords: ['cat'], embeddingModelId: m.id, limit: 'ten' };
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, wrongType), 422, 'VALIDATION_FAILED');
  });

  it('goalScore = seedScore weight x seed similarity; null weight gives null', async () => {
    for (const weight of [-1, -0.25, 0.5, 1]) {
      const r = await call('POST', `${WS_PATH}/word-scores`, {
        seedWords: ['cat'],
        whitelistWords: ['dog', 'river', 'apple'],
        embeddingModelId: m.id,
        seedScore: weight,
      });
      expect(r.body.data).toHaveLength(3);
      for (const d of r.body.data) expect(d.goalScore).toBe(weight * d.seedScore);
      close(
        r.body.averages.goalScore,
        r.body.data.reduce((s: number, d: any) => s + d.goalScore, 0) / r.body.data.length,
      );
    }
    const n = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['cat'],
      whitelistWords: ['dog'],
      embeddingModelId: m.id,
      seedScore: null,
    });
    expect(n.body.data[0].goalScore).toBeNull();
    expect(n.body.averages.goalScore).toBeNull();
  });

  it('seed words all outside the vocabulary: seedScore null, quartile -1', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['zzqq'],
      whitelistWords: ['dog', 'cat'],
      embeddingModelId: m.id,
      seedScore: 1,
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(2);
    for (const d of r.body.data) {
      expect(d.seedScore).toBeNull();
      expect(d.seedScoreQuartile).toBe(-1);
      expect(d.goalScore).toBeNull();
      expect(d.modelRankQuartile).toBeGreaterThanOrEqual(1);
    }
    expect(r.body.averages.seedScore).toBeNull();
  });

  it('wordrankLimit and limit have no effect in whitelist mode', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['cat'],
      whitelistWords: ['doctor', 'the'],
      limit: 1,
      wordrankLimit: 1,
      embeddingModelId: m.id,
    });
    expect(r.body.data.map((d: any) => d.word)).toEqual(['doctor', 'the']);
  });
});

describe('word-scores, find-and-score mode', () => {
  it('returns the words closest to the centroid, skipping seeds and entries without a letter', async () => {
    const seeds = ['good', 'happy', 'love'];
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: seeds, embeddingModelId: m.id, limit: 12 });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(12);
    const c = centroid64(
      m,
      seeds.map((w) => rowOf(m, w)),
    );
    const eligible = m.words.filter((w) => /\p{L}/u.test(w) && !seeds.includes(w));
    const ref = eligible.map((w) => ({ w, s: qcos(m, rowOf(m, w), c) })).sort((a, b) => b.s - a.s);
    const got = r.body.data.map((d: any) => d.word);
    for (const d of r.body.data) {
      expect(seeds).not.toContain(d.word);
      expect(/\p{L}/u.test(d.word)).toBe(true);
      close(d.seedScore, qcos(m, rowOf(m, d.word), c));
    }
    // The 12 best by the float64 reference (up to float noise at the boundary).
    const threshold = ref[11].s;
    for (const x of ref) if (!got.includes(x.w)) expect(x.s).toBeLessThanOrEqual(threshold + 1e-6);
    // Best first.
    const scores = r.body.data.map((d: any) => d.seedScore);
    expect([...scores].sort((a, b) => b - a)).toEqual(scores);
  });

  it('limit defaults to 100 and accepts up to 1,000', async () => {
    const d = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], embeddingModelId: big.id });
    expect(d.body.data).toHaveLength(100);
    const all = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['cat'],
      embeddingModelId: big.id,
      limit: 1000,
    });
    const eligible = big.words.filter((w) => /\p{L}/u.test(w) && w !== 'cat').length;
    expect(all.body.data).toHaveLength(eligible);
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], embeddingModelId: big.id, limit: 1001 }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], embeddingModelId: big.id, limit: 0 }),
      422,
      'VALIDATION_FAILED',
    );
  });

  it('wordrankLimit keeps only the top-N most frequent words; -1 disables it; 0 is rejected', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['science'],
      embeddingModelId: big.id,
      limit: 1000,
      wordrankLimit: 40,
    });
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const d of r.body.data) expect(d.modelRank).toBeLessThanOrEqual(40);
    const eligible = big.words.slice(0, 40).filter((w) => /\p{L}/u.test(w) && w !== 'science').length;
    expect(r.body.data).toHaveLength(eligible);
    const off = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['science'],
      embeddingModelId: big.id,
      limit: 200,
      wordrankLimit: -1,
    });
    expect(Math.max(...off.body.data.map((d: any) => d.modelRank))).toBeGreaterThan(40);
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, {
        seedWords: ['science'],
        embeddingModelId: big.id,
        wordrankLimit: 0,
      }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, {
        seedWords: ['science'],
        embeddingModelId: big.id,
        wordrankLimit: -2,
      }),
      422,
      'VALIDATION_FAILED',
    );
  });

  it('finds nothing when no seed word is in the vocabulary', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['zzqq'], embeddingModelId: m.id });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([]);
    expect(r.body.averages).toEqual({
      modelRankScore: null,
      seedScore: null,
      dimensionScores: {},
      mapperScores: {},
      goalScore: null,
    });
  });
});

describe('dimensions and mappers on word-scores', () => {
  it('manual, stored (dimension) and axis dimensions equal the float64 references; empty ones are omitted', async () => {
    const dims = [
      { id: 10, type: 'manual', words: ['food', 'bread', 'cheese'], name: 'Food' },
      { id: 11, type: 'manual', words: ['nothere'] },
      { id: 1, type: 'dimension', words: ['cat'] }, // stored "Positive" seeds (migration 0002) + cat
      { id: 12, type: 'axis', words: ['good', 'happy'], oppositeWords: ['bad', 'sad'] },
    ];
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['dog'],
      whitelistWords: ['love', 'hate', 'meal', 'river'],
      embeddingModelId: m.id,
      dimensions: dims,
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(4);
    const food = centroid64(
      m,
      ['food', 'bread', 'cheese'].map((w) => rowOf(m, w)),
    );
    const storedPositive = [
      'good',
      'great',
      'excellent',
      'wonderful',
      'happy',
      'positive',
      'love',
      'best',
      'beautiful',
      'success',
      'cat',
    ];
    const pos = centroid64(
      m,
      storedPositive.map((w) => rowOf(m, w)).filter((x) => x >= 0),
    );
    const a = centroid64(m, [rowOf(m, 'good'), rowOf(m, 'happy')]);
    const b = centroid64(m, [rowOf(m, 'bad'), rowOf(m, 'sad')]);
    const axis = unit(a.map((x, i) => x - b[i]));
    for (const d of r.body.data) {
      const row = rowOf(m, d.word);
      expect(Object.keys(d.dimensionScores).sort()).toEqual(['1', '10', '12']);
      close(d.dimensionScores['10'], qcos(m, row, food));
      close(d.dimensionScores['1'], qcos(m, row, pos));
      close(d.dimensionScores['12'], qcos(m, row, axis));
    }
    const avg10 = r.body.data.reduce((s: number, d: any) => s + d.dimensionScores['10'], 0) / r.body.data.length;
    close(r.body.averages.dimensionScores['10'], avg10);
    expect(r.body.averages.dimensionScores['11']).toBeUndefined();
  });

  it('rejects unknown stored dimensions, repeated ids and oppositeWords outside axis', async () => {
    const base = { seedWords: ['dog'], whitelistWords: ['cat'], embeddingModelId: m.id };
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { ...base, dimensions: [{ id: 987654, type: 'dimension' }] }),
      422,
      'DIMENSION_NOT_FOUND',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, {
        ...base,
        dimensions: [
          { id: 1, type: 'manual', words: ['a'] },
          { id: 1, type: 'manual' },
        ],
      }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, {
        ...base,
        dimensions: [{ id: 2, type: 'manual', words: ['a'], oppositeWords: ['b'] }],
      }),
      422,
      'VALIDATION_FAILED',
    );
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { ...base, dimensions: [{ id: 2, type: 'other' }] }),
      422,
      'VALIDATION_FAILED',
    );
  });

  it('mapper values per word; words without a value omit the key', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['dog'],
      whitelistWords: m.words.slice(10, 20),
      embeddingModelId: m.id,
      mapperKeys: ['emo_valence', 'emo_arousal', 'emo_valence'],
    });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(10);
    for (const d of r.body.data) {
      const row = rowOf(m, d.word);
      close(d.mapperScores.emo_arousal, arousal[row], 1e-4);
      if (Number.isNaN(valence[row])) expect(d.mapperScores.emo_valence).toBeUndefined();
      else close(d.mapperScores.emo_valence, valence[row], 1e-4);
    }
    const withVal = r.body.data.filter((d: any) => d.mapperScores.emo_valence !== undefined);
    close(
      r.body.averages.mapperScores.emo_valence,
      withVal.reduce((s: number, d: any) => s + d.mapperScores.emo_valence, 0) / withVal.length,
    );
  });

  it('unknown mapper keys: 422 MAPPER_NOT_FOUND; a mapper of another model: 422 MAPPER_MODEL_MISMATCH', async () => {
    const base = { seedWords: ['dog'], whitelistWords: ['cat'], embeddingModelId: m.id };
    // ('_x' is not an identifier at all: 422 VALIDATION_FAILED before any lookup, test/worker/hardening-ids.test.ts.)
    for (const key of ['emo_nothing', 'nobundle_x', 'novariable', 'emo_']) {
      const r = await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: [key] });
      expectProblem(r, 422, 'MAPPER_NOT_FOUND');
      expect(r.body.errors[0].path).toBe('mapperKeys.0');
    }
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: ['elsewhere_joy'] }),
      422,
      'MAPPER_MODEL_MISMATCH',
    );
  });

  it('unknown embedding model: 404', async () => {
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['dog'], embeddingModelId: 'nope-model' }),
      404,
      'EMBEDDING_MODEL_NOT_FOUND',
    );
  });
});
