/**
 * A loaded embedding model: the artifact's vocabulary and sorted index (small typed arrays, no
 * JavaScript object per word) plus the int8 matrix inside WASM memory, scored by core/kernels.ts.
 *
 * Lookup keys are the UTF-8 bytes of word.toLowerCase(), compared bytewise, exactly as the
 * artifact's SIDX section is sorted (core/artifact.ts). ASCII words are lower-cased on the fly
 * while comparing; words with non-ASCII bytes are decoded, lower-cased and re-encoded (rare).
 */
import { ArtifactError, compareBytes, decodeWord, keyBytes, parseArtifact, type ParsedArtifact } from './artifact';
import type { Kernels, MatrixSlot } from './kernels';
import type { ModelManifest, TopKOptions, TopKResult, VectorIndex } from './types';

export interface ModelLoadOptions {
  /**
   * Keep views into the artifact buffer for the vocabulary and index instead of copying them out
   * (saves ~4 MB of copies but keeps the whole artifact buffer alive). Default false: only the
   * small sections are copied, so the caller's ArrayBuffer can be garbage-collected.
   */
  retainBuffer?: boolean;
}

const utf8Encoder = new TextEncoder();

export class EmbeddingModel implements VectorIndex {
  readonly manifest: ModelManifest;
  readonly size: number;
  readonly dims: number;
  private readonly vocab: Uint8Array;
  private readonly offsets: Uint32Array;
  private readonly sorted: Uint32Array;
  private readonly matrix: MatrixSlot;
  /** Bytes held outside WASM memory (vocabulary, offsets, index, and the artifact if retained). */
  readonly retainedBytes: number;

  private constructor(parsed: ParsedArtifact, readonly kernels: Kernels, options: ModelLoadOptions) {
    this.manifest = parsed.manifest;
    this.size = parsed.size;
    this.dims = parsed.dims;
    const retain = options.retainBuffer === true;
    this.vocab = retain ? parsed.vocab : parsed.vocab.slice();
    this.sorted = retain ? parsed.sortedIndex : parsed.sortedIndex.slice();
    this.offsets = parsed.wordOffsets;
    this.matrix = kernels.loadMatrix(parsed.rows, parsed.scales, parsed.size, parsed.dims);
    this.retainedBytes = (retain ? parsed.byteLength : this.vocab.byteLength + this.sorted.byteLength) + this.offsets.byteLength;
  }

  /** Verifies and loads an artifact (core/artifact.ts); throws ArtifactError when it is corrupt. */
  static fromArrayBuffer(buffer: ArrayBuffer | Uint8Array, kernels: Kernels, options: ModelLoadOptions = {}): EmbeddingModel {
    return new EmbeddingModel(parseArtifact(buffer), kernels, options);
  }

  static fromParsed(parsed: ParsedArtifact, kernels: Kernels, options: ModelLoadOptions = {}): EmbeddingModel {
    return new EmbeddingModel(parsed, kernels, options);
  }

  /** WASM memory of this model's kernels instance + retained JS buffers. */
  get memoryBytes(): number {
    return this.kernels.memoryBytes + this.retainedBytes;
  }

  word(row: number): string {
    if (!Number.isInteger(row) || row < 0 || row >= this.size) throw new RangeError(`row ${row} is out of range 0..${this.size - 1}`);
    return decodeWord(this.vocab, this.offsets, row);
  }

  /** modelRank of a row (1 = most frequent). */
  rank(row: number): number {
    return row + 1;
  }

  /**
   * Row of a word: the exact entry first, then the entry equal to its lower-cased form, then
   * (for cased vocabularies) the most frequent entry whose lower-cased form equals the word's;
   * -1 when none exists.
   */
  rowOf(word: string): number {
    if (typeof word !== 'string' || word.length === 0) return -1;
    const key = keyBytes(word);
    const lo = this.lowerBound(key, false);
    const hi = this.upperBound(key, false, lo);
    if (lo === hi) return -1;
    if (hi - lo === 1) {
      // The common case: one entry with this key. Exact or lower-cased hit, or the case-insensitive fallback.
      return this.sorted[lo]!;
    }
    const exact = utf8Encoder.encode(word);
    for (let i = lo; i < hi; i++) if (this.rowBytesEqual(this.sorted[i]!, exact)) return this.sorted[i]!;
    for (let i = lo; i < hi; i++) if (this.rowBytesEqual(this.sorted[i]!, key)) return this.sorted[i]!;
    return this.sorted[lo]!; // equal keys are ordered by row id: the most frequent
  }

  /** Whether the vocabulary has this word (same rule as rowOf). */
  has(word: string): boolean {
    return this.rowOf(word) >= 0;
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
    const lo = this.lowerBound(key, true);
    const hi = this.upperBound(key, true, lo);
    if (lo === hi) return out;
    const rows = this.sorted.slice(lo, hi).sort();
    for (let i = 0; i < rows.length && out.length < limit; i++) {
      const r = rows[i]!;
      if (!accept || accept(r)) out.push(r);
    }
    return out;
  }

  /** Number of vocabulary entries whose lower-cased form starts with the lower-cased prefix. */
  prefixCount(prefix: string): number {
    const key = keyBytes(prefix);
    if (key.length === 0) return this.size;
    const lo = this.lowerBound(key, true);
    return this.upperBound(key, true, lo) - lo;
  }

  vector(row: number): Float32Array {
    return this.kernels.dequantizeRow(this.matrix, row);
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

  /** First index i with key(sorted[i]) >= key (prefix mode: compares only the first |key| bytes). */
  private lowerBound(key: Uint8Array, prefix: boolean): number {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compareRow(this.sorted[mid]!, key, prefix) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index i >= from with key(sorted[i]) > key. */
  private upperBound(key: Uint8Array, prefix: boolean, from: number): number {
    let lo = from;
    let hi = this.size;
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

export { ArtifactError };
