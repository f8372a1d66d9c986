/**
 * The sub-word table (core/subword.ts, build/subword-table.ts): the documented n-gram and hash
 * rule, a deterministic build, the artifact's checks, and composition on the real default
 * model's table (the cross-runtime identity is the EngineSource suite's).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { buildSubwordTable } from '../../build/subword-table';
import { loadDefaultModel, loadKernels, readArrayBuffer } from '../../build/load-model';
import { DEFAULT_MODEL_ID, subwordTableFile } from '../../build/paths';
import { prng } from '../../core/prng';
import { ngramBuckets, parseSubwordTable, SubwordTable, SubwordTableError } from '../../core/subword';
import { sha256Hex } from '../../core/digest';
import { LocalService } from '../../cli/local';
import { SUBWORD_MODEL } from '../support/engine-source-suite';
import { modelFromVectors } from './support/model-fixture';

describe('n-grams', () => {
  it('n = 3..6 code points of "<word>" (trimmed, lower-cased), FNV-1a 32 of their UTF-8 bytes, modulo B', () => {
    // "<foobar>" has 8 code points: 6 + 5 + 4 + 3 n-grams, in order of start, then length.
    const all = ngramBuckets(' FooBar', 2 ** 32);
    expect(all).toHaveLength(18);
    // The 8th is "foobar" (start 1, length 6): FNV-1a 32 of "foobar" is 0xbf9cf968 (the FNV test vectors).
    expect(all[7]! >>> 0).toBe(0xbf9cf968);
    expect(Array.from(ngramBuckets('foobar', 1000))).toEqual(Array.from(all, (h) => (h >>> 0) % 1000));
    // Code points, not UTF-16 units or bytes: "<café>" has 6.
    expect(ngramBuckets('café', 97)).toHaveLength(4 + 3 + 2 + 1);
    expect(ngramBuckets('a', 97)).toHaveLength(1);
    expect(ngramBuckets('  ', 97)).toHaveLength(0);
  });

  it('linear in the word: at most 4 (L + 2) n-grams', () => {
    const word = 'x'.repeat(5000);
    expect(ngramBuckets(word, 101).length).toBeLessThanOrEqual(4 * (word.length + 2));
  });
});

/** A small model: 3,000 letter words of random vectors (seeded). */
function smallModel(): ArrayBuffer {
  const random = prng(7);
  const dims = 16;
  const words: string[] = [];
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (let i = 0; words.length < 3000; i++) {
    let w = '';
    const n = 3 + Math.floor(random() * 8);
    for (let k = 0; k < n; k++) w += letters[Math.floor(random() * 26)];
    if (!words.includes(w)) words.push(w);
  }
  const vectors = Float32Array.from({ length: words.length * dims }, () => random() - 0.5);
  return modelFromVectors(words, vectors, dims).buffer;
}

describe('the build', () => {
  it('is deterministic: the same model gives the same bytes (same checksum)', async () => {
    const model = new Uint8Array(smallModel());
    const a = buildSubwordTable(model, { buckets: 4096, epochs: 3 });
    const b = buildSubwordTable(model, { buckets: 4096, epochs: 3 });
    expect(await sha256Hex(b.bytes)).toBe(await sha256Hex(a.bytes));
    const parsed = parseSubwordTable(a.bytes.buffer as ArrayBuffer);
    expect(parsed.buckets).toBe(4096);
    expect(parsed.dims).toBe(16);
    expect(parsed.meta).toMatchObject({ modelId: 'm', hash: 'fnv1a32' });
    // Another setting is another table.
    const other = buildSubwordTable(model, { buckets: 4096, epochs: 2 });
    expect(await sha256Hex(other.bytes)).not.toBe(await sha256Hex(a.bytes));
  });

  it('a changed byte, another model build or another format is refused', () => {
    const model = new Uint8Array(smallModel());
    const { bytes, meta } = buildSubwordTable(model, { buckets: 1024, epochs: 1 });
    const kernels = loadKernels();
    const dims = 16;
    expect(() =>
      SubwordTable.load(bytes.slice().buffer as ArrayBuffer, kernels, { id: 'm', checksum: 'murmur3:0', dims }),
    ).toThrow(SubwordTableError);
    const table = SubwordTable.load(bytes.slice().buffer as ArrayBuffer, kernels, {
      id: 'm',
      checksum: meta.modelChecksum,
      dims,
    });
    expect(table.compose('abcdef')).toHaveLength(dims);
    table.release();
    const corrupt = bytes.slice();
    corrupt[corrupt.length - 100] ^= 1;
    expect(() => parseSubwordTable(corrupt.buffer as ArrayBuffer)).toThrow(/checksum/);
    const magic = bytes.slice();
    magic[0] = 0;
    expect(() => parseSubwordTable(magic.buffer as ArrayBuffer)).toThrow(/magic/);
  });
});

describe("the default model's table", () => {
  const file = subwordTableFile(DEFAULT_MODEL_ID);

  it('belongs to the model the EngineSource suite composes with', () => {
    expect(SUBWORD_MODEL).toBe(DEFAULT_MODEL_ID);
  });

  it('is small (at most 15 MB), matches the model, and composes a unit vector for any word with a letter', () => {
    expect(fs.statSync(file).size).toBeLessThanOrEqual(15_000_000);
    const kernels = loadKernels();
    const model = loadDefaultModel({ kernels });
    const table = SubwordTable.load(readArrayBuffer(file), kernels, {
      id: model.manifest.id,
      checksum: model.manifest.checksum,
      dims: model.dims,
    });
    for (const w of ['beautifull', 'doomscrolling', 'x', 'Ωμέγα', '東京タワーズ']) {
      const v = table.compose(w)!;
      let norm = 0;
      for (const x of v) norm += x * x;
      expect(Math.sqrt(norm), w).toBeCloseTo(1, 5);
    }
    // The same floats for the same word, whatever its case and spacing.
    expect(table.compose(' Beautifull ')).toEqual(table.compose('beautifull'));
    // A typo lands near its word.
    const typo = table.compose('beautifull')!;
    const near = Array.from(model.topK(typo, 10).rows, (r) => model.word(r));
    expect(near).toContain('beautiful');
  });

  it('word-scores: a composed word has modelRank vocabularySize + 1, quartile 4 and no mapper values', async () => {
    const svc = new LocalService({ build: false });
    const model = loadDefaultModel({ kernels: loadKernels() });
    const r = await svc.wordScores({
      seedWords: ['good'],
      whitelistWords: ['beautifull', 'good', 'zebra'],
      embeddingModelId: DEFAULT_MODEL_ID,
      mapperKeys: ['sentiment_valence'],
      subwordFallback: true,
    });
    const [composed, good] = r.data;
    expect(composed).toMatchObject({ word: 'beautifull', composed: true, modelRankQuartile: 4 });
    expect(composed!.modelRank).toBe(model.manifest.vocabularySize + 1);
    expect(composed!.mapperScores).toEqual({});
    expect(good!.mapperScores.sentiment_valence).toBeDefined();
  });
});
