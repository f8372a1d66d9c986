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
 *
 * format.ts: the layout and keys; checksum.ts: MurmurHash3; write.ts: writeArtifact; parse.ts:
 * parseArtifact.
 */
import type { ModelManifest } from '../types';

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

export const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;
export const utf8Encoder = new TextEncoder();
export const utf8Decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });

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

// Layout helpers of the writer and the parser.

export function align(n: number): number {
  return Math.ceil(n / SECTION_ALIGN) * SECTION_ALIGN;
}

export function tagToU32(tag: string): number {
  return (tag.charCodeAt(0) | (tag.charCodeAt(1) << 8) | (tag.charCodeAt(2) << 16) | (tag.charCodeAt(3) << 24)) >>> 0;
}

export function u32ToTag(v: number): string {
  return String.fromCharCode(v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff);
}

/** Decodes word `row` of a vocabulary blob. */
export function decodeWord(vocab: Uint8Array, wordOffsets: Uint32Array, row: number): string {
  return utf8Decoder.decode(vocab.subarray(wordOffsets[row]!, wordOffsets[row + 1]!));
}
