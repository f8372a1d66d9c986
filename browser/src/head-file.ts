/**
 * A copy of a cached model's head (model-store.ts) in the Origin Private File System (opfs.ts):
 * Chromium reads a 6.7 MB file there with a read-only sync access handle in 36 ms where IndexedDB
 * takes 73-100 ms (docs/benchmarks.md, a Web Worker at load 3), and the head's read is what the
 * first score from the cache waits for. IndexedDB stays the cache of record (the `model-head`
 * entry); this file is only read first when it is there and intact (its length and layout check
 * out), and dropped with the model.
 *
 * File `{id}.head`, percent-encoded (opfs.ts container): the description is the layout
 * (manifest, size, dims, sha256, section offsets), the bytes the head's one buffer. One file per
 * model, not per version: a load starts reading it while IndexedDB is still looking up which
 * version is cached (model-loader.ts), and keeps it only when its sha256 is that version's. Copies named
 * `{id}@{version}.head` (earlier releases) are removed when the new one is written.
 */
import type { ParsedArtifact } from '../../core/artifact';
import type { MatrixSlot } from '../../core/kernels';
import type { RowSource } from '../../core/partial-index';
import type { StoredModel } from './model-store';
import { readCopy, removeCopies, writeCopy, type OpenCopy, type Placement } from './opfs';

const VIEWS = {
  rows: Int8Array,
  scales: Float32Array,
  wordLengths: Uint8Array,
  vocab: Uint8Array,
  wordOffsets: Uint32Array,
  sortedIndex: Uint32Array,
  flags: Uint16Array,
  foldedIndex: Uint32Array,
  antonyms: Uint32Array,
} as const;
type Section = keyof typeof VIEWS;

interface Layout {
  format: number;
  sha256: string;
  manifest: ParsedArtifact['manifest'];
  size: number;
  dims: number;
  byteLength: number;
  /** [byte offset in the buffer, element count] of each section. */
  sections: Record<Section, [number, number]>;
}

const fileName = (id: string): string => `${encodeURIComponent(id)}.head`;
/** The per-version copies of earlier releases. */
const isLegacyName = (id: string, name: string): boolean =>
  name.startsWith(`${encodeURIComponent(id)}@`) && name.endsWith('.head');

/** Writes the head's copy (replacing the model's older one); false when OPFS is not available. */
export async function writeHeadFile(id: string, head: StoredModel): Promise<boolean> {
  const buffer = head.rows.buffer as ArrayBuffer;
  const sections = {} as Layout['sections'];
  for (const name of Object.keys(VIEWS) as Section[]) {
    const v = head[name];
    if (v.buffer !== buffer) return false; // not a packed head (core/model-head.ts)
    sections[name] = [v.byteOffset, v.length];
  }
  const layout: Layout = {
    format: head.format,
    sha256: head.sha256,
    manifest: head.manifest,
    size: head.size,
    dims: head.dims,
    byteLength: buffer.byteLength,
    sections,
  };
  const written = await writeCopy(fileName(id), layout, new Uint8Array(buffer));
  if (written) await removeCopies((name) => isLegacyName(id, name));
  return written;
}

/**
 * A head read from its copy. With a WASM matrix slot (`matrix`), its rows and scales are in that
 * slot, or, with `rowSource`, are read into it from the still open copy when first used.
 */
export type HeadRead = StoredModel & { matrix?: MatrixSlot; rowSource?: HeadRows };

/** Where readHeadFile may put a head's rows and scales (WASM memory of the kernels). */
export interface MatrixPlace {
  matrix(n: number, dims: number): MatrixSlot;
  free(slot: MatrixSlot): void;
}

/**
 * The head's copy, or undefined (none, not readable now, or not intact); the caller compares its
 * sha256 with the cached version's. With `place`, its rows and scales go into the matrix slot
 * place.matrix(size, dims) hands out (WASM memory: no copy afterwards; the result's own
 * `rows`/`scales` are empty): read when first used (the result's `rowSource`) while the copy
 * stays open, or at once where files cannot be kept open (no sync access handles). A first score
 * from the cache then reads the vocabulary and the few rows it needs instead of all 5 MB of rows,
 * whose fresh WASM pages cost more than the read itself (docs/offline-browser.md). On failure the
 * slot is freed.
 */
export async function readHeadFile(id: string, place?: MatrixPlace): Promise<HeadRead | undefined> {
  let matrix: MatrixSlot | undefined;
  const ranges = (layout: Layout): Placement[] | undefined => {
    if (!place || !(layout.size > 0 && layout.dims > 0)) return undefined;
    const [rowsAt, rowsCount] = layout.sections.rows;
    const [scalesAt, scalesCount] = layout.sections.scales;
    if (rowsCount !== layout.size * layout.dims || scalesCount !== layout.size) return undefined;
    matrix = place.matrix(layout.size, layout.dims);
    return [
      { offset: rowsAt, skip: rowsCount },
      { offset: scalesAt, skip: scalesCount * 4 },
    ];
  };
  const copy = await readCopy<Layout>(fileName(id), ranges, true);
  let out = copy ? headOf(copy.description, copy.bytes, matrix) : undefined;
  if (out && matrix) {
    if (copy!.open) out = { ...out, rowSource: new HeadRows(copy!.open, copy!.description, matrix) };
    else fill(matrix, copy!.description, copy!.bytes); // read whole: the rows are in `bytes`
  } else copy?.open?.close();
  if (!out && matrix) place!.free(matrix);
  return out;
}

/** A head read that is not used: its copy is closed and its matrix slot freed. */
export function discardHead(head: HeadRead | undefined, free: (slot: MatrixSlot) => void): void {
  head?.rowSource?.close();
  if (head?.matrix) free(head.matrix);
}

/** Copies a head's rows and scales from its bytes into its matrix slot. */
function fill(matrix: MatrixSlot, layout: Layout, bytes: Uint8Array): void {
  const [rowsAt, rowsCount] = layout.sections.rows;
  const [scalesAt, scalesCount] = layout.sections.scales;
  const rows = matrix.rows();
  rows.set(new Int8Array(bytes.buffer, bytes.byteOffset + rowsAt, rowsCount));
  const scales = matrix.scales();
  new Uint8Array(scales.buffer, scales.byteOffset, scalesCount * 4).set(
    bytes.subarray(scalesAt, scalesAt + scalesCount * 4),
  );
}

/** Rows between two wanted ones read through rather than in a read of their own (a read costs a system call). */
const READ_THROUGH_ROWS = 256;

/**
 * A head's rows and scales read from its open copy into its matrix slot on first use
 * (core/partial-index.ts RowSource). The copy is closed once every row is in, or by close().
 */
export class HeadRows implements RowSource {
  private readonly present: Uint8Array;
  private missing: number;

  constructor(
    private readonly copy: OpenCopy,
    private readonly layout: Layout,
    private readonly matrix: MatrixSlot,
  ) {
    this.present = new Uint8Array(layout.size);
    this.missing = layout.size;
  }

  ensure(rows: ArrayLike<number>): void {
    if (this.missing === 0) return;
    const want: number[] = [];
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (r >= 0 && r < this.present.length && this.present[r] === 0) want.push(r);
    }
    this.readRuns(want.sort((a, b) => a - b));
  }

  ensureAll(): void {
    if (this.missing === 0) return;
    const want: number[] = [];
    for (let r = 0; r < this.present.length; r++) if (this.present[r] === 0) want.push(r);
    this.readRuns(want);
  }

  /** Rows read so far. */
  get rowsRead(): number {
    return this.present.length - this.missing;
  }

  close(): void {
    this.copy.close();
  }

  /** Reads the ascending rows `want`, in runs. */
  private readRuns(want: number[]): void {
    let i = 0;
    while (i < want.length) {
      let j = i + 1;
      while (j < want.length && want[j]! - want[j - 1]! <= READ_THROUGH_ROWS) j++;
      this.read(want[i]!, want[j - 1]! + 1);
      i = j;
    }
  }

  /** Reads rows a..b-1 and their scales (rows already present are read again: the same bytes). */
  private read(a: number, b: number): void {
    const { dims } = this.layout;
    const [rowsAt] = this.layout.sections.rows;
    const [scalesAt] = this.layout.sections.scales;
    // Views made now: WASM memory may have grown (a new buffer) since the last read.
    const rows = this.matrix.rows();
    const scales = this.matrix.scales();
    const rowBytes = new Uint8Array(rows.buffer, rows.byteOffset + a * dims, (b - a) * dims);
    const scaleBytes = new Uint8Array(scales.buffer, scales.byteOffset + a * 4, (b - a) * 4);
    if (!this.copy.read(rowBytes, rowsAt + a * dims) || !this.copy.read(scaleBytes, scalesAt + a * 4))
      throw new Error(`the cached head could not be read (rows ${a}..${b - 1})`);
    for (let r = a; r < b; r++) {
      if (this.present[r] === 0) {
        this.present[r] = 1;
        this.missing--;
      }
    }
    if (this.missing === 0) this.copy.close();
  }
}

function headOf(layout: Layout, bytes: Uint8Array<ArrayBuffer>, matrix: MatrixSlot | undefined): HeadRead | undefined {
  try {
    if (bytes.length !== layout.byteLength) return undefined;
    const views = {} as Record<Section, ArrayBufferView>;
    for (const name of Object.keys(VIEWS) as Section[]) {
      const [offset, count] = layout.sections[name];
      // Read into the matrix slot, not into `bytes` (whose pages there were never touched).
      views[name] =
        matrix && (name === 'rows' || name === 'scales')
          ? new VIEWS[name](0)
          : new VIEWS[name](bytes.buffer, offset, count);
    }
    return {
      ...(views as unknown as Pick<ParsedArtifact, Section>),
      manifest: layout.manifest,
      size: layout.size,
      dims: layout.dims,
      byteLength: layout.byteLength,
      format: layout.format as StoredModel['format'],
      sha256: layout.sha256,
      ...(matrix ? { matrix } : {}),
    };
  } catch {
    return undefined;
  }
}

/** Removes the head copy of a model (and any of an earlier release's per-version copies). */
export async function removeHeadFiles(id: string): Promise<void> {
  await removeCopies((name) => name === fileName(id) || isLegacyName(id, name));
}
