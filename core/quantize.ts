/**
 * int8 row quantization of the model format ('int8-rowscale'): each row is L2-normalized, then
 * mapped to int8 with round-to-nearest at step maxabs/127 (so the largest component becomes
 * +-127), and given one f32 scale such that int8 * scale is again a unit vector:
 * scale = 1 / ||int8 row|| (about maxabs / 127). With unit dequantized rows, the cosine of two
 * rows is the plain dot product and a row's self-similarity is 1.
 *
 * Error bound (tested): with s = maxabs / 127 of the unit row u, each int8 * s is within s / 2 of
 * u, so ||u - int8 * s|| <= e = sqrt(dims) * s / 2, and the re-normalized row is within 2e of u.
 * A zero (or non-finite) row becomes all zeros with scale 0: its cosine with anything is 0.
 */
export interface QuantizedRows {
  rows: Int8Array;
  scales: Float32Array;
}

export function quantizeRows(vectors: Float32Array, n: number, dims: number): QuantizedRows {
  if (!Number.isInteger(n) || !Number.isInteger(dims) || n < 0 || dims < 1)
    throw new RangeError(`bad shape ${n} x ${dims}`);
  if (vectors.length < n * dims) throw new RangeError(`expected ${n * dims} values, got ${vectors.length}`);
  const rows = new Int8Array(n * dims);
  const scales = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    const base = r * dims;
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += vectors[base + d] * vectors[base + d];
    norm = Math.sqrt(norm);
    if (!(norm > 0) || !Number.isFinite(norm)) continue;
    let maxabs = 0;
    for (let d = 0; d < dims; d++) maxabs = Math.max(maxabs, Math.abs(vectors[base + d] / norm));
    const f = 127 / maxabs;
    let qnorm = 0;
    for (let d = 0; d < dims; d++) {
      const v = Math.max(-127, Math.min(127, Math.round((vectors[base + d] / norm) * f)));
      rows[base + d] = v;
      qnorm += v * v;
    }
    scales[r] = 1 / Math.sqrt(qnorm);
  }
  return { rows, scales };
}
