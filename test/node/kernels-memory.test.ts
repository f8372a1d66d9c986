/**
 * WASM kernels (core/kernels.ts): int8 quantization within its error bound, memory growth that
 * leaves earlier matrices intact, and reuse of a freed matrix region (model eviction).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { Kernels } from '../../core/kernels';
import { quantizeRows } from '../../core/quantize';
import { loadKernelsWasm, randomQuery, randomUnitMatrix, refRow } from './support/kernel-reference';

let module: WebAssembly.Module;
let bytes: Uint8Array<ArrayBuffer>;

beforeAll(() => {
  ({ module, bytes } = loadKernelsWasm());
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
    const s = k.scores(
      slot,
      q,
      Array.from({ length: 200 }, (_, i) => i),
    );
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
    k.similarityMatrix(
      slotB,
      Array.from({ length: 500 }, (_, i) => i * 40),
    ); // 1 MB of scratch
    expect(k.topK(slotA, q, 20)).toEqual(before);
    expect(Array.from(slotA.rows().subarray(0, 64))).toEqual(Array.from(a.rows.subarray(0, 64)));
    const other = Kernels.fromModule(module);
    const slotB2 = other.loadMatrix(b.rows, b.scales, b.n, b.dims);
    expect(k.topK(slotB, q, 50, { rankCutoff: 15000 })).toEqual(other.topK(slotB2, q, 50, { rankCutoff: 15000 }));
    expect(Array.from(k.dequantizeRow(slotB, 123))).toEqual(Array.from(refRow(b, 123), Math.fround));
  });

  it('prefault maps the memory of the next matrix without allocating it or disturbing loaded ones', () => {
    const k = Kernels.fromModule(module);
    const a = randomUnitMatrix(300, 48, 41).m;
    const slotA = k.loadMatrix(a.rows, a.scales, a.n, a.dims);
    const q = randomQuery(48, 42);
    const before = k.topK(slotA, q, 10);
    const b = randomUnitMatrix(30000, 48, 43).m;
    const grown = k.memoryBytes;
    k.prefault(b.n, b.dims);
    expect(k.memoryBytes).toBeGreaterThanOrEqual(grown + Kernels.matrixBytes(b.n, b.dims) - 65536);
    const prefaulted = k.memoryBytes;
    // The next matrix fits in the prefaulted space: no further growth, the same results as a fresh instance.
    const slotB = k.loadMatrix(b.rows, b.scales, b.n, b.dims);
    expect(k.memoryBytes).toBe(prefaulted);
    const other = Kernels.fromModule(module);
    expect(k.topK(slotB, q, 25)).toEqual(other.topK(other.loadMatrix(b.rows, b.scales, b.n, b.dims), q, 25));
    expect(k.topK(slotA, q, 10)).toEqual(before);
    // A freed region that fits is where the next matrix goes: prefault grows nothing for it.
    k.freeMatrix(slotB);
    k.prefault(b.n, b.dims);
    expect(k.memoryBytes).toBe(prefaulted);
    // Nonsense sizes do nothing.
    for (const [n, d] of [
      [0, 48],
      [-1, 48],
      [10, 0],
      [1.5, 48],
      [10, 1e9],
    ])
      k.prefault(n!, d!);
    expect(k.memoryBytes).toBe(prefaulted);
  });
});

describe('matrix memory reuse (eviction)', () => {
  it('a freed matrix region is reused, its padding zeroed, and the freed slot refuses use', () => {
    const k = Kernels.fromBytes(bytes);
    const a = k.allocMatrix(100, 32);
    a.rows().fill(7);
    const b = k.allocMatrix(50, 32);
    const grown = k.memoryBytes;
    k.freeMatrix(a);
    expect(() => k.centroid(a, [0])).toThrow(/freed/);
    expect(k.growthFor(100, 32)).toBe(0);
    const c = k.allocMatrix(100, 32);
    expect((c as unknown as { rowsPtr: number }).rowsPtr).toBe((a as unknown as { rowsPtr: number }).rowsPtr);
    expect(
      new Int8Array(k.buffer(), (c as unknown as { rowsPtr: number }).rowsPtr + 3200, 16).every((x) => x === 0),
    ).toBe(true);
    expect(k.memoryBytes).toBe(grown);
    // Freeing the top matrix gives its memory back to the bump area.
    k.freeMatrix(c);
    k.freeMatrix(b);
    expect(k.liveMatrixBytes).toBe(0);
    k.freeMatrix(b); // twice: no-op
  });
});
