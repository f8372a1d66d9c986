/**
 * Mapper training on synthetic spaces quantized exactly like a model (core/quantize.ts) and
 * scanned by the real WASM kernels.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { quantizeRows } from '../../core/quantize';
import { parseMapperBundle, writeMapperBundle } from '../../core/mapper-bundle';
import type { MapperBundleInfo, ModelManifest } from '../../core/types';
import { MapperTrainer, type FoldContext, type TrainingSet, type TrainingSpace } from '../../build/mapper/train-core';
import { pearson, ranks, ridgeFit, rng, spearman } from '../../build/mapper/stats';
import { trainBundle, trainingSetFrom, type LoadedModel } from '../../build/mapper/bundle';
import { trainingProgress } from '../../build/mapper/progress';
import { fitMembership, flagFeatures, MEMBERSHIP_FEATURES, membershipProbability } from '../../build/mapper/anchoring';
import { VOCAB_FLAG } from '../../core/vocab-quality';
import type { Lexicon } from '../../build/mapper/lexicons';

const WASM = path.join(__dirname, '../../build/generated/kernels.wasm');
const module = new WebAssembly.Module(fs.readFileSync(WASM));

function gaussian(r: () => number): number {
  let s = 0;
  for (let i = 0; i < 12; i++) s += r();
  return s - 6;
}

/** A random space of n unit vectors (clustered, so neighbours carry signal), int8-quantized. */
function space(n: number, dims: number, seed: number): TrainingSpace {
  const r = rng(seed);
  const centres = Array.from({ length: 40 }, () => Array.from({ length: dims }, () => gaussian(r)));
  const v = new Float32Array(n * dims);
  for (let i = 0; i < n; i++) {
    const c = centres[Math.floor(r() * centres.length)];
    for (let d = 0; d < dims; d++) v[i * dims + d] = c[d] + 0.7 * gaussian(r);
  }
  const { rows, scales } = quantizeRows(v, n, dims);
  return { size: n, dims, rows, scales, module };
}

/** Float64 dequantized vector of a row. */
function vec(s: TrainingSpace, row: number): Float64Array {
  return Float64Array.from({ length: s.dims }, (_, d) => s.rows[row * s.dims + d] * s.scales[row]);
}

function distinctRows(n: number, count: number, seed: number): Int32Array {
  const r = rng(seed);
  const set = new Set<number>();
  while (set.size < count) set.add(Math.floor(r() * n));
  return Int32Array.from([...set]);
}

describe('mapper training', () => {
  it('ridge recovers the weights of a lexicon generated from a known linear model', () => {
    const s = space(4000, 24, 1);
    const r = rng(2);
    const w = Array.from({ length: s.dims }, () => gaussian(r) * 0.3);
    const bias = 0.2;
    const rows = distinctRows(s.size, 800, 3);
    const y = Float64Array.from(rows, (row) => {
      const x = vec(s, row);
      return bias + w.reduce((acc, wi, d) => acc + wi * x[d], 0);
    });
    const set: TrainingSet = { rows, variables: ['v'], targets: { v: y }, clip: { v: [-100, 100] } };
    const trainer = new MapperTrainer(s, set, { lambdas: [1e-6, 1e-3, 1], ks: [5], powers: [0] });
    const cv = trainer.crossValidate();
    expect(cv.metrics.v.ridge.pearsonR).toBeGreaterThan(0.9999);
    const final = trainer.fitFinal();
    expect(final.hyper.v.lambda).toBe(1e-6);
    const maxW = Math.max(...w.map(Math.abs));
    for (let d = 0; d < s.dims; d++) expect(Math.abs(final.ridge.v.weights[d] - w[d])).toBeLessThan(1e-4 * maxW);
    expect(final.ridge.v.bias).toBeCloseTo(bias, 4);
    // The same weights as an independent float64 ridge on the same data.
    const X = new Float64Array(rows.length * s.dims);
    rows.forEach((row, i) => X.set(vec(s, row), i * s.dims));
    const ref = ridgeFit(X, y, rows.length, s.dims, 1e-6);
    for (let d = 0; d < s.dims; d++) expect(final.ridge.v.weights[d]).toBeCloseTo(ref.weights[d], 6);
    // Materialized ridge values of rows never seen in training follow the generating model.
    const unseen = Int32Array.from({ length: 200 }, (_, i) => i).filter((row) => !rows.includes(row));
    const vals = final.materialize('ridge', unseen).v;
    for (const row of unseen) {
      const x = vec(s, row);
      expect(vals[row]).toBeCloseTo(bias + w.reduce((acc, wi, d) => acc + wi * x[d], 0), 3);
    }
  });

  it('cross-validation never lets a held-out word into training or among the neighbours', () => {
    const s = space(3000, 16, 4);
    const rows = distinctRows(s.size, 500, 5);
    const r = rng(6);
    const y = Float64Array.from(rows, (row) => vec(s, row)[0] + 0.1 * gaussian(r));
    const fits: FoldContext[] = [];
    let neighbourCalls = 0;
    const outerTest = new Map<number, Set<number>>();
    const trainer = new MapperTrainer(
      s,
      { rows, variables: ['v'], targets: { v: y }, clip: { v: [-1, 1] } },
      {
        ks: [5, 10],
        powers: [0, 2],
        observer: {
          fit: (ctx) => {
            fits.push(ctx);
            if (ctx.outer >= 0 && ctx.inner < 0) outerTest.set(ctx.outer, new Set(ctx.testRows));
          },
          neighbours: (ctx, query, neighbours) => {
            neighbourCalls++;
            const train = new Set(ctx.trainRows);
            const test = new Set(ctx.testRows);
            expect(test.has(query)).toBe(true);
            expect(neighbours.length).toBe(10);
            for (const nb of neighbours) {
              expect(train.has(nb)).toBe(true);
              expect(test.has(nb)).toBe(false);
              expect(nb).not.toBe(query);
            }
          },
        },
      },
    );
    trainer.crossValidate();
    expect(neighbourCalls).toBeGreaterThan(500);
    // Outer folds partition the training words; each word is held out exactly once.
    const heldOut = [...outerTest.values()].flatMap((x) => [...x]);
    expect(outerTest.size).toBe(10);
    expect(heldOut.sort((a, b) => a - b)).toEqual(Array.from(rows).sort((a, b) => a - b));
    for (const ctx of fits) {
      const train = new Set(ctx.trainRows);
      for (const t of ctx.testRows) expect(train.has(t)).toBe(false);
      // Inner folds of outer fold f only ever see f's training part.
      if (ctx.inner >= 0) for (const t of outerTest.get(ctx.outer) ?? []) expect(train.has(t)).toBe(false);
    }
    expect(fits.filter((f) => f.inner >= 0).length).toBe(50);
  });

  it('held-out scores of noise ratings stay near zero, while in-sample values would show a leak', () => {
    const s = space(3000, 32, 7);
    const rows = distinctRows(s.size, 1500, 8);
    const r = rng(9);
    const y = Float64Array.from(rows, () => gaussian(r));
    const set: TrainingSet = { rows, variables: ['v'], targets: { v: y }, clip: { v: [-10, 10] } };
    const trainer = new MapperTrainer(s, set, { ks: [5], powers: [0], lambdas: [10] });
    const cv = trainer.crossValidate();
    expect(Math.abs(cv.metrics.v.knn.pearsonR)).toBeLessThan(0.1);
    // With the word itself among its neighbours (what a leak would do), the correlation is large.
    const inSample = trainer.fitFinal().materialize('knn', rows).v;
    expect(
      pearson(
        Float64Array.from(rows, (row) => inSample[row]),
        y,
      ),
    ).toBeGreaterThan(0.3);
  });

  it('materialized values equal a float64 reference of ridge + kNN + ensemble, and survive the bundle round trip', () => {
    const s = space(2500, 16, 10);
    const rows = distinctRows(s.size, 300, 11);
    const r = rng(12);
    const y = Float64Array.from(rows, (row) => Math.tanh(2 * vec(s, row)[1] + vec(s, row)[2]) + 0.2 * gaussian(r));
    const clip: [number, number] = [-1, 1];
    const trainer = new MapperTrainer(
      s,
      { rows, variables: ['v'], targets: { v: y }, clip: { v: clip } },
      { ks: [7], powers: [3], lambdas: [0.5] },
    );
    const final = trainer.fitFinal();
    const h = final.hyper.v;
    expect(h.k).toBe(7);
    expect(h.p).toBe(3);
    const alpha = h.alpha;
    const values = final.materialize('ensemble');

    // Reference, all float64: ridge by normal equations, cosine top-k by a full sort.
    const X = new Float64Array(rows.length * s.dims);
    rows.forEach((row, i) => X.set(vec(s, row), i * s.dims));
    const ridge = ridgeFit(X, y, rows.length, s.dims, h.lambda);
    const clamp = (v: number): number => Math.min(clip[1], Math.max(clip[0], v));
    const unit = (x: Float64Array): Float64Array => {
      const n = Math.hypot(...x);
      return x.map((v) => v / n);
    };
    const trainUnits = Array.from(rows, (row) => unit(vec(s, row)));
    let ambiguous = 0;
    let compared = 0;
    for (let row = 0; row < s.size; row += 3) {
      const x = vec(s, row);
      const q = unit(x);
      const sims = trainUnits.map((t, i) => ({ i, row: rows[i], cos: t.reduce((acc, v, d) => acc + v * q[d], 0) }));
      sims.sort((a, b) => b.cos - a.cos || a.row - b.row);
      if (sims[h.k - 1].cos - sims[h.k].cos < 1e-4) {
        ambiguous++;
        continue;
      }
      let sw = 0;
      let swy = 0;
      for (let j = 0; j < h.k; j++) {
        const wgt = Math.max(sims[j].cos, 0) ** h.p;
        sw += wgt;
        swy += wgt * y[sims[j].i];
      }
      const knn = clamp(swy / sw);
      const lin = clamp(ridge.bias + ridge.weights.reduce((acc, wi, d) => acc + wi * x[d], 0));
      const ref = alpha * knn + (1 - alpha) * lin;
      expect(Math.abs(values.v[row] - ref)).toBeLessThan(2e-4);
      compared++;
    }
    expect(ambiguous).toBeLessThan(compared * 0.02);

    // Bundle round trip: stored values stay within the quantization bound of the reference computation.
    const info: MapperBundleInfo = {
      key: 'syn',
      variables: ['v'],
      translationKey: 'mapper.syn',
      label: 'Syn',
      language: 'en',
      country: 'US',
      multilingual: false,
      modelId: 'syn-model',
      scales: { v: { min: -1, max: 1, description: 'synthetic' } },
      lexicon: { name: 'syn', version: '1', license: 'CC0' },
      trainingWords: { v: rows.length },
      metrics: { v: { pearsonR: 0, spearmanRho: 0 } },
      method: 'ensemble',
    };
    const bundle = parseMapperBundle(
      writeMapperBundle(info, values, {
        linear: { v: { weights: Float32Array.from(final.ridge.v.weights), bias: final.ridge.v.bias } },
      }),
      {
        id: 'syn-model',
        vocabularySize: s.size,
      },
    );
    const bound = bundle.precision('v') + 1e-6;
    for (let row = 0; row < s.size; row++)
      expect(Math.abs(bundle.value('v', row) - values.v[row])).toBeLessThanOrEqual(bound);
    // Stored linear weights reproduce the ridge part for any vector.
    const x = vec(s, 5);
    expect(bundle.applyLinear('v', x)!).toBeCloseTo(
      ridge.bias + ridge.weights.reduce((acc, wi, d) => acc + wi * x[d], 0),
      4,
    );
    // A text's score is the mean of its tokens' word values.
    const tokens = [3, 99, 1000, 2400, 3];
    const mean = tokens.reduce((acc, row) => acc + values.v[row], 0) / tokens.length;
    expect(Math.abs(bundle.mean('v', tokens) - mean)).toBeLessThanOrEqual(bound);
  });

  it('the ensemble is never worse in CV than both of its parts on a mixed signal', () => {
    const s = space(4000, 16, 13);
    const rows = distinctRows(s.size, 1200, 14);
    const r = rng(15);
    const y = Float64Array.from(rows, (row) => {
      const x = vec(s, row);
      return 0.6 * x[0] + Math.sin(4 * x[1]) * 0.3 + 0.15 * gaussian(r);
    });
    const cv = new MapperTrainer(s, {
      rows,
      variables: ['v'],
      targets: { v: y },
      clip: { v: [-5, 5] },
    }).crossValidate();
    const m = cv.metrics.v;
    expect(m.ensemble.pearsonR).toBeGreaterThan(Math.min(m.ridge.pearsonR, m.knn.pearsonR));
    expect(m.ensemble.pearsonR).toBeGreaterThan(0.5);
    expect(m.ensemble.spearmanRho).toBeCloseTo(spearman(cv.predictions.v.ensemble, y), 12);
  });

  it('turns a lexicon into a training set through vocabulary lookup', () => {
    const vocab = ['the', 'good', 'bad', 'great', 'awful'];
    const rowOf = (w: string): number => vocab.indexOf(w.toLowerCase());
    const lexicon: Lexicon = {
      name: 't',
      bundle: { key: 't', translationKey: 'mapper.t', label: 'T' },
      source: { name: 't', version: '1', license: 'CC0' },
      variables: {
        a: {
          scale: { min: -1, max: 1, description: '' },
          ratings: new Map([
            ['good', 0.5],
            ['Good', 0.7],
            ['bad', -0.5],
            ['missing', 1],
            ['awful', -1],
          ]),
        },
        b: {
          scale: { min: 0, max: 1, description: '' },
          ratings: new Map([
            ['good', 0.2],
            ['bad', 0.4],
            ['great', 1],
          ]),
        },
      },
    };
    const set = trainingSetFrom(lexicon, rowOf);
    // Only rows rated in every variable; 'good' and 'Good' land on one row and are averaged.
    expect(Array.from(set.rows)).toEqual([1, 2]);
    expect(set.targets.a[0]).toBeCloseTo(0.6, 12);
    expect(set.targets.a[1]).toBe(-0.5);
    expect(Array.from(set.targets.b)).toEqual([0.2, 0.4]);
    expect(set.clip).toEqual({ a: [-1, 1], b: [0, 1] });
  });

  it('the membership model learns a flag feature the vector does not carry, and pi reads it from the flags', () => {
    // Noise vectors; membership depends on the adjective flag only (80% of adjectives, 10% of the rest).
    const r = rng(11);
    const n = 1500;
    const d = 4;
    const features = MEMBERSHIP_FEATURES.map(([name]) => name);
    const cols = d + features.length;
    const X = new Float64Array(n * cols);
    const t = new Float64Array(n);
    const flags = new Uint16Array(n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < d; j++) X[i * cols + j] = gaussian(r) / 10;
      flags[i] = VOCAB_FLAG.DICTIONARY | (r() < 0.3 ? VOCAB_FLAG.ADJ : VOCAB_FLAG.NOUN);
      flagFeatures(features, flags[i], X, i * cols + d);
      t[i] = r() < (flags[i] & VOCAB_FLAG.ADJ ? 0.8 : 0.1) ? 1 : 0;
    }
    const { membership, oof } = fitMembership(X, t, d, features);
    expect(membership.features).toEqual(features);
    const w = (name: string): number => membership.featureWeights[features.indexOf(name)];
    // logit(0.8) - logit(0.1) = 3.6
    expect(w('adj') - w('noun')).toBeGreaterThan(2.5);
    expect(w('adj') - w('noun')).toBeLessThan(4.7);
    // Out-of-fold pi follows the flag, as does pi recomputed from the stored model and the row's flags.
    const mean = (adj: boolean, f: (i: number) => number): number => {
      let s = 0;
      let c = 0;
      for (let i = 0; i < n; i++)
        if (((flags[i] & VOCAB_FLAG.ADJ) !== 0) === adj) {
          s += f(i);
          c++;
        }
      return s / c;
    };
    expect(mean(true, (i) => oof[i])).toBeGreaterThan(0.7);
    expect(mean(false, (i) => oof[i])).toBeLessThan(0.2);
    const pi = (i: number): number => membershipProbability(membership, X.subarray(i * cols, i * cols + d), flags[i]);
    expect(mean(true, pi)).toBeGreaterThan(0.7);
    expect(mean(false, pi)).toBeLessThan(0.2);
    // A vector-only model (version 3 bundles) ignores the flags.
    const vectorOnly = { weights: membership.weights, bias: 0 };
    expect(membershipProbability(vectorOnly, X.subarray(0, d), VOCAB_FLAG.ADJ)).toBe(
      membershipProbability(vectorOnly, X.subarray(0, d), 0),
    );
  });

  it('Spearman uses average ranks for ties', () => {
    expect(Array.from(ranks([10, 20, 20, 5]))).toEqual([2, 3.5, 3.5, 1]);
    const a = [1, 2, 3, 4, 5];
    const b = a.map((x) => x ** 3);
    expect(spearman(a, b)).toBeCloseTo(1, 12);
    expect(pearson(a, b)).toBeLessThan(1);
  });

  it("a bundle's training says each phase: one plain line apiece where the output is not a terminal", () => {
    const s = space(3000, 16, 21);
    const rows = distinctRows(s.size, 400, 22);
    const r = rng(23);
    const ratings = new Map(
      Array.from(rows, (row): [string, number] => [`w${row}`, vec(s, row)[0] + 0.05 * gaussian(r)]),
    );
    const model: LoadedModel = {
      manifest: { id: 'synthetic', language: 'en', country: 'US', checksum: 'x' } as ModelManifest,
      space: s,
      rowOf: (w) => (/^w\d+$/.test(w) ? Number(w.slice(1)) : -1),
      word: (row) => `w${row}`,
      flags: () => 0,
    };
    const lexicon: Lexicon = {
      name: 't',
      bundle: { key: 't', translationKey: 'mapper.t', label: 'T' },
      source: { name: 't', version: '1', license: 'CC0' },
      variables: { v: { scale: { min: -1, max: 1, description: '' }, ratings } },
    };
    // Not a terminal (no isTTY), as a log file or CI: plain lines, no bar.
    const stream = new PassThrough();
    let out = '';
    stream.on('data', (d: Buffer) => (out += d.toString()));
    trainBundle(lexicon, model, {
      anchor: false,
      keepAll: true,
      ks: [5],
      powers: [0],
      lambdas: [1],
      progress: trainingProgress('[build]   t for synthetic', { stream }),
    });
    expect(out.split('\n').filter(Boolean)).toEqual([
      '[build]   t for synthetic: cross-validation (10 folds)',
      '[build]   t for synthetic: final fit (1 fit)',
      '[build]   t for synthetic: values of every word (3,000 words)',
    ]);
  });
});
