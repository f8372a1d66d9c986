/**
 * WASM kernels (core/kernels.ts): the module itself (no imports, the recorded hash and self-test)
 * and topK against the float64 reference on random matrices, odd sizes, ties and edge cases.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Kernels } from '../../core/kernels';
import { quantizeRows } from '../../core/quantize';
import { kernelSelfTest, prng } from '../../core/kernels-selftest';
import { checkTopK, loadKernelsWasm, randomQuery, randomUnitMatrix, WASM, type Mat } from './support/kernel-reference';
import type { TopKOptions } from '../../core/types';

let module: WebAssembly.Module;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(() => {
  ({ module, bytes } = loadKernelsWasm());
});

describe('kernels.wasm', () => {
  it('has no imports and exports its memory', () => {
    expect(WebAssembly.Module.imports(module)).toEqual([]);
    expect(WebAssembly.Module.exports(module).map((e) => e.name)).toContain('memory');
    // Loads the way workerd and browsers do.
    expect(new WebAssembly.Instance(module, {}).exports.memory).toBeInstanceOf(WebAssembly.Memory);
  });

  it('matches the hash and the self-test numbers the build recorded from the same bytes', () => {
    const sha = crypto.createHash('sha256').update(bytes).digest('hex');
    expect(sha).toBe(fs.readFileSync(`${WASM}.sha256`, 'utf8').trim());
    const recorded = JSON.parse(fs.readFileSync(path.join(path.dirname(WASM), 'kernels.selftest.json'), 'utf8'));
    expect(kernelSelfTest(Kernels.fromBytes(bytes))).toEqual(recorded);
  });
});

describe('topK', () => {
  it('matches the reference on random matrices (all rows, cutoff, row list) for odd sizes and dims', () => {
    const k = Kernels.fromModule(module);
    for (const [n, dims, seed] of [
      [1, 1, 1],
      [7, 3, 2],
      [101, 100, 3],
      [333, 17, 4],
      [1030, 48, 5],
      [257, 129, 6],
    ] as const) {
      const { m } = randomUnitMatrix(n, dims, seed);
      const slot = k.loadMatrix(m.rows, m.scales, n, dims);
      const q = randomQuery(dims, seed * 7);
      for (const kk of [1, 2, 5, 10, 100, 1000]) {
        checkTopK(k, slot, m, q, kk);
        checkTopK(k, slot, m, q, kk, { rankCutoff: Math.floor(n / 2) });
        const rand = prng(seed * 13 + kk);
        const list = Array.from({ length: Math.floor(n / 3) + 1 }, () => Math.floor(rand() * n));
        checkTopK(k, slot, m, q, kk, { rows: list });
        checkTopK(k, slot, m, q, kk, { rows: list, rankCutoff: Math.floor(n / 2) });
      }
    }
  });

  it('breaks ties by the lower row id (property, many exact ties)', () => {
    const k = Kernels.fromModule(module);
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }).chain((dims) =>
          fc.record({
            dims: fc.constant(dims),
            data: fc.array(fc.array(fc.integer({ min: -2, max: 2 }), { minLength: dims, maxLength: dims }), {
              minLength: 0,
              maxLength: 70,
            }),
            query: fc.array(fc.integer({ min: -3, max: 3 }), { minLength: dims, maxLength: dims }),
            k: fc.integer({ min: 0, max: 80 }),
            cutoff: fc.option(fc.integer({ min: -2, max: 80 })),
            list: fc.option(fc.array(fc.nat(200))),
          }),
        ),
        ({ dims, data, query, k: kk, cutoff, list }) => {
          const n = data.length;
          const m: Mat = { rows: Int8Array.from(data.flat()), scales: new Float32Array(n).fill(0.25), n, dims };
          const slot = k.loadMatrix(m.rows, m.scales, n, dims);
          const options: TopKOptions = {};
          if (cutoff !== null) options.rankCutoff = cutoff;
          if (list !== null && n > 0) options.rows = list.map((r) => r % n);
          checkTopK(k, slot, m, Float32Array.from(query), kk, options);
        },
      ),
      { numRuns: 300, seed: 42 },
    );
  });

  it('orders duplicate rows by row id', () => {
    const k = Kernels.fromModule(module);
    const dims = 20;
    const { vectors } = randomUnitMatrix(50, dims, 9);
    for (const dup of [31, 7, 44, 12]) vectors.copyWithin(dup * dims, 20 * dims, 21 * dims);
    const { rows, scales } = quantizeRows(vectors, 50, dims);
    const slot = k.loadMatrix(rows, scales, 50, dims);
    const res = k.topK(slot, vectors.slice(20 * dims, 21 * dims), 5);
    expect(Array.from(res.rows)).toEqual([7, 12, 20, 31, 44]);
    expect(new Set(res.scores).size).toBe(1);
    expect(res.scores[0]).toBeCloseTo(1, 4);
  });

  it('handles k = 0, k > rows, cutoff 0, empty row lists and out-of-range arguments', () => {
    const k = Kernels.fromModule(module);
    const { m } = randomUnitMatrix(30, 10, 11);
    const slot = k.loadMatrix(m.rows, m.scales, 30, 10);
    const q = randomQuery(10, 12);
    expect(k.topK(slot, q, 0).rows.length).toBe(0);
    const all = k.topK(slot, q, 1000);
    expect(all.rows.length).toBe(30);
    expect([...all.rows].sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i));
    for (let i = 1; i < 30; i++) expect(all.scores[i - 1]).toBeGreaterThanOrEqual(all.scores[i]);
    expect(k.topK(slot, q, 10, { rankCutoff: 0 }).rows.length).toBe(0);
    expect(Array.from(k.topK(slot, q, 50, { rankCutoff: 5 }).rows).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4]);
    expect(k.topK(slot, q, 10, { rows: [] }).rows.length).toBe(0);
    expect(Array.from(k.topK(slot, q, 10, { rows: [4, 4, 4] }).rows)).toEqual([4]);
    expect(() => k.topK(slot, q, 1001)).toThrow(RangeError);
    expect(() => k.topK(slot, q, -1)).toThrow(RangeError);
    expect(() => k.topK(slot, q, 2.5)).toThrow(RangeError);
    expect(() => k.topK(slot, q, 5, { rows: [30] })).toThrow(RangeError);
    expect(() => k.topK(slot, new Float32Array(9), 5)).toThrow(RangeError);
    expect(() => k.topK(slot, Float32Array.of(NaN, 0, 0, 0, 0, 0, 0, 0, 0, 0), 5)).toThrow(RangeError);
    const empty = k.allocMatrix(0, 10);
    expect(k.topK(empty, q, 10).rows.length).toBe(0);
    expect(() => Kernels.fromModule(module).topK(slot, q, 1)).toThrow(TypeError);
  });

  it('scores a zero query 0 everywhere and a zero row 0 for any query', () => {
    const k = Kernels.fromModule(module);
    const { vectors } = randomUnitMatrix(12, 24, 13);
    vectors.fill(0, 5 * 24, 6 * 24);
    const { rows, scales } = quantizeRows(vectors, 12, 24);
    const slot = k.loadMatrix(rows, scales, 12, 24);
    const zero = k.topK(slot, new Float32Array(24), 4);
    expect(Array.from(zero.rows)).toEqual([0, 1, 2, 3]);
    expect(Array.from(zero.scores)).toEqual([0, 0, 0, 0]);
    expect(k.scores(slot, randomQuery(24, 14), [5])[0]).toBe(0);
    expect(Array.from(k.dequantizeRow(slot, 5))).toEqual(new Array(24).fill(0));
  });

  it('does not overflow the i32 accumulation at the largest values', () => {
    const k = Kernels.fromModule(module);
    for (const dims of [100, 512, 513, 4096]) {
      const rows = new Int8Array(2 * dims);
      rows.fill(127, 0, dims);
      rows.fill(-128, dims);
      const scales = Float32Array.of(1 / (127 * Math.sqrt(dims)), 1 / (128 * Math.sqrt(dims)));
      const slot = k.loadMatrix(rows, scales, 2, dims);
      const s = k.scores(slot, new Float32Array(dims).fill(5), [0, 1]);
      expect(s[0]).toBeCloseTo(1, 5);
      expect(s[1]).toBeCloseTo(-1, 5);
    }
  });
});
