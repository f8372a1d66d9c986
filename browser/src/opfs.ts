/**
 * Copies of cached artifacts in the Origin Private File System, read before IndexedDB: Chromium
 * reads a file there with a read-only sync access handle (Web Workers) three to four times as fast
 * as IndexedDB returns the same bytes (a 6.9 MB head in 30-37 ms, 2.2 MB of language data in about
 * 40 ms from IndexedDB, docs/offline-browser.md), and these reads are what a first score from the
 * cache waits for. IndexedDB stays the cache of record; a copy is only read when it is there and
 * intact, and written again from IndexedDB when it is not.
 *
 * One file per copy: u32 length of a UTF-8 JSON description, the description, zero padding to 16,
 * the bytes.
 */

interface SyncHandle {
  getSize(): number;
  read(buffer: ArrayBufferView, options?: { at: number }): number;
  close(): void;
}
type ReadOnlyOpen = (options?: { mode: 'read-only' }) => Promise<SyncHandle>;

let root: Promise<FileSystemDirectoryHandle | null> | undefined;

/**
 * The origin's OPFS directory, asked once (early-reads.ts asks as the worker starts): a later
 * read does not wait for the browser's answer again.
 */
export function opfsRoot(): Promise<FileSystemDirectoryHandle | null> {
  root ??= (async () => {
    try {
      return typeof navigator !== 'undefined' && navigator.storage?.getDirectory
        ? await navigator.storage.getDirectory()
        : null;
    } catch {
      return null;
    }
  })();
  return root;
}

/** Writes (replaces) a copy; false when OPFS is not available or the write failed. */
export async function writeCopy(name: string, description: unknown, bytes: Uint8Array<ArrayBuffer>): Promise<boolean> {
  const dir = await opfsRoot();
  if (!dir) return false;
  const json = new TextEncoder().encode(JSON.stringify(description));
  const start = Math.ceil((4 + json.length) / 16) * 16;
  const prefix = new Uint8Array(start);
  new DataView(prefix.buffer).setUint32(0, json.length, true);
  prefix.set(json, 4);
  try {
    const file = await dir.getFileHandle(name, { create: true });
    const w = await file.createWritable();
    await w.write(prefix);
    await w.write(bytes);
    await w.close();
    return true;
  } catch {
    return false;
  }
}

/** A copy's description and its bytes (a buffer of their own, offset 0). */
export interface Copy<D> {
  description: D;
  bytes: Uint8Array<ArrayBuffer>;
}

/**
 * Where some ranges of a copy's bytes go instead of `bytes`: read straight into other memory
 * (`into`, e.g. a model's rows into WASM memory: no copy), or not read now (`skip` bytes, read later
 * through an open copy). The pages of those ranges in `bytes` are never touched.
 */
export type Placement = { offset: number; into: Uint8Array } | { offset: number; skip: number };

/** A copy open for reads (a read-only sync access handle) until close(). */
export interface OpenCopy {
  /** Reads into.length bytes at `offset` of the copy's bytes; false when cut short or closed. */
  read(into: Uint8Array, offset: number): boolean;
  close(): void;
}

const rangeLength = (r: Placement): number => ('into' in r ? r.into.length : r.skip);

/**
 * A copy's description and its bytes, or undefined (none, not readable now, or cut short).
 * `place` may send ranges elsewhere (Placement). With `keepOpen` (and a skipped range) the copy
 * stays open for later reads and is returned as `open` (only with a sync access handle: without
 * one, every range is read now).
 */
export async function readCopy<D>(
  name: string,
  place?: (description: D) => Placement[] | undefined,
  keepOpen = false,
): Promise<(Copy<D> & { open?: OpenCopy }) | undefined> {
  const dir = await opfsRoot();
  if (!dir) return undefined;
  try {
    const file = await dir.getFileHandle(name);
    const openHandle = (file as unknown as { createSyncAccessHandle?: ReadOnlyOpen }).createSyncAccessHandle;
    if (openHandle) {
      const h = await openHandle.call(file, { mode: 'read-only' });
      let kept = false;
      try {
        const size = h.getSize();
        const head = new Uint8Array(4);
        if (size < 4 || h.read(head, { at: 0 }) !== 4) return undefined;
        const n = new DataView(head.buffer).getUint32(0, true);
        const start = Math.ceil((4 + n) / 16) * 16;
        if (start > size) return undefined;
        const json = new Uint8Array(n);
        if (h.read(json, { at: 4 }) !== n) return undefined;
        const description = JSON.parse(new TextDecoder().decode(json)) as D;
        // The bytes are read into their own buffer (no copy of a larger one afterwards), the placed
        // ranges into theirs: the gaps between them go to `bytes`.
        const bytes = new Uint8Array(size - start);
        const ranges = (place?.(description) ?? []).slice().sort((a, b) => a.offset - b.offset);
        let at = 0;
        let skipped = false;
        for (const r of [...ranges, { offset: bytes.length, skip: 0 }]) {
          if (r.offset < at || r.offset + rangeLength(r) > bytes.length) return undefined;
          const gap = bytes.subarray(at, r.offset);
          if (gap.length > 0 && h.read(gap, { at: start + at }) !== gap.length) return undefined;
          if ('into' in r && r.into.length > 0 && h.read(r.into, { at: start + r.offset }) !== r.into.length)
            return undefined;
          if ('skip' in r && r.skip > 0) skipped = true;
          at = r.offset + rangeLength(r);
        }
        if (!(keepOpen && skipped)) return { description, bytes };
        kept = true;
        let closed = false;
        const open: OpenCopy = {
          read: (into, offset) =>
            !closed &&
            offset >= 0 &&
            offset + into.length <= bytes.length &&
            h.read(into, { at: start + offset }) === into.length,
          close: () => {
            if (closed) return;
            closed = true;
            h.close();
          },
        };
        return { description, bytes, open };
      } finally {
        if (!kept) h.close();
      }
    }
    const all = new Uint8Array(await (await file.getFile()).arrayBuffer());
    if (all.length < 4) return undefined;
    const n = new DataView(all.buffer).getUint32(0, true);
    const start = Math.ceil((4 + n) / 16) * 16;
    if (start > all.length) return undefined;
    const description = JSON.parse(new TextDecoder().decode(all.subarray(4, 4 + n))) as D;
    const bytes = all.slice(start);
    for (const r of place?.(description) ?? []) {
      if (r.offset < 0 || r.offset + rangeLength(r) > bytes.length) return undefined;
      if ('into' in r) r.into.set(bytes.subarray(r.offset, r.offset + r.into.length));
    }
    return { description, bytes };
  } catch {
    return undefined;
  }
}

/** Removes the copies whose names `match` accepts. */
export async function removeCopies(match: (name: string) => boolean): Promise<void> {
  const dir = await opfsRoot();
  if (!dir) return;
  try {
    const names: string[] = [];
    for await (const name of (dir as unknown as { keys(): AsyncIterable<string> }).keys())
      if (match(name)) names.push(name);
    await Promise.all(names.map((name) => dir.removeEntry(name).catch(() => {})));
  } catch {
    // nothing to remove
  }
}

/** Removes one copy (none there: nothing to do). */
export async function removeCopy(name: string): Promise<void> {
  await (await opfsRoot())?.removeEntry(name).catch(() => {});
}
