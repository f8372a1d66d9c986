/**
 * Model artifact format (core/artifact/): murmur3 reference values, round trip, zero-copy views,
 * sorted index order, writer input checks and the vocabulary sections (flags, folded index,
 * antonym links); the writer equals an independent assembler of the documented layout.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ARTIFACT_FORMAT_VERSION, decodeWord, murmur3, parseArtifact, writeArtifact } from '../../core/artifact';
import { foldKey, VOCAB_FLAG } from '../../core/vocab-quality';
import {
  assemble,
  enc,
  headerOf,
  makeInput,
  mm3,
  randomVocabulary,
  referenceSortedIndex,
  rng,
  sectionsOf,
  toArrayBuffer,
} from './support/artifact-assembler';

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
        expect({
          ...manifest,
          dimensions: undefined,
          vocabularySize: undefined,
          quantization: undefined,
          formatVersion: undefined,
          checksum: undefined,
        }).toEqual({
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
    const parsed = parseArtifact(
      toArrayBuffer(
        writeArtifact({
          ...makeInput(words, 5, 3),
          flags,
          antonyms: [
            [3, 1],
            [1, 3],
            [0, 9],
          ],
        }),
      ),
    );
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
    expect([...parsed.flags]).toEqual([
      VOCAB_FLAG.LETTER | VOCAB_FLAG.DICTIONARY,
      0,
      VOCAB_FLAG.LETTER | VOCAB_FLAG.DICTIONARY,
    ]);
    expect(parsed.antonyms.length).toBe(0);
    expect(() => writeArtifact({ ...ok, antonyms: [[0, 3]] })).toThrow(
      /antonym pair \(0, 3\) is outside the vocabulary/,
    );
    expect(() => writeArtifact({ ...ok, flags: new Uint16Array(2) })).toThrow(/flags has 2 values, expected 3/);
  });
});
