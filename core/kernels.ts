/**
 * Runtime-agnostic wrapper around the WASM kernels (assembly/index.ts -> kernels.wasm). It owns
 * the linear-memory layout so no caller touches raw offsets:
 *
 *   [heapBase ......... matrices (bump-allocated; freed ones are reused) ....][scratch (per call) ...]
 *
 * A matrix slot holds n x dims int8 rows (+16 zero bytes: SIMD loads read past the last row),
 * then n f32 scales, each 64-byte aligned. The scratch area (i16 query, top-k heap, row list,
 * outputs) starts after the last matrix and is reused by every call. Memory grows on demand;
 * views (MatrixSlot.rows()/scales()) must be re-created after a growth, which the slot's
 * methods do. One Kernels instance owns one WebAssembly.Instance, i.e. one memory; a model uses
 * its own instance. Instances are not re-entrant (one call at a time, as JS is single-threaded).
 *
 * Query quantization: the query is L2-normalized (cosine) and scaled to i16 so that its largest
 * component is QMAX(dims) = min(32767, floor((2^31 - 1) / (128 * paddedDims))), which bounds
 * |dot(int8 row, i16 query)| <= 128 * QMAX * paddedDims < 2^31: the i32 accumulation is exact.
 * For dims <= 512 QMAX is 32767 (relative query error ~1.5e-5).
 *
 * Uses only WebAssembly and typed arrays: works in workerd, Node and browsers.
 */
import type { TopKOptions, TopKResult } from './types';

export const MAX_K = 1000;
const MAX_DIMS = 65536;
const PAGE = 65536;

interface KernelExports {
  memory: WebAssembly.Memory;
  heapBase(): number;
  scanRange(
    rows: number,
    scales: number,
    dims: number,
    start: number,
    end: number,
    q: number,
    qScale: number,
    k: number,
    hS: number,
    hR: number,
  ): number;
  scanList(
    rows: number,
    scales: number,
    dims: number,
    list: number,
    count: number,
    q: number,
    qScale: number,
    k: number,
    hS: number,
    hR: number,
  ): number;
  scoreList(
    rows: number,
    scales: number,
    dims: number,
    list: number,
    count: number,
    q: number,
    qScale: number,
    out: number,
  ): void;
  centroid(rows: number, scales: number, dims: number, list: number, count: number, out: number): number;
  similarity(rows: number, scales: number, dims: number, list: number, count: number, out: number): void;
}

export interface MatrixSlot {
  readonly n: number;
  readonly dims: number;
  /** View of the n x dims int8 rows inside WASM memory (fill in place; re-fetch after any growth). */
  rows(): Int8Array;
  /** View of the n f32 scales inside WASM memory. */
  scales(): Float32Array;
}

const align = (x: number, a: number): number => Math.ceil(x / a) * a;
const paddedDims = (dims: number): number => align(dims, 16);

/** Largest |i16| query lane for which the i32 dot product of a padded row cannot overflow. */
export function queryMax(dims: number): number {
  return Math.min(32767, Math.floor(0x7fffffff / (128 * paddedDims(dims))));
}

/**
 * The i16 form of a query the kernels scan with: values (zero-padded to a multiple of 16 lanes)
 * and scale such that cos(query, row) = dot(values, int8 row) * rowScale * scale. A zero query
 * gives all zeros and scale 0. Non-finite values throw RangeError.
 */
export function quantizeQuery(query: ArrayLike<number>, dims: number): { values: Int16Array; scale: number } {
  if (query.length !== dims) throw new RangeError(`query has ${query.length} dims, the matrix ${dims}`);
  let norm = 0;
  let maxabs = 0;
  for (let d = 0; d < dims; d++) {
    const v = query[d];
    norm += v * v;
    maxabs = Math.max(maxabs, Math.abs(v));
  }
  if (!Number.isFinite(norm)) throw new RangeError('query has non-finite values');
  const values = new Int16Array(paddedDims(dims));
  if (norm === 0) return { values, scale: 0 };
  norm = Math.sqrt(norm);
  const f = queryMax(dims) / maxabs;
  for (let d = 0; d < dims; d++) values[d] = Math.round(query[d] * f);
  return { values, scale: 1 / (f * norm) };
}

class Slot implements MatrixSlot {
  /** Set by Kernels.freeMatrix: the memory may hold another matrix now. */
  freed = false;
  constructor(
    private readonly owner: Kernels,
    readonly n: number,
    readonly dims: number,
    /** Byte offsets in WASM memory. */
    readonly rowsPtr: number,
    readonly scalesPtr: number,
    /** End of the slot's region (64-byte aligned). */
    readonly end: number,
  ) {}
  rows(): Int8Array {
    return new Int8Array(this.owner.buffer(), this.rowsPtr, this.n * this.dims);
  }
  scales(): Float32Array {
    return new Float32Array(this.owner.buffer(), this.scalesPtr, this.n);
  }
}

export class Kernels {
  private readonly x: KernelExports;
  /** End of the matrix area = start of the scratch area. */
  private top: number;
  /** Freed matrix regions below top, sorted by start, coalesced. WASM memory never shrinks, so they are reused. */
  private holes: Array<{ start: number; end: number }> = [];

  private constructor(instance: WebAssembly.Instance) {
    this.x = instance.exports as unknown as KernelExports;
    this.top = align(this.x.heapBase(), 64);
  }

  /** Instantiates the kernels module (it has no imports). */
  static fromModule(module: WebAssembly.Module): Kernels {
    return new Kernels(new WebAssembly.Instance(module, {}));
  }

  /** Compiles and instantiates kernels.wasm bytes (Node, browsers; workerd forbids compiling bytes: use fromModule). */
  static fromBytes(bytes: BufferSource): Kernels {
    // workers-types declares WebAssembly.Module abstract (workerd refuses runtime compilation).
    const ModuleCtor = WebAssembly.Module as unknown as new (b: BufferSource) => WebAssembly.Module;
    return Kernels.fromModule(new ModuleCtor(bytes));
  }

  get memoryBytes(): number {
    return this.x.memory.buffer.byteLength;
  }

  /** @internal current memory buffer (changes after growth). */
  buffer(): ArrayBuffer {
    return this.x.memory.buffer;
  }

  private ensure(bytes: number): void {
    const have = this.x.memory.buffer.byteLength;
    if (bytes <= have) return;
    if (bytes > 0xffff0000) throw new RangeError(`WASM memory limit: ${bytes} bytes requested`);
    const pages = Math.ceil((bytes - have) / PAGE);
    this.x.memory.grow(pages);
  }

  /**
   * Grows memory to hold an n x dims matrix above the current top and touches each of its 4 KiB
   * pages, so the operating system maps them now: copying a matrix into fresh pages costs about
   * 20 ms for 5 MB on the test machine (page faults), in an idle wait (a download) instead of on
   * the path to the first score. Allocates nothing: the next allocMatrix/loadMatrix uses the space.
   */
  prefault(n: number, dims: number): void {
    if (!(Number.isInteger(n) && n > 0 && Number.isInteger(dims) && dims > 0 && dims <= MAX_DIMS)) return;
    const bytes = Kernels.matrixBytes(n, dims);
    // A freed region that fits is where allocMatrix puts it (its pages were mapped by their last use).
    if (this.holes.some((h) => h.end - h.start >= bytes)) return;
    const start = align(this.top, 64);
    const end = start + bytes;
    this.ensure(end);
    const mem = new Uint8Array(this.buffer());
    for (let p = start; p < end; p += 4096) mem[p] = 0;
  }

  /**
   * Reserves WASM memory for an n x dims int8 matrix + n scales and returns views to fill in
   * place (e.g. streaming an R2 body straight into WASM memory). The memory is never released.
   */
  allocMatrix(n: number, dims: number): MatrixSlot {
    if (!Number.isInteger(n) || n < 0) throw new RangeError(`bad row count ${n}`);
    if (!Number.isInteger(dims) || dims < 1 || dims > MAX_DIMS) throw new RangeError(`bad dims ${dims}`);
    const bytes = Kernels.matrixBytes(n, dims);
    const hole = this.holes.findIndex((h) => h.end - h.start >= bytes);
    if (hole >= 0) {
      // First fit in a freed region; the rest of the region stays free.
      const h = this.holes[hole]!;
      const rowsPtr = h.start;
      const scalesPtr = align(rowsPtr + n * dims + 16, 64);
      const end = rowsPtr + bytes;
      if (end === h.end) this.holes.splice(hole, 1);
      else h.start = end;
      // Reused memory: the padding after the rows must be zero again (SIMD loads read it).
      new Uint8Array(this.buffer(), rowsPtr + n * dims, 16).fill(0);
      return new Slot(this, n, dims, rowsPtr, scalesPtr, end);
    }
    const rowsPtr = align(this.top, 64);
    const scalesPtr = align(rowsPtr + n * dims + 16, 64);
    const end = align(scalesPtr + n * 4, 64);
    this.ensure(end);
    // The scratch area above the old top may have left data: zero the padding after the rows.
    new Uint8Array(this.buffer(), rowsPtr + n * dims, 16).fill(0);
    this.top = end;
    return new Slot(this, n, dims, rowsPtr, scalesPtr, end);
  }

  /** Bytes a matrix slot of n x dims takes (rows + padding + scales, 64-byte aligned). */
  static matrixBytes(n: number, dims: number): number {
    return align(align(n * dims + 16, 64) + n * 4, 64);
  }

  /** End of the highest live matrix: kernel calls place their scratch above it. */
  get topBytes(): number {
    return this.top;
  }

  /** Bytes WASM memory would have to grow by to place an n x dims matrix now (0 when a freed region fits). */
  growthFor(n: number, dims: number): number {
    const bytes = Kernels.matrixBytes(n, dims);
    if (this.holes.some((h) => h.end - h.start >= bytes)) return 0;
    return Math.max(0, align(this.top, 64) + bytes - this.memoryBytes);
  }

  /**
   * Releases a matrix (an evicted model): its memory is reused by later allocations. Using the
   * slot afterwards throws. Freeing twice is a no-op.
   */
  freeMatrix(m: MatrixSlot): void {
    const s = this.slot(m, true);
    if (s.freed) return;
    s.freed = true;
    this.holes.push({ start: s.rowsPtr, end: s.end });
    this.holes.sort((a, b) => a.start - b.start);
    const merged: Array<{ start: number; end: number }> = [];
    for (const h of this.holes) {
      const last = merged[merged.length - 1];
      if (last && last.end >= h.start) last.end = Math.max(last.end, h.end);
      else merged.push({ ...h });
    }
    // A free region ending at the top gives its memory back to the bump area.
    const last = merged[merged.length - 1];
    if (last && last.end >= this.top) {
      this.top = last.start;
      merged.pop();
    }
    this.holes = merged;
  }

  /** Bytes of WASM memory held by live matrices (diagnostics). */
  get liveMatrixBytes(): number {
    return this.top - align(this.x.heapBase(), 64) - this.holes.reduce((a, h) => a + h.end - h.start, 0);
  }

  /** Copies an existing quantized matrix into WASM memory. */
  loadMatrix(rows: Int8Array, scales: Float32Array, n: number, dims: number): MatrixSlot {
    if (rows.length !== n * dims) throw new RangeError(`expected ${n * dims} int8 values, got ${rows.length}`);
    if (scales.length !== n) throw new RangeError(`expected ${n} scales, got ${scales.length}`);
    const slot = this.allocMatrix(n, dims);
    slot.rows().set(rows);
    slot.scales().set(scales);
    return slot;
  }

  private slot(m: MatrixSlot, allowFreed = false): Slot {
    if (!(m instanceof Slot) || (m as unknown as { owner: Kernels }).owner !== this) {
      throw new TypeError('matrix slot belongs to another Kernels instance');
    }
    if (m.freed && !allowFreed) throw new Error('matrix slot was freed (its model was evicted)');
    return m;
  }

  /** Scratch bump allocator for one call: returns byte offsets, grows memory once. */
  private scratch(sizes: number[]): number[] {
    let p = align(this.top, 64);
    const out: number[] = [];
    for (const s of sizes) {
      out.push(p);
      p = align(p + s, 64);
    }
    this.ensure(p);
    return out;
  }

  /** Writes the i16 query (zero-padded) at qPtr; returns qScale (0 for a zero query). */
  private writeQuery(query: ArrayLike<number>, dims: number, qPtr: number): number {
    const { values, scale } = quantizeQuery(query, dims);
    new Int16Array(this.buffer(), qPtr, paddedDims(dims)).set(values);
    return scale;
  }

  /** Validated row ids as an Int32Array. */
  private rowList(m: Slot, rows: ArrayLike<number>): Int32Array {
    return rowIds(m.n, rows);
  }

  /**
   * Rows with the highest cosine to the query, best first (score desc, ties to the lower row id).
   * k = 0 returns nothing; k above the eligible rows returns all of them; k > 1000 throws.
   * options.rankCutoff keeps rows < rankCutoff; options.rows keeps only those rows (repeats
   * counted once). A zero query scores every row 0.
   */
  topK(m: MatrixSlot, query: Float32Array, k: number, options: TopKOptions = {}): TopKResult {
    const s = this.slot(m);
    const { cutoff, rows: list } = topKEligible(s.n, s.dims, query, k, options);
    const eligible = list ? list.length : cutoff;
    const kk = Math.min(k, eligible);
    if (kk === 0) return { rows: new Int32Array(0), scores: new Float32Array(0) };
    const [qPtr, hS, hR, lPtr] = this.scratch([paddedDims(s.dims) * 2, kk * 4, kk * 4, list ? list.length * 4 : 0]);
    const qScale = this.writeQuery(query, s.dims, qPtr);
    let count: number;
    if (list) {
      new Int32Array(this.buffer(), lPtr, list.length).set(list);
      count = this.x.scanList(s.rowsPtr, s.scalesPtr, s.dims, lPtr, list.length, qPtr, qScale, kk, hS, hR);
    } else {
      count = this.x.scanRange(s.rowsPtr, s.scalesPtr, s.dims, 0, cutoff, qPtr, qScale, kk, hS, hR);
    }
    const buf = this.buffer();
    return { rows: new Int32Array(buf, hR, count).slice(), scores: new Float32Array(buf, hS, count).slice() };
  }

  /** Cosine of the query with each listed row, in list order. */
  scores(m: MatrixSlot, query: Float32Array, rows: ArrayLike<number>): Float32Array {
    const s = this.slot(m);
    const list = this.rowList(s, rows);
    if (query.length !== s.dims) throw new RangeError(`query has ${query.length} dims, the matrix ${s.dims}`);
    if (list.length === 0) return new Float32Array(0);
    const [qPtr, lPtr, out] = this.scratch([paddedDims(s.dims) * 2, list.length * 4, list.length * 4]);
    const qScale = this.writeQuery(query, s.dims, qPtr);
    new Int32Array(this.buffer(), lPtr, list.length).set(list);
    this.x.scoreList(s.rowsPtr, s.scalesPtr, s.dims, lPtr, list.length, qPtr, qScale, out);
    return new Float32Array(this.buffer(), out, list.length).slice();
  }

  /** Mean of the rows' unit vectors, re-normalized; null for an empty list or a zero mean. */
  centroid(m: MatrixSlot, rows: ArrayLike<number>): Float32Array | null {
    const s = this.slot(m);
    const list = this.rowList(s, rows);
    if (list.length === 0) return null;
    const [lPtr, out] = this.scratch([list.length * 4, paddedDims(s.dims) * 4]);
    new Int32Array(this.buffer(), lPtr, list.length).set(list);
    const ok = this.x.centroid(s.rowsPtr, s.scalesPtr, s.dims, lPtr, list.length, out);
    return ok ? new Float32Array(this.buffer(), out, s.dims).slice() : null;
  }

  /** Row-major n x n cosine matrix of the listed rows. */
  similarityMatrix(m: MatrixSlot, rows: ArrayLike<number>): Float32Array {
    const s = this.slot(m);
    const list = this.rowList(s, rows);
    const n = list.length;
    if (n === 0) return new Float32Array(0);
    const [lPtr, out] = this.scratch([n * 4, n * n * 4]);
    new Int32Array(this.buffer(), lPtr, n).set(list);
    this.x.similarity(s.rowsPtr, s.scalesPtr, s.dims, lPtr, n, out);
    return new Float32Array(this.buffer(), out, n * n).slice();
  }

  /** int8 * scale of one row (a unit vector, or zeros). */
  dequantizeRow(m: MatrixSlot, row: number): Float32Array {
    const s = this.slot(m);
    if (!Number.isInteger(row) || row < 0 || row >= s.n)
      throw new RangeError(`row ${row} is out of range 0..${s.n - 1}`);
    const src = new Int8Array(this.buffer(), s.rowsPtr + row * s.dims, s.dims);
    const scale = new Float32Array(this.buffer(), s.scalesPtr + row * 4, 1)[0];
    const out = new Float32Array(s.dims);
    for (let d = 0; d < s.dims; d++) out[d] = src[d] * scale;
    return out;
  }
}

/** `rows` as an Int32Array, each checked to be a row id of an n-row matrix. */
export function rowIds(n: number, rows: ArrayLike<number>): Int32Array {
  const list = Int32Array.from(rows);
  for (let i = 0; i < list.length; i++) {
    const r = rows[i];
    if (!Number.isInteger(r) || r < 0 || r >= n) throw new RangeError(`row ${r} is out of range 0..${n - 1}`);
  }
  return list;
}

/**
 * The checks of a topK over an n x dims matrix, and the rows it may return: those below the
 * cutoff, or the listed ones below it (sorted, each once). Shared by the kernels and a row-sharded
 * model's view (core/sharded-index.ts), so both refuse and restrict alike.
 */
export function topKEligible(
  n: number,
  dims: number,
  query: Float32Array,
  k: number,
  options: TopKOptions,
): { cutoff: number; rows: Int32Array | null } {
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`k must be an integer >= 0, got ${k}`);
  if (k > MAX_K) throw new RangeError(`k must be at most ${MAX_K}, got ${k}`);
  if (query.length !== dims) throw new RangeError(`query has ${query.length} dims, the matrix ${dims}`);
  let cutoff = n;
  if (options.rankCutoff !== undefined) {
    if (Number.isNaN(options.rankCutoff)) throw new RangeError('rankCutoff is NaN');
    cutoff = Math.max(0, Math.min(n, Math.ceil(options.rankCutoff)));
  }
  if (options.rows === undefined) return { cutoff, rows: null };
  const all = rowIds(n, options.rows).sort();
  let w = 0;
  for (let i = 0; i < all.length; i++) {
    const r = all[i];
    if (r < cutoff && (w === 0 || all[w - 1] !== r)) all[w++] = r;
  }
  return { cutoff, rows: all.subarray(0, w) };
}

let shared: Kernels | null = null;
/** The one kernels instance of this isolate, worker or process (one linear memory holds every loaded model). */
export function sharedKernels(create: () => Kernels): Kernels {
  return (shared ??= create());
}
/** The shared kernels instance when one exists (diagnostics). */
export function currentKernels(): Kernels | null {
  return shared;
}
