/**
 * A loaded embedding model: the artifact's vocabulary and sorted index (small typed arrays, no
 * JavaScript object per word) plus the int8 matrix inside WASM memory, scored by core/kernels.ts.
 *
 * Lookup keys are the UTF-8 bytes of word.toLowerCase(), compared bytewise, exactly as the
 * artifact's SIDX section is sorted (core/artifact/). ASCII words are lower-cased on the fly
 * while comparing; words with non-ASCII bytes are decoded, lower-cased and re-encoded (rare).
 */
import { ArtifactError, compareBytes, decodeWord, keyBytes, parseArtifact, type ParsedArtifact } from './artifact';
import { Kernels, type MatrixSlot } from './kernels';
import { COMPOUND_FEATURE, compoundHeadRow } from './projection';
import type { ModelManifest, TopKOptions, TopKResult, VectorIndex } from './types';
import { foldKey } from './vocab-quality';
import { lookupKey, lookupRow } from './word-lookup';

export interface ModelLoadOptions {
  /**
   * Keep views into the artifact buffer for the vocabulary and index instead of copying them out
   * (saves ~4 MB of copies but keeps the whole artifact buffer alive). Default false: only the
   * small sections are copied, so the caller's ArrayBuffer can be garbage-collected.
   */
  retainBuffer?: boolean;
  /**
   * rowOf binary-searches the sorted index for its first N calls, then builds a hash table over
   * the vocabulary (~60 ms and 4 MiB for 341k words) and uses it from then on. Default 1024;
   * 0 builds it on the first call, Infinity never.
   */
  lookupTableAfter?: number;
  /**
   * The model's rows and scales are already in this slot of the kernels' memory (read there
   * directly, e.g. the offline scorer's cached head): adopted instead of copying `rows`/`scales`.
   */
  matrix?: MatrixSlot;
  /**
   * Asked before the lookup table's bytes are allocated (the Worker's memory budget,
   * worker/sources/models.ts). When it answers false, rowOf keeps binary-searching (the same
   * rows, a little slower) and asks again after another `lookupTableAfter` calls.
   */
  mayGrow?: (bytes: number) => boolean;
}

const utf8Encoder = new TextEncoder();
/** Flag bit of a hash-table entry / find() result: several rows share the key. */
const MULTI = 0x80000000;

export class EmbeddingModel implements VectorIndex {
  readonly manifest: ModelManifest;
  readonly size: number;
  readonly dims: number;
  private readonly vocab: Uint8Array;
  private readonly offsets: Uint32Array;
  private readonly sorted: Uint32Array;
  private readonly folded: Uint32Array;
  private readonly flagWords: Uint16Array;
  private readonly antonymPairs: Uint32Array;
  private readonly matrix: MatrixSlot;
  /**
   * Open-addressing hash table over the lower-cased keys, built on the first rowOf (one pass in
   * row order, 8 bytes per slot at load factor <= 2/3: 4 MiB for 341k words). Slot pairs:
   * [row + 1 (bit 31: more rows share the key), FNV-1a hash]; the row is the most frequent with
   * that key. rowOf is then one or two probes instead of a binary search over the vocabulary.
   * Until then (the first `lookupTableAfter` calls) rowOf binary-searches SIDX, so a fresh model
   * answers its first queries without paying for the table.
   */
  private table: Uint32Array | null = null;
  private lookups = 0;
  private readonly tableAfter: number;
  private readonly growthAllowed: ((bytes: number) => boolean) | undefined;
  private readonly baseBytes: number;
  /** Manifest feature 'compound-head-fallback' (the aligned German model). */
  private readonly compoundFallback: boolean;

  private constructor(
    parsed: ParsedArtifact,
    readonly kernels: Kernels,
    options: ModelLoadOptions,
  ) {
    this.manifest = parsed.manifest;
    this.size = parsed.size;
    this.dims = parsed.dims;
    const retain = options.retainBuffer === true;
    this.vocab = retain ? parsed.vocab : parsed.vocab.slice();
    this.sorted = retain ? parsed.sortedIndex : parsed.sortedIndex.slice();
    this.folded = retain ? parsed.foldedIndex : parsed.foldedIndex.slice();
    this.flagWords = retain ? parsed.flags : parsed.flags.slice();
    this.antonymPairs = retain ? parsed.antonyms : parsed.antonyms.slice();
    this.offsets = parsed.wordOffsets;
    const given = options.matrix;
    if (given && (given.n !== parsed.size || given.dims !== parsed.dims))
      throw new RangeError(`the matrix slot is ${given.n} x ${given.dims}, the model ${parsed.size} x ${parsed.dims}`);
    this.matrix = given ?? kernels.loadMatrix(parsed.rows, parsed.scales, parsed.size, parsed.dims);
    this.tableAfter = options.lookupTableAfter ?? 1024;
    this.growthAllowed = options.mayGrow;
    this.compoundFallback = Array.isArray(this.manifest.features) && this.manifest.features.includes(COMPOUND_FEATURE);
    this.baseBytes =
      (retain
        ? parsed.byteLength
        : this.vocab.byteLength +
          this.sorted.byteLength +
          this.folded.byteLength +
          this.flagWords.byteLength +
          this.antonymPairs.byteLength) + this.offsets.byteLength;
  }

  /** Verifies and loads an artifact (core/artifact/); throws ArtifactError when it is corrupt. */
  static fromArrayBuffer(
    buffer: ArrayBuffer | Uint8Array,
    kernels: Kernels,
    options: ModelLoadOptions = {},
  ): EmbeddingModel {
    return new EmbeddingModel(parseArtifact(buffer), kernels, options);
  }

  static fromParsed(parsed: ParsedArtifact, kernels: Kernels, options: ModelLoadOptions = {}): EmbeddingModel {
    return new EmbeddingModel(parsed, kernels, options);
  }

  /** Bytes held outside WASM memory: vocabulary, offsets, index (or the whole artifact if retained), lookup table once built. */
  get retainedBytes(): number {
    return this.baseBytes + (this.table?.byteLength ?? 0);
  }

  /** Whether `bytes` more may be kept (ModelLoadOptions.mayGrow; the lookup table and the expansion cache ask). */
  mayGrow(bytes: number): boolean {
    return this.growthAllowed?.(bytes) ?? true;
  }

  /** Bytes the lookup table takes once built (8 per slot, slots a power of two >= 1.5 x words). */
  get tableBytes(): number {
    let cap = 2;
    while (cap * 2 < this.size * 3) cap <<= 1;
    return cap * 8;
  }

  /** Builds the lookup table unless mayGrow refuses its bytes (then binary search goes on for another tableAfter calls). */
  private tableAllowed(): boolean {
    if (!this.mayGrow(this.tableBytes)) {
      this.lookups = 0;
      return false;
    }
    this.table = this.buildTable();
    return true;
  }

  /** Bytes of this model's matrix slot in WASM memory. */
  get matrixBytes(): number {
    return Kernels.matrixBytes(this.size, this.dims);
  }

  /**
   * Frees the model's matrix in its kernels' WASM memory for reuse by another model (eviction,
   * worker/sources/models.ts). Every vector operation of this model throws afterwards.
   */
  release(): void {
    this.kernels.freeMatrix(this.matrix);
  }

  /** WASM memory of this model's kernels instance + retained JS buffers. */
  get memoryBytes(): number {
    return this.kernels.memoryBytes + this.retainedBytes;
  }

  word(row: number): string {
    if (!Number.isInteger(row) || row < 0 || row >= this.size)
      throw new RangeError(`row ${row} is out of range 0..${this.size - 1}`);
    return decodeWord(this.vocab, this.offsets, row);
  }

  /**
   * Row of a word by the lookup rule (core/word-lookup.ts): for its NFKC key, and then its folded
   * form, the exact entry first, then the entry equal to its lower-cased form, then (for cased
   * vocabularies) the most frequent entry whose lower-cased form equals the word's; -1 when none.
   */
  rowOf(word: string): number {
    if (typeof word !== 'string') return -1;
    const row = lookupRow(word, (w) => this.entryRow(w));
    // Aligned German model: an unknown compound takes its longest known head (core/projection.ts).
    if (row < 0 && this.compoundFallback) return compoundHeadRow(lookupKey(word), (w) => this.entryRow(w));
    return row;
  }

  /** rowOf without the compound fallback: the vocabulary entry itself. */
  entryRow(word: string): number {
    if (typeof word !== 'string' || word.length === 0) return -1;
    const key = keyBytes(word);
    let lo: number;
    let hi: number;
    if (this.table || (++this.lookups > this.tableAfter && this.tableAllowed())) {
      const found = this.find(key);
      if (found < 0) return -1;
      // The common case: one entry with this key, so it is the exact, lower-cased or case-insensitive hit.
      if (!(found & MULTI)) return found;
      [lo, hi] = this.range(key, false);
    } else {
      [lo, hi] = this.range(key, false);
      if (lo === hi) return -1;
      if (hi - lo === 1) return this.sorted[lo]!;
    }
    const exact = utf8Encoder.encode(word);
    for (let i = lo; i < hi; i++) if (this.rowBytesEqual(this.sorted[i]!, exact)) return this.sorted[i]!;
    for (let i = lo; i < hi; i++) if (this.rowBytesEqual(this.sorted[i]!, key)) return this.sorted[i]!;
    return this.sorted[lo]!; // equal keys are ordered by row id: the most frequent
  }

  /**
   * Rows whose lower-cased entry starts with the lower-cased prefix, in row (frequency) order,
   * at most `limit`, skipping rows for which `accept` returns false.
   */
  prefixRows(prefix: string, limit: number, accept?: (row: number) => boolean): number[] {
    const out: number[] = [];
    if (!(limit > 0)) return out;
    const key = keyBytes(prefix);
    if (key.length === 0) {
      for (let r = 0; r < this.size && out.length < limit; r++) if (!accept || accept(r)) out.push(r);
      return out;
    }
    const [lo, hi] = this.range(key, true);
    const count = hi - lo;
    if (count === 0) return out;
    // Wide ranges (short prefixes): scan rows in frequency order, which finds `limit` matches after
    // about limit * size / count rows. Narrow ranges, or when the scan budget runs out (a strict
    // accept filter): sort the range's row ids. accept is called at most once per row.
    let from = 0;
    if (count * count > 4 * limit * this.size) {
      const budget = Math.min(this.size, Math.max(4096, Math.ceil((16 * limit * this.size) / count)));
      for (let r = 0; r < budget; r++) {
        if (this.compareRow(r, key, true) === 0 && (!accept || accept(r))) {
          out.push(r);
          if (out.length >= limit) return out;
        }
      }
      from = budget;
    }
    const rows = this.sorted.slice(lo, hi).sort();
    for (let i = 0; i < rows.length && out.length < limit; i++) {
      const r = rows[i]!;
      if (r >= from && (!accept || accept(r))) out.push(r);
    }
    return out;
  }

  /** Vocabulary flags of a row (core/vocab-quality.ts VOCAB_FLAG). */
  flags(row: number): number {
    return this.flagWords[row] ?? 0;
  }

  /** Rows linked to `row` as antonyms (ascending). */
  antonyms(row: number): number[] {
    const a = this.antonymPairs;
    const m = a.length >>> 1;
    let lo = 0;
    let hi = m;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (a[2 * mid]! < row) lo = mid + 1;
      else hi = mid;
    }
    const out: number[] = [];
    for (let i = lo; i < m && a[2 * i] === row; i++) out.push(a[2 * i + 1]!);
    return out;
  }

  /**
   * Rows whose folded entry (lower-cased, diacritics removed: core/vocab-quality.ts foldKey)
   * starts with the folded prefix, in row (frequency) order, all of them: "cafe" and "café"
   * both find "café". Binary search over FIDX, then the range's row ids sorted.
   */
  foldedPrefixRows(prefix: string): Uint32Array {
    const key = utf8Encoder.encode(foldKey(prefix));
    const cmp = (row: number): number => {
      const rk = utf8Encoder.encode(foldKey(decodeWord(this.vocab, this.offsets, row)));
      const l = Math.min(rk.length, key.length);
      return compareBytes(rk, 0, l, key, 0, key.length) || (rk.length >= key.length ? 0 : -1);
    };
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cmp(this.folded[mid]!) < 0) lo = mid + 1;
      else hi = mid;
    }
    let end = this.size;
    let a = lo;
    while (a < end) {
      const mid = (a + end) >>> 1;
      if (cmp(this.folded[mid]!) <= 0) a = mid + 1;
      else end = mid;
    }
    return this.folded.slice(lo, a).sort();
  }

  /** Number of vocabulary entries whose lower-cased form starts with the lower-cased prefix. */
  prefixCount(prefix: string): number {
    const key = keyBytes(prefix);
    if (key.length === 0) return this.size;
    const [lo, hi] = this.range(key, true);
    return hi - lo;
  }

  vector(row: number): Float32Array {
    return this.kernels.dequantizeRow(this.matrix, row);
  }

  /** The int8 rows and scales of these rows, copied out (a part of a sharded model hands them to its coordinator). */
  rawRows(rows: ArrayLike<number>): { rows: Int8Array; scales: Float32Array } {
    const dims = this.dims;
    const all = this.matrix.rows();
    const allScales = this.matrix.scales();
    const out = { rows: new Int8Array(rows.length * dims), scales: new Float32Array(rows.length) };
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (!Number.isInteger(r) || r < 0 || r >= this.size)
        throw new RangeError(`row ${r} is out of range 0..${this.size - 1}`);
      out.rows.set(all.subarray(r * dims, (r + 1) * dims), i * dims);
      out.scales[i] = allScales[r]!;
    }
    return out;
  }

  centroid(rows: ArrayLike<number>): Float32Array | null {
    return this.kernels.centroid(this.matrix, rows);
  }

  topK(query: Float32Array, k: number, options?: TopKOptions): TopKResult {
    return this.kernels.topK(this.matrix, query, k, options);
  }

  scores(query: Float32Array, rows: ArrayLike<number>): Float32Array {
    return this.kernels.scores(this.matrix, query, rows);
  }

  similarityMatrix(rows: ArrayLike<number>): Float32Array {
    return this.kernels.similarityMatrix(this.matrix, rows);
  }

  // ------------------------------------------------------------------------------------------
  // Binary search over SIDX
  // ------------------------------------------------------------------------------------------

  /** SIDX positions [lo, hi) whose key equals key (prefix mode: starts with key). */
  private range(key: Uint8Array, prefix: boolean): [number, number] {
    const lo = this.lowerBound(key, prefix, 0, this.size);
    return [lo, this.upperBound(key, prefix, lo, this.size)];
  }

  /** Most frequent row whose key equals key (| MULTI when several rows share it), or -1. */
  private find(key: Uint8Array): number {
    const table = (this.table ??= this.buildTable());
    const mask = (table.length >>> 1) - 1;
    const h = fnv1a(key, 0, key.length);
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const v = table[2 * slot]!;
      if (v === 0) return -1;
      if (table[2 * slot + 1] === h) {
        const row = (v & ~MULTI) - 1;
        if (this.compareRow(row, key, false) === 0) return (row | (v & MULTI)) >>> 0;
      }
    }
  }

  private buildTable(): Uint32Array {
    const cap = this.tableBytes / 8;
    const table = new Uint32Array(cap * 2);
    const mask = cap - 1;
    const v = this.vocab;
    const scratch = new Uint8Array(256);
    for (let row = 0; row < this.size; row++) {
      const start = this.offsets[row]!;
      const end = this.offsets[row + 1]!;
      let key: Uint8Array = scratch;
      let len = end - start;
      for (let j = 0; j < len; j++) {
        const b = v[start + j]!;
        if (b >= 0x80) {
          key = keyBytes(decodeWord(v, this.offsets, row));
          len = key.length;
          break;
        }
        scratch[j] = b >= 0x41 && b <= 0x5a ? b + 0x20 : b;
      }
      const h = fnv1a(key, 0, len);
      let slot = h & mask;
      for (;;) {
        const e = table[2 * slot]!;
        if (e === 0) {
          table[2 * slot] = row + 1;
          table[2 * slot + 1] = h;
          break;
        }
        if (table[2 * slot + 1] === h && this.compareRow((e & ~MULTI) - 1, key.subarray(0, len), false) === 0) {
          table[2 * slot] = (e | MULTI) >>> 0; // a less frequent row with the same key
          break;
        }
        slot = (slot + 1) & mask;
      }
    }
    return table;
  }

  /** First index i in [lo, hi) with key(sorted[i]) >= key (prefix mode: compares only the first |key| bytes). */
  private lowerBound(key: Uint8Array, prefix: boolean, lo: number, hi: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareRow(this.sorted[mid]!, key, prefix) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index i in [lo, hi) with key(sorted[i]) > key. */
  private upperBound(key: Uint8Array, prefix: boolean, lo: number, hi: number): number {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareRow(this.sorted[mid]!, key, prefix) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Compares key(row) with key. In prefix mode a row key that starts with `key` compares equal.
   */
  private compareRow(row: number, key: Uint8Array, prefix: boolean): number {
    const v = this.vocab;
    const start = this.offsets[row]!;
    const end = this.offsets[row + 1]!;
    const len = end - start;
    const kl = key.length;
    const l = len < kl ? len : kl;
    for (let i = 0; i < l; i++) {
      let b = v[start + i]!;
      if (b >= 0x80) return this.compareRowSlow(row, key, prefix);
      if (b >= 0x41 && b <= 0x5a) b += 0x20;
      const d = b - key[i]!;
      if (d !== 0) return d;
    }
    // The first l bytes were ASCII and equal. A longer row keeps a longer key (lower-casing its
    // remaining characters never yields an empty string), so it sorts after key, or matches as a prefix.
    if (len > kl) return prefix ? 0 : 1;
    return len - kl;
  }

  private compareRowSlow(row: number, key: Uint8Array, prefix: boolean): number {
    const rk = keyBytes(decodeWord(this.vocab, this.offsets, row));
    if (prefix && rk.length >= key.length) return compareBytes(rk, 0, key.length, key, 0, key.length);
    return compareBytes(rk, 0, rk.length, key, 0, key.length);
  }

  private rowBytesEqual(row: number, bytes: Uint8Array): boolean {
    const start = this.offsets[row]!;
    const end = this.offsets[row + 1]!;
    if (end - start !== bytes.length) return false;
    for (let i = 0; i < bytes.length; i++) if (this.vocab[start + i] !== bytes[i]) return false;
    return true;
  }
}

/** FNV-1a (32-bit) of bytes[start, end). */
function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

export { ArtifactError };
