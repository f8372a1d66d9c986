/**
 * core/partial-index.ts PartialIndex: a model's head (build/model-heads.ts) scored as the
 * full model. Results that read only head rows equal the full model's exactly; a word past the
 * head or a scan of the whole vocabulary counts as an incomplete access.
 */
import { describe, expect, it } from 'vitest';
import { parseArtifact } from '../../core/artifact';
import { EmbeddingModel } from '../../core/model';
import { scoreWords, similarityMatrix } from '../../core/scoring';
import { buildHead } from '../../build/model-heads';
import { loadKernels } from '../../build/load-model';
import { incompleteAccesses, PartialIndex } from '../../core/partial-index';
import { modelFromVectors } from './support/model-fixture';

const N = 3000;
const HEAD = 1000;
const DIMS = 24;

function fixture() {
  const words = Array.from({ length: N }, (_, i) => `w${i.toString(36)}x`);
  let seed = 5;
  const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const vectors = new Float32Array(N * DIMS).map(() => rand());
  const { model, buffer } = modelFromVectors(words, vectors, DIMS);
  const headParsed = parseArtifact(buildHead(new Uint8Array(buffer), HEAD));
  const partial = new PartialIndex(EmbeddingModel.fromParsed(headParsed, loadKernels()), model.manifest);
  return { words, model, partial };
}

describe('PartialIndex', () => {
  it('has the full model identity and answers head-only requests exactly like the full model', () => {
    const { words, model, partial } = fixture();
    expect(partial.size).toBe(N);
    expect(partial.rows).toBe(HEAD);
    expect(partial.manifest).toEqual(model.manifest);
    const req = {
      seedWords: [words[3]!, words[40]!],
      whitelistWords: [words[7]!, words[900]!, words[12]!],
      embeddingModelId: 'm',
      dimensions: [{ id: 1, type: 'manual' as const, words: [words[5]!, words[6]!] }],
    };
    const before = incompleteAccesses();
    const fromHead = scoreWords(req as never, { index: partial, mappers: [], storedDimensions: new Map() });
    expect(incompleteAccesses()).toBe(before);
    expect(JSON.stringify(fromHead)).toBe(
      JSON.stringify(scoreWords(req as never, { index: model, mappers: [], storedDimensions: new Map() })),
    );
    const m = { words: [words[1]!, words[999]!, words[2]!] };
    expect(JSON.stringify(similarityMatrix(partial, m))).toBe(JSON.stringify(similarityMatrix(model, m)));
    expect(incompleteAccesses()).toBe(before);
  });

  it('counts a word past the head and whole-vocabulary scans as incomplete', () => {
    const { words, model, partial } = fixture();
    let before = incompleteAccesses();
    const req = { seedWords: [words[3]!], whitelistWords: [words[7]!, words[2500]!], embeddingModelId: 'm' };
    const fromHead = scoreWords(req as never, { index: partial, mappers: [], storedDimensions: new Map() });
    expect(incompleteAccesses()).toBeGreaterThan(before);
    expect(JSON.stringify(fromHead)).not.toBe(
      JSON.stringify(scoreWords(req as never, { index: model, mappers: [], storedDimensions: new Map() })),
    );
    before = incompleteAccesses();
    const find = scoreWords({ seedWords: [words[3]!], embeddingModelId: 'm', limit: 10 } as never, {
      index: partial,
      mappers: [],
      storedDimensions: new Map(),
    });
    expect(incompleteAccesses()).toBeGreaterThan(before);
    // Rows past the head never appear.
    expect(find.data.every((w: { modelRank: number }) => w.modelRank <= HEAD)).toBe(true);
    before = incompleteAccesses();
    expect(partial.rowOf(words[2999]!)).toBe(-1);
    expect(incompleteAccesses()).toBe(before + 1);
    expect(partial.word(1500)).toBe('');
    expect(partial.word(10)).toBe(words[10]);
  });
});
