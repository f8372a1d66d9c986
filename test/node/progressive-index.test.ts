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
import { incompleteAccesses, PartialIndex, type RowSource } from '../../core/partial-index';
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
  return { words, model, partial, buffer };
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

  it('with a RowSource, reads each row on first use and answers exactly like the loaded head', () => {
    const { words, model, buffer } = fixture();
    const headParsed = parseArtifact(buildHead(new Uint8Array(buffer), HEAD));
    const kernels = loadKernels();
    // An empty slot: the rows arrive through the source, from the head's bytes (as the browser
    // reads them from the head's file, browser/src/head-file.ts).
    const slot = kernels.allocMatrix(HEAD, DIMS);
    const present = new Set<number>();
    const source: RowSource = {
      ensure(rows) {
        for (const r of Array.from(rows)) {
          if (present.has(r)) continue;
          slot.rows().set(headParsed.rows.subarray(r * DIMS, (r + 1) * DIMS), r * DIMS);
          slot.scales()[r] = headParsed.scales[r]!;
          present.add(r);
        }
      },
      ensureAll() {
        this.ensure(Array.from({ length: HEAD }, (_, r) => r));
      },
    };
    const lazy = new PartialIndex(
      EmbeddingModel.fromParsed(headParsed, kernels, { matrix: slot }),
      model.manifest,
      source,
    );
    const req = {
      seedWords: [words[3]!, words[40]!],
      whitelistWords: [words[7]!, words[900]!, words[12]!],
      embeddingModelId: 'm',
    };
    const score = (index: PartialIndex | EmbeddingModel, body: unknown) =>
      JSON.stringify(scoreWords(body as never, { index, mappers: [], storedDimensions: new Map() }));
    const before = incompleteAccesses();
    expect(score(lazy, req)).toBe(score(model, req));
    expect(incompleteAccesses()).toBe(before);
    expect([...present].sort((a, b) => a - b)).toEqual([3, 7, 12, 40, 900]);
    const m = { words: [words[1]!, words[999]!] };
    expect(JSON.stringify(similarityMatrix(lazy, m))).toBe(JSON.stringify(similarityMatrix(model, m)));
    expect(present.size).toBe(7);
    // A scan reads every row first (and is an incomplete access, as without a source).
    const find = { seedWords: [words[3]!], embeddingModelId: 'm', limit: 10 };
    const eager = new PartialIndex(EmbeddingModel.fromParsed(headParsed, kernels), model.manifest);
    expect(score(lazy, find)).toBe(score(eager, find));
    expect(present.size).toBe(HEAD);
    // A row that cannot be read fails the request and counts as incomplete (final-answer.ts then
    // answers from the complete model).
    const other = kernels.allocMatrix(HEAD, DIMS);
    const broken = new PartialIndex(EmbeddingModel.fromParsed(headParsed, kernels, { matrix: other }), model.manifest, {
      ensure: () => {
        throw new Error('unreadable');
      },
      ensureAll: () => {
        throw new Error('unreadable');
      },
    });
    const atFailure = incompleteAccesses();
    expect(() => score(broken, req)).toThrow('unreadable');
    expect(incompleteAccesses()).toBeGreaterThan(atFailure);
  });
});
