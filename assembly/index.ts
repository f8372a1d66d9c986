/**
 * Embedding kernels: int8 matrix x i16 query scans with a fused bounded top-k, scores for a list
 * of rows, centroid and pairwise cosine matrix. Compiled to one .wasm with SIMD, no imports
 * (`--runtime stub --use abort=`), exported memory. Callers never use this directly: the
 * TypeScript wrapper core/kernels.ts owns the memory layout and passes byte offsets.
 *
 * Data format (see core/quantize.ts):
 *   rows   n x dims int8, row-major, contiguous (row r starts at rows + r * dims; dims need not be
 *          a multiple of 16). At least 16 readable bytes must follow the last row: the SIMD loads
 *          of a row's tail read past it (scans: up to 7 bytes; centroid/similarity: up to 15).
 *   scales n f32, one per row: row value = int8 * scale (a unit vector).
 *   query  i16, zero-padded to chunks(dims) * 16 lanes; the zero lanes cancel the bytes read past
 *          a row's end (they belong to the next row), so no masking is needed in the scans.
 *   Scans read each row in 8-byte groups with v128.load8x8_s (sign-extend to i16x8 in one
 *   instruction) and i32x4.dot_i16x8_s against the query, 4 rows per loop iteration sharing the
 *   query loads; the 4 sums are reduced with shuffles, scaled as one f32x4, and only lanes at or
 *   above the heap's threshold reach the heap.
 *          |query lane| <= 2^31 / (128 * paddedDims) keeps the i32 dot product exact.
 *   score  = f32(dot(int8 row, i16 query)) * (scale[row] * qScale).
 *
 * Top-k: a bounded binary min-heap of (score, row) in two parallel arrays (f32 scores at hS, i32
 * rows at hR, capacity k). The root is the worst kept element: lower score, or equal score and
 * higher row id. Results come back sorted best first (score desc, row id asc).
 */

// ---------------------------------------------------------------------------------------------
// Heap

let hS: usize = 0; // f32[k]
let hR: usize = 0; // i32[k]
let hK: i32 = 0;
let hSize: i32 = 0;

/** a is worse than b: lower score, or the same score and a higher row id. */
// @ts-ignore: decorator
@inline function worse(sa: f32, ra: i32, sb: f32, rb: i32): bool {
  return sa < sb || (sa == sb && ra > rb);
}

// @ts-ignore: decorator
@inline function hScore(i: i32): f32 {
  return load<f32>(hS + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function hRow(i: i32): i32 {
  return load<i32>(hR + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function hSet(i: i32, s: f32, r: i32): void {
  store<f32>(hS + (<usize>i << 2), s);
  store<i32>(hR + (<usize>i << 2), r);
}

/** Moves (s, r) down from slot i of a heap of `size` elements. */
function siftDown(i: i32, s: f32, r: i32, size: i32): void {
  while (true) {
    let c = (i << 1) + 1;
    if (c >= size) break;
    let cs = hScore(c);
    let cr = hRow(c);
    const d = c + 1;
    if (d < size) {
      const ds = hScore(d);
      const dr = hRow(d);
      if (worse(ds, dr, cs, cr)) {
        c = d;
        cs = ds;
        cr = dr;
      }
    }
    if (!worse(cs, cr, s, r)) break;
    hSet(i, cs, cr);
    i = c;
  }
  hSet(i, s, r);
}

function heapReset(scoresPtr: usize, rowsPtr: usize, k: i32): void {
  hS = scoresPtr;
  hR = rowsPtr;
  hK = k;
  hSize = 0;
}

/** Offers a candidate; returns the admission threshold (root score once full, else -inf). */
function offer(s: f32, r: i32): f32 {
  if (hSize < hK) {
    // sift up
    let i = hSize++;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const ps = hScore(p);
      const pr = hRow(p);
      if (!worse(s, r, ps, pr)) break;
      hSet(i, ps, pr);
      i = p;
    }
    hSet(i, s, r);
  } else if (worse(hScore(0), hRow(0), s, r)) {
    siftDown(0, s, r, hSize);
  }
  return hSize < hK ? -Infinity : hScore(0);
}

/** Sorts the heap in place, best first; returns its size. */
function heapFinish(): i32 {
  const size = hSize;
  for (let end = size - 1; end > 0; end--) {
    const s = hScore(end);
    const r = hRow(end);
    hSet(end, hScore(0), hRow(0));
    siftDown(0, s, r, end);
  }
  return size;
}

// ---------------------------------------------------------------------------------------------
// Dot products

// @ts-ignore: decorator
@inline function chunksOf(dims: i32): i32 {
  return (dims + 15) >> 4;
}

/** Horizontal sums of four i32x4 accumulators as one i32x4 [sum a, sum b, sum c, sum d]. */
// @ts-ignore: decorator
@inline function hsum4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = i32x4.add(i32x4.shuffle(a, b, 0, 4, 1, 5), i32x4.shuffle(a, b, 2, 6, 3, 7)); // a0+a2 b0+b2 a1+a3 b1+b3
  const cd = i32x4.add(i32x4.shuffle(c, d, 0, 4, 1, 5), i32x4.shuffle(c, d, 2, 6, 3, 7));
  return i32x4.add(i32x4.shuffle(ab, cd, 0, 1, 4, 5), i32x4.shuffle(ab, cd, 2, 3, 6, 7));
}

// @ts-ignore: decorator
@inline function acc8(acc: v128, p: usize, off: usize, qv: v128): v128 {
  // v128.load8x8_s sign-extends 8 int8 to i16x8 in one instruction (pmovsxbw with a memory operand).
  return i32x4.add(acc, i32x4.dot_i16x8_s(v128.load8x8_s(p + off), qv));
}

/**
 * Dot products of four int8 rows with the i16 query: i32x4 of the four sums. Rows are read in
 * 8-byte groups (16 per loop iteration, then one trailing group when dims % 16 is 1..8), so at
 * most 7 bytes past a row are read (and multiplied by zero query lanes).
 */
// @ts-ignore: decorator
@inline function dot4(p0: usize, p1: usize, p2: usize, p3: usize, q: usize, dims: i32): v128 {
  let a0 = i32x4.splat(0);
  let a1 = i32x4.splat(0);
  let a2 = i32x4.splat(0);
  let a3 = i32x4.splat(0);
  const groups = (dims + 7) >> 3;
  const end = <usize>(groups >> 1) << 4;
  for (let off: usize = 0; off < end; off += 16) {
    const qlo = v128.load(q + (off << 1));
    const qhi = v128.load(q + (off << 1), 16);
    a0 = acc8(acc8(a0, p0, off, qlo), p0 + 8, off, qhi);
    a1 = acc8(acc8(a1, p1, off, qlo), p1 + 8, off, qhi);
    a2 = acc8(acc8(a2, p2, off, qlo), p2 + 8, off, qhi);
    a3 = acc8(acc8(a3, p3, off, qlo), p3 + 8, off, qhi);
  }
  if (groups & 1) {
    const qv = v128.load(q + (end << 1));
    a0 = acc8(a0, p0, end, qv);
    a1 = acc8(a1, p1, end, qv);
    a2 = acc8(a2, p2, end, qv);
    a3 = acc8(a3, p3, end, qv);
  }
  return hsum4(a0, a1, a2, a3);
}

/** Dot product of one int8 row with the i16 query. */
// @ts-ignore: decorator
@inline function dot1(p: usize, q: usize, dims: i32): i32 {
  let a = i32x4.splat(0);
  const groups = (dims + 7) >> 3;
  for (let g = 0; g < groups; g++) {
    const off = <usize>g << 3;
    a = acc8(a, p, off, v128.load(q + (off << 1)));
  }
  return i32x4.extract_lane(a, 0) + i32x4.extract_lane(a, 1) + i32x4.extract_lane(a, 2) + i32x4.extract_lane(a, 3);
}

/** Offers the four lanes of a score vector that pass the threshold. */
// @ts-ignore: decorator
@inline function offer4(sc: v128, r0: i32, r1: i32, r2: i32, r3: i32, thr: f32): f32 {
  const mask = i32x4.bitmask(f32x4.ge(sc, f32x4.splat(thr)));
  if (mask != 0) {
    if (mask & 1) thr = offer(f32x4.extract_lane(sc, 0), r0);
    if (mask & 2) {
      const s = f32x4.extract_lane(sc, 1);
      if (s >= thr) thr = offer(s, r1);
    }
    if (mask & 4) {
      const s = f32x4.extract_lane(sc, 2);
      if (s >= thr) thr = offer(s, r2);
    }
    if (mask & 8) {
      const s = f32x4.extract_lane(sc, 3);
      if (s >= thr) thr = offer(s, r3);
    }
  }
  return thr;
}

// ---------------------------------------------------------------------------------------------
// Exports

/** First byte the wrapper may use (after static data). */
export function heapBase(): usize {
  return __heap_base;
}

/**
 * Fused scan + top-k over rows [start, end). Four rows per iteration.
 * Writes the sorted result to hScores/hRows (capacity k >= 1) and returns its length.
 */
export function scanRange(rows: usize, scales: usize, dims: i32, start: i32, end: i32, q: usize, qScale: f32, k: i32, hScores: usize, hRows: usize): i32 {
  heapReset(hScores, hRows, k);
  const stride = <usize>dims;
  const qs = f32x4.splat(qScale);
  let thr: f32 = -Infinity;
  let r = start;
  let p = rows + <usize>start * stride;
  for (; r + 4 <= end; r += 4) {
    const sums = dot4(p, p + stride, p + 2 * stride, p + 3 * stride, q, dims);
    const sc = f32x4.mul(f32x4.convert_i32x4_s(sums), f32x4.mul(v128.load(scales + (<usize>r << 2)), qs));
    thr = offer4(sc, r, r + 1, r + 2, r + 3, thr);
    p += 4 * stride;
  }
  for (; r < end; r++) {
    const s = <f32>dot1(p, q, dims) * (load<f32>(scales + (<usize>r << 2)) * qScale);
    if (s >= thr) thr = offer(s, r);
    p += stride;
  }
  return heapFinish();
}

/**
 * Fused scan + top-k over a list of `count` row ids (i32 at list; ascending order keeps memory
 * access sequential but any order is correct). Four rows per iteration.
 */
export function scanList(rows: usize, scales: usize, dims: i32, list: usize, count: i32, q: usize, qScale: f32, k: i32, hScores: usize, hRows: usize): i32 {
  heapReset(hScores, hRows, k);
  const stride = <usize>dims;
  const qs = f32x4.splat(qScale);
  let thr: f32 = -Infinity;
  let i = 0;
  for (; i + 4 <= count; i += 4) {
    const lp = list + (<usize>i << 2);
    const r0 = load<i32>(lp);
    const r1 = load<i32>(lp, 4);
    const r2 = load<i32>(lp, 8);
    const r3 = load<i32>(lp, 12);
    const sums = dot4(rows + <usize>r0 * stride, rows + <usize>r1 * stride, rows + <usize>r2 * stride, rows + <usize>r3 * stride, q, dims);
    let sv = f32x4.splat(load<f32>(scales + (<usize>r0 << 2)));
    sv = f32x4.replace_lane(sv, 1, load<f32>(scales + (<usize>r1 << 2)));
    sv = f32x4.replace_lane(sv, 2, load<f32>(scales + (<usize>r2 << 2)));
    sv = f32x4.replace_lane(sv, 3, load<f32>(scales + (<usize>r3 << 2)));
    const sc = f32x4.mul(f32x4.convert_i32x4_s(sums), f32x4.mul(sv, qs));
    thr = offer4(sc, r0, r1, r2, r3, thr);
  }
  for (; i < count; i++) {
    const r = load<i32>(list + (<usize>i << 2));
    const s = <f32>dot1(rows + <usize>r * stride, q, dims) * (load<f32>(scales + (<usize>r << 2)) * qScale);
    if (s >= thr) thr = offer(s, r);
  }
  return heapFinish();
}

/** Scores of `count` listed rows (any order, repeats allowed) into out (f32[count]). */
export function scoreList(rows: usize, scales: usize, dims: i32, list: usize, count: i32, q: usize, qScale: f32, out: usize): void {
  const stride = <usize>dims;
  for (let i = 0; i < count; i++) {
    const r = load<i32>(list + (<usize>i << 2));
    const s = <f32>dot1(rows + <usize>r * stride, q, dims) * (load<f32>(scales + (<usize>r << 2)) * qScale);
    store<f32>(out + (<usize>i << 2), s);
  }
}

/**
 * Mean of the dequantized listed rows, re-normalized to unit length, into out (f32, room for
 * chunks(dims) * 16 lanes; only the first dims are meaningful). Returns 0 when the list is empty
 * or the mean is the zero vector (out is then all zeros), else 1.
 */
export function centroid(rows: usize, scales: usize, dims: i32, list: usize, count: i32, out: usize): i32 {
  const chunks = chunksOf(dims);
  const stride = <usize>dims;
  for (let c = 0; c < chunks << 2; c++) v128.store(out + (<usize>c << 4), f32x4.splat(0));
  for (let i = 0; i < count; i++) {
    const r = load<i32>(list + (<usize>i << 2));
    const p = rows + <usize>r * stride;
    const sc = f32x4.splat(load<f32>(scales + (<usize>r << 2)));
    for (let c = 0; c < chunks; c++) {
      const v = v128.load(p + (<usize>c << 4));
      const lo = i16x8.extend_low_i8x16_s(v);
      const hi = i16x8.extend_high_i8x16_s(v);
      const o = out + (<usize>c << 6);
      v128.store(o, f32x4.add(v128.load(o), f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(lo)), sc)));
      v128.store(o, f32x4.add(v128.load(o, 16), f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(lo)), sc)), 16);
      v128.store(o, f32x4.add(v128.load(o, 32), f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_low_i16x8_s(hi)), sc)), 32);
      v128.store(o, f32x4.add(v128.load(o, 48), f32x4.mul(f32x4.convert_i32x4_s(i32x4.extend_high_i16x8_s(hi)), sc)), 48);
    }
  }
  let norm: f64 = 0;
  for (let d = 0; d < dims; d++) {
    const x = <f64>load<f32>(out + (<usize>d << 2));
    norm += x * x;
  }
  norm = Math.sqrt(norm);
  // The lanes past dims summed bytes of neighbouring rows: clear them.
  for (let d = dims; d < chunks << 4; d++) store<f32>(out + (<usize>d << 2), 0);
  if (!(norm > 1e-12)) {
    for (let d = 0; d < dims; d++) store<f32>(out + (<usize>d << 2), 0);
    return 0;
  }
  const inv = 1.0 / norm;
  for (let d = 0; d < dims; d++) {
    const o = out + (<usize>d << 2);
    store<f32>(o, <f32>(<f64>load<f32>(o) * inv));
  }
  return 1;
}

/** Dot product of two int8 rows; `mask` clears the bytes of the last chunk past dims. */
// @ts-ignore: decorator
@inline function dotRows(a: usize, b: usize, chunks: i32, mask: v128): i32 {
  let acc = i32x4.splat(0);
  const last = chunks - 1;
  for (let c = 0; c < last; c++) {
    const off = <usize>c << 4;
    const va = v128.load(a + off);
    const vb = v128.load(b + off);
    acc = i32x4.add(acc, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(va), i16x8.extend_low_i8x16_s(vb)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(va), i16x8.extend_high_i8x16_s(vb))));
  }
  const off = <usize>last << 4;
  const va = v128.and(v128.load(a + off), mask);
  const vb = v128.load(b + off);
  acc = i32x4.add(acc, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(va), i16x8.extend_low_i8x16_s(vb)), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(va), i16x8.extend_high_i8x16_s(vb))));
  return i32x4.extract_lane(acc, 0) + i32x4.extract_lane(acc, 1) + i32x4.extract_lane(acc, 2) + i32x4.extract_lane(acc, 3);
}

/** Row-major count x count cosine matrix of the listed rows into out (f32[count * count]). */
export function similarity(rows: usize, scales: usize, dims: i32, list: usize, count: i32, out: usize): void {
  const chunks = chunksOf(dims);
  const stride = <usize>dims;
  const rem = dims - ((chunks - 1) << 4); // 1..16 valid bytes in the last chunk
  const mask = i8x16.lt_s(v128(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), i8x16.splat(<i8>rem));
  for (let i = 0; i < count; i++) {
    const ri = load<i32>(list + (<usize>i << 2));
    const pi = rows + <usize>ri * stride;
    const si = load<f32>(scales + (<usize>ri << 2));
    for (let j = i; j < count; j++) {
      const rj = load<i32>(list + (<usize>j << 2));
      const s = <f32>dotRows(pi, rows + <usize>rj * stride, chunks, mask) * (si * load<f32>(scales + (<usize>rj << 2)));
      store<f32>(out + ((<usize>i * count + j) << 2), s);
      store<f32>(out + ((<usize>j * count + i) << 2), s);
    }
  }
}
