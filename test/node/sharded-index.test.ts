/**
 * Row sharding in one process (core/sharded-index.ts, build/model-shards.ts): the real default
 * model (341k x 100) cut with cutPart into five unequal parts (one of a single row) and with
 * cutMap into its word map, each loaded on kernels of its own as a model host loads it, the parts
 * reached through a PartAccess over those local models. Through ShardedCall and ShardedView, as
 * worker/hosts/sharded.ts and worker/hosts/host.ts run them:
 *   - topK equals the whole model's bit for bit (rows and scores) for 200 seeded queries (random,
 *     real word vectors, centroids of real words, the zero query) and k 1, 10, 1000; with rank
 *     cutoffs inside a part, on its boundaries, 0, fractional and beyond the size; with row lists
 *     spread over the parts (repeats, rows past the cutoff); refusals are the kernel's;
 *   - scores, centroid, similarityMatrix and vector equal the whole model's;
 *   - the engine (core/engine.ts) on the view answers word-scores and text-scores deep-equal to the
 *     engine on the whole model;
 *   - mergeTopK gives ties to the lower global row; the row cache refuses a call needing more rows
 *     than it holds, never evicts a row another call has pinned, and serves released rows again.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
// GloVe: the English model the aligned French model (FR) shares its space with.
import { GLOVE_MODEL_FILE as DEFAULT_MODEL_FILE, GLOVE_MODEL_ID as DEFAULT_MODEL_ID } from '../../build/glove-model';
import { languageFile } from '../../build/lang-data';
import { loadKernels, readArrayBuffer } from '../../build/load-model';
import { cutMap, cutPart } from '../../build/model-shards';
import { GENERATED } from '../../build/wrangler';
import { parseArtifact } from '../../core/artifact';
import { createEngine, LoadedModel, type EngineSource } from '../../core/engine';
import { EmbeddingModel } from '../../core/model';
import { mapId, partId } from '../../core/placement';
import { ApiError } from '../../core/problem';
import { prng } from '../../core/prng';
import {
  isShardPart,
  mergeTopK,
  partOf,
  ROW_CACHE_ROWS,
  RowCache,
  RowCacheBusy,
  RowCacheFull,
  ShardedCall,
  ShardedView,
  type PartAccess,
  type ShardedModel,
  type ShardPart,
  type ShardTiming,
} from '../../core/sharded-index';
import type { StoredDimensionSeeds } from '../../core/scoring';
import { parseLanguageData, type LanguageData } from '../../core/tokenizer';
import type { TopKOptions, TopKResult } from '../../core/types';

const ID = DEFAULT_MODEL_ID;
const FR = 'fr-aligned-glove-6b-100d';
const FR_FILE = path.join(GENERATED, 'models', `${FR}.emb`);
let frLoaded: LoadedModel | undefined;

let whole: EmbeddingModel;
let wholeLoaded: LoadedModel;
let parts: ShardPart[];
let partModels: EmbeddingModel[];
let map: EmbeddingModel;
let mapLoaded: LoadedModel;
let model: ShardedModel;
let n: number;
let dims: number;
let lang: LanguageData;

/** Boundaries of the five parts: unequal, one of them a single row. */
let bounds: number[];

/** A PartAccess over the local part models that records every call. */
function localAccess() {
  const log = {
    rows: [] as Array<{ part: number; rows: number[] }>,
    scans: [] as Array<{ part: number; k: number; options: TopKOptions }>,
    lists: [] as Array<{ part: number; rows: number }>,
  };
  const access: PartAccess = {
    async rows(part, rows) {
      log.rows.push({ part, rows: [...rows] });
      return partModels[part]!.rawRows(rows);
    },
    async topK(part, query, k, options) {
      log.scans.push({ part, k, options });
      const started = performance.now();
      const result = partModels[part]!.topK(query, k, options);
      return { ...result, ms: performance.now() - started };
    },
    async scores(part, query, rows) {
      log.lists.push({ part, rows: rows.length });
      return partModels[part]!.scores(query, rows);
    },
  };
  return { access, log };
}

/** One call on the view of `m`, run as a host runs it (again until nothing is missing). */
async function viaView<T>(
  work: (view: ShardedView) => T | Promise<T>,
  m: ShardedModel = model,
  access: PartAccess = localAccess().access,
): Promise<{ result: T; timing: ShardTiming }> {
  const call = new ShardedCall();
  const result = await call.run(async () => work(call.view(ID, (timing) => new ShardedView(m, access, timing))));
  return { result, timing: call.timing };
}

/** A sharded model over the same map and parts with a row cache of `rows` slots on kernels of its own. */
function freshModel(rows: number): ShardedModel {
  const kernels = loadKernels();
  return { ...model, cache: new RowCache(kernels, kernels.allocMatrix(rows, dims)) };
}

const bits = (a: Float32Array | null): number[] | null =>
  a ? Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length)) : null;

function expectSameTopK(got: TopKResult, want: TopKResult, label: string): void {
  expect(Array.from(got.rows), label).toEqual(Array.from(want.rows));
  expect(bits(got.scores), label).toEqual(bits(want.scores));
}

/** Seeded queries: random vectors, real word vectors (from every part), centroids of real words, negated words, the zero query. */
function queries(count: number, seed: number): Array<{ label: string; q: Float32Array }> {
  const rand = prng(seed);
  const row = (): number => {
    // Half of the rows from the frequent head, half from any part (the single-row part included).
    const r = rand();
    if (r < 0.05) return bounds[2]!;
    return r < 0.5 ? Math.floor(rand() * 5000) : Math.floor(rand() * n);
  };
  const out: Array<{ label: string; q: Float32Array }> = [{ label: 'zero', q: new Float32Array(dims) }];
  for (let i = 1; i < count; i++) {
    const kind = i % 4;
    if (kind === 0) {
      const q = new Float32Array(dims);
      for (let d = 0; d < dims; d++) q[d] = rand() + rand() + rand() - 1.5;
      out.push({ label: `random ${i}`, q });
    } else if (kind === 1) {
      const r = row();
      out.push({ label: `word ${r} (${whole.word(r)})`, q: whole.vector(r) });
    } else if (kind === 2) {
      const rows = Array.from({ length: 2 + Math.floor(rand() * 4) }, row);
      out.push({ label: `centroid ${rows.join(',')}`, q: whole.centroid(rows)! });
    } else {
      const r = row();
      out.push({ label: `-word ${r}`, q: whole.vector(r).map((x) => -x) });
    }
  }
  return out;
}

beforeAll(() => {
  whole = EmbeddingModel.fromArrayBuffer(readArrayBuffer(DEFAULT_MODEL_FILE), loadKernels());
  wholeLoaded = new LoadedModel(ID, whole);
  n = whole.size;
  dims = whole.dims;
  bounds = [0, 777, 50_000, 50_001, 200_000, n];
  const parsed = parseArtifact(readArrayBuffer(DEFAULT_MODEL_FILE));
  parts = bounds.slice(1).map((end, i) => ({ id: partId(ID, bounds[i]!, end), start: bounds[i]!, end }));
  // Each part and the map on kernels of their own, as each host isolate holds them.
  partModels = parts.map((p) => EmbeddingModel.fromArrayBuffer(cutPart(parsed, p.id, p.start, p.end), loadKernels()));
  const mapKernels = loadKernels();
  map = EmbeddingModel.fromArrayBuffer(cutMap(parsed, mapId(ID)), mapKernels);
  mapLoaded = new LoadedModel(mapId(ID), map);
  model = {
    manifest: whole.manifest,
    map,
    parts,
    cache: new RowCache(mapKernels, mapKernels.allocMatrix(ROW_CACHE_ROWS, dims)),
  };
  lang = parseLanguageData(fs.readFileSync(languageFile('en')));
}, 300_000);

describe('the cut artifacts', () => {
  it('parts hold their rows of the whole matrix and their words; the map holds every word', () => {
    expect(n).toBeGreaterThan(300_000);
    for (const [i, p] of parts.entries()) {
      const m = partModels[i]!;
      expect(m.size).toBe(p.end - p.start);
      expect(isShardPart(m.manifest)).toBe(true);
      for (const r of [p.start, p.end - 1, (p.start + p.end) >>> 1]) {
        expect(m.word(r - p.start)).toBe(whole.word(r));
        expect(bits(m.vector(r - p.start))).toEqual(bits(whole.vector(r)));
        expect(partOf(parts, r)).toBe(i);
      }
    }
    expect(map.size).toBe(n);
    expect(map.dims).toBe(1);
    expect(isShardPart(map.manifest)).toBe(false);
    for (const r of [0, 776, 777, 50_000, 50_001, 199_999, 200_000, n - 1]) expect(map.word(r)).toBe(whole.word(r));
    for (const w of ['happy', 'the', 'Paris', 'zzzxq']) expect(map.rowOf(w)).toBe(whole.rowOf(w));
  });
});

describe('ShardedView.topK equals the whole model bit for bit', () => {
  it('200 seeded queries, k 1, 10 and 1000, every part scanned once per scan', async () => {
    const { access, log } = localAccess();
    for (const { label, q } of queries(200, 1)) {
      for (const k of [1, 10, 1000]) {
        const { result, timing } = await viaView((v) => v.topK(q, k), model, access);
        expectSameTopK(result, whole.topK(q, k), `${label} k=${k}`);
        expect(timing.rounds).toBe(2);
        expect(timing.partScans).toBe(parts.length);
      }
    }
    // Each part got the query's k over all its rows (the local cutoff of a part is its size).
    expect(log.scans.length).toBe(200 * 3 * parts.length);
    for (const s of log.scans) expect(s.options).toEqual({ rankCutoff: parts[s.part]!.end - parts[s.part]!.start });
    expect(log.rows).toEqual([]);
  });

  it('the zero query: every row ties at 0, the lowest rows win across parts', async () => {
    const zero = new Float32Array(dims);
    for (const [k, cutoff] of [
      [1000, undefined],
      [1000, 50_001],
      [10, 778],
      [3, 50_000],
    ] as const) {
      const options = cutoff === undefined ? {} : { rankCutoff: cutoff };
      const { result } = await viaView((v) => v.topK(zero, k, options));
      expectSameTopK(result, whole.topK(zero, k, options), `zero k=${k} cutoff=${cutoff}`);
      expect(result.rows[0]).toBe(0);
    }
    // Rows only from the later parts: the lowest listed rows, in row order.
    const rows = [n - 1, 200_000, 60_000, 50_000, 199_999, 777];
    const { result } = await viaView((v) => v.topK(zero, 4, { rows }));
    expect(Array.from(result.rows)).toEqual([777, 50_000, 60_000, 199_999]);
    expectSameTopK(result, whole.topK(zero, 4, { rows }), 'zero rows');
  });

  it('with rank cutoffs inside a part, on part boundaries, 0, fractional, negative and beyond the size', async () => {
    const cutoffs = [
      0,
      1,
      500,
      776,
      777,
      778,
      49_999,
      50_000,
      50_001,
      50_002,
      123_456.25,
      199_999,
      200_000,
      200_001,
      n - 1,
      n,
      n + 10,
      Infinity,
      -3,
      0.5,
    ];
    const { access, log } = localAccess();
    for (const { label, q } of queries(40, 2)) {
      for (const rankCutoff of cutoffs) {
        for (const k of [1, 10, 1000]) {
          const before = log.scans.length;
          const { result } = await viaView((v) => v.topK(q, k, { rankCutoff }), model, access);
          expectSameTopK(result, whole.topK(q, k, { rankCutoff }), `${label} k=${k} rankCutoff=${rankCutoff}`);
          // Only the parts with rows under the cutoff are scanned, each up to the cutoff.
          const cut = Math.max(0, Math.min(n, Math.ceil(rankCutoff)));
          const scanned = log.scans.slice(before);
          expect(scanned.map((s) => s.part)).toEqual(parts.flatMap((p, i) => (p.start < cut ? [i] : [])));
          for (const s of scanned) {
            const p = parts[s.part]!;
            expect(s.options.rankCutoff).toBe(Math.min(p.end, cut) - p.start);
          }
        }
      }
    }
  });

  it('with row lists over several parts: repeats, unsorted, past the cutoff, one part only, empty', async () => {
    const rand = prng(3);
    const { access, log } = localAccess();
    for (const { label, q } of queries(60, 4)) {
      const list: number[] = [];
      for (let i = 0; i < 1 + Math.floor(rand() * 3000); i++) list.push(Math.floor(rand() * n));
      // Repeats and every boundary row.
      list.push(...list.slice(0, 50), 0, 776, 777, 49_999, 50_000, 50_001, 199_999, 200_000, n - 1, 50_000);
      const lists: Array<[string, ArrayLike<number>]> = [
        ['spread', list],
        ['Int32Array', Int32Array.from(list)],
        ['part 1 only', list.filter((r) => r >= 777 && r < 50_000)],
        ['single-row part', [50_000, 50_000]],
        ['empty', []],
      ];
      for (const [name, rows] of lists) {
        for (const rankCutoff of [undefined, 50_001, 123_457, 777, 0]) {
          for (const k of [1, 10, 1000]) {
            const options = rankCutoff === undefined ? { rows } : { rows, rankCutoff };
            const before = log.scans.length;
            const { result } = await viaView((v) => v.topK(q, k, options), model, access);
            expectSameTopK(result, whole.topK(q, k, options), `${label} ${name} k=${k} rankCutoff=${rankCutoff}`);
            // A part is scanned only over its listed rows under the cutoff, as local rows.
            const cut = rankCutoff ?? n;
            for (const s of log.scans.slice(before)) {
              const p = parts[s.part]!;
              const want = [...new Set(Array.from(rows))]
                .filter((r) => r >= p.start && r < Math.min(p.end, cut))
                .sort((a, b) => a - b)
                .map((r) => r - p.start);
              expect(Array.from(s.options.rows!)).toEqual(want);
            }
            const scannedParts = new Set(log.scans.slice(before).map((s) => s.part));
            for (const [i, p] of parts.entries())
              expect(scannedParts.has(i)).toBe(Array.from(rows).some((r) => r >= p.start && r < Math.min(p.end, cut)));
          }
        }
      }
    }
  });

  it('k 0, k above the eligible rows, and the refusals of the kernel (k > 1000, NaN cutoff, bad rows, bad query)', async () => {
    const q = whole.vector(whole.rowOf('happy'));
    for (const [k, options] of [
      [0, {}],
      [0, { rows: [5, 60_000] }],
      [1000, { rankCutoff: 3 }],
      [1000, { rows: [n - 1, 5, 60_000, 5] }],
      [1000, { rankCutoff: 778, rows: [777, 776, 778] }],
    ] as Array<[number, TopKOptions]>) {
      const { result } = await viaView((v) => v.topK(q, k, options));
      expectSameTopK(result, whole.topK(q, k, options), `k=${k} ${JSON.stringify(options)}`);
    }
    const refusals: Array<[Float32Array, number, TopKOptions]> = [
      [q, 1001, {}],
      [q, -1, {}],
      [q, 1.5, {}],
      [q, 10, { rankCutoff: NaN }],
      [q, 10, { rows: [1, n] }],
      [q, 10, { rows: [-1] }],
      [q, 10, { rows: [0.5] }],
      [q.subarray(1), 10, {}],
    ];
    for (const [query, k, options] of refusals) {
      let wholeError: unknown = null;
      try {
        whole.topK(query, k, options);
      } catch (err) {
        wholeError = err;
      }
      expect(wholeError).toBeInstanceOf(RangeError);
      const { access, log } = localAccess();
      await expect(viaView((v) => v.topK(query, k, options), model, access)).rejects.toThrow(
        (wholeError as Error).message,
      );
      expect(log.scans).toEqual([]);
    }
  });

  it('the same scan twice in one call is fetched once; the parts answer each distinct scan', async () => {
    const { access, log } = localAccess();
    const q1 = whole.vector(whole.rowOf('river'));
    const q2 = whole.vector(whole.rowOf('money'));
    const { result, timing } = await viaView(
      (v) => [v.topK(q1, 10), v.topK(q1, 10), v.topK(q2, 10, { rankCutoff: 60_000 }), v.topK(q1, 10)],
      model,
      access,
    );
    expectSameTopK(result[0]!, whole.topK(q1, 10), 'q1');
    expectSameTopK(result[1]!, whole.topK(q1, 10), 'q1 again');
    expectSameTopK(result[2]!, whole.topK(q2, 10, { rankCutoff: 60_000 }), 'q2');
    expectSameTopK(result[3]!, whole.topK(q1, 10), 'q1 third');
    expect(timing.rounds).toBe(3);
    expect(log.scans.length).toBe(parts.length + 4);
  });
});

describe('vectors through the view equal the whole model bit for bit', () => {
  it('scores, centroid, similarityMatrix and vector over rows of every part', async () => {
    const rand = prng(5);
    for (let t = 0; t < 30; t++) {
      const rows = Array.from({ length: 1 + Math.floor(rand() * 400) }, () =>
        rand() < 0.1 ? bounds[1 + Math.floor(rand() * 4)]! - (rand() < 0.5 ? 1 : 0) : Math.floor(rand() * n),
      );
      rows.push(...rows.slice(0, 5));
      const q = t % 3 === 0 ? new Float32Array(dims).map(() => rand() - 0.5) : whole.vector(rows[0]!);
      const small = rows.slice(0, 40);
      const { result } = await viaView((v) => ({
        scores: v.scores(q, rows),
        centroid: v.centroid(rows),
        matrix: v.similarityMatrix(small),
        vectors: small.map((r) => v.vector(r)),
        empty: v.centroid([]),
        none: v.scores(q, []),
      }));
      expect(bits(result.scores), `scores ${t}`).toEqual(bits(whole.scores(q, rows)));
      expect(bits(result.centroid), `centroid ${t}`).toEqual(bits(whole.centroid(rows)));
      expect(bits(result.matrix), `matrix ${t}`).toEqual(bits(whole.similarityMatrix(small)));
      expect(result.vectors.map(bits), `vectors ${t}`).toEqual(small.map((r) => bits(whole.vector(r))));
      expect(result.empty).toBeNull();
      expect(result.none.length).toBe(0);
    }
  });

  it('rows are fetched from the parts that hold them, once per call, as local rows', async () => {
    const { access, log } = localAccess();
    const rows = [n - 1, 5, 50_000, 776, 777, 5, 199_999, 200_000, 49_999, 50_001];
    const fresh = freshModel(64);
    const { result, timing } = await viaView((v) => v.similarityMatrix(rows), fresh, access);
    expect(bits(result)).toEqual(bits(whole.similarityMatrix(rows)));
    expect(timing.rounds).toBe(2);
    expect(log.rows).toEqual([
      { part: 0, rows: [5, 776] },
      { part: 1, rows: [0, 49_999 - 777] },
      { part: 2, rows: [0] },
      { part: 3, rows: [0, 199_999 - 50_001] },
      { part: 4, rows: [0, n - 1 - 200_000] },
    ]);
    // Words come from the map, never from the parts.
    const { result: words } = await viaView((v) => rows.map((r) => v.word(r)), fresh, access);
    expect(words).toEqual(rows.map((r) => whole.word(r)));
    expect(log.rows.length).toBe(5);
  });
});

describe('the engine on the view answers as on the whole model', () => {
  const STORED: StoredDimensionSeeds = new Map([[7, { words: ['sunshine', 'drizzle', 'overcast'], name: 'weather' }]]);

  function source(loaded: () => LoadedModel): EngineSource {
    return {
      async model(id) {
        // A whole aligned model beside it: translations into the sharded one.
        if (id === FR)
          return (frLoaded ??= new LoadedModel(
            FR,
            EmbeddingModel.fromArrayBuffer(readArrayBuffer(FR_FILE), loadKernels()),
          ));
        if (id !== ID) throw new ApiError('EMBEDDING_MODEL_NOT_FOUND', `Embedding model '${id}' not found`);
        return loaded();
      },
      async languageData(language) {
        return language === 'en' ? lang : parseLanguageData(fs.readFileSync(languageFile(language)));
      },
      async mapperBundleBytes(_model, key) {
        // The whole model's bundles: a sharded model keeps its id, size and checksum.
        const file = path.join(GENERATED, 'mappers', ID, `${key}.bin`);
        return fs.existsSync(file) ? readArrayBuffer(file) : null;
      },
      async storedSeeds(ids) {
        return new Map(ids.flatMap((id) => (STORED.has(id) ? [[id, STORED.get(id)!] as const] : [])));
      },
    };
  }

  type Engine = ReturnType<typeof createEngine>;
  type Outcome<T> = { ok: true; value: T } | { ok: false; error: Error & { code?: string } };

  const outcome = <T>(p: Promise<T>): Promise<Outcome<T>> =>
    p.then(
      (value) => ({ ok: true as const, value }),
      (error: Error) => ({ ok: false as const, error }),
    );

  /**
   * The call on the whole model, and on the sharded one as a host runs it (a new engine per run,
   * one view per call) with a cold row cache: every row the call reads is fetched from the parts.
   */
  async function both<T>(work: (engine: Engine) => Promise<T>) {
    const w = await outcome(work(createEngine(source(() => wholeLoaded))));
    const cold = freshModel(ROW_CACHE_ROWS);
    const call = new ShardedCall();
    const loaded = () =>
      new LoadedModel(
        ID,
        call.view(ID, (timing) => new ShardedView(cold, localAccess().access, timing)),
        { shareWith: mapLoaded },
      );
    const s = await outcome(call.run(() => work(createEngine(source(loaded)))));
    cold.cache.kernels.freeMatrix(cold.cache.matrix);
    return { whole: w, sharded: s, rounds: call.timing.rounds };
  }

  async function expectSame<T>(
    label: string,
    work: (engine: Engine) => Promise<T>,
    readsRows = true,
    maxRuns = Infinity,
  ): Promise<T> {
    const r = await both(work);
    expect(r.rounds, `${label}: engine runs`).toBeLessThanOrEqual(maxRuns);
    if (!r.whole.ok) throw r.whole.error;
    if (!r.sharded.ok) throw new Error(`${label}: ${r.sharded.error.message}`);
    expect(r.sharded.value, label).toEqual(r.whole.value);
    expect(JSON.stringify(r.sharded.value), label).toBe(JSON.stringify(r.whole.value));
    // The cold view lacked rows at first: the answer came from fetched rows (none for no known seed).
    if (readsRows) expect(r.rounds, label).toBeGreaterThan(1);
    else expect(r.rounds, label).toBe(1);
    return r.whole.value;
  }

  const dimensions = [
    { id: 1, type: 'manual' as const, name: 'joy', words: ['joy', 'delight', 'happy'] },
    { id: 2, type: 'axis' as const, name: 'mood', words: ['good', 'great'], oppositeWords: ['bad', 'awful'] },
    { id: 7, type: 'dimension' as const },
  ];

  it('word-scores find-and-score: 1,000 words, wordrankLimit on and off part boundaries, goal, dimensions, mappers, antonyms', async () => {
    const requests: Array<[number, Record<string, unknown>]> = [
      [1000, { seedWords: ['happy', 'joy'], limit: 1000 }],
      [1000, { seedWords: ['happy', 'joy'], limit: 1000, seedScore: 1 }],
      [1000, { seedWords: ['rain', 'storm'], limit: 1000, wordrankLimit: 50_000 }],
      [1000, { seedWords: ['rain', 'storm'], limit: 1000, wordrankLimit: 50_001 }],
      [100, { seedWords: ['rain', 'storm'], limit: 1000, wordrankLimit: 777 }],
      [1000, { seedWords: ['rain', 'storm'], limit: 1000, wordrankLimit: 123_456 }],
      [1000, { seedWords: ['guitar', whole.word(300_000)], limit: 1000, wordrankLimit: -1 }],
      [50, { seedWords: ['cozy'], limit: 50, excludeAntonyms: true }],
      [
        200,
        {
          seedWords: ['river', 'ice cream'],
          limit: 200,
          wordrankLimit: 60_000,
          seedScore: 0.5,
          dimensions,
          mapperKeys: ['sentiment_valence', 'afinn_valence'],
        },
      ],
      [0, { seedWords: ['zzzxq'], limit: 10 }],
    ];
    for (const [atLeast, req] of requests) {
      const answer = (await expectSame(
        JSON.stringify(req),
        (e) => e.wordScores({ embeddingModelId: ID, ...req }),
        atLeast > 0,
      )) as { data: unknown[] };
      expect(answer.data.length, JSON.stringify(req)).toBeGreaterThanOrEqual(atLeast);
    }
  });

  it('word-scores whitelist mode: words of every part, phrases, unknown words, dimensions and mappers', async () => {
    const whitelistWords = [
      'food',
      'happy',
      'rain',
      'zzzxq',
      'ice cream',
      ...[5, 776, 777, 30_000, 50_000, 50_001, 150_000, 200_000, 300_000, n - 1].map((r) => whole.word(r)),
    ];
    await expectSame('whitelist', (e) =>
      e.wordScores({
        embeddingModelId: ID,
        seedWords: ['joy', whole.word(250_000)],
        whitelistWords,
        dimensions,
        mapperKeys: ['sentiment_valence'],
        seedScore: 1,
      }),
    );
    await expectSame('whitelist, no seeds', (e) =>
      e.wordScores({ embeddingModelId: ID, seedWords: [], whitelistWords, dimensions: dimensions.slice(0, 2) }),
    );
  });

  it('text-scores: manual, axis and stored dimensions, mappers, a goal, normalizations, representations, explain', async () => {
    const texts = [
      'The food was wonderful and the staff were kind.',
      'A dull, rainy afternoon; not good at all!!',
      `Rare words: ${[50_000, 120_000, 210_000, 330_000].map((r) => whole.word(r)).join(' ')}.`,
      'The river flows through a deep valley below the snowy mountains.',
      '',
    ];
    const short = texts;
    const requests = [
      { texts, dimensions, mapperKeys: ['sentiment_valence'] },
      {
        texts,
        dimensions,
        mapperKeys: ['sentiment_valence', 'afinn_valence'],
        goalConfig: {
          modelRankScore: 0.5,
          dimensions: [
            { id: 2, weight: 3 },
            { id: 1, weight: -1 },
          ],
          mappers: [{ id: 'sentiment_valence', weight: 2 }],
          normalization: 'zscore' as const,
        },
        explain: true,
      },
      { texts, dimensions, normalization: 'percentile' as const },
      {
        texts,
        dimensions: dimensions.slice(0, 2),
        normalization: 'batchZscore' as const,
        composition: 'mean' as const,
      },
      { texts: short, dimensions, normalization: 'zscore' as const, representation: 'meanVector' as const },
      { texts: short, dimensions: dimensions.slice(0, 2), representation: 'sif' as const },
      { texts: short, dimensions: dimensions.slice(1), representation: 'contentMean' as const, explain: true },
    ];
    for (const req of requests)
      await expectSame(JSON.stringify(req).slice(0, 200), (e) => e.textScores({ embeddingModelId: ID, ...req }));
  });

  it('loops that read rows or scans one by one run a few times, not once per row: expand, phrases, representations, translations', async () => {
    // Each declares its reads first (VectorIndex.prefetch / prefetchTopK), so a cold view fetches
    // them in one run: without that, each row or scan took a run of its own (24 runs, refused).
    const rare = (from: number, count: number, step: number) =>
      Array.from({ length: count }, (_, i) => whole.word(from + i * step));
    const cases: Array<[string, (e: Engine) => Promise<unknown>]> = [
      [
        'expand (the 20,000-row background mean)',
        (e) =>
          e.wordScores({
            embeddingModelId: ID,
            seedWords: ['river'],
            limit: 20,
            dimensions: [{ id: 3, type: 'manual', words: ['lake', 'valley'], expand: 10 }],
          }),
      ],
      [
        'a phrase among 30 seeds',
        (e) => e.wordScores({ embeddingModelId: ID, seedWords: ['ice cream', ...rare(60_000, 29, 1000)], limit: 20 }),
      ],
      ...(['meanVector', 'sif', 'contentMean'] as const).map(
        (representation): [string, (e: Engine) => Promise<unknown>] => [
          `${representation} over 30 rare tokens`,
          (e) =>
            e.textScores({
              embeddingModelId: ID,
              texts: [rare(20_000, 30, 997).join(' '), rare(150_000, 30, 1999).join(' ')],
              dimensions: dimensions.slice(0, 2),
              representation,
            }),
        ],
      ),
      [
        '40 dimensions of rare seeds, one of them an axis with phrases',
        (e) =>
          e.textScores({
            embeddingModelId: ID,
            texts: ['The river flows through a deep valley below the snowy mountains.'],
            dimensions: [
              ...Array.from({ length: 39 }, (_, i) => ({
                id: 100 + i,
                type: 'manual' as const,
                words: rare(30_000 + i * 5003, 3, 101),
              })),
              { id: 99, type: 'axis' as const, words: ['ice cream', 'joy'], oppositeWords: ['cold war', 'sorrow'] },
            ],
          }),
      ],
      [
        'contrastive expansion of two dimensions (the 50,000 candidate rows scored by the parts)',
        (e) =>
          e.wordScores({
            embeddingModelId: ID,
            seedWords: ['river'],
            limit: 20,
            expansion: 'contrastive',
            dimensions: [
              { id: 3, type: 'manual', words: ['lake', 'valley'], expand: 10 },
              { id: 4, type: 'manual', words: ['money', 'bank'], expand: 10 },
            ],
          }),
      ],
      [
        '30 French words translated into the sharded model',
        (e) =>
          e.wordTranslations(FR, {
            words: Array.from({ length: 30 }, (_, i) => frLoaded!.index.word(100 + i * 37)),
            limit: 5,
            targetModelId: ID,
          }),
      ],
    ];
    await createEngine(source(() => wholeLoaded)).model(FR);
    for (const [label, work] of cases) await expectSame(label, work, true, 12);
  });

  it('refusals are the same: an unknown mapper, an unknown stored dimension', async () => {
    for (const req of [
      { seedWords: ['happy'], mapperKeys: ['nope_valence'] },
      { seedWords: ['happy'], dimensions: [{ id: 99, type: 'dimension' }] },
    ]) {
      const r = await both((e) => e.wordScores({ embeddingModelId: ID, ...req }));
      expect(r.whole.ok).toBe(false);
      expect(r.sharded.ok).toBe(false);
      const [w, s] = [r.whole, r.sharded].map((o) => (o.ok ? null : o.error));
      expect(s!.constructor).toBe(w!.constructor);
      expect(s!.code).toBeDefined();
      expect(s!.code).toBe(w!.code);
      expect(s!.message).toBe(w!.message);
    }
  });
});

describe('mergeTopK', () => {
  it('orders by score, ties to the lower global row whatever the order of the lists', () => {
    const f = (xs: number[]) => Float32Array.from(xs);
    const lists = [
      { start: 100, rows: Int32Array.from([3, 0, 7]), scores: f([0.5, 0.25, 0.25]) },
      // Each list as a part's kernel answers it: best first, ties to the lower row.
      { start: 0, rows: Int32Array.from([2, 9, 4]), scores: f([0.5, 0.5, 0.25]) },
      { start: 50, rows: Int32Array.from([1]), scores: f([0.75]) },
    ];
    const want = { rows: [51, 2, 9, 103, 4, 100, 107], scores: [0.75, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25] };
    for (const order of [
      [0, 1, 2],
      [2, 1, 0],
      [1, 0, 2],
    ]) {
      const merged = mergeTopK(
        order.map((i) => lists[i]!),
        10,
      );
      expect(Array.from(merged.rows)).toEqual(want.rows);
      expect(Array.from(merged.scores)).toEqual(want.scores);
      const top3 = mergeTopK(
        order.map((i) => lists[i]!),
        3,
      );
      expect(Array.from(top3.rows)).toEqual([51, 2, 9]);
    }
    expect(mergeTopK([], 5).rows.length).toBe(0);
    expect(mergeTopK(lists, 0).rows.length).toBe(0);
  });
});

describe('RowCache', () => {
  const words = (ws: string[]) => ws.map((w) => whole.rowOf(w));

  it('a call needing more distinct rows than the cache holds raises RowCacheFull; as many as it holds are served', async () => {
    const small = freshModel(8);
    const nine = [1, 800, 50_000, 60_000, 250_000, 3, 900, 70_000, 300_000];
    await expect(viaView((v) => v.centroid(nine), small)).rejects.toBeInstanceOf(RowCacheFull);
    // Needed over two runs: the second run's rows and the first's pinned exceed the cache.
    await expect(
      viaView((v) => [v.centroid(nine.slice(0, 5)), v.centroid(nine.slice(5))], small),
    ).rejects.toBeInstanceOf(RowCacheFull);
    // Repeats count once: eight distinct rows fit.
    const eight = [...nine.slice(0, 8), ...nine.slice(0, 8)];
    const { result } = await viaView((v) => v.centroid(eight), small);
    expect(bits(result)).toEqual(bits(whole.centroid(eight)));
    // A refused call left nothing pinned: the whole cache is available again.
    const { result: again } = await viaView((v) => v.similarityMatrix(nine.slice(1)), small);
    expect(bits(again)).toEqual(bits(whole.similarityMatrix(nine.slice(1))));
  });

  it('rows pinned by a call in progress are never evicted by another call; after release they are reused', async () => {
    const small = freshModel(8);
    const { access, log } = localAccess();
    const a = [...words(['happy', 'river']), 50_000, 120_000, 210_000, n - 2];
    const fetchedA = (): number =>
      log.rows.flatMap((x) => x.rows.map((r) => r + parts[x.part]!.start)).filter((r) => a.includes(r)).length;
    let reached!: () => void;
    const atGate = new Promise<void>((resolve) => (reached = resolve));
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const callA = new ShardedCall();
    const runA = callA.run(async () => {
      const view = callA.view(ID, (t) => new ShardedView(small, access, t));
      const c = view.centroid(a);
      reached();
      await gate;
      // Still A's rows in A's slots after the other calls.
      return { c, vectors: a.map((r) => view.vector(r)), m: view.similarityMatrix(a) };
    });
    await atGate;
    expect(fetchedA()).toBe(6);
    // Call B: two new rows fit beside A's six pinned ones.
    const b = [400, 300_000];
    const { result: rb } = await viaView((v) => v.scores(whole.vector(5), b), small, access);
    expect(bits(rb)).toEqual(bits(whole.scores(whole.vector(5), b)));
    // Call D: rows of A's (pinned by A, shared) and B's (released, still cached) are served without a fetch.
    const fetches = log.rows.length;
    const { result: rd, timing } = await viaView((v) => v.centroid([...a.slice(0, 3), ...b]), small, access);
    expect(bits(rd)).toEqual(bits(whole.centroid([...a.slice(0, 3), ...b])));
    expect(timing.rounds).toBe(1);
    expect(log.rows.length).toBe(fetches);
    // Call C: three new rows would need a slot of A's: refused as busy (retry), nothing of A's evicted.
    await expect(viaView((v) => v.centroid([100_401, 100_402, 100_403]), small, access)).rejects.toBeInstanceOf(
      RowCacheBusy,
    );
    // Every row of A's is still cached: a call reading them fetches nothing.
    const fetchesE = log.rows.length;
    const { result: re, timing: te } = await viaView((v) => v.similarityMatrix(a), small, access);
    expect(bits(re)).toEqual(bits(whole.similarityMatrix(a)));
    expect(te.rounds).toBe(1);
    expect(log.rows.length).toBe(fetchesE);
    open();
    const ra = await runA;
    expect(callA.timing.rounds).toBe(2);
    expect(fetchedA()).toBe(6);
    expect(bits(ra.c)).toEqual(bits(whole.centroid(a)));
    expect(ra.vectors.map(bits)).toEqual(a.map((r) => bits(whole.vector(r))));
    expect(bits(ra.m)).toEqual(bits(whole.similarityMatrix(a)));
    // After A's release: its rows are served from the cache by a later call ...
    const before = log.rows.length;
    const { timing: t2 } = await viaView((v) => v.centroid(a), small, access);
    expect(t2.rounds).toBe(1);
    expect(log.rows.length).toBe(before);
    // ... and their slots are reused for eight rows no call has had yet.
    const fresh8 = [10, 20, 30, 40, 100_000, 100_001, 250_000, 250_001];
    const { result: r8 } = await viaView((v) => v.similarityMatrix(fresh8), small, access);
    expect(bits(r8)).toEqual(bits(whole.similarityMatrix(fresh8)));
    expect(small.cache.size).toBe(8);
  });
});
