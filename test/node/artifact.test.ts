/**
 * Model artifact format (core/artifact.ts): round trip, zero-copy views, sorted index order, and
 * every corruption case. Corrupt files are produced with an independent assembler written from
 * the documented layout (so the documentation is tested too).
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  ArtifactError,
  ARTIFACT_FORMAT_VERSION,
  decodeWord,
  murmur3,
  parseArtifact,
  writeArtifact,
  type ArtifactInput,
} from '../../core/artifact';
import { quantizeRows } from '../../core/quantize';
import { foldKey, VOCAB_FLAG } from '../../core/vocab-quality';
import { prng } from '../../core/prng';

const enc = new TextEncoder();

function baseManifest(id = 'test-model'): ArtifactInput['manifest'] {
  return {
    id,
    language: 'en',
    country: 'US',
    version: '1',
    sources: ['unit test'],
    features: ['random'],
    tag: 'fixture',
    trainingYear: '2020',
    trainingMonth: '02',
    labels: { label: 'English (United States), February 2020', languageLabel: 'English', countryLabel: 'United States', monthLabel: 'February' },
    tokenCount: 12345,
    hasTranslation: false,
    license: 'CC0-1.0',
  };
}

const rng = prng;

const ALPHABET = ['a', 'b', 'c', 'z', 'A', 'B', 'Z', 'é', 'É', 'ß', 'İ', 'ı', 'Σ', 'σ', 'ς', 'ǅ', 'K', '中', '😀', '-', "'", '0'];

function randomVocabulary(n: number, rand: () => number): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    const len = 1 + Math.floor(rand() * 6);
    let w = '';
    for (let i = 0; i < len; i++) w += ALPHABET[Math.floor(rand() * ALPHABET.length)];
    out.add(w);
  }
  return [...out];
}

function makeInput(words: string[], dims: number, seed = 1, id?: string): ArtifactInput {
  const rand = rng(seed);
  const vectors = new Float32Array(words.length * dims);
  for (let i = 0; i < vectors.length; i++) vectors[i] = rand() * 2 - 1;
  const { rows, scales } = quantizeRows(vectors, words.length, dims);
  return { manifest: baseManifest(id), words, rows, scales, dims };
}

/** Key order of the format: UTF-8 of the lower-cased word, bytewise; ties by row id. */
function referenceSortedIndex(words: string[]): number[] {
  const keys = words.map((w) => Buffer.from(w.toLowerCase(), 'utf8'));
  return words.map((_, i) => i).sort((a, b) => Buffer.compare(keys[a]!, keys[b]!) || a - b);
}

function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}

// ---------------------------------------------------------------------------------------------
// An independent assembler following the documented layout (used to craft corrupt files).
// ---------------------------------------------------------------------------------------------

interface RawSection {
  tag: string;
  bytes: Uint8Array;
  /** Override the stored offset / length / checksum. */
  offset?: number;
  length?: number;
  checksum?: number;
}

function mm3(bytes: Uint8Array): number {
  return murmur3(bytes.slice().buffer, 0, bytes.length);
}

function mm3Words(words: number[]): number {
  const b = new Uint8Array(new Uint32Array(words).buffer);
  return mm3(b);
}

function assemble(
  sections: RawSection[],
  header: { version?: number; n: number; dims: number; fileBytes?: number; contentChecksum?: number; headerChecksum?: number; magic?: string },
): Uint8Array {
  const tableEnd = 64 + 16 * sections.length;
  const align = (x: number) => Math.ceil(x / 16) * 16;
  let p = align(tableEnd);
  const placed = sections.map((s) => {
    const at = p;
    p = align(p + s.bytes.length);
    return at;
  });
  const out = new Uint8Array(p);
  const dv = new DataView(out.buffer);
  const magic = header.magic ?? 'EMBEDART';
  for (let i = 0; i < 8; i++) out[i] = magic.charCodeAt(i);
  dv.setUint32(8, header.version ?? ARTIFACT_FORMAT_VERSION, true);
  dv.setUint32(12, sections.length, true);
  dv.setUint32(16, header.fileBytes ?? p, true);
  dv.setUint32(20, header.n, true);
  dv.setUint32(24, header.dims, true);
  const checksums = sections.map((s) => s.checksum ?? mm3(s.bytes));
  const content = header.contentChecksum ?? mm3Words(sections.map((s, i) => (s.tag === 'MANI' ? -1 : checksums[i]!)).filter((c) => c !== -1));
  dv.setUint32(32, content, true);
  sections.forEach((s, i) => {
    const e = 64 + 16 * i;
    for (let k = 0; k < 4; k++) out[e + k] = s.tag.charCodeAt(k);
    dv.setUint32(e + 4, s.offset ?? placed[i]!, true);
    dv.setUint32(e + 8, s.length ?? s.bytes.length, true);
    dv.setUint32(e + 12, checksums[i]!, true);
    out.set(s.bytes, placed[i]!);
  });
  const headerBytes = new Uint8Array(60 + 16 * sections.length);
  headerBytes.set(out.subarray(0, 60));
  headerBytes.set(out.subarray(64, tableEnd), 60);
  dv.setUint32(60, header.headerChecksum ?? mm3(headerBytes), true);
  return out;
}

/** Sections of a valid artifact, read back from its table. */
function sectionsOf(file: Uint8Array): RawSection[] {
  const dv = new DataView(file.buffer, file.byteOffset);
  const count = dv.getUint32(12, true);
  const out: RawSection[] = [];
  for (let i = 0; i < count; i++) {
    const e = 64 + 16 * i;
    const tag = String.fromCharCode(...file.subarray(e, e + 4));
    const off = dv.getUint32(e + 4, true);
    const len = dv.getUint32(e + 8, true);
    out.push({ tag, bytes: file.slice(off, off + len) });
  }
  return out;
}

function headerOf(file: Uint8Array): { n: number; dims: number } {
  const dv = new DataView(file.buffer, file.byteOffset);
  return { n: dv.getUint32(20, true), dims: dv.getUint32(24, true) };
}

function replaceSection(sections: RawSection[], tag: string, bytes: Uint8Array): RawSection[] {
  return sections.map((s) => (s.tag === tag ? { tag, bytes } : s));
}

/** Replaces a data section and updates the manifest's content checksum to match (a consistent but wrong file). */
function replaceData(sections: RawSection[], tag: string, bytes: Uint8Array): RawSection[] {
  const next = replaceSection(sections, tag, bytes);
  const content = mm3Words(next.filter((s) => s.tag !== 'MANI').map((s) => mm3(s.bytes)));
  const mani = JSON.parse(new TextDecoder().decode(next.find((s) => s.tag === 'MANI')!.bytes)) as Record<string, unknown>;
  mani.checksum = `murmur3:${content.toString(16).padStart(8, '0')}`;
  return replaceSection(next, 'MANI', enc.encode(JSON.stringify(mani)));
}

function withManifest(file: Uint8Array, edit: (m: Record<string, unknown>) => unknown): Uint8Array {
  const secs = sectionsOf(file);
  const mani = JSON.parse(new TextDecoder().decode(secs.find((s) => s.tag === 'MANI')!.bytes)) as Record<string, unknown>;
  const edited = edit(mani) ?? mani;
  return assemble(replaceSection(secs, 'MANI', enc.encode(JSON.stringify(edited))), headerOf(file));
}

function expectError(bytes: Uint8Array | ArrayBuffer, pattern: RegExp): void {
  let thrown: unknown = null;
  try {
    parseArtifact(bytes instanceof Uint8Array ? toArrayBuffer(bytes) : bytes);
  } catch (err) {
    thrown = err;
  }
  expect(thrown, `expected an ArtifactError matching ${pattern}`).toBeInstanceOf(ArtifactError);
  expect((thrown as Error).message).toMatch(pattern);
}

// ---------------------------------------------------------------------------------------------

describe('murmur3 checksum', () => {
  it('matches the published MurmurHash3_x86_32 values for 4-byte-multiple inputs', () => {
    // Reference values of MurmurHash3_x86_32 with seed 0 (smhasher / mmh3).
    expect(mm3(new Uint8Array(0))).toBe(0);
    expect(mm3(enc.encode('test'))).toBe(0xba6bd213);
  });

  it('hashes zero-padded data the same whether or not the padding is in the buffer', () => {
    const bytes = enc.encode('hello world');
    const padded = new Uint8Array(12);
    padded.set(bytes);
    expect(murmur3(bytes.slice().buffer, 0, bytes.length)).toBe(murmur3(padded.buffer, 0, 12));
    // Unaligned offset takes the copying path and still agrees.
    const shifted = new Uint8Array(20);
    shifted.set(padded, 3);
    expect(murmur3(shifted.buffer, 3, 12)).toBe(murmur3(padded.buffer, 0, 12));
  });
});

describe('artifact round trip', () => {
  it('restores manifest, words, rows, scales and a correctly sorted index (random Unicode/case vocabularies)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.integer({ min: 1, max: 40 }), fc.integer(), (n, dims, seed) => {
        const words = randomVocabulary(n, rng(seed));
        const input = makeInput(words, dims, seed);
        const bytes = writeArtifact(input);
        expect(bytes.byteLength % 16).toBe(0);
        const buf = toArrayBuffer(bytes);
        const a = parseArtifact(buf);
        expect(a.size).toBe(n);
        expect(a.dims).toBe(dims);
        expect(a.byteLength).toBe(bytes.byteLength);
        expect(Array.from(a.rows)).toEqual(Array.from(input.rows));
        expect(Array.from(a.scales)).toEqual(Array.from(input.scales));
        for (let r = 0; r < n; r++) expect(decodeWord(a.vocab, a.wordOffsets, r)).toBe(words[r]);
        expect(Array.from(a.sortedIndex)).toEqual(referenceSortedIndex(words));
        const { manifest } = a;
        expect({ ...manifest, dimensions: undefined, vocabularySize: undefined, quantization: undefined, formatVersion: undefined, checksum: undefined }).toEqual({
          ...input.manifest,
          dimensions: undefined,
          vocabularySize: undefined,
          quantization: undefined,
          formatVersion: undefined,
          checksum: undefined,
        });
        expect(manifest.dimensions).toBe(dims);
        expect(manifest.vocabularySize).toBe(n);
        expect(manifest.quantization).toBe('int8-rowscale');
        expect(manifest.formatVersion).toBe(ARTIFACT_FORMAT_VERSION);
        expect(manifest.checksum).toMatch(/^murmur3:[0-9a-f]{8}$/);
      }),
      { numRuns: 40 },
    );
  });

  it('returns zero-copy, 16-byte aligned views into the buffer', () => {
    const words = randomVocabulary(57, rng(7));
    const bytes = writeArtifact(makeInput(words, 13, 7));
    const buf = toArrayBuffer(bytes);
    const a = parseArtifact(buf);
    for (const view of [a.rows, a.scales, a.sortedIndex, a.vocab, a.wordLengths]) {
      expect(view.buffer).toBe(buf);
      expect(view.byteOffset % 16).toBe(0);
    }
    // A write through the buffer is visible through the view: no copy.
    const before = a.rows[0]!;
    new Int8Array(buf, a.rows.byteOffset, 1)[0] = before === 5 ? 6 : 5;
    expect(a.rows[0]).not.toBe(before);
  });

  it('accepts a Uint8Array, also one at an unaligned offset of a larger buffer', () => {
    const bytes = writeArtifact(makeInput(randomVocabulary(20, rng(3)), 8, 3));
    const big = new Uint8Array(bytes.length + 5);
    big.set(bytes, 5);
    const a = parseArtifact(big.subarray(5));
    const b = parseArtifact(bytes);
    expect(Array.from(a.rows)).toEqual(Array.from(b.rows));
    expect(a.manifest).toEqual(b.manifest);
  });

  it('the content checksum depends on the data, not on the manifest', () => {
    const words = randomVocabulary(30, rng(5));
    const a = parseArtifact(toArrayBuffer(writeArtifact(makeInput(words, 6, 5, 'one'))));
    const b = parseArtifact(toArrayBuffer(writeArtifact(makeInput(words, 6, 5, 'two'))));
    const c = parseArtifact(toArrayBuffer(writeArtifact(makeInput(words, 6, 6, 'one'))));
    expect(a.manifest.checksum).toBe(b.manifest.checksum);
    expect(a.manifest.checksum).not.toBe(c.manifest.checksum);
  });

  it('the independent assembler reproduces the writer byte for byte (documented layout)', () => {
    const bytes = writeArtifact(makeInput(randomVocabulary(40, rng(11)), 9, 11));
    expect(Buffer.from(assemble(sectionsOf(bytes), headerOf(bytes))).equals(Buffer.from(bytes))).toBe(true);
  });

  it('rejects bad writer input', () => {
    const ok = makeInput(['a', 'b'], 4);
    expect(() => writeArtifact({ ...ok, words: ['a', 'a'] })).toThrow(/duplicate word "a"/);
    expect(() => writeArtifact({ ...ok, words: ['a', ''] })).toThrow(/empty/);
    expect(() => writeArtifact({ ...ok, words: ['a', 'x'.repeat(256)] })).toThrow(/256 UTF-8 bytes/);
    expect(() => writeArtifact({ ...ok, scales: new Float32Array(3) })).toThrow(/scales has 3 values, expected 2/);
    expect(() => writeArtifact({ ...ok, rows: new Int8Array(7) })).toThrow(/rows has 7 values/);
  });
});

describe('vocabulary sections (VFLG, FIDX, ANTO)', () => {
  it('round-trips flags, sorts the folded index by foldKey and stores antonym links symmetric and sorted', () => {
    const words = ['Café', 'cafe', 'cafés', 'zebra', 'Ábaco', 'abacus', 'éclair', 'eclat', 'Straße', 'strasse'];
    const flags = Uint16Array.from(words, (_, i) => (i * 37) & 0xffff);
    const parsed = parseArtifact(toArrayBuffer(writeArtifact({ ...makeInput(words, 5, 3), flags, antonyms: [[3, 1], [1, 3], [0, 9]] })));
    expect([...parsed.flags]).toEqual([...flags]);
    const fold = (w: string) => Buffer.from(foldKey(w), 'utf8');
    const reference = words.map((_, i) => i).sort((a, b) => Buffer.compare(fold(words[a]!), fold(words[b]!)) || a - b);
    expect([...parsed.foldedIndex]).toEqual(reference);
    expect(foldKey('Café')).toBe('cafe');
    expect(foldKey('Straße')).toBe('strasse');
    expect([...parsed.antonyms]).toEqual([0, 9, 1, 3, 3, 1, 9, 0]);
  });

  it('without flags every entry with a letter counts as a word; bad antonym rows are refused', () => {
    const ok = makeInput(['a', '12', 'b'], 4);
    const parsed = parseArtifact(toArrayBuffer(writeArtifact(ok)));
    expect([...parsed.flags]).toEqual([VOCAB_FLAG.LETTER | VOCAB_FLAG.DICTIONARY, 0, VOCAB_FLAG.LETTER | VOCAB_FLAG.DICTIONARY]);
    expect(parsed.antonyms.length).toBe(0);
    expect(() => writeArtifact({ ...ok, antonyms: [[0, 3]] })).toThrow(/antonym pair \(0, 3\) is outside the vocabulary/);
    expect(() => writeArtifact({ ...ok, flags: new Uint16Array(2) })).toThrow(/flags has 2 values, expected 3/);
  });
});

describe('artifact corruption', () => {
  const words = randomVocabulary(200, rng(42));
  // With flags and antonym links, so every section has bytes to corrupt.
  const good = writeArtifact({ ...makeInput(words, 24, 42), flags: Uint16Array.from(words, (_, i) => i * 7), antonyms: [[0, 1], [5, 3], [9, 2]] });
  const sections = sectionsOf(good);
  const table = new DataView(good.buffer, good.byteOffset);
  const entry = (tag: string) => {
    const i = sections.findIndex((s) => s.tag === tag);
    return { index: i, offset: table.getUint32(64 + 16 * i + 4, true), length: table.getUint32(64 + 16 * i + 8, true) };
  };

  it('bad magic', () => {
    const b = good.slice();
    b.set(enc.encode('GARBAGE!'), 0);
    expectError(b, /bad magic "GARBAGE!" \(expected "EMBEDART"\)/);
    expectError(enc.encode('{"json": "not an artifact at all, but long enough to hold a header......."}'), /bad magic/);
  });

  it('wrong format version', () => {
    const b = good.slice();
    new DataView(b.buffer).setUint32(8, 7, true);
    expectError(b, /unsupported format version 7 \(expected 2\)/);
    // Version 1 (before the vocabulary sections) is refused, not misread.
    expectError(assemble(sections, { ...headerOf(good), version: 1 }), /unsupported format version 1 \(expected 2\)/);
  });

  it('truncated at several points, naming what is cut', () => {
    expectError(good.slice(0, 0), /truncated: the header needs 64 bytes, the artifact has 0/);
    expectError(good.slice(0, 40), /truncated: the header needs 64 bytes, the artifact has 40/);
    expectError(good.slice(0, 70), /truncated: section table ends at \d+ beyond the end of the artifact \(70 bytes\)/);
    for (const tag of ['MANI', 'VLEN', 'VOCB', 'SIDX', 'SCAL', 'ROWS', 'VFLG', 'FIDX', 'ANTO']) {
      const e = entry(tag);
      if (e.length === 0) continue;
      const cut = e.offset + Math.floor(e.length / 2);
      expectError(good.slice(0, cut), new RegExp(`truncated: section ${tag} ends at ${e.offset + e.length} beyond the end of the artifact \\(${cut} bytes\\)`));
    }
    // Only the final padding missing: still detected.
    expectError(good.slice(0, good.length - 1), /truncated|checksum/);
  });

  it('trailing bytes', () => {
    const b = new Uint8Array(good.length + 16);
    b.set(good);
    expectError(b, /length mismatch: the artifact is \d+ bytes, its header says \d+/);
  });

  it('a flipped byte in any section fails its checksum', () => {
    for (const tag of ['MANI', 'VLEN', 'VOCB', 'SIDX', 'SCAL', 'ROWS', 'VFLG', 'FIDX', 'ANTO']) {
      const e = entry(tag);
      for (const at of [e.offset, e.offset + Math.floor(e.length / 2), e.offset + e.length - 1]) {
        const b = good.slice();
        b[at]! ^= 0x10;
        expectError(b, new RegExp(`checksum mismatch in section ${tag} \\(stored [0-9a-f]{8}, computed [0-9a-f]{8}\\)`));
      }
    }
  });

  it('a flipped byte in the header or the section table fails the header checksum', () => {
    for (const at of [20, 24, 33, 40, 61, 64 + 5, 64 + 16 * 3 + 9]) {
      const b = good.slice();
      b[at]! ^= 0x01;
      expectError(b, /header checksum mismatch|truncated|not 16-byte aligned|inside the header/);
    }
    // Bytes covered only by the header checksum.
    for (const at of [28, 36, 50]) {
      const b = good.slice();
      b[at]! ^= 0x80;
      expectError(b, /header checksum mismatch/);
    }
  });

  it('section out of bounds, misaligned, overlapping the header, missing or duplicated', () => {
    const { n, dims } = headerOf(good);
    const rows = entry('ROWS');
    const outOfBounds = sections.map((s) => (s.tag === 'ROWS' ? { ...s, offset: good.length - 16 } : s));
    expectError(assemble(outOfBounds, { n, dims, fileBytes: good.length }), new RegExp(`section ROWS ends at ${good.length - 16 + rows.length} beyond the end of the artifact`));
    const misaligned = sections.map((s) => (s.tag === 'SCAL' ? { ...s, offset: entry('SCAL').offset + 4 } : s));
    expectError(assemble(misaligned, { n, dims }), /section SCAL offset \d+ is not 16-byte aligned/);
    const inHeader = sections.map((s) => (s.tag === 'VLEN' ? { ...s, offset: 16 } : s));
    expectError(assemble(inHeader, { n, dims }), /section VLEN starts at 16, inside the header/);
    expectError(assemble(sections.filter((s) => s.tag !== 'SIDX'), { n, dims }), /missing section SIDX/);
    expectError(assemble([...sections, sections[1]!], { n, dims }), /section VLEN appears twice/);
  });

  it('sizes that disagree with the header', () => {
    const { n, dims } = headerOf(good);
    expectError(assemble(sections, { n: n + 1, dims }), new RegExp(`section VLEN is ${n} bytes, expected ${n + 1}`));
    expectError(assemble(sections, { n, dims: dims + 1 }), new RegExp(`section ROWS is ${n * dims} bytes, expected ${n * (dims + 1)}`));
    const vocab = sections.find((s) => s.tag === 'VOCB')!.bytes;
    expectError(assemble(replaceData(sections, 'VOCB', vocab.slice(0, vocab.length - 1)), { n, dims }), /section VOCB is \d+ bytes, the word lengths add up to \d+/);
    const sidx = new Uint32Array(sections.find((s) => s.tag === 'SIDX')!.bytes.slice().buffer);
    sidx[5] = n + 3;
    expectError(assemble(replaceData(sections, 'SIDX', new Uint8Array(sidx.buffer)), { n, dims }), new RegExp(`section SIDX entry 5 is row ${n + 3}, beyond the vocabulary`));
    const fidx = new Uint32Array(sections.find((s) => s.tag === 'FIDX')!.bytes.slice().buffer);
    fidx[7] = n;
    expectError(assemble(replaceData(sections, 'FIDX', new Uint8Array(fidx.buffer)), { n, dims }), new RegExp(`section FIDX entry 7 is row ${n}, beyond the vocabulary`));
    const flags = sections.find((s) => s.tag === 'VFLG')!.bytes;
    expectError(assemble(replaceData(sections, 'VFLG', flags.slice(0, flags.length - 2)), { n, dims }), new RegExp(`section VFLG is ${2 * n - 2} bytes, expected ${2 * n}`));
    const anto = new Uint32Array(sections.find((s) => s.tag === 'ANTO')!.bytes.slice().buffer);
    anto[1] = n + 9;
    expectError(assemble(replaceData(sections, 'ANTO', new Uint8Array(anto.buffer)), { n, dims }), new RegExp(`section ANTO entry 1 is row ${n + 9}, beyond the vocabulary`));
    expectError(assemble(replaceData(sections, 'ANTO', new Uint8Array(12)), { n, dims }), /section ANTO is 12 bytes, not a whole number of u32 pairs/);
  });

  it('manifest that is not JSON, not an object, or disagrees with the header', () => {
    const { n, dims } = headerOf(good);
    expectError(assemble(replaceSection(sections, 'MANI', enc.encode('{"id": "x", oops')), { n, dims }), /manifest is not valid JSON/);
    expectError(assemble(replaceSection(sections, 'MANI', new Uint8Array([0xff, 0xfe, 0x7b])), { n, dims }), /manifest is not valid JSON/);
    expectError(assemble(replaceSection(sections, 'MANI', enc.encode('[1,2]')), { n, dims }), /manifest is not a JSON object/);
    expectError(withManifest(good, (m) => ({ ...m, dimensions: dims + 1 })), new RegExp(`manifest says ${dims + 1} dimensions, header says ${dims}`));
    expectError(withManifest(good, (m) => ({ ...m, vocabularySize: 1 })), /manifest says vocabularySize 1/);
    expectError(withManifest(good, (m) => ({ ...m, quantization: 'f16' })), /unsupported quantization "f16"/);
    expectError(withManifest(good, (m) => ({ ...m, checksum: 'murmur3:00000000' })), /manifest checksum murmur3:00000000 does not match the content/);
    expectError(withManifest(good, (m) => ({ ...m, id: '' })), /manifest has no id/);
    // Re-assembling with the untouched manifest is accepted (the helper itself is sound).
    expect(parseArtifact(toArrayBuffer(withManifest(good, () => undefined))).manifest.id).toBe('test-model');
  });

  it('a stored content checksum that disagrees with the sections', () => {
    const { n, dims } = headerOf(good);
    expectError(assemble(sections, { n, dims, contentChecksum: 12345 }), /content checksum mismatch/);
  });
});
