/** Float64 statistics and linear algebra used by mapper training. */
import { prng } from '../../core/prng';

export function pearson(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  if (n !== b.length) throw new RangeError('pearson: length mismatch');
  if (n < 2) return NaN;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i];
    mb += b[i];
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i] - ma;
    const db = b[i] - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  return saa > 0 && sbb > 0 ? sab / Math.sqrt(saa * sbb) : NaN;
}

/** 1-based ranks, ties get their average rank. */
export function ranks(a: ArrayLike<number>): Float64Array {
  const n = a.length;
  const idx = Array.from({ length: n }, (_, i) => i).sort((i, j) => a[i] - a[j]);
  const out = new Float64Array(n);
  let i = 0;
  while (i < n) {
    let j = i;
    while (j + 1 < n && a[idx[j + 1]] === a[idx[i]]) j++;
    const r = (i + j) / 2 + 1;
    for (let t = i; t <= j; t++) out[idx[t]] = r;
    i = j + 1;
  }
  return out;
}

export function spearman(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return pearson(ranks(a), ranks(b));
}

/** Deterministic PRNG (mulberry32, core/prng.ts). */
export const rng = prng;

/** Assigns items 0..n-1 to `folds` folds of near-equal size, after a seeded shuffle. */
export function foldAssignment(n: number, folds: number, seed: number): Int32Array {
  const order = Array.from({ length: n }, (_, i) => i);
  const rand = rng(seed);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const out = new Int32Array(n);
  order.forEach((item, pos) => (out[item] = pos % folds));
  return out;
}

/** Solves the symmetric positive definite system A x = b (A row-major d x d) by Cholesky. */
export function solveSpd(A: Float64Array, b: Float64Array, d: number): Float64Array {
  const L = new Float64Array(d * d);
  for (let i = 0; i < d; i++) {
    for (let j = 0; j <= i; j++) {
      let s = A[i * d + j];
      for (let k = 0; k < j; k++) s -= L[i * d + k] * L[j * d + k];
      if (i === j) {
        if (!(s > 0)) throw new RangeError('matrix is not positive definite');
        L[i * d + i] = Math.sqrt(s);
      } else {
        L[i * d + j] = s / L[j * d + j];
      }
    }
  }
  const y = new Float64Array(d);
  for (let i = 0; i < d; i++) {
    let s = b[i];
    for (let k = 0; k < i; k++) s -= L[i * d + k] * y[k];
    y[i] = s / L[i * d + i];
  }
  const x = new Float64Array(d);
  for (let i = d - 1; i >= 0; i--) {
    let s = y[i];
    for (let k = i + 1; k < d; k++) s -= L[k * d + i] * x[k];
    x[i] = s / L[i * d + i];
  }
  return x;
}

export interface RidgeModel {
  weights: Float64Array;
  bias: number;
  lambda: number;
}

/**
 * Ridge regression with an unpenalized intercept: centre X and y, solve
 * (Xc^T Xc + lambda I) w = Xc^T yc, bias = mean(y) - mean(X) . w. X is row-major n x d.
 */
export function ridgeFit(X: Float64Array, y: ArrayLike<number>, n: number, d: number, lambda: number): RidgeModel {
  const mx = new Float64Array(d);
  let my = 0;
  for (let i = 0; i < n; i++) {
    my += y[i];
    for (let j = 0; j < d; j++) mx[j] += X[i * d + j];
  }
  my /= n;
  for (let j = 0; j < d; j++) mx[j] /= n;
  const A = new Float64Array(d * d);
  const b = new Float64Array(d);
  const xc = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) xc[j] = X[i * d + j] - mx[j];
    const yc = y[i] - my;
    for (let j = 0; j < d; j++) {
      const v = xc[j];
      b[j] += v * yc;
      for (let k = 0; k <= j; k++) A[j * d + k] += v * xc[k];
    }
  }
  for (let j = 0; j < d; j++) {
    for (let k = 0; k < j; k++) A[k * d + j] = A[j * d + k];
    A[j * d + j] += lambda;
  }
  const w = solveSpd(A, b, d);
  let bias = my;
  for (let j = 0; j < d; j++) bias -= mx[j] * w[j];
  return { weights: w, bias, lambda };
}

export function ridgePredict(m: RidgeModel, x: ArrayLike<number>, offset = 0): number {
  let s = m.bias;
  for (let j = 0; j < m.weights.length; j++) s += m.weights[j] * x[offset + j];
  return s;
}
