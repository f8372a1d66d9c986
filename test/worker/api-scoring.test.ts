import { beforeAll, describe, expect, it } from 'vitest';
import { env } from 'cloudflare:test';
import type { LanguageData } from '../../core/tokenizer';
import {
  call,
  centroid64,
  qcos,
  englishTokens,
  expectProblem,
  f,
  makeModel,
  rowOf,
  unit,
  uploadEnglish,
  uploadMapper,
  uploadModel,
  type SyntheticModel,
} from './support/api';

const WS = 'ws_demo';
let m: SyntheticModel;
let big: SyntheticModel;
let other: SyntheticModel;
let lang: LanguageData;
let valence: Float64Array;
let arousal: Float64Array;

const WS_PATH = `/api/v1/workspaces/${WS}`;
const close = (a: number, b: number, tol = 1e-6): void => expect(Math.abs(a - b), `${a} vs ${b}`).toBeLessThanOrEqual(tol);

beforeAll(async () => {
  m = makeModel('score-en', { seed: 11 });
  big = makeModel('score-big', { seed: 12, extra: 300 });
  other = makeModel('score-other', { seed: 13 });
  await uploadModel(m);
  await uploadModel(big);
  await uploadModel(other);
  lang = await uploadEnglish();
  const n = m.words.length;
  valence = Float64Array.from({ length: n }, (_, r) => (r % 3 === 2 ? NaN : Math.sin(r)));
  arousal = Float64Array.from({ length: n }, (_, r) => Math.cos(r) * 2);
  await uploadMapper(m, 'emo', { valence, arousal });
  await uploadMapper(other, 'elsewhere', { joy: new Float64Array(other.words.length) });
});

/** Reference quartiles: 1..4 by position in the sorted order; ties share the better one. */
function refQuartiles(values: Array<number | null>, desc: boolean): number[] {
  const idx = values.map((_, i) => i).filter((i) => values[i] !== null);
  idx.sort((a, b) => (desc ? (values[b] as number) - (values[a] as number) : (values[a] as number) - (values[b] as number)) || a - b);
  const out = values.map(() => -1);
  idx.forEach((i, p) => {
    let first = p;
    while (first > 0 && values[idx[first - 1]] === values[i]) first--;
    out[i] = Math.floor((4 * first) / idx.length) + 1;
  });
  return out;
}

describe('word-scores, whitelist mode', () => {
  it('scores only the whitelisted in-vocabulary words, lower-cased, with float64-exact seed similarity', async () => {
    const seeds = ['good', 'great', 'notaword'];
    const whitelist = ['happy', 'SAD', 'cat', 'unknownzz', 'happy', 'bread'];
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: seeds, whitelistWords: whitelist, embeddingModelId: m.id });
    expect(r.status).toBe(200);
    const words = ['happy', 'sad', 'cat', 'bread'];
    expect(r.body.data.map((d: any) => d.word)).toEqual(words);
    const c = centroid64(m, [rowOf(m, 'good'), rowOf(m, 'great')]);
    r.body.data.forEach((d: any) => {
      close(d.seedScore, qcos(m, rowOf(m, d.word), c));
      expect(d.modelRank).toBe(rowOf(m, d.word) + 1);
      expect(d.goalScore).toBeNull(); // seedScore weight not sent
      expect(d.dimensionScores).toEqual({});
      expect(d.mapperScores).toEqual({});
    });
    const sq = refQuartiles(r.body.data.map((d: any) => d.seedScore), true);
    const rq = refQuartiles(r.body.data.map((d: any) => d.modelRank), false);
    expect(r.body.data.map((d: any) => d.seedScoreQuartile)).toEqual(sq);
    expect(r.body.data.map((d: any) => d.modelRankQuartile)).toEqual(rq);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    close(r.body.averages.seedScore, mean(r.body.data.map((d: any) => d.seedScore)));
    close(r.body.averages.modelRankScore, mean(r.body.data.map((d: any) => f(d.modelRank, m.words.length))));
    expect(r.body.averages.goalScore).toBeNull();
  });

  it('goalScore = seedScore weight x seed similarity; null weight gives null', async () => {
    for (const weight of [-1, -0.25, 0.5, 1]) {
      const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], whitelistWords: ['dog', 'river', 'apple'], embeddingModelId: m.id, seedScore: weight });
      expect(r.body.data).toHaveLength(3);
      for (const d of r.body.data) expect(d.goalScore).toBe(weight * d.seedScore);
      close(r.body.averages.goalScore, r.body.data.reduce((s: number, d: any) => s + d.goalScore, 0) / r.body.data.length);
    }
    const n = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], whitelistWords: ['dog'], embeddingModelId: m.id, seedScore: null });
    expect(n.body.data[0].goalScore).toBeNull();
    expect(n.body.averages.goalScore).toBeNull();
  });

  it('seed words all outside the vocabulary: seedScore null, quartile -1', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['zzqq'], whitelistWords: ['dog', 'cat'], embeddingModelId: m.id, seedScore: 1 });
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
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], whitelistWords: ['doctor', 'the'], limit: 1, wordrankLimit: 1, embeddingModelId: m.id });
    expect(r.body.data.map((d: any) => d.word)).toEqual(['doctor', 'the']);
  });
});

describe('word-scores, find-and-score mode', () => {
  it('returns the words closest to the centroid, skipping seeds and entries without a letter', async () => {
    const seeds = ['good', 'happy', 'love'];
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: seeds, embeddingModelId: m.id, limit: 12 });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(12);
    const c = centroid64(m, seeds.map((w) => rowOf(m, w)));
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
    const all = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], embeddingModelId: big.id, limit: 1000 });
    const eligible = big.words.filter((w) => /\p{L}/u.test(w) && w !== 'cat').length;
    expect(all.body.data).toHaveLength(eligible);
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], embeddingModelId: big.id, limit: 1001 }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['cat'], embeddingModelId: big.id, limit: 0 }), 422, 'VALIDATION_FAILED');
  });

  it('wordrankLimit keeps only the top-N most frequent words; -1 disables it; 0 is rejected', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['science'], embeddingModelId: big.id, limit: 1000, wordrankLimit: 40 });
    expect(r.body.data.length).toBeGreaterThan(0);
    for (const d of r.body.data) expect(d.modelRank).toBeLessThanOrEqual(40);
    const eligible = big.words.slice(0, 40).filter((w) => /\p{L}/u.test(w) && w !== 'science').length;
    expect(r.body.data).toHaveLength(eligible);
    const off = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['science'], embeddingModelId: big.id, limit: 200, wordrankLimit: -1 });
    expect(Math.max(...off.body.data.map((d: any) => d.modelRank))).toBeGreaterThan(40);
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['science'], embeddingModelId: big.id, wordrankLimit: 0 }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['science'], embeddingModelId: big.id, wordrankLimit: -2 }), 422, 'VALIDATION_FAILED');
  });

  it('finds nothing when no seed word is in the vocabulary', async () => {
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['zzqq'], embeddingModelId: m.id });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual([]);
    expect(r.body.averages).toEqual({ modelRankScore: null, seedScore: null, dimensionScores: {}, mapperScores: {}, goalScore: null });
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
    const r = await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['dog'], whitelistWords: ['love', 'hate', 'meal', 'river'], embeddingModelId: m.id, dimensions: dims });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(4);
    const food = centroid64(m, ['food', 'bread', 'cheese'].map((w) => rowOf(m, w)));
    const storedPositive = ['good', 'great', 'excellent', 'wonderful', 'happy', 'positive', 'love', 'best', 'beautiful', 'success', 'cat'];
    const pos = centroid64(m, storedPositive.map((w) => rowOf(m, w)).filter((x) => x >= 0));
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
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { ...base, dimensions: [{ id: 987654, type: 'dimension' }] }), 422, 'DIMENSION_NOT_FOUND');
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { ...base, dimensions: [{ id: 1, type: 'manual', words: ['a'] }, { id: 1, type: 'manual' }] }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { ...base, dimensions: [{ id: 2, type: 'manual', words: ['a'], oppositeWords: ['b'] }] }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { ...base, dimensions: [{ id: 2, type: 'other' }] }), 422, 'VALIDATION_FAILED');
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
    close(r.body.averages.mapperScores.emo_valence, withVal.reduce((s: number, d: any) => s + d.mapperScores.emo_valence, 0) / withVal.length);
  });

  it('unknown mapper keys: 422 MAPPER_NOT_FOUND; a mapper of another model: 422 MAPPER_MODEL_MISMATCH', async () => {
    const base = { seedWords: ['dog'], whitelistWords: ['cat'], embeddingModelId: m.id };
    // ('_x' is not an identifier at all: 422 VALIDATION_FAILED before any lookup, test/worker/hardening-ids.test.ts.)
    for (const key of ['emo_nothing', 'nobundle_x', 'novariable', 'emo_']) {
      const r = await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: [key] });
      expectProblem(r, 422, 'MAPPER_NOT_FOUND');
      expect(r.body.errors[0].path).toBe('mapperKeys.0');
    }
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: ['elsewhere_joy'] }), 422, 'MAPPER_MODEL_MISMATCH');
  });

  it('unknown embedding model: 404', async () => {
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { seedWords: ['dog'], embeddingModelId: 'nope-model' }), 404, 'EMBEDDING_MODEL_NOT_FOUND');
  });
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
  for (const [k, vals] of Object.entries(mappers)) mapperScores[k] = mean(content.map((r) => vals[r]).filter((v) => !Number.isNaN(v)));
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
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts, embeddingModelId: m.id, dimensions, mapperKeys: ['emo_valence', 'emo_arousal'], composition: 'mean' });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(texts.length);
    const c1 = centroid64(m, ['good', 'happy', 'love'].map((w) => rowOf(m, w)));
    const c2 = centroid64(m, ['science', 'computer', 'data'].map((w) => rowOf(m, w)));
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
    expect(r.body.data[3]).toEqual({ modelRankScore: null, goalScoreFactors: [], dimensionScores: {}, mapperScores: {} });
  });

  it('composition "rules" (default): negation flips mapper values and damps a manual dimension; explain lists the tokens', async () => {
    const words = ['good', 'food', 'bread', 'river', 'dog', 'cats'].filter((w) => !Number.isNaN(valence[rowOf(m, w)]));
    const text = `${words[0]} ${words[1]}`;
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts: [text, `not ${text}`], embeddingModelId: m.id, dimensions: [dimensions[0]], mapperKeys: ['emo_valence'], explain: true });
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
    const bad = await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: m.id, composition: 'median' });
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
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts, embeddingModelId: m.id, dimensions, mapperKeys: ['emo_arousal'], goalConfig });
    expect(r.status).toBe(200);
    expect(r.body.data).toHaveLength(texts.length);
    for (const got of r.body.data) {
      const factors: Array<{ id: string; type: string; field: string; w: number; s: number }> = [];
      if (got.modelRankScore !== null) factors.push({ id: 'modelRank', type: 'intrinsic', field: 'modelRank', w: 0.5, s: 2 * got.modelRankScore - 1 });
      if (got.dimensionScores['2'] !== undefined) factors.push({ id: '2', type: 'dimension', field: '2', w: -3, s: got.dimensionScores['2'] });
      if (got.dimensionScores['1'] !== undefined) factors.push({ id: '1', type: 'dimension', field: 'Joy', w: 2, s: got.dimensionScores['1'] });
      if (got.mapperScores.emo_arousal !== undefined) factors.push({ id: 'emo_arousal', type: 'mapper', field: 'emo_arousal', w: 1, s: got.mapperScores.emo_arousal });
      const wsum = factors.reduce((a, x) => a + Math.abs(x.w), 0);
      const expected = wsum > 0 ? factors.reduce((a, x) => a + x.w * x.s, 0) / wsum : 0;
      close(got.goalScore, expected, 1e-12);
      expect(got.goalScoreFactors.map((x: any) => [x.id, x.type, x.field])).toEqual(factors.map((x) => [x.id, x.type, x.field]));
      got.goalScoreFactors.forEach((x: any, i: number) => close(x.value, (factors[i].w * factors[i].s) / wsum, 1e-12));
      close(got.goalScoreFactors.reduce((a: number, x: any) => a + x.value, 0), got.goalScore, 1e-12);
    }
    // Text 0 has every factor.
    expect(r.body.data[0].goalScoreFactors).toHaveLength(4);
    // A text without scores: goalScore 0 and no factors.
    expect(r.body.data[3].goalScore).toBe(0);
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
      goalConfig: { dimensions: [{ id: 1, weight: 1 }, { id: 2, weight: 1 }] },
    });
    const plain = await call('POST', `${WS_PATH}/text-scores`, body());
    expect(plain.status).toBe(200);
    expect(plain.body.data[0].goalScoreFactors.map((f: any) => f.field)).toEqual([stored!.name, '2']);
    const renamed = await call('POST', `${WS_PATH}/text-scores`, body('Mood'));
    expect(renamed.body.data[0].goalScoreFactors.map((f: any) => f.field)).toEqual(['Mood', '2']);
  });

  it('normalization zscore and percentile use the statistics of the most frequent words', async () => {
    const V = m.words.length; // < 20,000: the whole vocabulary
    const c1 = centroid64(m, ['good', 'happy', 'love'].map((w) => rowOf(m, w)));
    const sample = m.vectors.map((_, r) => qcos(m, r, c1));
    const meanS = sample.reduce((a, b) => a + b, 0) / V;
    const std = Math.sqrt(sample.reduce((a, b) => a + (b - meanS) ** 2, 0) / V);
    const ranks = Array.from({ length: V }, (_, r) => 2 * f(r + 1, V) - 1);
    const meanR = ranks.reduce((a, b) => a + b, 0) / V;
    const stdR = Math.sqrt(ranks.reduce((a, b) => a + (b - meanR) ** 2, 0) / V);
    const z = (x: number, mu: number, sd: number) => Math.max(-3, Math.min(3, (x - mu) / sd)) / 3;
    const pct = (x: number, xs: number[]) => (2 * (xs.filter((y) => y < x).length + xs.filter((y) => y === x).length / 2)) / xs.length - 1;

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
      { goalConfig: { dimensions: [{ id: 1, weight: 1 }, { id: 1, weight: 2 }] } },
    ];
    for (const b of bad) expectProblem(await call('POST', `${WS_PATH}/text-scores`, { ...base, ...b }), 422, 'VALIDATION_FAILED');
  });

  it('enforces the request limits', async () => {
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, { texts: Array(101).fill('a'), embeddingModelId: m.id }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'.repeat(100_001)], embeddingModelId: m.id }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'] }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/word-scores`, { seedWords: Array(10_001).fill('a'), embeddingModelId: m.id }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, undefined, { raw: '{"texts": [' }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, undefined, { raw: JSON.stringify({ texts: ['a'.repeat(100_000)], pad: 'x'.repeat(2 * 1024 * 1024) }) }), 413, 'PAYLOAD_TOO_LARGE');
    expectProblem(await call('POST', `${WS_PATH}/text-scores`, { texts: ['a'], embeddingModelId: 'nope-model' }), 404, 'EMBEDDING_MODEL_NOT_FOUND');
  });

  it('reports Server-Timing and a request id', async () => {
    const r = await call('POST', `${WS_PATH}/text-scores`, { texts: ['good food'], embeddingModelId: m.id });
    expect(r.headers.get('server-timing')).toMatch(/total;dur=/);
    expect(r.headers.get('x-request-id')).toBeTruthy();
  });
});
