/**
 * A copy of a cached small artifact (the language data) in the Origin Private File System, read
 * with a sync access handle like the head's copy (head-file.ts): in `npm run bench:browser` the
 * 2.2 MB IndexedDB record of the English language data took 50-105 ms to read beside the head,
 * the longest wait before a cached first score. IndexedDB stays the cache of record: the copy is
 * read only on a cached model's load (its pointer in IndexedDB, so the database is intact), is
 * removed before IndexedDB gets a new version and written again after it.
 *
 * File `{name}.artifact`: u32 length of a UTF-8 JSON header (etag, sha256, headers, storedAt,
 * byteLength), the header, zero padding to 16, the bytes.
 */
import type { StoredArtifact } from './cache';

interface SyncHandle {
  getSize(): number;
  read(buffer: ArrayBufferView, options?: { at: number }): number;
  close(): void;
}
type ReadOnlyOpen = (options?: { mode: 'read-only' }) => Promise<SyncHandle>;

const fileName = (name: string): string => `${encodeURIComponent(name)}.artifact`;

async function root(): Promise<FileSystemDirectoryHandle | null> {
  try {
    return typeof navigator !== 'undefined' && navigator.storage?.getDirectory
      ? await navigator.storage.getDirectory()
      : null;
  } catch {
    return null;
  }
}

/** The copy, or undefined (none, not readable with a sync handle, or not intact). */
export async function readArtifactFile(name: string): Promise<StoredArtifact | undefined> {
  const dir = await root();
  if (!dir) return undefined;
  try {
    const file = await dir.getFileHandle(fileName(name));
    const open = (file as unknown as { createSyncAccessHandle?: ReadOnlyOpen }).createSyncAccessHandle;
    if (!open) return undefined;
    const h = await open.call(file, { mode: 'read-only' });
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(h.getSize());
      if (h.read(bytes, { at: 0 }) !== bytes.length) return undefined;
    } finally {
      h.close();
    }
    const n = new DataView(bytes.buffer).getUint32(0, true);
    const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + n))) as Omit<StoredArtifact, 'bytes'> & {
      byteLength: number;
    };
    const start = Math.ceil((4 + n) / 16) * 16;
    if (bytes.length - start !== meta.byteLength || typeof meta.etag !== 'string') return undefined;
    return {
      etag: meta.etag,
      sha256: meta.sha256,
      headers: meta.headers,
      storedAt: meta.storedAt,
      bytes: bytes.buffer.slice(start) as ArrayBuffer,
    };
  } catch {
    return undefined;
  }
}

/** Writes the copy (replacing an older one); false when OPFS is not available. */
export async function writeArtifactFile(name: string, artifact: StoredArtifact): Promise<boolean> {
  const dir = await root();
  if (!dir) return false;
  const { bytes, ...rest } = artifact;
  const json = new TextEncoder().encode(JSON.stringify({ ...rest, byteLength: bytes.byteLength }));
  const start = Math.ceil((4 + json.length) / 16) * 16;
  const prefix = new Uint8Array(start);
  new DataView(prefix.buffer).setUint32(0, json.length, true);
  prefix.set(json, 4);
  try {
    const file = await dir.getFileHandle(fileName(name), { create: true });
    const w = await file.createWritable();
    await w.write(prefix);
    await w.write(new Uint8Array(bytes));
    await w.close();
    return true;
  } catch {
    return false;
  }
}

export async function removeArtifactFile(name: string): Promise<void> {
  const dir = await root();
  await dir?.removeEntry(fileName(name)).catch(() => {});
}
