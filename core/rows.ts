/**
 * Rows of a model carried between isolates: a model host answers another host's seed lookups and
 * translations with the rows and vectors of just the words asked (worker/hosts/), so a projected
 * model's host needs no copy of its English companion. The vectors are the holder's own
 * (dequantized) floats, so scores equal those computed beside the model, to the bit.
 */
import type { RowSource, VectorIndex } from './types';

/** The rows of some words of a model, as structured clone carries them. */
export interface RowsPayload {
  dims: number;
  /** Words as asked (trimmed), those the model has. */
  words: string[];
  /** Each word's row in the model. */
  rows: number[];
  /** The rows' vectors, `dims` floats each, in the order of `rows`. */
  vectors: Float32Array;
}

/** The rows of `words` that `index` has. */
export function rowsPayload(index: RowSource, words: readonly string[]): RowsPayload {
  const found: string[] = [];
  const rows: number[] = [];
  const seen = new Set<string>();
  for (const w of words) {
    if (seen.has(w)) continue;
    seen.add(w);
    const r = index.rowOf(w);
    if (r < 0) continue;
    found.push(w);
    rows.push(r);
  }
  // A row-sharded model's view fetches them together (VectorIndex.prefetch).
  if (rows.length > 0) (index as Partial<VectorIndex>).prefetch?.(rows);
  const vectors = new Float32Array(rows.length * index.dims);
  rows.forEach((r, i) => vectors.set(index.vector(r), i * index.dims));
  return { dims: index.dims, words: found, rows, vectors };
}

/** A RowSource over fetched rows: knows the words fetched, nothing else. */
export class FetchedRows implements RowSource {
  readonly dims: number;
  private readonly rowByWord = new Map<string, number>();
  private readonly at = new Map<number, number>();

  constructor(private readonly payload: RowsPayload) {
    this.dims = payload.dims;
    payload.words.forEach((w, i) => {
      this.rowByWord.set(w, payload.rows[i]!);
      this.at.set(payload.rows[i]!, i);
    });
  }

  rowOf(word: string): number {
    return this.rowByWord.get(word) ?? -1;
  }

  vector(row: number): Float32Array {
    const i = this.at.get(row);
    if (i === undefined) throw new RangeError(`row ${row} was not fetched`);
    return this.payload.vectors.subarray(i * this.dims, (i + 1) * this.dims);
  }
}
