/**
 * "All-but-the-top" (Mu & Viswanath 2018: remove the mean and the top principal components, which
 * carry word frequency rather than meaning) and PCA, from one eigendecomposition of the
 * covariance (ml-matrix). The covariance is estimated on every `stride`-th row: a fixed sample,
 * so deterministic, at 1/stride of the cost. Eigenvectors get a fixed sign (largest coordinate
 * positive) so the output does not depend on the solver's sign choice.
 */
import { EigenvalueDecomposition, Matrix } from 'ml-matrix';
import { crossProduct, multiply } from './linalg';

export interface Axes {
  mean: Float32Array;
  /** Eigenvectors by descending eigenvalue, row k = component k (dims x dims). */
  components: Float32Array;
  /** Eigenvalues in the same order. */
  values: number[];
}

export async function principalAxes(vectors: Float32Array, dims: number, stride: number): Promise<Axes> {
  const rows = vectors.length / dims;
  const mean64 = new Float64Array(dims);
  for (let r = 0; r < rows; r++) for (let d = 0; d < dims; d++) mean64[d] += vectors[r * dims + d]!;
  const mean = Float32Array.from(mean64, (s) => s / rows);
  const n = Math.ceil(rows / stride);
  const sample = new Float32Array(n * dims);
  for (let i = 0; i < n; i++)
    for (let d = 0; d < dims; d++) sample[i * dims + d] = vectors[i * stride * dims + d]! - mean[d]!;
  const cov = await crossProduct(sample, dims, sample, dims);
  const m = new Matrix(dims, dims);
  for (let i = 0; i < dims; i++)
    for (let j = 0; j < dims; j++) m.set(i, j, (cov[i * dims + j]! + cov[j * dims + i]!) / (2 * n));
  const evd = new EigenvalueDecomposition(m, { assumeSymmetric: true });
  const raw = evd.realEigenvalues;
  const order = raw.map((_, i) => i).sort((a, b) => raw[b]! - raw[a]! || a - b);
  const ev = evd.eigenvectorMatrix;
  const components = new Float32Array(dims * dims);
  order.forEach((c, k) => {
    let big = 0;
    for (let d = 0; d < dims; d++) if (Math.abs(ev.get(d, c)) > Math.abs(big)) big = ev.get(d, c);
    const sign = big < 0 ? -1 : 1;
    for (let d = 0; d < dims; d++) components[k * dims + d] = sign * ev.get(d, c);
  });
  return { mean, components, values: order.map((c) => Math.max(0, raw[c]!)) };
}

/** Share of the total variance in components [from, to). */
export function varianceShare(axes: Axes, from: number, to: number): number {
  const total = axes.values.reduce((s, v) => s + v, 0);
  return axes.values.slice(from, to).reduce((s, v) => s + v, 0) / total;
}

/** Rows centered and projected on components [from, from + out): rows x out. */
export async function project(
  vectors: Float32Array,
  dims: number,
  axes: Axes,
  from: number,
  out: number,
): Promise<Float32Array> {
  const basis = new Float32Array(dims * out); // dims x out
  for (let k = 0; k < out; k++)
    for (let d = 0; d < dims; d++) basis[d * out + k] = axes.components[(from + k) * dims + d]!;
  const rows = vectors.length / dims;
  const centered = new Float32Array(vectors.length);
  for (let r = 0; r < rows; r++)
    for (let d = 0; d < dims; d++) centered[r * dims + d] = vectors[r * dims + d]! - axes.mean[d]!;
  return multiply(centered, dims, basis, out);
}

/** All-but-the-top in place: rows centered, their parts along the top `remove` components removed. */
export async function removeTop(vectors: Float32Array, dims: number, remove: number, stride: number): Promise<number> {
  const axes = await principalAxes(vectors, dims, stride);
  const rows = vectors.length / dims;
  for (let r = 0; r < rows; r++) for (let d = 0; d < dims; d++) vectors[r * dims + d]! -= axes.mean[d]!;
  if (remove > 0) {
    const top = await project(vectors, dims, { ...axes, mean: new Float32Array(dims) }, 0, remove);
    for (let r = 0; r < rows; r++)
      for (let k = 0; k < remove; k++) {
        const c = top[r * remove + k]!;
        for (let d = 0; d < dims; d++) vectors[r * dims + d]! -= c * axes.components[k * dims + d]!;
      }
  }
  return varianceShare(axes, 0, remove);
}
