/**
 * Sub-word fallback (request option `subwordFallback`, docs/models-and-kernels.md "Sub-word
 * fallback"): a vector for a word outside the vocabulary, composed of the vectors of its
 * character n-grams, learned to match the model (build/subword-table.ts).
 *
 * N-gram rule (fastText's, Bojanowski et al. 2017): the word is trimmed and lower-cased
 * (String.prototype.toLowerCase, no locale), wrapped in boundary marks "<" and ">", and every run
 * of n = 3..6 consecutive Unicode code points of "<word>" is an n-gram (the whole "<word>"
 * included when it is that short). Each n-gram's UTF-8 bytes are hashed with FNV-1a 32-bit
 * (offset basis 0x811c9dc5, prime 0x01000193) and taken modulo the table's bucket count B. A
 * word of L code points has at most 4 (L + 2) n-grams; an n-gram repeated in the word counts each
 * time.
 *
 * Composition: the normalised mean of the n-grams' bucket vectors, computed by the kernels'
 * centroid over the table's int8 rows (core/kernels.ts), so the Worker, the browser and the CLI
 * give the same floats. Bucket rows keep their length in their scale (int8 * scale is the
 * bucket vector itself, not a unit vector), which the centroid sums before normalising.
 *
 * Table artifact (little-endian; R2 key subword/{modelId}.bin):
 *   0   magic "SUBWORD1" (8 bytes)
 *   8   u32 format version (1)
 *   12  u32 buckets B
 *   16  u32 dimensions
 *   20  u32 smallest n, 24 u32 largest n
 *   28  u32 MurmurHash3 of every byte after the 64-byte header (core/artifact/checksum.ts)
 *   32  u32 byte length of the JSON metadata; the rest of the header is zero
 *   64  JSON metadata (SubwordTableMeta), zero-padded to a multiple of 16
 *       i8[B * dims] bucket rows, zero-padded to a multiple of 4
 *       f32[B] bucket scales
 */
import { formatChecksum, murmur3 } from './artifact/checksum';
import { Kernels, type MatrixSlot } from './kernels';

export const SUBWORD_MAGIC = 'SUBWORD1';
export const SUBWORD_FORMAT_VERSION = 1;
export const SUBWORD_HEADER_BYTES = 64;
export const SUBWORD_MIN_N = 3;
export const SUBWORD_MAX_N = 6;

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const utf8 = new TextEncoder();

/** What the table was learned from and how (the JSON metadata of the artifact). */
export interface SubwordTableMeta {
  /** The model whose rows the table matches. */
  modelId: string;
  /** ModelManifest.checksum of that model build: a table of another build is refused. */
  modelChecksum: string;
  hash: 'fnv1a32';
  /** Training figures (build/subword-table.ts): words trained on, epochs, held-out mean cosine. */
  training: Record<string, number | string>;
}

export class SubwordTableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SubwordTableError';
  }
}

/**
 * The n-gram buckets of a word, in n-gram order (start position, then length); empty for a word
 * without characters. Linear in the word's length.
 */
export function ngramBuckets(word: string, buckets: number): Int32Array {
  const bytes = utf8.encode(`<${word.trim().toLowerCase()}>`);
  // Byte offset of each code point, and the end.
  const starts: number[] = [];
  for (let i = 0; i < bytes.length; i++) if ((bytes[i]! & 0xc0) !== 0x80) starts.push(i);
  const points = starts.length;
  starts.push(bytes.length);
  if (points <= 2) return new Int32Array(0);
  const out: number[] = [];
  for (let i = 0; i + SUBWORD_MIN_N <= points; i++) {
    let h = FNV_OFFSET;
    for (let n = 1; n <= SUBWORD_MAX_N && i + n <= points; n++) {
      for (let b = starts[i + n - 1]!; b < starts[i + n]!; b++) h = Math.imul(h ^ bytes[b]!, FNV_PRIME);
      if (n >= SUBWORD_MIN_N) out.push((h >>> 0) % buckets);
    }
  }
  return Int32Array.from(out);
}

/** A parsed table artifact: views into its bytes. */
export interface ParsedSubwordTable {
  meta: SubwordTableMeta;
  buckets: number;
  dims: number;
  rows: Int8Array;
  scales: Float32Array;
  /** formatChecksum of the content checksum ("murmur3:..."). */
  checksum: string;
  byteLength: number;
}

const pad = (n: number, a: number): number => Math.ceil(n / a) * a;

/** The artifact bytes of a table (build/subword-table.ts). */
export function writeSubwordTable(
  meta: SubwordTableMeta,
  rows: Int8Array,
  scales: Float32Array,
  dims: number,
): Uint8Array<ArrayBuffer> {
  const buckets = scales.length;
  if (rows.length !== buckets * dims) throw new RangeError(`expected ${buckets * dims} int8 values`);
  const json = utf8.encode(JSON.stringify(meta));
  const rowsAt = SUBWORD_HEADER_BYTES + pad(json.length, 16);
  const scalesAt = rowsAt + pad(rows.length, 4);
  const out = new Uint8Array(scalesAt + 4 * buckets);
  out.set(utf8.encode(SUBWORD_MAGIC), 0);
  out.set(json, SUBWORD_HEADER_BYTES);
  out.set(new Uint8Array(rows.buffer, rows.byteOffset, rows.length), rowsAt);
  out.set(new Uint8Array(scales.buffer, scales.byteOffset, scales.byteLength), scalesAt);
  const view = new DataView(out.buffer);
  view.setUint32(8, SUBWORD_FORMAT_VERSION, true);
  view.setUint32(12, buckets, true);
  view.setUint32(16, dims, true);
  view.setUint32(20, SUBWORD_MIN_N, true);
  view.setUint32(24, SUBWORD_MAX_N, true);
  view.setUint32(32, json.length, true);
  view.setUint32(28, murmur3(out.buffer, SUBWORD_HEADER_BYTES, out.length - SUBWORD_HEADER_BYTES), true);
  return out;
}

/** Reads a table artifact; `verify` checks its content checksum (skipped for bytes verified by a digest already). */
export function parseSubwordTable(buffer: ArrayBuffer, verify = true): ParsedSubwordTable {
  const fail = (why: string): never => {
    throw new SubwordTableError(`not a sub-word table: ${why}`);
  };
  if (buffer.byteLength < SUBWORD_HEADER_BYTES) fail('too short');
  const bytes = new Uint8Array(buffer);
  if (new TextDecoder().decode(bytes.subarray(0, 8)) !== SUBWORD_MAGIC) fail('bad magic');
  const view = new DataView(buffer);
  const version = view.getUint32(8, true);
  if (version !== SUBWORD_FORMAT_VERSION) fail(`format version ${version}, expected ${SUBWORD_FORMAT_VERSION}`);
  const buckets = view.getUint32(12, true);
  const dims = view.getUint32(16, true);
  if (view.getUint32(20, true) !== SUBWORD_MIN_N || view.getUint32(24, true) !== SUBWORD_MAX_N)
    fail('another n-gram range');
  if (buckets < 1 || dims < 1) fail('empty');
  const metaBytes = view.getUint32(32, true);
  const rowsAt = SUBWORD_HEADER_BYTES + pad(metaBytes, 16);
  const scalesAt = rowsAt + pad(buckets * dims, 4);
  if (buffer.byteLength !== scalesAt + 4 * buckets)
    fail(`${buffer.byteLength} bytes, expected ${scalesAt + 4 * buckets}`);
  const content = view.getUint32(28, true);
  if (verify && murmur3(buffer, SUBWORD_HEADER_BYTES, buffer.byteLength - SUBWORD_HEADER_BYTES) !== content)
    fail('checksum mismatch');
  let meta: SubwordTableMeta;
  try {
    meta = JSON.parse(new TextDecoder().decode(bytes.subarray(SUBWORD_HEADER_BYTES, SUBWORD_HEADER_BYTES + metaBytes)));
  } catch {
    return fail('unreadable metadata');
  }
  return {
    meta,
    buckets,
    dims,
    rows: new Int8Array(buffer, rowsAt, buckets * dims),
    scales: new Float32Array(buffer, scalesAt, buckets),
    checksum: formatChecksum(content),
    byteLength: buffer.byteLength,
  };
}

/** A table in a kernels instance's memory, composing vectors for words. */
export class SubwordTable {
  readonly meta: SubwordTableMeta;
  readonly buckets: number;
  readonly dims: number;
  readonly checksum: string;
  private readonly slot: MatrixSlot;

  constructor(
    parsed: ParsedSubwordTable,
    private readonly kernels: Kernels,
  ) {
    this.meta = parsed.meta;
    this.buckets = parsed.buckets;
    this.dims = parsed.dims;
    this.checksum = parsed.checksum;
    this.slot = kernels.loadMatrix(parsed.rows, parsed.scales, parsed.buckets, parsed.dims);
  }

  /** Parses and loads a table artifact; refuses one learned for another build of the model. */
  static load(
    buffer: ArrayBuffer,
    kernels: Kernels,
    model: { id: string; checksum: string; dims: number },
    verify = true,
  ): SubwordTable {
    const parsed = parseSubwordTable(buffer, verify);
    if (parsed.meta.modelId !== model.id || parsed.meta.modelChecksum !== model.checksum || parsed.dims !== model.dims)
      throw new SubwordTableError(
        `table of ${parsed.meta.modelId} (${parsed.meta.modelChecksum}), not of ${model.id} (${model.checksum})`,
      );
    return new SubwordTable(parsed, kernels);
  }

  /** Bytes the table holds in its kernels' memory. */
  get matrixBytes(): number {
    return Kernels.matrixBytes(this.buckets, this.dims);
  }

  /** The composed unit vector of a word; null for a word without an n-gram or with a zero mean. */
  compose(word: string): Float32Array | null {
    const list = ngramBuckets(word, this.buckets);
    return list.length > 0 ? this.kernels.centroid(this.slot, list) : null;
  }

  /** Frees the table's memory in its kernels instance. */
  release(): void {
    this.kernels.freeMatrix(this.slot);
  }
}
