/**
 * Model artifact: one binary file holding a whole embedding model, loadable from a single
 * ArrayBuffer (an R2 object, a fetch body, an IndexedDB value) with zero-copy typed-array views.
 *
 * Format version 2 (1 plus the vocabulary sections VFLG, FIDX, ANTO). All integers little-endian. Every section starts at a multiple of 16 bytes
 * (so Uint32Array / Float32Array / Int8Array views, and WASM SIMD loads, need no copy); gaps
 * and the end of the file are zero-padded to 16 bytes.
 *
 *   offset size  field
 *   0      8     magic "EMBEDART" (ASCII)
 *   8      4     formatVersion (u32) = 2
 *   12     4     sectionCount (u32)
 *   16     4     fileBytes (u32): total length of the artifact
 *   20     4     vocabularySize n (u32)
 *   24     4     dimensions d (u32)
 *   28     4     flags (u32) = 0
 *   32     4     contentChecksum (u32): MurmurHash3 of the non-manifest sections' checksums
 *                (u32 each, in table order); the manifest carries it as "murmur3:<8 hex>"
 *   36     24    reserved, zero
 *   60     4     headerChecksum (u32): MurmurHash3 of bytes [0, 60) followed by the section table
 *   64     16*k  section table, one entry per section:
 *                  tag (4 ASCII bytes), offset (u32), length (u32), checksum (u32)
 *
 * Sections of version 2 (all required; unknown tags are ignored):
 *   MANI  manifest: UTF-8 JSON of core/types.ts ModelManifest
 *   VLEN  u8[n]     UTF-8 byte length of each word (a word is at most 255 bytes)
 *   VOCB  u8[sum]   the words' UTF-8 bytes concatenated, in frequency order (modelRank = row + 1)
 *   SIDX  u32[n]    row ids sorted by key(word) = UTF-8 bytes of word.toLowerCase(), compared
 *                   bytewise (= Unicode code point order); equal keys by ascending row id.
 *                   Exact lookup and prefix ranges are binary searches over it.
 *   SCAL  f32[n]    per-row scale: unit vector of row r ~= ROWS[r] * SCAL[r]
 *   ROWS  i8[n*d]   row-major quantized unit vectors
 *   VFLG  u16[n]    vocabulary flags per row (core/vocab-quality.ts VOCAB_FLAG), computed once at
 *                   import from the language's word lists (build/vocab-flags.ts)
 *   FIDX  u32[n]    row ids sorted by foldKey(word) (lower-cased, diacritics folded: "café" ->
 *                   "cafe"), equal keys by row id: autocomplete's prefix ranges
 *   ANTO  u32[2m]   antonym links as (row, row) pairs sorted by first then second row, both
 *                   directions present (WordNet where the language has it; empty otherwise)
 *
 * Checksums are MurmurHash3_x86_32 (seed 0) over the bytes zero-padded to a multiple of 4,
 * read as little-endian u32 words. A section's checksum covers its `length` bytes (padded).
 *
 * Word start offsets are not stored: the loader derives them from VLEN with a prefix sum
 * (< 1 ms for 341k words), which keeps the default model under 40 MB.
 *
 * No JavaScript object per word is created anywhere: words are decoded on demand from VOCB.
 */
import type { ModelManifest } from './types';
import { foldKey, VOCAB_FLAG } from './vocab-quality';

export const ARTIFACT_MAGIC = 'EMBEDART';
export const ARTIFACT_FORMAT_VERSION = 2;
export const HEADER_BYTES = 64;
export const SECTION_ENTRY_BYTES = 16;
export const SECTION_ALIGN = 16;
export const MAX_WORD_BYTES = 255;
export const QUANTIZATION = 'int8-rowscale' as const;

/** Byte offsets of header fields (documented above). */
export const HEADER = {
  magic: 0,
  formatVersion: 8,
  sectionCount: 12,
  fileBytes: 16,
  vocabularySize: 20,
  dimensions: 24,
  flags: 28,
  contentChecksum: 32,
  headerChecksum: 60,
} as const;

export const SECTION_TAGS = ['MANI', 'VLEN', 'VOCB', 'SIDX', 'SCAL', 'ROWS', 'VFLG', 'FIDX', 'ANTO'] as const;
export type SectionTag = (typeof SECTION_TAGS)[number];

/** Thrown for corrupt, truncated, wrong-version or inconsistent artifacts. */
export class ArtifactError extends Error {
  override name = 'ArtifactError';
}

export interface ParsedArtifact {
  manifest: ModelManifest;
  size: number;
  dims: number;
  /** i8[n * dims], a view into the buffer. */
  rows: Int8Array;
  /** f32[n], a view into the buffer. */
  scales: Float32Array;
  /** u8[n] word byte lengths, a view. */
  wordLengths: Uint8Array;
  /** UTF-8 words concatenated in row order, a view. */
  vocab: Uint8Array;
  /** u32[n + 1] start of each word in vocab (derived from wordLengths; not a view). */
  wordOffsets: Uint32Array;
  /** u32[n] rows sorted by lower-cased key, a view. */
  sortedIndex: Uint32Array;
  /** u16[n] vocabulary flags, a view. */
  flags: Uint16Array;
  /** u32[n] rows sorted by folded key, a view. */
  foldedIndex: Uint32Array;
  /** u32[2m] antonym (row, row) pairs sorted, a view. */
  antonyms: Uint32Array;
  /** Total bytes of the artifact. */
  byteLength: number;
}

/** Input of writeArtifact. manifest fields derived from the data are filled in by the writer. */
export interface ArtifactInput {
  manifest: Omit<ModelManifest, 'dimensions' | 'vocabularySize' | 'quantization' | 'formatVersion' | 'checksum'> &
    Partial<Pick<ModelManifest, 'dimensions' | 'vocabularySize' | 'quantization' | 'formatVersion' | 'checksum'>>;
  /** Words in frequency order (row r = modelRank r + 1); unique; 1..255 UTF-8 bytes each. */
  words: readonly string[];
  /** i8[n * dims] quantized unit vectors. */
  rows: Int8Array;
  /** f32[n] per-row scales. */
  scales: Float32Array;
  dims: number;
  /**
   * u16[n] vocabulary flags (core/vocab-quality.ts). Default: no word list known, so every entry
   * with a letter counts as a dictionary word (only entries without a letter are filtered).
   */
  flags?: Uint16Array;
  /** Antonym links as row pairs (either direction; stored symmetric, sorted, deduplicated). */
  antonyms?: ReadonlyArray<readonly [number, number]>;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

// ---------------------------------------------------------------------------------------------
// MurmurHash3_x86_32 over u32 words
// ---------------------------------------------------------------------------------------------

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** Mixes words[start..end) into state h; returns the new state (not finalized). */
export function murmur3Update(h: number, words: Uint32Array, start = 0, end = words.length): number {
  for (let i = start; i < end; i++) {
    let k = words[i]!;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  return h;
}

/** Final avalanche of MurmurHash3_x86_32; byteLength is the total number of hashed bytes. */
export function murmur3Finalize(h: number, byteLength: number): number {
  h ^= byteLength;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * MurmurHash3_x86_32 (seed 0) of `length` bytes at `offset`, zero-padded to a multiple of 4.
 * Fast path: a Uint32Array view when the offset is 4-aligned and the padded range is inside the buffer.
 */
export function murmur3(buffer: ArrayBufferLike, offset: number, length: number): number {
  const words = Math.ceil(length / 4);
  if (offset % 4 === 0 && offset + words * 4 <= buffer.byteLength) {
    const view = new Uint32Array(buffer, offset, words);
    if (length % 4 !== 0) {
      // Bytes past `length` inside the last word must count as zero.
      const h = murmur3Update(0, view, 0, words - 1);
      return murmur3Finalize(murmur3Update(h, new Uint32Array([lastWord(buffer, offset, length)])), words * 4);
    }
    return murmur3Finalize(murmur3Update(0, view), words * 4);
  }
  const copy = new Uint8Array(words * 4);
  copy.set(new Uint8Array(buffer, offset, length));
  return murmur3Finalize(murmur3Update(0, new Uint32Array(copy.buffer)), words * 4);
}

function lastWord(buffer: ArrayBufferLike, offset: number, length: number): number {
  const bytes = new Uint8Array(buffer, offset, length);
  const start = length - (length % 4);
  let w = 0;
  for (let i = start; i < length; i++) w |= bytes[i]! << (8 * (i - start));
  return w >>> 0;
}

export function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

/** What the manifest's checksum field holds for a content checksum. */
export function formatChecksum(value: number): string {
  return `murmur3:${hex32(value)}`;
}

// ---------------------------------------------------------------------------------------------
// Keys: lower-cased UTF-8, compared bytewise
// ---------------------------------------------------------------------------------------------

/** The lookup key of a word: UTF-8 bytes of its lower-cased form. */
export function keyBytes(word: string): Uint8Array {
  return utf8Encoder.encode(word.toLowerCase());
}

/** Bytewise comparison of a[aStart..aEnd) with b[bStart..bEnd): <0, 0, >0. */
export function compareBytes(
  a: Uint8Array,
  aStart: number,
  aEnd: number,
  b: Uint8Array,
  bStart: number,
  bEnd: number,
): number {
  const la = aEnd - aStart;
  const lb = bEnd - bStart;
  const l = la < lb ? la : lb;
  for (let i = 0; i < l; i++) {
    const d = a[aStart + i]! - b[bStart + i]!;
    if (d !== 0) return d;
  }
  return la - lb;
}

// ---------------------------------------------------------------------------------------------
// Writer
// ---------------------------------------------------------------------------------------------

function align(n: number): number {
  return Math.ceil(n / SECTION_ALIGN) * SECTION_ALIGN;
}

function tagToU32(tag: string): number {
  return (tag.charCodeAt(0) | (tag.charCodeAt(1) << 8) | (tag.charCodeAt(2) << 16) | (tag.charCodeAt(3) << 24)) >>> 0;
}

function u32ToTag(v: number): string {
  return String.fromCharCode(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
}

/** Row ids sorted by key bytes (then row id). */
export function buildSortedIndex(keys: Uint8Array, keyOffsets: Uint32Array, n: number): Uint32Array {
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const arr = Array.from(order);
  arr.sort(
    (a, b) => compareBytes(keys, keyOffsets[a]!, keyOffsets[a + 1]!, keys, keyOffsets[b]!, keyOffsets[b + 1]!) || a - b,
  );
  order.set(arr);
  return order;
}

/** Row ids sorted by foldKey(word) compared by code points (then row id). */
export function buildFoldedIndex(words: readonly string[]): Uint32Array {
  const keys = words.map((w) => utf8Encoder.encode(foldKey(w)));
  const arr = Array.from({ length: words.length }, (_, i) => i);
  arr.sort((a, b) => compareBytes(keys[a]!, 0, keys[a]!.length, keys[b]!, 0, keys[b]!.length) || a - b);
  return Uint32Array.from(arr);
}

/** Flags when no word list is known: a letter makes an entry a word. */
function defaultFlags(words: readonly string[]): Uint16Array {
  const out = new Uint16Array(words.length);
  words.forEach((w, i) => {
    if (/\p{L}/u.test(w)) out[i] = VOCAB_FLAG.LETTER | VOCAB_FLAG.DICTIONARY;
  });
  return out;
}

/** Symmetric, sorted, deduplicated (row, row) pairs. */
function packAntonyms(pairs: ReadonlyArray<readonly [number, number]>, n: number): Uint32Array {
  const keys = new Set<number>();
  for (const [a, b] of pairs) {
    if (!(Number.isInteger(a) && Number.isInteger(b) && a >= 0 && b >= 0 && a < n && b < n))
      throw new ArtifactError(`antonym pair (${a}, ${b}) is outside the vocabulary`);
    if (a === b) continue;
    keys.add(a * n + b);
    keys.add(b * n + a);
  }
  const sorted = [...keys].sort((x, y) => x - y);
  const out = new Uint32Array(sorted.length * 2);
  sorted.forEach((k, i) => {
    out[2 * i] = Math.floor(k / n);
    out[2 * i + 1] = k % n;
  });
  return out;
}

/** Serializes a model into the artifact format. Validates the input; throws ArtifactError on bad input. */
export function writeArtifact(input: ArtifactInput): Uint8Array {
  const { words, rows, scales, dims } = input;
  const n = words.length;
  if (!Number.isInteger(dims) || dims < 1)
    throw new ArtifactError(`dimensions must be a positive integer, got ${dims}`);
  if (rows.length !== n * dims)
    throw new ArtifactError(`rows has ${rows.length} values, expected ${n} x ${dims} = ${n * dims}`);
  if (scales.length !== n) throw new ArtifactError(`scales has ${scales.length} values, expected ${n}`);

  // Vocabulary blob + lengths, and key blob for sorting.
  const encoded: Uint8Array[] = new Array(n);
  const lengths = new Uint8Array(n);
  let vocabBytes = 0;
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) {
    const w = words[i]!;
    const b = utf8Encoder.encode(w);
    if (b.length === 0) throw new ArtifactError(`word at row ${i} is empty`);
    if (b.length > MAX_WORD_BYTES)
      throw new ArtifactError(`word at row ${i} is ${b.length} UTF-8 bytes (at most ${MAX_WORD_BYTES})`);
    if (seen.has(w)) throw new ArtifactError(`duplicate word ${JSON.stringify(w)} at row ${i}`);
    seen.add(w);
    encoded[i] = b;
    lengths[i] = b.length;
    vocabBytes += b.length;
  }
  seen.clear();
  const vocab = new Uint8Array(vocabBytes);
  const keyOffsets = new Uint32Array(n + 1);
  const keyParts: Uint8Array[] = new Array(n);
  let keyBytesTotal = 0;
  for (let i = 0, p = 0; i < n; i++) {
    vocab.set(encoded[i]!, p);
    p += encoded[i]!.length;
    const w = words[i]!;
    const lower = w.toLowerCase();
    const k = lower === w ? encoded[i]! : utf8Encoder.encode(lower);
    keyParts[i] = k;
    keyOffsets[i] = keyBytesTotal;
    keyBytesTotal += k.length;
  }
  keyOffsets[n] = keyBytesTotal;
  const keys = new Uint8Array(keyBytesTotal);
  for (let i = 0; i < n; i++) keys.set(keyParts[i]!, keyOffsets[i]!);
  const sortedIndex = buildSortedIndex(keys, keyOffsets, n);
  const foldedIndex = buildFoldedIndex(words);
  const flags = input.flags ?? defaultFlags(words);
  if (flags.length !== n) throw new ArtifactError(`flags has ${flags.length} values, expected ${n}`);
  const antonyms = packAntonyms(input.antonyms ?? [], n);

  const dataSections: Array<{ tag: SectionTag; bytes: Uint8Array }> = [
    { tag: 'VLEN', bytes: lengths },
    { tag: 'VOCB', bytes: vocab },
    { tag: 'SIDX', bytes: new Uint8Array(sortedIndex.buffer, sortedIndex.byteOffset, sortedIndex.byteLength) },
    { tag: 'SCAL', bytes: new Uint8Array(scales.buffer, scales.byteOffset, scales.byteLength) },
    { tag: 'ROWS', bytes: new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength) },
    { tag: 'VFLG', bytes: new Uint8Array(flags.buffer, flags.byteOffset, flags.byteLength) },
    { tag: 'FIDX', bytes: new Uint8Array(foldedIndex.buffer, foldedIndex.byteOffset, foldedIndex.byteLength) },
    { tag: 'ANTO', bytes: new Uint8Array(antonyms.buffer, antonyms.byteOffset, antonyms.byteLength) },
  ];
  if (!LITTLE_ENDIAN) throw new ArtifactError('big-endian platforms are not supported');
  const sectionChecksums = dataSections.map((s) => murmur3(s.bytes.buffer, s.bytes.byteOffset, s.bytes.length));
  const contentChecksum = contentChecksumOf(sectionChecksums);

  const manifest: ModelManifest = {
    ...input.manifest,
    dimensions: dims,
    vocabularySize: n,
    quantization: QUANTIZATION,
    formatVersion: ARTIFACT_FORMAT_VERSION,
    checksum: formatChecksum(contentChecksum),
  } as ModelManifest;
  const manifestBytes = utf8Encoder.encode(JSON.stringify(manifest));
  const sections = [{ tag: 'MANI' as SectionTag, bytes: manifestBytes }, ...dataSections];
  const checksums = [
    murmur3(manifestBytes.buffer, manifestBytes.byteOffset, manifestBytes.length),
    ...sectionChecksums,
  ];

  const tableEnd = HEADER_BYTES + sections.length * SECTION_ENTRY_BYTES;
  let offset = align(tableEnd);
  const placed = sections.map((s) => {
    const at = offset;
    offset = align(at + s.bytes.length);
    return at;
  });
  const fileBytes = offset;
  if (fileBytes > 0xffffffff) throw new ArtifactError(`artifact would be ${fileBytes} bytes (at most 4 GiB)`);

  const out = new Uint8Array(fileBytes);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) out[i] = ARTIFACT_MAGIC.charCodeAt(i);
  dv.setUint32(HEADER.formatVersion, ARTIFACT_FORMAT_VERSION, true);
  dv.setUint32(HEADER.sectionCount, sections.length, true);
  dv.setUint32(HEADER.fileBytes, fileBytes, true);
  dv.setUint32(HEADER.vocabularySize, n, true);
  dv.setUint32(HEADER.dimensions, dims, true);
  dv.setUint32(HEADER.flags, 0, true);
  dv.setUint32(HEADER.contentChecksum, contentChecksum, true);
  sections.forEach((s, i) => {
    const e = HEADER_BYTES + i * SECTION_ENTRY_BYTES;
    dv.setUint32(e, tagToU32(s.tag), true);
    dv.setUint32(e + 4, placed[i]!, true);
    dv.setUint32(e + 8, s.bytes.length, true);
    dv.setUint32(e + 12, checksums[i]!, true);
    out.set(s.bytes, placed[i]!);
  });
  dv.setUint32(HEADER.headerChecksum, headerChecksum(out.buffer, sections.length), true);
  return out;
}

/** MurmurHash3 of the non-manifest sections' checksums, in table order. */
function contentChecksumOf(sectionChecksums: readonly number[]): number {
  return murmur3Finalize(murmur3Update(0, Uint32Array.from(sectionChecksums)), sectionChecksums.length * 4);
}

/** MurmurHash3 of header bytes [0, 60) followed by the section table. */
export function headerChecksum(buffer: ArrayBufferLike, sectionCount: number): number {
  const head = new Uint32Array(buffer, 0, HEADER.headerChecksum / 4);
  const table = new Uint32Array(buffer, HEADER_BYTES, (sectionCount * SECTION_ENTRY_BYTES) / 4);
  const h = murmur3Update(murmur3Update(0, head), table);
  return murmur3Finalize(h, head.byteLength + table.byteLength);
}

// ---------------------------------------------------------------------------------------------
// Parser
// ---------------------------------------------------------------------------------------------

interface SectionEntry {
  tag: string;
  offset: number;
  length: number;
  checksum: number;
}

/**
 * Parses and verifies an artifact. Returns views into the buffer (zero-copy), except the derived
 * word offsets. Throws ArtifactError naming the problem: truncation, bad magic, unsupported
 * version, header/section checksum mismatch, section out of bounds, inconsistent sizes, bad manifest.
 */
export function parseArtifact(input: ArrayBuffer | Uint8Array): ParsedArtifact {
  if (!LITTLE_ENDIAN) throw new ArtifactError('big-endian platforms are not supported');
  let buffer: ArrayBuffer;
  if (ArrayBuffer.isView(input)) {
    // A view over a whole buffer is used as is; a slice of a larger one is copied (alignment).
    buffer =
      input.byteOffset === 0 && input.byteLength === input.buffer.byteLength
        ? (input.buffer as ArrayBuffer)
        : input.slice().buffer;
  } else buffer = input;
  const total = buffer.byteLength;
  if (total < HEADER_BYTES)
    throw new ArtifactError(`truncated: the header needs ${HEADER_BYTES} bytes, the artifact has ${total}`);
  const bytes = new Uint8Array(buffer);
  const magic = String.fromCharCode(...bytes.subarray(0, 8));
  if (magic !== ARTIFACT_MAGIC) {
    throw new ArtifactError(
      `not a model artifact: bad magic ${JSON.stringify(magic)} (expected ${JSON.stringify(ARTIFACT_MAGIC)})`,
    );
  }
  const dv = new DataView(buffer);
  const version = dv.getUint32(HEADER.formatVersion, true);
  if (version !== ARTIFACT_FORMAT_VERSION) {
    throw new ArtifactError(`unsupported format version ${version} (expected ${ARTIFACT_FORMAT_VERSION})`);
  }
  const sectionCount = dv.getUint32(HEADER.sectionCount, true);
  if (sectionCount > 1024) throw new ArtifactError(`corrupt header: section count ${sectionCount} is implausible`);
  const tableEnd = HEADER_BYTES + sectionCount * SECTION_ENTRY_BYTES;
  if (tableEnd > total)
    throw new ArtifactError(
      `truncated: section table ends at ${tableEnd} beyond the end of the artifact (${total} bytes)`,
    );
  const storedHeader = dv.getUint32(HEADER.headerChecksum, true);
  const computedHeader = headerChecksum(buffer, sectionCount);
  if (storedHeader !== computedHeader) {
    throw new ArtifactError(
      `header checksum mismatch (stored ${hex32(storedHeader)}, computed ${hex32(computedHeader)}): the header or section table is corrupt`,
    );
  }
  const n = dv.getUint32(HEADER.vocabularySize, true);
  const dims = dv.getUint32(HEADER.dimensions, true);
  if (dims < 1) throw new ArtifactError(`corrupt header: dimensions is 0`);

  const sections = new Map<string, SectionEntry>();
  for (let i = 0; i < sectionCount; i++) {
    const e = HEADER_BYTES + i * SECTION_ENTRY_BYTES;
    const entry: SectionEntry = {
      tag: u32ToTag(dv.getUint32(e, true)),
      offset: dv.getUint32(e + 4, true),
      length: dv.getUint32(e + 8, true),
      checksum: dv.getUint32(e + 12, true),
    };
    const end = entry.offset + entry.length;
    if (entry.offset < tableEnd)
      throw new ArtifactError(
        `corrupt section table: section ${entry.tag} starts at ${entry.offset}, inside the header (ends at ${tableEnd})`,
      );
    if (end > total)
      throw new ArtifactError(
        `truncated: section ${entry.tag} ends at ${end} beyond the end of the artifact (${total} bytes)`,
      );
    if (entry.offset % SECTION_ALIGN !== 0)
      throw new ArtifactError(
        `corrupt section table: section ${entry.tag} offset ${entry.offset} is not ${SECTION_ALIGN}-byte aligned`,
      );
    if (sections.has(entry.tag)) throw new ArtifactError(`corrupt section table: section ${entry.tag} appears twice`);
    sections.set(entry.tag, entry);
  }
  const fileBytes = dv.getUint32(HEADER.fileBytes, true);
  if (fileBytes > total)
    throw new ArtifactError(`truncated: the artifact is ${total} bytes, its header says ${fileBytes}`);
  if (fileBytes < total)
    throw new ArtifactError(
      `length mismatch: the artifact is ${total} bytes, its header says ${fileBytes} (trailing data)`,
    );
  for (const tag of SECTION_TAGS) if (!sections.has(tag)) throw new ArtifactError(`missing section ${tag}`);
  const sec = (tag: SectionTag): SectionEntry => sections.get(tag)!;

  const expect = (tag: SectionTag, length: number, what: string): void => {
    if (sec(tag).length !== length)
      throw new ArtifactError(`section ${tag} is ${sec(tag).length} bytes, expected ${length} (${what})`);
  };
  expect('VLEN', n, `${n} word lengths`);
  expect('SIDX', 4 * n, `${n} u32 row ids`);
  expect('SCAL', 4 * n, `${n} f32 scales`);
  expect('ROWS', n * dims, `${n} x ${dims} int8`);
  expect('VFLG', 2 * n, `${n} u16 flags`);
  expect('FIDX', 4 * n, `${n} u32 row ids`);
  if (sec('ANTO').length % 8 !== 0)
    throw new ArtifactError(`section ANTO is ${sec('ANTO').length} bytes, not a whole number of u32 pairs`);

  // Section checksums (the bulk of the load time: one pass over the buffer).
  for (const entry of sections.values()) {
    const computed = murmur3(buffer, entry.offset, entry.length);
    if (computed !== entry.checksum) {
      throw new ArtifactError(
        `checksum mismatch in section ${entry.tag} (stored ${hex32(entry.checksum)}, computed ${hex32(computed)}): the artifact is corrupt`,
      );
    }
  }
  const content = contentChecksumOf([...sections.values()].filter((e) => e.tag !== 'MANI').map((e) => e.checksum));
  if (content !== dv.getUint32(HEADER.contentChecksum, true)) {
    throw new ArtifactError(
      `content checksum mismatch (stored ${hex32(dv.getUint32(HEADER.contentChecksum, true))}, computed ${hex32(content)})`,
    );
  }

  let manifest: ModelManifest;
  const m = sec('MANI');
  try {
    manifest = JSON.parse(
      new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes.subarray(m.offset, m.offset + m.length)),
    );
  } catch (err) {
    throw new ArtifactError(`manifest is not valid JSON: ${(err as Error).message}`);
  }
  if (!manifest || typeof manifest !== 'object' || Array.isArray(manifest))
    throw new ArtifactError('manifest is not a JSON object');
  if (typeof manifest.id !== 'string' || manifest.id === '') throw new ArtifactError('manifest has no id');
  if (manifest.dimensions !== dims)
    throw new ArtifactError(`manifest says ${manifest.dimensions} dimensions, header says ${dims}`);
  if (manifest.vocabularySize !== n)
    throw new ArtifactError(`manifest says vocabularySize ${manifest.vocabularySize}, header says ${n}`);
  if (manifest.formatVersion !== version)
    throw new ArtifactError(`manifest says formatVersion ${manifest.formatVersion}, header says ${version}`);
  if (manifest.quantization !== QUANTIZATION)
    throw new ArtifactError(
      `unsupported quantization ${JSON.stringify(manifest.quantization)} (expected ${QUANTIZATION})`,
    );
  if (manifest.checksum !== formatChecksum(content))
    throw new ArtifactError(
      `manifest checksum ${manifest.checksum} does not match the content (${formatChecksum(content)})`,
    );

  const wordLengths = new Uint8Array(buffer, sec('VLEN').offset, n);
  const wordOffsets = new Uint32Array(n + 1);
  let p = 0;
  for (let i = 0; i < n; i++) {
    wordOffsets[i] = p;
    p += wordLengths[i]!;
  }
  wordOffsets[n] = p;
  if (p !== sec('VOCB').length)
    throw new ArtifactError(`section VOCB is ${sec('VOCB').length} bytes, the word lengths add up to ${p}`);
  const sortedIndex = new Uint32Array(buffer, sec('SIDX').offset, n);
  for (let i = 0; i < n; i++) {
    if (sortedIndex[i]! >= n)
      throw new ArtifactError(`section SIDX entry ${i} is row ${sortedIndex[i]}, beyond the vocabulary (${n} words)`);
  }
  const foldedIndex = new Uint32Array(buffer, sec('FIDX').offset, n);
  for (let i = 0; i < n; i++) {
    if (foldedIndex[i]! >= n)
      throw new ArtifactError(`section FIDX entry ${i} is row ${foldedIndex[i]}, beyond the vocabulary (${n} words)`);
  }
  const antonyms = new Uint32Array(buffer, sec('ANTO').offset, sec('ANTO').length / 4);
  for (let i = 0; i < antonyms.length; i++) {
    if (antonyms[i]! >= n)
      throw new ArtifactError(`section ANTO entry ${i} is row ${antonyms[i]}, beyond the vocabulary (${n} words)`);
  }
  return {
    manifest,
    size: n,
    dims,
    rows: new Int8Array(buffer, sec('ROWS').offset, n * dims),
    scales: new Float32Array(buffer, sec('SCAL').offset, n),
    wordLengths,
    vocab: new Uint8Array(buffer, sec('VOCB').offset, p),
    wordOffsets,
    sortedIndex,
    flags: new Uint16Array(buffer, sec('VFLG').offset, n),
    foldedIndex,
    antonyms,
    byteLength: total,
  };
}

/** Decodes word `row` of a vocabulary blob. */
export function decodeWord(vocab: Uint8Array, wordOffsets: Uint32Array, row: number): string {
  return utf8Decoder.decode(vocab.subarray(wordOffsets[row]!, wordOffsets[row + 1]!));
}
