/**
 * The artifact parser (format.ts has the layout): checks the header, the section table and every
 * checksum, then returns zero-copy views of the sections.
 */
import type { ModelManifest } from '../types';
import { formatChecksum, hex32, murmur3 } from './checksum';
import {
  ARTIFACT_FORMAT_VERSION,
  ARTIFACT_MAGIC,
  ArtifactError,
  HEADER,
  HEADER_BYTES,
  LITTLE_ENDIAN,
  QUANTIZATION,
  SECTION_ALIGN,
  SECTION_ENTRY_BYTES,
  SECTION_TAGS,
  u32ToTag,
  type ParsedArtifact,
  type SectionTag,
} from './format';
import { contentChecksumOf, headerChecksum } from './write';

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
