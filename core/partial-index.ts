/**
 * Progressive cold start of the offline scorer (docs/offline-browser.md): with
 * `progressive: true`, a model that is not cached is first loaded from its head artifact
 * (GET /api/v1/artifacts/models/{id}/head: the most frequent 50,000 rows, build/model-heads.ts)
 * and scores at once, while the full artifact downloads in the background.
 *
 * PartialIndex is the head seen as the full model: the same rows (row r is the same word, int8
 * row and scale in both), and `size` and `manifest` of the full model, so rank factors
 * (1 - ln(rank) / ln(V), SIF weights) and the normalization sample (the 20,000 most frequent
 * rows) are the full model's. A result computed from it therefore equals the complete model's
 * unless the computation looked for something the head may lack: a word not found in the head
 * (it may be one of the other rows) or a scan over the whole vocabulary (nearest words,
 * prefixes). Each such access counts in `incompleteAccesses()`; a request during which the
 * count did not move has its final answer already, the others get the complete model's answer
 * once it is in (browser/src/final-answer.ts). Runtime-agnostic: the rows come from any
 * EmbeddingModel of a head artifact.
 *
 * With a RowSource the head's rows need not be in its matrix yet: every access to a row makes it
 * present first (the browser reads a cached head's vocabulary and then only the rows a request
 * uses from the head's file, browser/src/head-file.ts), so results are the same bytes either way.
 */
import type { EmbeddingModel } from './model';
import type { ModelManifest, TopKOptions, TopKResult, VectorIndex } from './types';

/** Manifest of a head artifact: the full model's manifest rides along as `partialOf`. */
export type HeadManifest = ModelManifest & { partialOf?: ModelManifest };

let incomplete = 0;

/** Fills a head's matrix rows (and their scales) on first use. */
export interface RowSource {
  /** Makes these rows of the head present (each in 0..head size - 1); throws when they cannot be read. */
  ensure(rows: ArrayLike<number>): void;
  /** Makes every row of the head present. */
  ensureAll(): void;
}

/** Accesses that a head could answer differently from the full model, since the worker started. */
export function incompleteAccesses(): number {
  return incomplete;
}

export class PartialIndex implements VectorIndex {
  readonly manifest: ModelManifest;
  readonly size: number;
  readonly dims: number;
  /** Rows present (the head's size). */
  readonly rows: number;

  constructor(
    readonly head: EmbeddingModel,
    full: ModelManifest,
    private readonly source?: RowSource,
  ) {
    this.manifest = full;
    this.size = full.vocabularySize;
    this.dims = head.dims;
    this.rows = head.size;
  }

  word(row: number): string {
    if (row >= this.rows && row < this.size) {
      // A scan over the whole vocabulary: the rows past the head are not here yet.
      incomplete++;
      return '';
    }
    return this.head.word(row);
  }

  rowOf(word: string): number {
    // Only the word itself is final here: a miss may be a row past the head, which the full
    // model would find before trying the word's key and folded form (core/word-lookup.ts).
    const row = this.head.entryRow(word);
    if (row < 0) incomplete++;
    return row < 0 ? this.head.rowOf(word) : row;
  }

  prefixRows(prefix: string, limit: number, accept?: (row: number) => boolean): number[] {
    incomplete++;
    return this.head.prefixRows(prefix, limit, accept);
  }

  flags(row: number): number {
    return this.head.flags(row);
  }

  antonyms(row: number): number[] {
    // The head keeps only pairs inside it.
    incomplete++;
    return this.head.antonyms(row);
  }

  foldedPrefixRows(prefix: string): Uint32Array {
    incomplete++;
    return this.head.foldedPrefixRows(prefix);
  }

  vector(row: number): Float32Array {
    if (row >= 0 && row < this.rows) this.need([row]);
    return this.head.vector(row);
  }

  centroid(rows: ArrayLike<number>): Float32Array | null {
    const inside = this.inHead(rows);
    this.need(inside);
    return this.head.centroid(inside);
  }

  topK(query: Float32Array, k: number, options?: TopKOptions): TopKResult {
    incomplete++;
    const rows = options?.rows ? this.inHead(options.rows) : undefined;
    this.need(rows);
    return this.head.topK(query, k, { ...options, ...(rows ? { rows } : {}) });
  }

  scores(query: Float32Array, rows: ArrayLike<number>): Float32Array {
    const inside = this.inHead(rows);
    this.need(inside);
    if (inside === rows) return this.head.scores(query, rows);
    // Rows past the head score NaN (never reached: rows come from this index).
    const got = this.head.scores(query, inside);
    const out = new Float32Array(rows.length).fill(Number.NaN);
    for (let i = 0, j = 0; i < rows.length; i++) if (rows[i]! < this.rows) out[i] = got[j++]!;
    return out;
  }

  similarityMatrix(rows: ArrayLike<number>): Float32Array {
    if (this.inHead(rows) !== rows) throw new RangeError('similarityMatrix: a row past the head');
    this.need(rows);
    return this.head.similarityMatrix(rows);
  }

  /**
   * Makes rows of the head present (all when `rows` is undefined). A failed read counts as an
   * incomplete access, so the request is answered again from the complete model.
   */
  private need(rows: ArrayLike<number> | undefined): void {
    if (!this.source) return;
    try {
      if (rows) this.source.ensure(rows);
      else this.source.ensureAll();
    } catch (err) {
      incomplete++;
      throw err;
    }
  }

  /** The rows inside the head (the same object when all are). */
  private inHead(rows: ArrayLike<number>): ArrayLike<number> {
    for (let i = 0; i < rows.length; i++) {
      if (rows[i]! >= this.rows) {
        incomplete++;
        return Array.from(rows).filter((r) => r < this.rows);
      }
    }
    return rows;
  }
}
