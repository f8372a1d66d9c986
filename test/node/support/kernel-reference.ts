/**
 * Float64 references of the WASM kernels (core/kernels.ts) over the same quantized values, random
 * matrices and queries, and the exact top-k check, shared by the kernels tests.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
import { Kernels, queryMax, type MatrixSlot } from '../../../core/kernels';
import { quantizeRows } from '../../../core/quantize';
import { prng } from '../../../core/kernels-selftest';
import type { TopKOptions } from '../../../core/types';

export const WASM = path.join(__dirname, '..', '..', '..', 'build', 'generated', 'kernels.wasm');

/** The built kernels.wasm: its bytes and the compiled module. */
export function loadKernelsWasm(): { bytes: Uint8Array<ArrayBuffer>; module: WebAssembly.Module } {
  const bytes = new Uint8Array(fs.readFileSync(WASM));
  return { bytes, module: new WebAssembly.Module(bytes) };
}

// ---------------------------------------------------------------------------------------------
// Plain float64 reference over the same quantized values

export interface Mat {
  rows: Int8Array;
  scales: Float32Array;
  n: number;
  dims: number;
}

export function refRow(m: Mat, r: number): Float64Array {
  const out = new Float64Array(m.dims);
  for (let d = 0; d < m.dims; d++) out[d] = m.rows[r * m.dims + d] * m.scales[r];
  return out;
}

export function refScore(m: Mat, q: ArrayLike<number>, r: number): number {
  let qn = 0;
  for (let d = 0; d < m.dims; d++) qn += q[d] * q[d];
  qn = Math.sqrt(qn);
  if (qn === 0) return 0;
  let s = 0;
  for (let d = 0; d < m.dims; d++) s += m.rows[r * m.dims + d] * m.scales[r] * (q[d] / qn);
  return s;
}

/** Tolerance from the i16 query quantization (half a step per lane, summed against a row) + f32 rounding. */
export function tol(m: Mat, r: number): number {
  let l1 = 0;
  for (let d = 0; d < m.dims; d++) l1 += Math.abs(m.rows[r * m.dims + d] * m.scales[r]);
  return (l1 * 0.5) / queryMax(m.dims) + 1e-6 * Math.max(1, l1);
}

export function eligibleRows(m: Mat, options: TopKOptions): number[] {
  const cutoff = options.rankCutoff ?? m.n;
  const base = options.rows ? [...new Set(Array.from(options.rows))] : Array.from({ length: m.n }, (_, i) => i);
  return base.filter((r) => r < cutoff);
}

/** Exact expected top-k given per-row scores: score desc, then row id asc. */
export function selectTopK(rows: number[], score: (r: number) => number, k: number): number[] {
  return [...rows].sort((a, b) => score(b) - score(a) || a - b).slice(0, k);
}

export function randomUnitMatrix(n: number, dims: number, seed: number): { vectors: Float32Array; m: Mat } {
  const rand = prng(seed);
  const vectors = new Float32Array(n * dims);
  for (let i = 0; i < vectors.length; i++) vectors[i] = (rand() * 2 - 1) * (1 + 3 * rand());
  const { rows, scales } = quantizeRows(vectors, n, dims);
  return { vectors, m: { rows, scales, n, dims } };
}

export function randomQuery(dims: number, seed: number): Float32Array {
  const rand = prng(seed);
  return Float32Array.from({ length: dims }, () => rand() * 2 - 1);
}

/** Checks one topK call against the kernel's own per-row scores (exact order) and the float64 reference (values). */
export function checkTopK(
  k: Kernels,
  slot: MatrixSlot,
  m: Mat,
  q: Float32Array,
  kk: number,
  options: TopKOptions = {},
): void {
  const res = k.topK(slot, q, kk, options);
  const eligible = eligibleRows(m, options);
  const all = k.scores(
    slot,
    q,
    Array.from({ length: m.n }, (_, i) => i),
  );
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
