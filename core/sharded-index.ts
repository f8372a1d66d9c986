/**
 * A row-sharded model (docs/architecture.md "Row sharding"): a model larger than one isolate's
 * memory budget is split by the placement (core/placement.ts) into parts, each the rows
 * [start, end) of its matrix as an ordinary artifact held by some model host, plus its word map:
 * the whole vocabulary (words, key index, flags, antonyms) as an artifact with a one-dimension
 * placeholder matrix, held by the host that answers for the model (the coordinator).
 *
 * The coordinator runs the ordinary engine against a ShardedView, a VectorIndex whose words come
 * from the map and whose vectors come from the parts. The engine is synchronous, so a view that
 * lacks something (a row's int8 vector, a top-k scan over every part) notes it and throws
 * Missing; the coordinator fetches what was noted (rows from the parts that hold them, each
 * part's top-k of the query, merged) and runs the call again, until a run needs nothing new
 * (ShardedCall.run). Fetched rows land in a row cache inside the coordinator's kernels memory, so
 * centroids and cosines are the same kernel arithmetic on the same int8 rows as in an unsharded
 * model, and the merge of the parts' exact top-k (score desc, ties to the lower row) is the
 * unsharded top-k: answers equal the unsharded model's to the bit (test/e2e/sharding.test.ts,
 * test/node/sharded-index.test.ts). Runtime-agnostic: the parts are reached through PartAccess.
 */
import { MAX_K, rowIds, topKEligible, type Kernels, type MatrixSlot } from './kernels';
import type { ModelManifest, TopKOptions, TopKResult, VectorIndex } from './types';

/** One part of a sharded model: its artifact's id and the global rows it holds. */
export interface ShardPart {
  id: string;
  start: number;
  end: number;
}

/** How the coordinator reaches a model's parts (RPC to their hosts, or its own registry). */
export interface PartAccess {
  /** Int8 rows (dims each) and scales of these rows of part `part` (local row numbers). */
  rows(part: number, rows: number[]): Promise<{ rows: Int8Array; scales: Float32Array }>;
  /** Part `part`'s top-k of the query over its local rows, with the time its scan took (ms). */
  topK(part: number, query: Float32Array, k: number, options: TopKOptions): Promise<TopKResult & { ms: number }>;
  /** cos(query, row) for these local rows of part `part`, in order (lists too long for the row cache). */
  scores(part: number, query: Float32Array, rows: Int32Array): Promise<Float32Array>;
}

/**
 * Row lists longer than this are scored by the parts that hold them (only the cosines come back):
 * a normalization sample or the expansion candidates (20,000-50,000 rows) would otherwise fill the
 * row cache. The kernel scores each row on its own, so the cosines are the same either way.
 */
export const REMOTE_SCORES_ROWS = 4096;

/** Manifest feature of a part's artifact (build/model-shards.ts): it holds rows, never tokenizes. */
export const SHARD_PART_FEATURE = 'sharded-part';

export function isShardPart(m: { features?: readonly string[] }): boolean {
  return Array.isArray(m.features) && m.features.includes(SHARD_PART_FEATURE);
}

/** Rows a coordinator's row cache holds (int8 vectors fetched from the parts): 32,768 x dims bytes + scales. */
export const ROW_CACHE_ROWS = 32_768;

/** Bytes of a model's row cache in its coordinator's kernels memory. */
export const rowCacheBytes = (dims: number): number => ROW_CACHE_ROWS * (dims + 4) + 128;

/** Thrown by a view for data it does not hold yet; ShardedCall fetches it and runs the call again. */
export class Missing extends Error {
  constructor() {
    super('sharded model: rows or scans to fetch');
  }
}

/** Raised when a call still lacks data after MAX_ROUNDS runs of the engine. */
export class TooManyRuns extends Error {}

/** Raised when one call needs more rows at once than the row cache holds (the request is too large). */
export class RowCacheFull extends Error {}

/** Raised when the rows a call needs would fit, but other calls hold the cache's slots now (retry). */
export class RowCacheBusy extends Error {}

/**
 * The int8 rows a coordinator has fetched, in one matrix slot of the map's kernels. Slots hold a
 * row until it is evicted (clock); a slot pinned by a call in progress is never evicted.
 */
export class RowCache {
  private readonly slotOf = new Map<number, number>();
  private readonly rowAt: Int32Array;
  private readonly pins: Int32Array;
  private readonly used: Uint8Array;
  private hand = 0;

  constructor(
    readonly kernels: Kernels,
    readonly matrix: MatrixSlot,
  ) {
    this.rowAt = new Int32Array(matrix.n).fill(-1);
    this.pins = new Int32Array(matrix.n);
    this.used = new Uint8Array(matrix.n);
  }

  get capacity(): number {
    return this.matrix.n;
  }

  get size(): number {
    return this.slotOf.size;
  }

  /** The slot of a cached row, pinned into `pinned` (once per call); -1 when not cached. */
  take(row: number, pinned: Set<number>): number {
    const s = this.slotOf.get(row);
    if (s === undefined) return -1;
    this.used[s] = 1;
    if (!pinned.has(s)) {
      pinned.add(s);
      this.pins[s]++;
    }
    return s;
  }

  /** Stores fetched rows (dims int8 each, with their scales), pinned into `pinned`. */
  put(rows: readonly number[], data: { rows: Int8Array; scales: Float32Array }, pinned: Set<number>): void {
    const dims = this.matrix.dims;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (this.take(row, pinned) >= 0) continue;
      const s = this.freeSlot();
      const old = this.rowAt[s]!;
      if (old >= 0) this.slotOf.delete(old);
      // Views are taken after the free-slot search: nothing in between can grow the memory.
      this.matrix.rows().set(data.rows.subarray(i * dims, (i + 1) * dims), s * dims);
      this.matrix.scales()[s] = data.scales[i]!;
      this.rowAt[s] = row;
      this.slotOf.set(row, s);
      this.used[s] = 1;
      pinned.add(s);
      this.pins[s]++;
    }
  }

  /** Unpins a call's slots. */
  release(pinned: Set<number>): void {
    for (const s of pinned) this.pins[s]--;
    pinned.clear();
  }

  /** A slot no call holds: the clock's next unused one (second chance for recently used rows). */
  private freeSlot(): number {
    const n = this.capacity;
    for (let step = 0; step < 2 * n; step++) {
      const s = this.hand;
      this.hand = (this.hand + 1) % n;
      if (this.pins[s]! > 0) continue;
      if (this.used[s] && this.rowAt[s]! >= 0) {
        this.used[s] = 0;
        continue;
      }
      return s;
    }
    throw new RowCacheBusy(`the row cache's ${n} rows are held by calls in progress`);
  }
}

/** What one sharded model keeps in its coordinator's isolate (for as long as its map is loaded). */
export interface ShardedModel {
  manifest: ModelManifest;
  /** The word map: the vocabulary of every row (its matrix is a placeholder). */
  map: VectorIndex;
  parts: readonly ShardPart[];
  cache: RowCache;
}

/** A scan the view could not answer: the query, k and options of one topK call. */
interface Scan {
  query: Float32Array;
  k: number;
  cutoff: number;
  rows: Int32Array | null;
}

/** Cosines of a long row list the view could not answer. */
interface ScoreList {
  query: Float32Array;
  rows: Int32Array;
}

/** Time spent reaching the parts in one call (Server-Timing shard-*; docs/benchmarks.md). */
export interface ShardTiming {
  /** Runs of the engine (1 when nothing was missing). */
  rounds: number;
  /** Each scan's slowest part, summed over the call's scans (parts scan in parallel in production). */
  scan: number;
  /** Every part's scan, summed (the floor where parts run one after another, as in local workerd). */
  scanSum: number;
  /** Merging the parts' top-k lists. */
  merge: number;
  /** Fetching rows from the parts (wall time). */
  rows: number;
  /** Parts scanned, over all scans. */
  partScans: number;
}

/**
 * The key of a scan or score list within one call: the cutoff and an FNV-1a hash over the query's
 * bits and the row list, so a row list of a million rows makes no million-digit key (a hit is
 * then compared in full: sameInput). Not k: a scan fetched for a larger k answers every smaller
 * one, since the exact top-k (ties to the lower row) is a prefix of any larger one.
 */
function inputKey(query: Float32Array, cutoff: number, rows: Int32Array | null): string {
  const q = new Uint32Array(query.buffer, query.byteOffset, query.length);
  let a = 0x811c9dc5;
  for (let i = 0; i < q.length; i++) a = Math.imul(a ^ q[i]!, 0x01000193);
  if (rows) for (let i = 0; i < rows.length; i++) a = Math.imul(a ^ rows[i]!, 0x01000193);
  return `${cutoff}|${rows ? rows.length : -1}|${a >>> 0}`;
}

/** Whether two queries and row lists are the same, bit for bit. */
function sameInput(
  a: { query: Float32Array; rows: Int32Array | null },
  b: { query: Float32Array; rows: Int32Array | null },
): boolean {
  const qa = new Uint32Array(a.query.buffer, a.query.byteOffset, a.query.length);
  const qb = new Uint32Array(b.query.buffer, b.query.byteOffset, b.query.length);
  if (qa.length !== qb.length || (a.rows === null) !== (b.rows === null)) return false;
  for (let i = 0; i < qa.length; i++) if (qa[i] !== qb[i]) return false;
  if (a.rows && b.rows) {
    if (a.rows.length !== b.rows.length) return false;
    for (let i = 0; i < a.rows.length; i++) if (a.rows[i] !== b.rows[i]) return false;
  }
  return true;
}

/**
 * A sharded model as one call's engine sees it: words from the map, vectors from the rows this
 * call has fetched (pinned in the row cache until the call ends), scans from the parts' merged
 * answers. Anything else throws Missing after noting it.
 */
export class ShardedView implements VectorIndex {
  readonly manifest: ModelManifest;
  readonly size: number;
  readonly dims: number;
  private readonly pinned = new Set<number>();
  private readonly neededRows = new Set<number>();
  private readonly neededScans = new Map<string, Scan>();
  private readonly scans = new Map<string, Scan & { result: TopKResult }>();
  private readonly neededScores = new Map<string, ScoreList>();
  private readonly scoreLists = new Map<string, ScoreList & { result: Float32Array }>();
  /** Set once the call has answered: a fetch still in flight then keeps nothing. */
  private released = false;

  constructor(
    readonly model: ShardedModel,
    private readonly access: PartAccess,
    private readonly timing: ShardTiming,
  ) {
    this.manifest = model.manifest;
    this.size = model.manifest.vocabularySize;
    this.dims = model.manifest.dimensions;
  }

  mayGrow(bytes: number): boolean {
    return this.model.map.mayGrow?.(bytes) ?? true;
  }

  /** The scoring code's caches of every call's view live under the word map (counted with it). */
  get cacheKey(): object {
    return this.model.map;
  }

  /** Notes every row not fetched yet; throws Missing when there is one (one run fetches them all). */
  prefetch(rows: ArrayLike<number>): void {
    this.slots(rows);
  }

  /** Notes every scan not fetched yet; throws Missing when there is one. */
  prefetchTopK(queries: readonly Float32Array[], k: number): void {
    let missing = false;
    for (const q of queries) {
      try {
        this.topK(q, k);
      } catch (err) {
        if (!(err instanceof Missing)) throw err;
        missing = true;
      }
    }
    if (missing) throw new Missing();
  }

  word(row: number): string {
    return this.model.map.word(row);
  }
  rowOf(word: string): number {
    return this.model.map.rowOf(word);
  }
  prefixRows(prefix: string, limit: number, accept?: (row: number) => boolean): number[] {
    return this.model.map.prefixRows(prefix, limit, accept);
  }
  flags(row: number): number {
    return this.model.map.flags(row);
  }
  antonyms(row: number): number[] {
    return this.model.map.antonyms(row);
  }
  foldedPrefixRows(prefix: string): Uint32Array {
    return this.model.map.foldedPrefixRows(prefix);
  }

  /** The cache slots of `rows`, in order; notes the ones not fetched yet and throws Missing. */
  private slots(rows: ArrayLike<number>): Int32Array {
    const out = new Int32Array(rows.length);
    let missing = false;
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!;
      if (!Number.isInteger(r) || r < 0 || r >= this.size)
        throw new RangeError(`row ${r} is out of range 0..${this.size - 1}`);
      const s = this.model.cache.take(r, this.pinned);
      if (s < 0) {
        this.neededRows.add(r);
        missing = true;
      }
      out[i] = s;
    }
    if (missing) throw new Missing();
    return out;
  }

  private get kernels(): Kernels {
    return this.model.cache.kernels;
  }

  vector(row: number): Float32Array {
    return this.kernels.dequantizeRow(this.model.cache.matrix, this.slots([row])[0]!);
  }
  centroid(rows: ArrayLike<number>): Float32Array | null {
    return this.kernels.centroid(this.model.cache.matrix, this.slots(rows));
  }
  scores(query: Float32Array, rows: ArrayLike<number>): Float32Array {
    if (query.length !== this.dims) throw new RangeError(`query has ${query.length} dims, the matrix ${this.dims}`);
    if (rows.length <= REMOTE_SCORES_ROWS) return this.kernels.scores(this.model.cache.matrix, query, this.slots(rows));
    // A long list: its cosines from the parts.
    const list: ScoreList = { query: Float32Array.from(query), rows: rowIds(this.size, rows) };
    const key = inputKey(list.query, -1, list.rows);
    const done = this.scoreLists.get(key);
    if (done && sameInput(done, list)) return done.result.slice();
    this.neededScores.set(key, list);
    throw new Missing();
  }
  similarityMatrix(rows: ArrayLike<number>): Float32Array {
    return this.kernels.similarityMatrix(this.model.cache.matrix, this.slots(rows));
  }

  /** The merged top-k of the parts, once fetched (the same checks as the kernel's topK). */
  topK(query: Float32Array, k: number, options: TopKOptions = {}): TopKResult {
    const { cutoff, rows } = topKEligible(this.size, this.dims, query, k, options);
    if (k === 0 || cutoff === 0 || rows?.length === 0) return { rows: new Int32Array(0), scores: new Float32Array(0) };
    const scan: Scan = { query: Float32Array.from(query), k, cutoff, rows };
    const key = inputKey(scan.query, cutoff, rows);
    const done = this.scans.get(key);
    // A scan made for at least k rows (or one that found fewer than it asked for) answers with its first k.
    if (done && done.cutoff === cutoff && sameInput(done, scan) && (done.k >= k || done.result.rows.length < done.k))
      return { rows: done.result.rows.slice(0, k), scores: done.result.scores.slice(0, k) };
    // Fetched for 4k: the engine widens k fourfold when it skips rows (core/scoring/words.ts).
    this.neededScans.set(key, { ...scan, k: Math.max(k, Math.min(MAX_K, 4 * k, this.size)) });
    throw new Missing();
  }

  /** Whether the last run noted something to fetch. */
  get wanting(): boolean {
    return this.neededRows.size > 0 || this.neededScans.size > 0 || this.neededScores.size > 0;
  }

  /** Fetches what the last run noted: rows from their parts, scans from every part with eligible rows. */
  async fetch(): Promise<void> {
    const rows = [...this.neededRows];
    const scans = [...this.neededScans];
    const lists = [...this.neededScores];
    this.neededRows.clear();
    this.neededScans.clear();
    this.neededScores.clear();
    await Promise.all([
      this.fetchRows(rows),
      ...scans.map(([key, s]) => this.fetchScan(key, s)),
      ...lists.map(([key, l]) => this.fetchScores(key, l)),
    ]);
  }

  private async fetchScores(key: string, l: ScoreList): Promise<void> {
    const { parts } = this.model;
    const result = new Float32Array(l.rows.length);
    // Each part scores its rows; the cosines go back to their places in the list.
    const byPart = new Map<number, number[]>();
    for (let i = 0; i < l.rows.length; i++) {
      const p = partOf(parts, l.rows[i]!);
      const at = byPart.get(p);
      if (at) at.push(i);
      else byPart.set(p, [i]);
    }
    await Promise.all(
      [...byPart].map(async ([p, at]) => {
        const local = Int32Array.from(at, (i) => l.rows[i]! - parts[p]!.start);
        const cos = await this.access.scores(p, l.query, local);
        at.forEach((i, j) => (result[i] = cos[j]!));
      }),
    );
    this.scoreLists.set(key, { ...l, result });
  }

  private async fetchRows(rows: number[]): Promise<void> {
    if (rows.length === 0) return;
    if (rows.length + this.pinned.size > this.model.cache.capacity)
      throw new RowCacheFull(
        `a request on a sharded model needs more than ${this.model.cache.capacity} distinct rows at once`,
      );
    const started = performance.now();
    const { parts } = this.model;
    const byPart = new Map<number, number[]>();
    for (const r of rows.sort((a, b) => a - b)) {
      const p = partOf(parts, r);
      const list = byPart.get(p);
      if (list) list.push(r);
      else byPart.set(p, [r]);
    }
    const fetched = await Promise.all(
      [...byPart].map(async ([p, list]) => ({
        list,
        data: await this.access.rows(
          p,
          list.map((r) => r - parts[p]!.start),
        ),
      })),
    );
    if (this.released) return;
    for (const { list, data } of fetched) this.model.cache.put(list, data, this.pinned);
    this.timing.rows += performance.now() - started;
  }

  private async fetchScan(key: string, s: Scan): Promise<void> {
    const answers = await Promise.all(
      this.model.parts.map(async (part, p) => {
        const end = Math.min(part.end, s.cutoff);
        if (end <= part.start) return null;
        let local: Int32Array | undefined;
        if (s.rows) {
          const lo = lowerBound(s.rows, part.start);
          const hi = lowerBound(s.rows, end);
          if (hi === lo) return null;
          local = s.rows.slice(lo, hi).map((r) => r - part.start);
        }
        const a = await this.access.topK(p, s.query, s.k, {
          rankCutoff: end - part.start,
          ...(local ? { rows: local } : {}),
        });
        return { part, a };
      }),
    );
    const started = performance.now();
    const merged = mergeTopK(
      answers.flatMap((x) => (x ? [{ start: x.part.start, rows: x.a.rows, scores: x.a.scores }] : [])),
      s.k,
    );
    this.timing.merge += performance.now() - started;
    let slowest = 0;
    for (const x of answers) {
      if (!x) continue;
      slowest = Math.max(slowest, x.a.ms);
      this.timing.scanSum += x.a.ms;
      this.timing.partScans++;
    }
    this.timing.scan += slowest;
    this.scans.set(key, { ...s, result: merged });
  }

  /** Unpins the call's rows; rows its fetches bring after this are not kept. */
  release(): void {
    this.released = true;
    this.model.cache.release(this.pinned);
  }
}

/** The part holding global row `row`. */
export function partOf(parts: readonly ShardPart[], row: number): number {
  let lo = 0;
  let hi = parts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if (parts[mid]!.start <= row) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function lowerBound(a: Int32Array, x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The k best of the parts' top-k lists (each best first, as the kernel answers; local rows offset
 * by each part's start): score desc, ties to the lower global row, as one scan over every row
 * orders them. Each part's list is its exact top-k, so the merge is the exact top-k of the whole
 * model.
 */
export function mergeTopK(lists: ReadonlyArray<{ start: number; rows: Int32Array; scores: Float32Array }>, k: number) {
  // Each list is best first already: a k-way merge takes the best head k times (parts are few).
  const total = lists.reduce((n, l) => n + l.rows.length, 0);
  const n = Math.min(k, total);
  const out = { rows: new Int32Array(n), scores: new Float32Array(n) };
  const at = new Int32Array(lists.length);
  for (let i = 0; i < n; i++) {
    let best = -1;
    let bestScore = 0;
    let bestRow = 0;
    for (let l = 0; l < lists.length; l++) {
      const list = lists[l]!;
      const j = at[l]!;
      if (j >= list.rows.length) continue;
      const score = list.scores[j]!;
      const row = list.rows[j]! + list.start;
      if (best < 0 || score > bestScore || (score === bestScore && row < bestRow)) {
        best = l;
        bestScore = score;
        bestRow = row;
      }
    }
    out.rows[i] = bestRow;
    out.scores[i] = bestScore;
    at[best]!++;
  }
  return out;
}

/** Runs of the engine one call may take before it is refused (each fetches what the last lacked). */
export const MAX_ROUNDS = 48;

/**
 * One engine call on a coordinator: the views of the sharded models it touches (made on first
 * use, kept across its runs), run again until a run lacks nothing.
 */
export class ShardedCall {
  private readonly views = new Map<string, ShardedView>();
  readonly timing: ShardTiming = { rounds: 0, scan: 0, scanSum: 0, merge: 0, rows: 0, partScans: 0 };

  /** This call's view of sharded model `id` (made with `make` on first use). */
  view(id: string, make: (timing: ShardTiming) => ShardedView): ShardedView {
    let v = this.views.get(id);
    if (!v) {
      v = make(this.timing);
      this.views.set(id, v);
    }
    return v;
  }

  get touched(): boolean {
    return this.views.size > 0;
  }

  /** Runs `work` until no view lacks anything; its result or refusal then stands. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    try {
      for (;;) {
        this.timing.rounds++;
        let result: T | undefined;
        let error: unknown = null;
        let failed = false;
        try {
          result = await work();
        } catch (err) {
          error = err;
          failed = true;
        }
        const wanting = [...this.views.values()].filter((v) => v.wanting);
        if (wanting.length === 0) {
          if (failed) throw error;
          return result as T;
        }
        if (this.timing.rounds >= MAX_ROUNDS)
          throw new TooManyRuns(`the request still lacked rows of the sharded model after ${MAX_ROUNDS} runs`);
        await Promise.all(wanting.map((v) => v.fetch()));
      }
    } finally {
      for (const v of this.views.values()) v.release();
    }
  }
}
