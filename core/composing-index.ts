/**
 * A request's view of a model with the sub-word fallback on (request option `subwordFallback`):
 * the model's rows, plus a row past the vocabulary for each word outside it that the request
 * scores (core/subword.ts composes its vector). Made per request, so the extra row ids mean
 * nothing outside it; lookups (rowOf) stay strict, composition is asked for explicitly
 * (composeRow), and only where a word is scored: text tokens, whitelist words, matrix words.
 *
 * Scores of composed rows are plain float dot products with their unit vectors; the model's own
 * rows are scored by its kernels exactly as without the option.
 */
import { cacheKeyOf, type ModelManifest, type TopKOptions, type TopKResult, type VectorIndex } from './types';
import type { SubwordTable } from './subword';
import { VOCAB_FLAG } from './vocab-quality';

/** Distinct words one request may compose; later ones stay unknown (bounds its memory: 4 MB at 100 dimensions). */
export const MAX_COMPOSED_WORDS = 10_000;

const LETTER = /\p{L}/u;

export class ComposingIndex implements VectorIndex {
  readonly manifest: ModelManifest;
  readonly size: number;
  readonly dims: number;
  readonly rows?: number;
  readonly cacheKey: object;
  readonly mayGrow?: (bytes: number) => boolean;
  readonly prefetch?: (rows: ArrayLike<number>) => void;
  readonly prefetchTopK?: (queries: readonly Float32Array[], k: number) => void;
  private readonly composedWords: string[] = [];
  private readonly vectors: Float32Array[] = [];
  private readonly byWord = new Map<string, number>();

  constructor(
    readonly base: VectorIndex,
    private readonly table: SubwordTable,
  ) {
    this.manifest = base.manifest;
    this.size = base.size;
    this.dims = base.dims;
    if (base.rows !== undefined) this.rows = base.rows;
    // The model's caches (keyed by its rows and words, never by composed rows) stay shared.
    this.cacheKey = cacheKeyOf(base);
    if (base.mayGrow) this.mayGrow = (bytes) => base.mayGrow!(bytes);
    if (base.prefetch) this.prefetch = (rows) => base.prefetch!(this.modelRows(rows));
    if (base.prefetchTopK) this.prefetchTopK = (queries, k) => base.prefetchTopK!(queries, k);
  }

  /**
   * The row of a word outside the vocabulary: a composed row (>= size), the same for the same
   * lower-cased word within the request; -1 for a word without a letter, one without an n-gram
   * vector, or past MAX_COMPOSED_WORDS.
   */
  composeRow(word: string): number {
    const key = word.trim().toLowerCase();
    const known = this.byWord.get(key);
    if (known !== undefined) return known;
    if (!LETTER.test(key) || this.vectors.length >= MAX_COMPOSED_WORDS) return -1;
    const v = this.table.compose(key);
    const row = v ? this.size + this.vectors.length : -1;
    if (v) {
      this.vectors.push(v);
      this.composedWords.push(key);
    }
    this.byWord.set(key, row);
    return row;
  }

  /** True for a composed row. */
  isComposed(row: number): boolean {
    return row >= this.size;
  }

  private modelRows(rows: ArrayLike<number>): number[] {
    const out: number[] = [];
    for (let i = 0; i < rows.length; i++) if (rows[i]! < this.size) out.push(rows[i]!);
    return out;
  }

  private composed(row: number): Float32Array {
    const v = this.vectors[row - this.size];
    if (!v) throw new RangeError(`row ${row} is out of range 0..${this.size + this.vectors.length - 1}`);
    return v;
  }

  word(row: number): string {
    return row >= this.size ? this.composedWords[row - this.size]! : this.base.word(row);
  }

  rowOf(word: string): number {
    return this.base.rowOf(word);
  }

  prefixRows(prefix: string, limit: number, accept?: (row: number) => boolean): number[] {
    return this.base.prefixRows(prefix, limit, accept);
  }

  /** A composed word has a letter and no other flag (not a dictionary word, no part of speech). */
  flags(row: number): number {
    return row >= this.size ? VOCAB_FLAG.LETTER : this.base.flags(row);
  }

  antonyms(row: number): number[] {
    return row >= this.size ? [] : this.base.antonyms(row);
  }

  foldedPrefixRows(prefix: string): Uint32Array {
    return this.base.foldedPrefixRows(prefix);
  }

  vector(row: number): Float32Array {
    return row >= this.size ? this.composed(row).slice() : this.base.vector(row);
  }

  centroid(rows: ArrayLike<number>): Float32Array | null {
    if (this.modelRows(rows).length === rows.length) return this.base.centroid(rows);
    const sum = new Float64Array(this.dims);
    for (let i = 0; i < rows.length; i++) {
      const v = this.vector(rows[i]!);
      for (let d = 0; d < this.dims; d++) sum[d] += v[d]!;
    }
    let norm = 0;
    for (let d = 0; d < this.dims; d++) norm += sum[d]! * sum[d]!;
    if (!(norm > 1e-24)) return null;
    const inv = 1 / Math.sqrt(norm);
    return Float32Array.from(sum, (x) => x * inv);
  }

  topK(query: Float32Array, k: number, options?: TopKOptions): TopKResult {
    const rows = options?.rows;
    return this.base.topK(query, k, rows ? { ...options, rows: this.modelRows(rows) } : options);
  }

  scores(query: Float32Array, rows: ArrayLike<number>): Float32Array {
    const own = this.modelRows(rows);
    if (own.length === rows.length) return this.base.scores(query, rows);
    const fromModel = own.length > 0 ? this.base.scores(query, own) : new Float32Array(0);
    const q = unitOf(query);
    const out = new Float32Array(rows.length);
    let k = 0;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      out[i] = r < this.size ? fromModel[k++]! : q ? dot(q, this.composed(r)) : 0;
    }
    return out;
  }

  similarityMatrix(rows: ArrayLike<number>): Float32Array {
    const own = this.modelRows(rows);
    const n = rows.length;
    if (own.length === n) return this.base.similarityMatrix(rows);
    // The model's rows among themselves by the kernels, as without the option; pairs with a composed row by their vectors.
    const m = own.length;
    const inner = m > 0 ? this.base.similarityMatrix(own) : new Float32Array(0);
    const at = new Int32Array(n);
    let k = 0;
    for (let i = 0; i < n; i++) at[i] = rows[i]! < this.size ? k++ : -1;
    const vectors = Array.from({ length: n }, (_, i) => (at[i]! < 0 ? this.composed(rows[i]!) : null));
    const modelVector = new Map<number, Float32Array>();
    const vectorAt = (i: number): Float32Array => {
      const v = vectors[i];
      if (v) return v;
      let u = modelVector.get(i);
      if (!u) modelVector.set(i, (u = this.base.vector(rows[i]!)));
      return u;
    };
    const out = new Float32Array(n * n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < n; j++) {
        out[i * n + j] =
          at[i]! >= 0 && at[j]! >= 0 ? inner[at[i]! * m + at[j]!]! : i === j ? 1 : dot(vectorAt(i), vectorAt(j));
      }
    }
    return out;
  }
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** The query scaled to unit length (float64); null for a zero query. */
function unitOf(query: Float32Array): Float64Array | null {
  let norm = 0;
  for (let i = 0; i < query.length; i++) norm += query[i]! * query[i]!;
  if (!(norm > 0)) return null;
  const inv = 1 / Math.sqrt(norm);
  return Float64Array.from(query, (x) => x * inv);
}
