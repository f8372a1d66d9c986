/**
 * A fixed, seeded computation over every kernel entry point. The build runs it in Node on the
 * freshly built kernels.wasm and writes the result beside it (kernels.selftest.json); the workerd
 * test runs it on the .wasm module the Worker imports and must get exactly the same numbers.
 */
import { Kernels } from './kernels';
import { quantizeRows } from './quantize';

import { prng } from './prng';

export { prng };

export interface SelfTestResult {
  topAll: { rows: number[]; scores: number[] };
  topCutoff: { rows: number[]; scores: number[] };
  topList: { rows: number[]; scores: number[] };
  scores: number[];
  centroid: number[] | null;
  matrix: number[];
  row7: number[];
}

export function kernelSelfTest(kernels: Kernels): SelfTestResult {
  const n = 203;
  const dims = 37;
  const rand = prng(20240611);
  const v = new Float32Array(n * dims);
  for (let i = 0; i < v.length; i++) v[i] = rand() * 2 - 1;
  v.copyWithin(150 * dims, 3 * dims, 4 * dims); // a duplicate row: equal scores, ties by row id
  const { rows, scales } = quantizeRows(v, n, dims);
  const m = kernels.loadMatrix(rows, scales, n, dims);
  const q = new Float32Array(dims);
  for (let d = 0; d < dims; d++) q[d] = v[3 * dims + d] + 0.3 * (rand() - 0.5);
  const list = [5, 3, 150, 77, 201, 9, 120, 64, 33];
  const plain = (r: { rows: Int32Array; scores: Float32Array }) => ({
    rows: Array.from(r.rows),
    scores: Array.from(r.scores),
  });
  const c = kernels.centroid(m, list);
  return {
    topAll: plain(kernels.topK(m, q, 17)),
    topCutoff: plain(kernels.topK(m, q, 9, { rankCutoff: 101 })),
    topList: plain(kernels.topK(m, q, 5, { rows: list })),
    scores: Array.from(kernels.scores(m, q, list)),
    centroid: c ? Array.from(c) : null,
    matrix: Array.from(kernels.similarityMatrix(m, list)),
    row7: Array.from(kernels.dequantizeRow(m, 7)),
  };
}
