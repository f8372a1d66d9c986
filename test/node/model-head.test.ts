/**
 * core/model-head.ts: the head the offline scorer derives from a parsed model (and keeps in
 * IndexedDB beside it) has the same sections as the head artifact build/model-heads.ts writes
 * (sorted/folded indexes and antonyms restricted to the head in the same order), packed into
 * one buffer, with the full manifest as `partialOf`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseArtifact, writeArtifact, type ParsedArtifact } from '../../core/artifact';
import { headOf, HEAD_ROWS } from '../../core/model-head';
import { buildHead, HEAD_ROWS as BUILD_HEAD_ROWS } from '../../build/model-heads';
import type { HeadManifest } from '../../core/partial-index';
import { TEST_MANIFEST } from './support/model-fixture';

const SECTIONS = [
  'rows',
  'scales',
  'wordLengths',
  'vocab',
  'wordOffsets',
  'sortedIndex',
  'flags',
  'foldedIndex',
  'antonyms',
] as const;

function expectSameSections(derived: ParsedArtifact, written: ParsedArtifact): void {
  expect(derived.size).toBe(written.size);
  expect(derived.dims).toBe(written.dims);
  for (const s of SECTIONS) {
    const a = derived[s];
    const b = written[s];
    expect(a.length, s).toBe(b.length);
    expect(
      Buffer.compare(
        Buffer.from(a.buffer, a.byteOffset, a.byteLength),
        Buffer.from(b.buffer, b.byteOffset, b.byteLength),
      ),
      s,
    ).toBe(0);
  }
}

function artifact(n: number, dims: number): Uint8Array {
  // Mixed case, diacritics and shared lower-cased keys, so the sorted and folded orders differ from row order.
  const stems = ['Zebra', 'apple', 'Éclair', 'eclair', 'apple', 'Ápple', 'zoo', 'Mañana', 'manana'];
  const words = Array.from({ length: n }, (_, i) => `${stems[i % stems.length]}${i % 7 === 0 ? '' : String(n - i)}`);
  const unique = [...new Set(words)];
  while (unique.length < n) unique.push(`w${unique.length}`);
  const rows = new Int8Array(n * dims).map((_, i) => ((i * 37) % 255) - 127);
  const scales = new Float32Array(n).map((_, i) => 1 / (100 + i));
  const flags = new Uint16Array(n).map((_, i) => i % 5);
  return writeArtifact({
    manifest: TEST_MANIFEST,
    words: unique,
    rows,
    scales,
    dims,
    flags,
    antonyms: (
      [
        [1, 2],
        [3, n - 1],
        [5, 9],
        [90, 99],
        [99, 100],
      ] as Array<[number, number]>
    ).filter(([a, b]) => a < n && b < n),
  });
}

describe('headOf', () => {
  it('equals the head artifact of the build, section by section, in one buffer', () => {
    const bytes = artifact(400, 8);
    const derived = headOf(parseArtifact(bytes), 100)!;
    expectSameSections(derived, parseArtifact(buildHead(bytes, 100)));
    for (const s of SECTIONS) expect(derived[s].buffer, s).toBe(derived.rows.buffer);
    expect(derived.byteLength).toBe(derived.rows.buffer.byteLength);
    const m = derived.manifest as HeadManifest;
    expect(m.partialOf).toEqual(parseArtifact(bytes).manifest);
    expect(m.vocabularySize).toBe(100);
    expect([...derived.antonyms]).toEqual([1, 2, 2, 1, 5, 9, 9, 5, 90, 99, 99, 90]);
  });

  it('is null for a model not larger than the head', () => {
    expect(headOf(parseArtifact(artifact(100, 8)), 100)).toBeNull();
    expect(HEAD_ROWS).toBe(BUILD_HEAD_ROWS);
  });

  const full = path.join(__dirname, '..', '..', 'build', 'generated', 'models', 'en-glove-6b-100d.emb');
  const head = path.join(__dirname, '..', '..', 'build', 'generated', 'model-heads', 'en-glove-6b-100d.emb');
  it.runIf(fs.existsSync(full) && fs.existsSync(head))('equals the served head of the default model', () => {
    const derived = headOf(parseArtifact(new Uint8Array(fs.readFileSync(full))))!;
    const served = parseArtifact(new Uint8Array(fs.readFileSync(head)));
    expectSameSections(derived, served);
    expect((derived.manifest as HeadManifest).partialOf).toEqual((served.manifest as HeadManifest).partialOf);
  });
});
