/**
 * build/model-heads.ts: the head of an artifact is a valid artifact of its most frequent rows,
 * with the same words, int8 rows, scales and flags, antonym pairs inside the head, and the full
 * manifest as `partialOf`.
 */
import { describe, expect, it } from 'vitest';
import { decodeWord, parseArtifact, writeArtifact } from '../../core/artifact';
import { buildHead } from '../../build/model-heads';
import { TEST_MANIFEST } from './support/model-fixture';

function fullArtifact(n: number, dims: number): Uint8Array {
  const words = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? `Word${i}` : `word${i}`));
  const rows = new Int8Array(n * dims).map((_, i) => ((i * 37) % 255) - 127);
  const scales = new Float32Array(n).map((_, i) => 1 / (100 + i));
  const flags = new Uint16Array(n).map((_, i) => i % 5);
  return writeArtifact({
    manifest: TEST_MANIFEST,
    words,
    rows,
    scales,
    dims,
    flags,
    antonyms: [
      [1, 2],
      [3, n - 1],
      [5, 9],
    ],
  });
}

describe('buildHead', () => {
  it('keeps rows [0, k) byte for byte and records the full manifest', () => {
    const full = parseArtifact(fullArtifact(500, 8));
    const head = parseArtifact(buildHead(fullArtifact(500, 8), 100));
    expect(head.size).toBe(100);
    expect(head.dims).toBe(8);
    expect([...head.rows]).toEqual([...full.rows.subarray(0, 800)]);
    expect([...head.scales]).toEqual([...full.scales.subarray(0, 100)]);
    expect([...head.flags]).toEqual([...full.flags.subarray(0, 100)]);
    for (let r = 0; r < 100; r++)
      expect(decodeWord(head.vocab, head.wordOffsets, r)).toBe(decodeWord(full.vocab, full.wordOffsets, r));
    // Pairs leaving the head are dropped, both directions of the others kept.
    expect([...head.antonyms]).toEqual([1, 2, 2, 1, 5, 9, 9, 5]);
    const m = head.manifest as typeof head.manifest & { partialOf: typeof full.manifest };
    expect(m.partialOf).toEqual(full.manifest);
    expect(m.vocabularySize).toBe(100);
    expect(m.checksum).not.toBe(full.manifest.checksum);
  });

  it('a model smaller than the head size gives a head of the whole vocabulary', () => {
    const head = parseArtifact(buildHead(fullArtifact(50, 4), 100));
    expect(head.size).toBe(50);
  });
});
