/**
 * A copy of a cached model's head (model-store.ts) in the Origin Private File System: Chromium
 * reads a 6.7 MB file there with a read-only sync access handle in 36 ms where IndexedDB takes
 * 73-100 ms (docs/benchmarks.md, a Web Worker at load 3), and the head's read is what the first
 * score from the cache waits for. IndexedDB stays the cache of record (the `model-head` entry);
 * this file is only read first when it is there and intact (its length and layout check out),
 * and dropped with the model.
 *
 * File `{id}@{version}.head`, percent-encoded: u32 length of a UTF-8 JSON layout, the layout
 * (manifest, size, dims, sha256, section offsets), zero padding to 16, the head's one buffer.
 */
import type { ParsedArtifact } from '../../core/artifact';
import type { StoredModel } from './model-store';

interface SyncHandle {
  getSize(): number;
  read(buffer: ArrayBufferView, options?: { at: number }): number;
  close(): void;
}
type ReadOnlyOpen = (options?: { mode: 'read-only' }) => Promise<SyncHandle>;

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

async function root(): Promise<FileSystemDirectoryHandle | null> {
  try {
    return typeof navigator !== 'undefined' && navigator.storage?.getDirectory
      ? await navigator.storage.getDirectory()
      : null;
  } catch {
    return null;
  }
}

/** Writes the head's copy (replacing an older one); false when OPFS is not available. */
export async function writeHeadFile(id: string, version: string, head: StoredModel): Promise<boolean> {
  const dir = await root();
  if (!dir) return false;
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
  const json = new TextEncoder().encode(JSON.stringify(layout));
  const start = Math.ceil((4 + json.length) / 16) * 16;
  const prefix = new Uint8Array(start);
  new DataView(prefix.buffer).setUint32(0, json.length, true);
  prefix.set(json, 4);
  try {
    const file = await dir.getFileHandle(fileName(id, version), { create: true });
    const w = await file.createWritable();
    await w.write(prefix);
    await w.write(new Uint8Array(buffer));
    await w.close();
    return true;
  } catch {
    return false;
  }
}

/** The head's copy, or undefined (none, not readable now, or not intact). */
export async function readHeadFile(id: string, version: string): Promise<StoredModel | undefined> {
  const dir = await root();
  if (!dir) return undefined;
  let bytes: Uint8Array;
  try {
    const file = await dir.getFileHandle(fileName(id, version));
    const open = (file as unknown as { createSyncAccessHandle?: ReadOnlyOpen }).createSyncAccessHandle;
    if (open) {
      const h = await open.call(file, { mode: 'read-only' });
      try {
        bytes = new Uint8Array(h.getSize());
        if (h.read(bytes, { at: 0 }) !== bytes.length) return undefined;
      } finally {
        h.close();
      }
    } else {
      bytes = new Uint8Array(await (await file.getFile()).arrayBuffer());
    }
  } catch {
    return undefined;
  }
  try {
    const n = new DataView(bytes.buffer).getUint32(0, true);
    const layout = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n))) as Layout;
    const start = Math.ceil((4 + n) / 16) * 16;
    if (bytes.length - start !== layout.byteLength) return undefined;
    const views = {} as Record<Section, ArrayBufferView>;
    for (const name of Object.keys(VIEWS) as Section[]) {
      const [offset, count] = layout.sections[name];
      views[name] = new VIEWS[name](bytes.buffer as ArrayBuffer, start + offset, count);
    }
    return {
      ...(views as unknown as Pick<ParsedArtifact, Section>),
      manifest: layout.manifest,
      size: layout.size,
      dims: layout.dims,
      byteLength: layout.byteLength,
      format: layout.format as StoredModel['format'],
      sha256: layout.sha256,
    };
  } catch {
    return undefined;
  }
}

/** Removes the head copies of a model (all versions, or one). */
export async function removeHeadFiles(id: string, version?: string): Promise<void> {
  const dir = await root();
  if (!dir) return;
  const prefix = `${encodeURIComponent(id)}@`;
  try {
    const names: string[] = [];
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) {
      if (version === undefined ? name.startsWith(prefix) : name === fileName(id, version)) names.push(name);
    }
    await Promise.all(names.map((name) => dir.removeEntry(name).catch(() => {})));
  } catch {
    // nothing to remove
  }
}
