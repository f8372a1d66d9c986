/**
 * A copy of a cached model's head (model-store.ts) in the Origin Private File System (opfs.ts):
 * Chromium reads a 6.7 MB file there with a read-only sync access handle in 36 ms where IndexedDB
 * takes 73-100 ms (docs/benchmarks.md, a Web Worker at load 3), and the head's read is what the
 * first score from the cache waits for. IndexedDB stays the cache of record (the `model-head`
 * entry); this file is only read first when it is there and intact (its length and layout check
 * out), and dropped with the model.
 *
 * File `{id}@{version}.head`, percent-encoded (opfs.ts container): the description is the layout
 * (manifest, size, dims, sha256, section offsets), the bytes the head's one buffer.
 */
import type { ParsedArtifact } from '../../core/artifact';
import type { MatrixSlot } from '../../core/kernels';
import type { StoredModel } from './model-store';
import { readCopy, removeCopies, writeCopy } from './opfs';

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

const fileName = (id: string, version: string): string =>
  `${encodeURIComponent(id)}@${encodeURIComponent(version)}.head`;

/** Writes the head's copy (replacing an older one); false when OPFS is not available. */
export async function writeHeadFile(id: string, version: string, head: StoredModel): Promise<boolean> {
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
  return writeCopy(fileName(id, version), layout, new Uint8Array(buffer));
}

/** A head read from its copy: the rows and scales already in a WASM matrix slot when one was given. */
export type HeadRead = StoredModel & { matrix?: MatrixSlot };

/** Where readHeadFile may put a head's rows and scales (WASM memory of the kernels). */
export interface MatrixPlace {
  matrix(n: number, dims: number): MatrixSlot;
  free(slot: MatrixSlot): void;
}

/**
 * The head's copy, or undefined (none, not readable now, or not intact). With `place`, its rows
 * and scales are read straight into the matrix slot place.matrix(size, dims) hands out (WASM
 * memory: no copy afterwards) and the result's `rows`/`scales` are empty; on failure the slot is freed.
 */
export async function readHeadFile(id: string, version: string, place?: MatrixPlace): Promise<HeadRead | undefined> {
  let matrix: MatrixSlot | undefined;
  const ranges = (layout: Layout) => {
    if (!place || !(layout.size > 0 && layout.dims > 0)) return undefined;
    const [rowsAt, rowsCount] = layout.sections.rows;
    const [scalesAt, scalesCount] = layout.sections.scales;
    if (rowsCount !== layout.size * layout.dims || scalesCount !== layout.size) return undefined;
    matrix = place.matrix(layout.size, layout.dims);
    const rows = matrix.rows();
    const scales = matrix.scales();
    return [
      { offset: rowsAt, into: new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength) },
      { offset: scalesAt, into: new Uint8Array(scales.buffer, scales.byteOffset, scales.byteLength) },
    ];
  };
  const copy = await readCopy<Layout>(fileName(id, version), ranges);
  const out = copy ? headOf(copy.description, copy.bytes, matrix) : undefined;
  if (!out && matrix) place!.free(matrix);
  return out;
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

/** Removes the head copies of a model (all versions, or one). */
export async function removeHeadFiles(id: string, version?: string): Promise<void> {
  const prefix = `${encodeURIComponent(id)}@`;
  await removeCopies((name) =>
    version === undefined ? name.startsWith(prefix) && name.endsWith('.head') : name === fileName(id, version),
  );
}
