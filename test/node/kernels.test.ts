import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Kernels, queryMax, type MatrixSlot } from '../../core/kernels';
import { quantizeRows } from '../../core/quantize';
import { kernelSelfTest, prng } from '../../core/kernels-selftest';
import type { TopKOptions } from '../../core/types';

const WASM = path.join(__dirname, '..', '..', 'build', 'generated', 'kernels.wasm');
let module: WebAssembly.Module;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(() => {
  bytes = new Uint8Array(fs.readFileSync(WASM));
  module = new WebAssembly.Module(bytes);
});

// ---------------------------------------------------------------------------------------------
// Plain float64 reference over the same quantized values

interface Mat {
  rows: Int8Array;
  scales: Float32Array;
  n: number;
  dims: number;
}

function refRow(m: Mat, r: number): Float64Array {
  const out = new Float64Array(m.dims);
  for (let d = 0; d < m.dims; d++) out[d] = m.rows[r * m.dims + d] * m.scales[r];
  return out;
}

function refScore(m: Mat, q: ArrayLike<number>, r: number): number {
  let qn = 0;
  for (let d = 0; d < m.dims; d++) qn += q[d] * q[d];
  qn = Math.sqrt(qn);
  if (qn === 0) return 0;
  let s = 0;
  for (let d = 0; d < m.dims; d++) s += m.rows[r * m.dims + d] * m.scales[r] * (q[d] / qn);
  return s;
}

/** Tolerance from the i16 query quantization (half a step per lane, summed against a row) + f32 rounding. */
function tol(m: Mat, r: number): number {
  let l1 = 0;
  for (let d = 0; d < m.dims; d++) l1 += Math.abs(m.rows[r * m.dims + d] * m.scales[r]);
  return (l1 * 0.5) / queryMax(m.dims) + 1e-6 * Math.max(1, l1);
}

function eligibleRows(m: Mat, options: TopKOptions): number[] {
  const cutoff = options.rankCutoff ?? m.n;
  const base = options.rows ? [...new Set(Array.from(options.rows))] : Array.from({ length: m.n }, (_, i) => i);
  return base.filter((r) => r < cutoff);
}

/** Exact expected top-k given per-row scores: score desc, then row id asc. */
function selectTopK(rows: number[], score: (r: number) => number, k: number): number[] {
  return [...rows].sort((a, b) => score(b) - score(a) || a - b).slice(0, k);
}

function randomUnitMatrix(n: number, dims: number, seed: number): { vectors: Float32Array; m: Mat } {
  const rand = prng(seed);
  const vectors = new Float32Array(n * dims);
  for (let i = 0; i < vectors.length; i++) vectors[i] = (rand() * 2 - 1) * (1 + 3 * rand());
  const { rows, scales } = quantizeRows(vectors, n, dims);
  return { vectors, m: { rows, scales, n, dims } };
}

function randomQuery(dims: number, seed: number): Float32Array {
  const rand = prng(seed);
  return Float32Array.from({ length: dims }, () => rand() * 2 - 1);
}

/** Checks one topK call against the kernel's own per-row scores (exact order) and the float64 reference (values). */
function checkTopK(k: Kernels, slot: MatrixSlot, m: Mat, q: Float32Array, kk: number, options: TopKOptions = {}): void {
  const res = k.topK(slot, q, kk, options);
  const eligible = eligibleRows(m, options);
  const all = k.scores(slot, q, Array.from({ length: m.n }, (_, i) => i));
  const expected = selectTopK(eligible, (r) => all[r], kk);
  expect(Array.from(res.rows)).toEqual(expected);
  expect(Array.from(res.scores)).toEqual(expected.map((r) => all[r]));
  for (let i = 0; i < res.rows.length; i++) {
    const r = res.rows[i];
    expect(Math.abs(res.scores[i] - refScore(m, q, r))).toBeLessThanOrEqual(tol(m, r));
  }
  // Against the float64 reference ranking: nothing left out is clearly better than the last kept row.
  if (res.rows.length > 0 && res.rows.length < eligible.length) {
    const last = res.rows[res.rows.length - 1];
    const kept = new Set(res.rows);
    for (const r of eligible) {
      if (!kept.has(r)) expect(refScore(m, q, r)).toBeLessThanOrEqual(refScore(m, q, last) + tol(m, r) + tol(m, last));
    }
  }
}

// ---------------------------------------------------------------------------------------------

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
            data: fc.array(fc.array(fc.integer({ min: -2, max: 2 }), { minLength: dims, maxLength: dims }), { minLength: 0, maxLength: 70 }),
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

describe('quantization and memory', () => {
  it('keeps every dequantized row within the error bound of its unit vector', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 300 }), fc.integer(), (n, dims, seed) => {
        const { vectors, m } = randomUnitMatrix(n, dims, seed);
        for (let r = 0; r < n; r++) {
          const v = vectors.subarray(r * dims, (r + 1) * dims);
          const norm = Math.hypot(...v);
          const u = Array.from(v, (x) => x / norm);
          const maxabs = Math.max(...u.map(Math.abs));
          const deq = refRow(m, r);
          // int8 at step s = maxabs/127 is within e = sqrt(dims) * s / 2 of u; re-normalizing at most doubles it.
          const err = Math.hypot(...u.map((x, d) => x - deq[d]));
          expect(err).toBeLessThanOrEqual(Math.sqrt(dims) * (maxabs / 127) * 1.0001);
          expect(Math.hypot(...deq)).toBeCloseTo(1, 5);
          expect(Math.max(...Array.from(m.rows.subarray(r * dims, (r + 1) * dims), Math.abs))).toBe(127);
        }
      }),
      { numRuns: 100, seed: 9 },
    );
    // The cosine error the bound implies, checked on a realistic shape.
    const { vectors, m } = randomUnitMatrix(200, 100, 77);
    const k = Kernels.fromModule(module);
    const slot = k.loadMatrix(m.rows, m.scales, 200, 100);
    const q = vectors.slice(0, 100);
    const s = k.scores(slot, q, Array.from({ length: 200 }, (_, i) => i));
    const qn = Math.hypot(...q);
    for (let r = 0; r < 200; r++) {
      const v = vectors.subarray(r * 100, (r + 1) * 100);
      const exact = v.reduce((acc, x, d) => acc + x * q[d], 0) / (Math.hypot(...v) * qn);
      expect(Math.abs(s[r] - exact)).toBeLessThan(0.02);
    }
  });

  it('quantizes a zero row to zeros with scale 0', () => {
    const { rows, scales } = quantizeRows(new Float32Array(8), 2, 4);
    expect(Array.from(rows)).toEqual(new Array(8).fill(0));
    expect(Array.from(scales)).toEqual([0, 0]);
  });

  it('grows memory for further matrices and scratch without disturbing earlier ones', () => {
    const k = Kernels.fromModule(module);
    const a = randomUnitMatrix(500, 64, 31).m;
    const slotA = k.loadMatrix(a.rows, a.scales, a.n, a.dims);
    const q = randomQuery(64, 32);
    const before = k.topK(slotA, q, 20);
    const bytesBefore = k.memoryBytes;
    // Fill a second, larger matrix in place through the views allocMatrix hands out.
    const b = randomUnitMatrix(20000, 64, 33).m;
    const slotB = k.allocMatrix(b.n, b.dims);
    slotB.rows().set(b.rows);
    slotB.scales().set(b.scales);
    expect(k.memoryBytes).toBeGreaterThan(bytesBefore);
    k.similarityMatrix(slotB, Array.from({ length: 500 }, (_, i) => i * 40)); // 1 MB of scratch
    expect(k.topK(slotA, q, 20)).toEqual(before);
    expect(Array.from(slotA.rows().subarray(0, 64))).toEqual(Array.from(a.rows.subarray(0, 64)));
    const other = Kernels.fromModule(module);
    const slotB2 = other.loadMatrix(b.rows, b.scales, b.n, b.dims);
    expect(k.topK(slotB, q, 50, { rankCutoff: 15000 })).toEqual(other.topK(slotB2, q, 50, { rankCutoff: 15000 }));
    expect(Array.from(k.dequantizeRow(slotB, 123))).toEqual(Array.from(refRow(b, 123), Math.fround));
  });
});

describe('matrix memory reuse (eviction)', () => {
  it('a freed matrix region is reused, its padding zeroed, and the freed slot refuses use', () => {
    const k = loadKernelsForReuse();
    const a = k.allocMatrix(100, 32);
    a.rows().fill(7);
    const b = k.allocMatrix(50, 32);
    const grown = k.memoryBytes;
    k.freeMatrix(a);
    expect(() => k.centroid(a, [0])).toThrow(/freed/);
    expect(k.growthFor(100, 32)).toBe(0);
    const c = k.allocMatrix(100, 32);
    expect((c as unknown as { rowsPtr: number }).rowsPtr).toBe((a as unknown as { rowsPtr: number }).rowsPtr);
    expect(new Int8Array(k.buffer(), (c as unknown as { rowsPtr: number }).rowsPtr + 3200, 16).every((x) => x === 0)).toBe(true);
    expect(k.memoryBytes).toBe(grown);
    // Freeing the top matrix gives its memory back to the bump area.
    k.freeMatrix(c);
    k.freeMatrix(b);
    expect(k.liveMatrixBytes).toBe(0);
    k.freeMatrix(b); // twice: no-op
  });
});

function loadKernelsForReuse(): Kernels {
  return Kernels.fromBytes(fs.readFileSync(path.join(__dirname, '..', '..', 'build', 'generated', 'kernels.wasm')));
}
