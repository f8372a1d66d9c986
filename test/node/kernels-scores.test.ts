/**
 * WASM kernels (core/kernels.ts): scores of listed rows, the re-normalized centroid and the pairwise
 * similarity matrix against float64 references (fast-check properties).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Kernels } from '../../core/kernels';
import { prng } from '../../core/kernels-selftest';
import { loadKernelsWasm, randomQuery, randomUnitMatrix, refRow, refScore, tol } from './support/kernel-reference';

let module: WebAssembly.Module;

beforeAll(() => {
  ({ module } = loadKernelsWasm());
});

describe('scores, centroid, similarity matrix', () => {
  it('scores listed rows in list order like the reference', () => {
    const k = Kernels.fromModule(module);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 70 }), fc.integer(), (n, dims, seed) => {
        const { m } = randomUnitMatrix(n, dims, seed);
        const slot = k.loadMatrix(m.rows, m.scales, n, dims);
        const q = randomQuery(dims, seed + 1);
        const rand = prng(seed + 2);
        const list = Array.from({ length: 1 + Math.floor(rand() * 40) }, () => Math.floor(rand() * n));
        const s = k.scores(slot, q, list);
        expect(s.length).toBe(list.length);
        list.forEach((r, i) => expect(Math.abs(s[i] - refScore(m, q, r))).toBeLessThanOrEqual(tol(m, r)));
      }),
      { numRuns: 60, seed: 7 },
    );
    expect(k.scores(k.allocMatrix(3, 4), new Float32Array(4), []).length).toBe(0);
  });

  it('computes the re-normalized mean of the listed rows', () => {
    const k = Kernels.fromModule(module);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 130 }), fc.integer(), (n, dims, seed) => {
        const { m } = randomUnitMatrix(n, dims, seed);
        const slot = k.loadMatrix(m.rows, m.scales, n, dims);
        const rand = prng(seed + 3);
        const list = Array.from({ length: 1 + Math.floor(rand() * 30) }, () => Math.floor(rand() * n));
        const mean = new Float64Array(dims);
        for (const r of list) refRow(m, r).forEach((x, d) => (mean[d] += x / list.length));
        const norm = Math.hypot(...mean);
        const c = k.centroid(slot, list);
        expect(c).not.toBeNull();
        expect(c!.length).toBe(dims);
        mean.forEach((x, d) => expect(Math.abs(c![d] - x / norm)).toBeLessThan(1e-5));
      }),
      { numRuns: 60, seed: 8 },
    );
  });

  it('returns null for an empty list or a zero mean', () => {
    const k = Kernels.fromModule(module);
    const dims = 33;
    const rows = new Int8Array(3 * dims);
    const rand = prng(5);
    for (let d = 0; d < dims; d++) {
      rows[d] = Math.round(rand() * 200 - 100);
      rows[dims + d] = -rows[d];
    }
    const slot = k.loadMatrix(rows, Float32Array.of(0.01, 0.01, 0), 3, dims);
    expect(k.centroid(slot, [])).toBeNull();
    expect(k.centroid(slot, [0, 1])).toBeNull();
    expect(k.centroid(slot, [2])).toBeNull();
    const one = k.centroid(slot, [0, 2]);
    expect(one).not.toBeNull();
    expect(Math.hypot(...one!)).toBeCloseTo(1, 6);
    expect(() => k.centroid(slot, [3])).toThrow(RangeError);
  });

  it('computes the symmetric pairwise cosine matrix', () => {
    const k = Kernels.fromModule(module);
    for (const [n, dims, seed] of [
      [40, 100, 21],
      [9, 16, 22],
      [25, 3, 23],
      [60, 47, 24],
    ] as const) {
      const { m } = randomUnitMatrix(n, dims, seed);
      const slot = k.loadMatrix(m.rows, m.scales, n, dims);
      const rand = prng(seed);
      const list = Array.from({ length: 12 }, () => Math.floor(rand() * n));
      const mat = k.similarityMatrix(slot, list);
      expect(mat.length).toBe(list.length ** 2);
      for (let i = 0; i < list.length; i++) {
        const a = refRow(m, list[i]);
        for (let j = 0; j < list.length; j++) {
          const b = refRow(m, list[j]);
          const ref = a.reduce((s, x, d) => s + x * b[d], 0);
          expect(Math.abs(mat[i * list.length + j] - ref)).toBeLessThan(1e-5);
          expect(mat[i * list.length + j]).toBe(mat[j * list.length + i]);
        }
        expect(mat[i * list.length + i]).toBeCloseTo(1, 5);
      }
    }
    expect(k.similarityMatrix(k.allocMatrix(2, 2), []).length).toBe(0);
  });
});
