/**
 * Mapper training: ridge regression, k-nearest-neighbour regression over the vocabulary (WASM
 * kernels top-k), and their ensemble; nested 10-fold cross-validation; materialization of the
 * chosen method's value for every vocabulary row.
 *
 * Features are the model's dequantized unit vectors (int8 * scale, as float64). Targets are the
 * lexicon ratings mapped to the variable's scale. Predictions are clipped to the scale.
 *
 * kNN: neighbours are searched with the WASM kernels in a matrix holding ONLY the training rows
 * of the current (outer or inner) fold, so a held-out word can never be a neighbour. The
 * prediction is sum(w_i y_i) / sum(w_i) over the k most similar training words with
 * w_i = max(cos_i, 0)^p (p = 0: plain mean). When the query is itself a training word
 * (materialization), it is its own nearest neighbour (cos 1).
 *
 * Hyper-parameters (ridge lambda, kNN k and p, ensemble weight a in
 * value = a * knn + (1 - a) * ridge) are chosen by an inner 5-fold CV inside each outer
 * training fold (and, for the shipped model, by a 5-fold CV over all training words), on
 * the pooled inner held-out Pearson r.
 */
import { Kernels, type MatrixSlot } from '../../core/kernels';
import { foldAssignment, pearson, ridgePredict, solveSpd, spearman, type RidgeModel } from './stats';

export type Method = 'ridge' | 'knn' | 'ensemble';
export const METHODS: Method[] = ['ridge', 'knn', 'ensemble'];

/** The model's quantized unit vectors and the kernels module that scans them. */
export interface TrainingSpace {
  size: number;
  dims: number;
  /** i8[size * dims] */
  rows: Int8Array;
  /** f32[size] */
  scales: Float32Array;
  module: WebAssembly.Module;
}

export interface TrainingSet {
  /** Distinct vocabulary rows of the training words. */
  rows: Int32Array;
  /** Variable names; targets[v][i] is the rating of rows[i]. */
  variables: string[];
  targets: Record<string, Float64Array>;
  /** Clip range per variable. */
  clip: Record<string, [number, number]>;
}

export interface Hyper {
  lambda: number;
  k: number;
  p: number;
  alpha: number;
}

export interface TrainOptions {
  folds?: number;
  innerFolds?: number;
  seed?: number;
  lambdas?: number[];
  ks?: number[];
  powers?: number[];
  alphas?: number[];
  /** Called with every neighbour search: instrumentation for the leak test. */
  observer?: TrainingObserver;
  log?: (msg: string) => void;
  /** Called after each outer fold of the cross-validation (progress display). */
  onFold?: (done: number, total: number) => void;
}

export interface FoldContext {
  /** Outer fold index, or -1 for the final fit on all training words. */
  outer: number;
  /** Inner fold index, or -1 outside the inner CV. */
  inner: number;
  /** Rows the model of this step is fitted on (the only rows neighbours may come from). */
  trainRows: Int32Array;
  /** Rows predicted in this step (held out), empty when materializing. */
  testRows: Int32Array;
}

export interface TrainingObserver {
  fit?(ctx: FoldContext): void;
  neighbours?(ctx: FoldContext, queryRow: number, neighbourRows: Int32Array): void;
}

const DEFAULTS = {
  folds: 10,
  innerFolds: 5,
  seed: 20240611,
  lambdas: [0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30],
  ks: [3, 5, 10, 15, 20, 30, 50],
  powers: [0, 2, 4, 8, 12, 16],
  alphas: Array.from({ length: 21 }, (_, i) => i / 20),
};

/** Dequantized unit vector of a row, as float64 into out[offset..]. */
export function rowVector(
  space: TrainingSpace,
  row: number,
  out: Float64Array = new Float64Array(space.dims),
  offset = 0,
): Float64Array {
  const d = space.dims;
  const s = space.scales[row];
  const base = row * d;
  for (let j = 0; j < d; j++) out[offset + j] = space.rows[base + j] * s;
  return out;
}

export function rowVector32(space: TrainingSpace, row: number): Float32Array {
  const d = space.dims;
  const out = new Float32Array(d);
  const s = space.scales[row];
  for (let j = 0; j < d; j++) out[j] = space.rows[row * d + j] * s;
  return out;
}

/** Neighbour search over a fixed set of rows, in its own WASM instance and matrix. */
export class NeighbourIndex {
  private readonly kernels: Kernels;
  private readonly slot: MatrixSlot;

  constructor(
    private readonly space: TrainingSpace,
    readonly rows: Int32Array,
  ) {
    const d = space.dims;
    this.kernels = Kernels.fromModule(space.module);
    this.slot = this.kernels.allocMatrix(rows.length, d);
    const dst = this.slot.rows();
    const sc = this.slot.scales();
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i];
      dst.set(space.rows.subarray(r * d, (r + 1) * d), i * d);
      sc[i] = space.scales[r];
    }
  }

  /** The k most similar indexed rows: positions into `rows` and cosines, best first. */
  search(query: Float32Array, k: number): { positions: Int32Array; scores: Float32Array } {
    const res = this.kernels.topK(this.slot, query, Math.min(k, this.rows.length));
    return { positions: res.rows, scores: res.scores };
  }
}

/** kNN prediction from neighbour scores and their targets. */
export function knnValue(scores: ArrayLike<number>, targets: ArrayLike<number>, k: number, p: number): number {
  const n = Math.min(k, scores.length);
  let sw = 0;
  let swy = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    const w = p === 0 ? 1 : Math.pow(Math.max(scores[i], 0), p);
    sw += w;
    swy += w * targets[i];
    sy += targets[i];
  }
  if (n === 0) return NaN;
  return sw > 0 ? swy / sw : sy / n;
}

const clamp = (v: number, [lo, hi]: [number, number]): number => (v < lo ? lo : v > hi ? hi : v);

/** Gram data of a ridge problem, reusable for every lambda. */
class RidgeProblem {
  readonly A: Float64Array;
  readonly b: Record<string, Float64Array>;
  readonly mx: Float64Array;
  readonly my: Record<string, number>;

  constructor(
    X: Float64Array,
    readonly d: number,
    idx: ArrayLike<number>,
    targets: Record<string, Float64Array>,
    variables: string[],
  ) {
    const n = idx.length;
    this.mx = new Float64Array(d);
    this.my = {};
    for (let t = 0; t < n; t++) for (let j = 0; j < d; j++) this.mx[j] += X[idx[t] * d + j];
    for (let j = 0; j < d; j++) this.mx[j] /= n;
    this.A = new Float64Array(d * d);
    this.b = {};
    const xc = new Float64Array(d);
    for (const v of variables) {
      let m = 0;
      for (let t = 0; t < n; t++) m += targets[v][idx[t]];
      this.my[v] = m / n;
      this.b[v] = new Float64Array(d);
    }
    for (let t = 0; t < n; t++) {
      const i = idx[t];
      for (let j = 0; j < d; j++) xc[j] = X[i * d + j] - this.mx[j];
      for (let j = 0; j < d; j++) {
        const xj = xc[j];
        const row = j * d;
        for (let k = 0; k <= j; k++) this.A[row + k] += xj * xc[k];
      }
      for (const v of variables) {
        const yc = targets[v][i] - this.my[v];
        const bv = this.b[v];
        for (let j = 0; j < d; j++) bv[j] += xc[j] * yc;
      }
    }
    for (let j = 0; j < d; j++) for (let k = 0; k < j; k++) this.A[k * d + j] = this.A[j * d + k];
  }

  solve(variable: string, lambda: number): RidgeModel {
    const d = this.d;
    const A = this.A.slice();
    for (let j = 0; j < d; j++) A[j * d + j] += lambda;
    const w = solveSpd(A, this.b[variable], d);
    let bias = this.my[variable];
    for (let j = 0; j < d; j++) bias -= this.mx[j] * w[j];
    return { weights: w, bias, lambda };
  }
}

interface StepResult {
  /** per variable, per lambda: predictions of the test items */
  ridge: Record<string, Float64Array[]>;
  /** per variable, per (k, p) combination: predictions */
  knn: Record<string, Float64Array[]>;
}

/**
 * The engine: works on item indexes 0..n-1 of a training set (X = their vectors).
 */
export class MapperTrainer {
  readonly n: number;
  readonly d: number;
  readonly X: Float64Array;
  private readonly o: typeof DEFAULTS;
  private readonly combos: Array<{ k: number; p: number }>;
  private readonly kMax: number;

  constructor(
    readonly space: TrainingSpace,
    readonly set: TrainingSet,
    private readonly options: TrainOptions = {},
  ) {
    this.o = {
      ...DEFAULTS,
      ...Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)),
    } as typeof DEFAULTS;
    this.n = set.rows.length;
    this.d = space.dims;
    this.X = new Float64Array(this.n * this.d);
    for (let i = 0; i < this.n; i++) rowVector(space, set.rows[i], this.X, i * this.d);
    this.combos = this.o.ks.flatMap((k) => this.o.powers.map((p) => ({ k, p })));
    this.kMax = Math.max(...this.o.ks);
    if (new Set(set.rows).size !== set.rows.length) throw new RangeError('training rows must be distinct');
  }

  private rowsOf(idx: ArrayLike<number>): Int32Array {
    return Int32Array.from(idx as ArrayLike<number>, (i) => this.set.rows[i]);
  }

  /** Fits on `train` items and predicts `test` items for every hyper-parameter value. */
  private step(
    train: Int32Array,
    test: Int32Array,
    ctx: FoldContext,
    lambdas: number[],
    combos: Array<{ k: number; p: number }>,
  ): StepResult {
    const vars = this.set.variables;
    this.options.observer?.fit?.(ctx);
    const res: StepResult = { ridge: {}, knn: {} };
    const prob = new RidgeProblem(this.X, this.d, train, this.set.targets, vars);
    for (const v of vars) {
      res.ridge[v] = lambdas.map((lambda) => {
        const m = prob.solve(v, lambda);
        const out = new Float64Array(test.length);
        for (let t = 0; t < test.length; t++)
          out[t] = clamp(ridgePredict(m, this.X, test[t] * this.d), this.set.clip[v]);
        return out;
      });
      res.knn[v] = combos.map(() => new Float64Array(test.length));
    }
    const index = new NeighbourIndex(this.space, ctx.trainRows);
    const kMax = Math.max(...combos.map((c) => c.k));
    const ys: Record<string, Float64Array> = {};
    for (const v of vars) ys[v] = new Float64Array(kMax);
    for (let t = 0; t < test.length; t++) {
      const queryRow = this.set.rows[test[t]];
      const { positions, scores } = index.search(rowVector32(this.space, queryRow), kMax);
      if (this.options.observer?.neighbours) {
        this.options.observer.neighbours(
          ctx,
          queryRow,
          Int32Array.from(positions, (p) => ctx.trainRows[p]),
        );
      }
      for (const v of vars) {
        const tv = this.set.targets[v];
        for (let i = 0; i < positions.length; i++) ys[v][i] = tv[train[positions[i]]];
        combos.forEach((c, ci) => (res.knn[v][ci][t] = clamp(knnValue(scores, ys[v], c.k, c.p), this.set.clip[v])));
      }
    }
    return res;
  }

  /** Inner CV over `items`: the hyper-parameters with the best pooled held-out Pearson r. */
  selectHyper(items: Int32Array, outer: number): Record<string, Hyper> {
    const vars = this.set.variables;
    const folds = foldAssignment(items.length, this.o.innerFolds, this.o.seed + 1 + outer);
    const truth: Record<string, Float64Array> = {};
    const ridgeP: Record<string, Float64Array[]> = {};
    const knnP: Record<string, Float64Array[]> = {};
    for (const v of vars) {
      truth[v] = new Float64Array(items.length);
      ridgeP[v] = this.o.lambdas.map(() => new Float64Array(items.length));
      knnP[v] = this.combos.map(() => new Float64Array(items.length));
    }
    let pos = 0;
    for (let g = 0; g < this.o.innerFolds; g++) {
      const train = items.filter((_, i) => folds[i] !== g);
      const test = items.filter((_, i) => folds[i] === g);
      const ctx: FoldContext = { outer, inner: g, trainRows: this.rowsOf(train), testRows: this.rowsOf(test) };
      const r = this.step(train, test, ctx, this.o.lambdas, this.combos);
      for (const v of vars) {
        for (let t = 0; t < test.length; t++) truth[v][pos + t] = this.set.targets[v][test[t]];
        r.ridge[v].forEach((p, li) => ridgeP[v][li].set(p, pos));
        r.knn[v].forEach((p, ci) => knnP[v][ci].set(p, pos));
      }
      pos += test.length;
    }
    const out: Record<string, Hyper> = {};
    for (const v of vars) {
      const score = (p: Float64Array): number => {
        const r = pearson(p, truth[v]);
        return Number.isNaN(r) ? -Infinity : r;
      };
      const li = argmax(ridgeP[v].map(score));
      const ci = argmax(knnP[v].map(score));
      const rp = ridgeP[v][li];
      const kp = knnP[v][ci];
      const mix = new Float64Array(items.length);
      const ai = argmax(
        this.o.alphas.map((a) => {
          for (let i = 0; i < mix.length; i++) mix[i] = a * kp[i] + (1 - a) * rp[i];
          return score(mix);
        }),
      );
      out[v] = { lambda: this.o.lambdas[li], k: this.combos[ci].k, p: this.combos[ci].p, alpha: this.o.alphas[ai] };
    }
    return out;
  }

  /**
   * Nested k-fold CV: for every outer fold, hyper-parameters by inner CV on its training part,
   * then held-out predictions of each method. Returns r and rho per variable and method.
   */
  crossValidate(): CrossValidation {
    const vars = this.set.variables;
    const folds = foldAssignment(this.n, this.o.folds, this.o.seed);
    const pred: Record<string, Record<Method, Float64Array>> = {};
    for (const v of vars)
      pred[v] = { ridge: new Float64Array(this.n), knn: new Float64Array(this.n), ensemble: new Float64Array(this.n) };
    const hypers: Array<Record<string, Hyper>> = [];
    const all = Int32Array.from({ length: this.n }, (_, i) => i);
    for (let f = 0; f < this.o.folds; f++) {
      const train = all.filter((i) => folds[i] !== f);
      const test = all.filter((i) => folds[i] === f);
      const hyper = this.selectHyper(train, f);
      hypers.push(hyper);
      const ctx: FoldContext = { outer: f, inner: -1, trainRows: this.rowsOf(train), testRows: this.rowsOf(test) };
      // One step per distinct hyper set is enough: evaluate each variable's own choice.
      const lambdas = [...new Set(vars.map((v) => hyper[v].lambda))];
      const combos = uniqueCombos(vars.map((v) => ({ k: hyper[v].k, p: hyper[v].p })));
      const r = this.step(train, test, ctx, lambdas, combos);
      for (const v of vars) {
        const rp = r.ridge[v][lambdas.indexOf(hyper[v].lambda)];
        const kp = r.knn[v][combos.findIndex((c) => c.k === hyper[v].k && c.p === hyper[v].p)];
        const a = hyper[v].alpha;
        for (let t = 0; t < test.length; t++) {
          pred[v].ridge[test[t]] = rp[t];
          pred[v].knn[test[t]] = kp[t];
          pred[v].ensemble[test[t]] = a * kp[t] + (1 - a) * rp[t];
        }
      }
      this.options.log?.(
        `fold ${f + 1}/${this.o.folds}: ${vars.map((v) => `${v} ${JSON.stringify(hyper[v])}`).join('; ')}`,
      );
      this.options.onFold?.(f + 1, this.o.folds);
    }
    const metrics: CrossValidation['metrics'] = {};
    for (const v of vars) {
      const y = this.set.targets[v];
      metrics[v] = {} as Record<Method, { pearsonR: number; spearmanRho: number }>;
      for (const m of METHODS)
        metrics[v][m] = { pearsonR: pearson(pred[v][m], y), spearmanRho: spearman(pred[v][m], y) };
    }
    return { metrics, predictions: pred, hypers, folds };
  }

  /** Final models on all training words (hyper-parameters by 5-fold CV over all of them). */
  fitFinal(hyper?: Record<string, Hyper>): FinalModel {
    const all = Int32Array.from({ length: this.n }, (_, i) => i);
    const h = hyper ?? this.selectHyper(all, -1);
    const ctx: FoldContext = { outer: -1, inner: -1, trainRows: this.set.rows, testRows: new Int32Array(0) };
    this.options.observer?.fit?.(ctx);
    const prob = new RidgeProblem(this.X, this.d, all, this.set.targets, this.set.variables);
    const ridge: Record<string, RidgeModel> = {};
    for (const v of this.set.variables) ridge[v] = prob.solve(v, h[v].lambda);
    return new FinalModel(this.space, this.set, h, ridge, this.options.observer);
  }
}

export interface CrossValidation {
  metrics: Record<string, Record<Method, { pearsonR: number; spearmanRho: number }>>;
  /** Held-out predictions per variable and method, aligned with the training set's items. */
  predictions: Record<string, Record<Method, Float64Array>>;
  hypers: Array<Record<string, Hyper>>;
  /** Outer fold of each item. */
  folds: Int32Array;
}

/** A trained mapper: ridge + kNN over all training rows, combined per the chosen method. */
export class FinalModel {
  private readonly index: NeighbourIndex;

  constructor(
    readonly space: TrainingSpace,
    readonly set: TrainingSet,
    readonly hyper: Record<string, Hyper>,
    readonly ridge: Record<string, RidgeModel>,
    private readonly observer?: TrainingObserver,
  ) {
    this.index = new NeighbourIndex(space, set.rows);
  }

  /** alpha of the method: ridge 0, knn 1, ensemble as chosen. */
  alpha(variable: string, method: Method): number {
    return method === 'ridge' ? 0 : method === 'knn' ? 1 : this.hyper[variable].alpha;
  }

  /**
   * Materialized values of every vocabulary row (or of `rows`), one Float32Array per variable
   * (length = vocabulary size; rows not computed stay NaN).
   */
  materialize(
    method: Method,
    rows?: ArrayLike<number>,
    onProgress?: (done: number, total: number) => void,
    nearest?: Float32Array,
  ): Record<string, Float32Array> {
    const vars = this.set.variables;
    const out: Record<string, Float32Array> = {};
    for (const v of vars) out[v] = new Float32Array(this.space.size).fill(NaN);
    const total = rows ? rows.length : this.space.size;
    const needKnn = !!nearest || vars.some((v) => this.alpha(v, method) > 0);
    const kMax = Math.max(2, ...vars.map((v) => this.hyper[v].k));
    const x = new Float64Array(this.space.dims);
    const ys = new Float64Array(kMax);
    const ctx: FoldContext = { outer: -1, inner: -1, trainRows: this.set.rows, testRows: new Int32Array(0) };
    for (let t = 0; t < total; t++) {
      const row = rows ? rows[t] : t;
      rowVector(this.space, row, x);
      let positions: Int32Array | null = null;
      let scores: Float32Array | null = null;
      if (needKnn) {
        ({ positions, scores } = this.index.search(rowVector32(this.space, row), kMax));
        this.observer?.neighbours?.(
          ctx,
          row,
          Int32Array.from(positions, (p) => this.set.rows[p]),
        );
        // Cosine to the nearest training word other than the row itself (optional output, for analysis).
        if (nearest)
          nearest[row] = this.set.rows[positions[0]] === row ? (scores.length > 1 ? scores[1] : 0) : (scores[0] ?? 0);
      }
      for (const v of vars) {
        const a = this.alpha(v, method);
        let val = 0;
        if (a < 1) val += (1 - a) * clamp(ridgePredict(this.ridge[v], x), this.set.clip[v]);
        if (a > 0) {
          const tv = this.set.targets[v];
          for (let i = 0; i < positions!.length; i++) ys[i] = tv[positions![i]];
          val += a * clamp(knnValue(scores!, ys, this.hyper[v].k, this.hyper[v].p), this.set.clip[v]);
        }
        out[v][row] = val;
      }
      if (onProgress && (t + 1) % 20000 === 0) onProgress(t + 1, total);
    }
    return out;
  }
}

function argmax(a: number[]): number {
  let best = 0;
  for (let i = 1; i < a.length; i++) if (a[i] > a[best]) best = i;
  return best;
}

function uniqueCombos(c: Array<{ k: number; p: number }>): Array<{ k: number; p: number }> {
  const seen = new Map<string, { k: number; p: number }>();
  for (const x of c) seen.set(`${x.k}:${x.p}`, x);
  return [...seen.values()];
}
