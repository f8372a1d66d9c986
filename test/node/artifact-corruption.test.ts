/**
 * Model artifact corruption (core/artifact/): every corrupt file, crafted with the independent
 * assembler of the documented layout, is refused with an ArtifactError naming what is wrong.
 */
import { describe, expect, it } from 'vitest';
import { parseArtifact, writeArtifact } from '../../core/artifact';
import {
  assemble,
  enc,
  expectError,
  headerOf,
  makeInput,
  randomVocabulary,
  replaceData,
  replaceSection,
  rng,
  sectionsOf,
  toArrayBuffer,
  withManifest,
} from './support/artifact-assembler';

describe('artifact corruption', () => {
  const words = randomVocabulary(200, rng(42));
  // With flags and antonym links, so every section has bytes to corrupt.
  const good = writeArtifact({
    ...makeInput(words, 24, 42),
    flags: Uint16Array.from(words, (_, i) => i * 7),
    antonyms: [
      [0, 1],
      [5, 3],
      [9, 2],
    ],
  });
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
      expectError(
        good.slice(0, cut),
        new RegExp(
          `truncated: section ${tag} ends at ${e.offset + e.length} beyond the end of the artifact \\(${cut} bytes\\)`,
        ),
      );
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
        expectError(
          b,
          new RegExp(`checksum mismatch in section ${tag} \\(stored [0-9a-f]{8}, computed [0-9a-f]{8}\\)`),
        );
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
    expectError(
      assemble(outOfBounds, { n, dims, fileBytes: good.length }),
      new RegExp(`section ROWS ends at ${good.length - 16 + rows.length} beyond the end of the artifact`),
    );
    const misaligned = sections.map((s) => (s.tag === 'SCAL' ? { ...s, offset: entry('SCAL').offset + 4 } : s));
    expectError(assemble(misaligned, { n, dims }), /section SCAL offset \d+ is not 16-byte aligned/);
    const inHeader = sections.map((s) => (s.tag === 'VLEN' ? { ...s, offset: 16 } : s));
    expectError(assemble(inHeader, { n, dims }), /section VLEN starts at 16, inside the header/);
    expectError(
      assemble(
        sections.filter((s) => s.tag !== 'SIDX'),
        { n, dims },
      ),
      /missing section SIDX/,
    );
    expectError(assemble([...sections, sections[1]!], { n, dims }), /section VLEN appears twice/);
  });

  it('sizes that disagree with the header', () => {
    const { n, dims } = headerOf(good);
    expectError(assemble(sections, { n: n + 1, dims }), new RegExp(`section VLEN is ${n} bytes, expected ${n + 1}`));
    expectError(
      assemble(sections, { n, dims: dims + 1 }),
      new RegExp(`section ROWS is ${n * dims} bytes, expected ${n * (dims + 1)}`),
    );
    const vocab = sections.find((s) => s.tag === 'VOCB')!.bytes;
    expectError(
      assemble(replaceData(sections, 'VOCB', vocab.slice(0, vocab.length - 1)), { n, dims }),
      /section VOCB is \d+ bytes, the word lengths add up to \d+/,
    );
    const sidx = new Uint32Array(sections.find((s) => s.tag === 'SIDX')!.bytes.slice().buffer);
    sidx[5] = n + 3;
    expectError(
      assemble(replaceData(sections, 'SIDX', new Uint8Array(sidx.buffer)), { n, dims }),
      new RegExp(`section SIDX entry 5 is row ${n + 3}, beyond the vocabulary`),
    );
    const fidx = new Uint32Array(sections.find((s) => s.tag === 'FIDX')!.bytes.slice().buffer);
    fidx[7] = n;
    expectError(
      assemble(replaceData(sections, 'FIDX', new Uint8Array(fidx.buffer)), { n, dims }),
      new RegExp(`section FIDX entry 7 is row ${n}, beyond the vocabulary`),
    );
    const flags = sections.find((s) => s.tag === 'VFLG')!.bytes;
    expectError(
      assemble(replaceData(sections, 'VFLG', flags.slice(0, flags.length - 2)), { n, dims }),
      new RegExp(`section VFLG is ${2 * n - 2} bytes, expected ${2 * n}`),
    );
    const anto = new Uint32Array(sections.find((s) => s.tag === 'ANTO')!.bytes.slice().buffer);
    anto[1] = n + 9;
    expectError(
      assemble(replaceData(sections, 'ANTO', new Uint8Array(anto.buffer)), { n, dims }),
      new RegExp(`section ANTO entry 1 is row ${n + 9}, beyond the vocabulary`),
    );
    expectError(
      assemble(replaceData(sections, 'ANTO', new Uint8Array(12)), { n, dims }),
      /section ANTO is 12 bytes, not a whole number of u32 pairs/,
    );
  });

  it('manifest that is not JSON, not an object, or disagrees with the header', () => {
    const { n, dims } = headerOf(good);
    expectError(
      assemble(replaceSection(sections, 'MANI', enc.encode('{"id": "x", oops')), { n, dims }),
      /manifest is not valid JSON/,
    );
    expectError(
      assemble(replaceSection(sections, 'MANI', new Uint8Array([0xff, 0xfe, 0x7b])), { n, dims }),
      /manifest is not valid JSON/,
    );
    expectError(
      assemble(replaceSection(sections, 'MANI', enc.encode('[1,2]')), { n, dims }),
      /manifest is not a JSON object/,
    );
    expectError(
      withManifest(good, (m) => ({ ...m, dimensions: dims + 1 })),
      new RegExp(`manifest says ${dims + 1} dimensions, header says ${dims}`),
    );
    expectError(
      withManifest(good, (m) => ({ ...m, vocabularySize: 1 })),
      /manifest says vocabularySize 1/,
    );
    expectError(
      withManifest(good, (m) => ({ ...m, quantization: 'f16' })),
      /unsupported quantization "f16"/,
    );
    expectError(
      withManifest(good, (m) => ({ ...m, checksum: 'murmur3:00000000' })),
      /manifest checksum murmur3:00000000 does not match the content/,
    );
    expectError(
      withManifest(good, (m) => ({ ...m, id: '' })),
      /manifest has no id/,
    );
    // Re-assembling with the untouched manifest is accepted (the helper itself is sound).
    expect(parseArtifact(toArrayBuffer(withManifest(good, () => undefined))).manifest.id).toBe('test-model');
  });

  it('a stored content checksum that disagrees with the sections', () => {
    const { n, dims } = headerOf(good);
    expectError(assemble(sections, { n, dims, contentChecksum: 12345 }), /content checksum mismatch/);
  });
});
