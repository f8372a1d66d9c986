/**
 * The artifact writer (format.ts has the layout): the sorted and folded indexes, the default
 * flags, the antonym links, and the checksums.
 */
import { foldKey, VOCAB_FLAG } from '../vocab-quality';
import type { ModelManifest } from '../types';
import { formatChecksum, murmur3, murmur3Finalize, murmur3Update } from './checksum';
import {
  align,
  ARTIFACT_FORMAT_VERSION,
  ARTIFACT_MAGIC,
  ArtifactError,
  compareBytes,
  HEADER,
  HEADER_BYTES,
  LITTLE_ENDIAN,
  MAX_WORD_BYTES,
  QUANTIZATION,
  SECTION_ENTRY_BYTES,
  tagToU32,
  utf8Encoder,
  type ArtifactInput,
  type SectionTag,
} from './format';

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
export function contentChecksumOf(sectionChecksums: readonly number[]): number {
  return murmur3Finalize(murmur3Update(0, Uint32Array.from(sectionChecksums)), sectionChecksums.length * 4);
}

/** MurmurHash3 of header bytes [0, 60) followed by the section table. */
export function headerChecksum(buffer: ArrayBufferLike, sectionCount: number): number {
  const head = new Uint32Array(buffer, 0, HEADER.headerChecksum / 4);
  const table = new Uint32Array(buffer, HEADER_BYTES, (sectionCount * SECTION_ENTRY_BYTES) / 4);
  const h = murmur3Update(murmur3Update(0, head), table);
  return murmur3Finalize(h, head.byteLength + table.byteLength);
}
