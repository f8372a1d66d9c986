/**
 * Building blocks shared by the scorers: frequency score, dimension query vectors, request
 * cross-checks and the normalization statistics (decisions.md "Scores").
 */
import type { RowSource, VectorIndex } from '../types';
import { VOCAB_FLAG } from '../vocab-quality';
import { ln } from './ln';
import type {
  DimensionRequest,
  FactorStats,
  Normalization,
  ResolvedMapper,
  StatsCache,
  StoredDimensionSeeds,
} from './types';

/** Number of most frequent words the zscore/percentile statistics are computed over. */
export const NORMALIZATION_WORDS = 20_000;

export type ScoringErrorCode = 'VALIDATION_FAILED' | 'DIMENSION_NOT_FOUND';

/** A request the scorers refuse; the Worker renders it as problem+json (422). */
export class ScoringError extends Error {
  constructor(
    readonly code: ScoringErrorCode,
    message: string,
    readonly path?: string,
  ) {
    super(message);
    this.name = 'ScoringError';
  }
}

/** f(rank) = 1 - ln(rank)/ln(V), in [0, 1]; rank is 1-based; a composed word's rank V + 1 counts as V (f = 0). */
export function frequencyScore(rank: number, vocabularySize: number): number {
  if (vocabularySize <= 1) return 1;
  return 1 - ln(Math.min(rank, vocabularySize)) / ln(vocabularySize);
}

/**
 * Row of a word the request scores: its vocabulary row, else, when the request composes
 * (subwordFallback, VectorIndex.composeRow), a composed row past the vocabulary; -1 when neither.
 */
export function scoredRow(index: VectorIndex, word: string): number {
  const r = index.rowOf(word);
  return r >= 0 || !index.composeRow ? r : index.composeRow(word);
}

const LETTER = /\p{L}/u;
export function hasLetter(word: string): boolean {
  return LETTER.test(word);
}

/** Distinct in-vocabulary rows of the words, in first-seen order. */
export function seedRows(index: VectorIndex, words: readonly string[] | undefined): number[] {
  const rows: number[] = [];
  const seen = new Set<number>();
  for (const w of words ?? []) {
    const r = index.rowOf(w.trim());
    if (r >= 0 && !seen.has(r)) {
      seen.add(r);
      rows.push(r);
    }
  }
  return rows;
}

/** A phrase ("ice cream", "New York"): its unit vector and the rows of its words. */
export interface Phrase {
  /** As written (trimmed). */
  text: string;
  /** Lower-cased, single-spaced: the identity of the phrase. */
  key: string;
  vector: Float32Array;
  rows: number[];
}

/**
 * Seeds of a request: single words as rows, phrases as vectors. On a model aligned to English
 * (decisions.md "Languages and aligned models") single words the model does not know are looked
 * up in its English companion, whose vectors share the model's coordinates (companionRows).
 */
export interface SeedSet {
  rows: number[];
  phrases: Phrase[];
  companionRows: number[];
}

/** The companion when it can stand in for `index` (another model with the same coordinates). */
function usableCompanion(index: VectorIndex, companion?: RowSource | null): RowSource | null {
  return companion && companion !== index && companion.dims === index.dims ? companion : null;
}

export const SPACE = /\s+/u;

/** True when the trimmed entry holds more than one word. */
export function isPhrase(entry: string): boolean {
  return SPACE.test(entry.trim());
}

/**
 * The row of a phrase the model holds as an entry of its own ("hot dog" in the distilled English
 * model: a VOCAB_FLAG.PHRASE row, its words joined by one space), else -1. Such a phrase means the
 * phrase, not the mean of its words.
 */
export function phraseEntryRow(index: VectorIndex, entry: string): number {
  const r = index.rowOf(entry.trim().split(SPACE).join(' '));
  return r >= 0 && index.flags(r) & VOCAB_FLAG.PHRASE ? r : -1;
}

/**
 * A phrase's vector: the mean of its words' unit vectors, re-normalized; null when any word is
 * unknown (decisions.md "Vocabulary quality"). Used for a phrase the model has no row for.
 */
export function phraseOf(index: VectorIndex, entry: string): Phrase | null {
  const text = entry.trim();
  const words = text.split(SPACE);
  const rows: number[] = [];
  for (const w of words) {
    const r = index.rowOf(w);
    if (r < 0) return null;
    rows.push(r);
  }
  index.prefetch?.(rows);
  const sum = new Float32Array(index.dims);
  for (const r of rows) {
    const v = index.vector(r);
    for (let j = 0; j < sum.length; j++) sum[j] += v[j];
  }
  const vector = unit(sum);
  return vector ? { text, key: words.join(' ').toLowerCase(), vector, rows } : null;
}

/** Distinct in-vocabulary rows and known phrases of the entries, in first-seen order. */
export function seedSet(
  index: VectorIndex,
  entries: readonly string[] | undefined,
  companion?: RowSource | null,
): SeedSet {
  const other = usableCompanion(index, companion);
  const rows: number[] = [];
  const phrases: Phrase[] = [];
  const companionRows: number[] = [];
  const seenRows = new Set<number>();
  const seenPhrases = new Set<string>();
  const seenCompanion = new Set<number>();
  // The words of every phrase, fetched together by a row-sharded model's view.
  if (index.prefetch) {
    const phraseRows = (entries ?? [])
      .filter(isPhrase)
      .flatMap((e) =>
        e
          .trim()
          .split(SPACE)
          .map((w) => index.rowOf(w)),
      )
      .filter((r) => r >= 0);
    if (phraseRows.length > 0) index.prefetch(phraseRows);
  }
  for (const e of entries ?? []) {
    const own = isPhrase(e) ? phraseEntryRow(index, e) : -1;
    if (own >= 0) {
      if (!seenRows.has(own)) {
        seenRows.add(own);
        rows.push(own);
      }
      continue;
    }
    if (isPhrase(e)) {
      const p = phraseOf(index, e);
      if (p && !seenPhrases.has(p.key)) {
        seenPhrases.add(p.key);
        phrases.push(p);
      }
      continue;
    }
    const r = index.rowOf(e.trim());
    if (r >= 0) {
      if (!seenRows.has(r)) {
        seenRows.add(r);
        rows.push(r);
      }
      continue;
    }
    const c = other ? other.rowOf(e.trim()) : -1;
    if (c >= 0 && !seenCompanion.has(c)) {
      seenCompanion.add(c);
      companionRows.push(c);
    }
  }
  return { rows, phrases, companionRows };
}

/**
 * The seed words of `dimensions` (their own and their stored seeds) that `index` lacks, trimmed:
 * what seedSet looks up in the English companion, so a source that fetches the companion's rows
 * (a model host) fetches only these. Phrases never go to the companion.
 */
export function missingSeedWords(
  index: VectorIndex,
  dimensions: readonly DimensionRequest[],
  stored: StoredDimensionSeeds,
): string[] {
  const out = new Set<string>();
  const add = (entries: readonly string[] | undefined): void => {
    for (const e of entries ?? []) {
      if (isPhrase(e)) continue;
      const w = e.trim();
      if (index.rowOf(w) < 0) out.add(w);
    }
  };
  for (const d of dimensions) {
    if (d.type === 'dimension') add(stored.get(d.id)?.words);
    add(d.words);
    add(d.oppositeWords);
  }
  return [...out];
}

/**
 * Mean of the seeds' unit vectors (words and phrases alike), re-normalized; null without seeds.
 * Without phrases this is exactly index.centroid(rows) (the kernel).
 */
export function seedCentroid(index: VectorIndex, seeds: SeedSet, companion?: RowSource | null): Float32Array | null {
  const other = usableCompanion(index, companion);
  const fromCompanion = other ? seeds.companionRows : [];
  if (seeds.phrases.length === 0 && fromCompanion.length === 0) return index.centroid(seeds.rows);
  index.prefetch?.(seeds.rows);
  const sum = new Float32Array(index.dims);
  for (const r of seeds.rows) {
    const v = index.vector(r);
    for (let j = 0; j < sum.length; j++) sum[j] += v[j];
  }
  for (const r of fromCompanion) {
    const v = other!.vector(r);
    for (let j = 0; j < sum.length; j++) sum[j] += v[j];
  }
  for (const p of seeds.phrases) for (let j = 0; j < sum.length; j++) sum[j] += p.vector[j];
  return unit(sum);
}

/** A dimension ready to score: its unit query vector, or null when its seeds give none. */
export interface DimensionQuery {
  id: number;
  key: string;
  name: string;
  query: Float32Array | null;
  /** Cache key of the statistics (depends only on the seed rows). */
  statsKey: string;
  /** `axis` dimensions are bipolar (composition flips negated tokens); the others unipolar. */
  axis: boolean;
  /** Extension `expand`: the words added to the seeds, best first (lower-cased). */
  expandedWords?: string[];
}

/** The vector scaled to unit length; null for a zero vector. */
export function unit(v: Float32Array): Float32Array | null {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  if (!(s > 0)) return null;
  const inv = 1 / Math.sqrt(s);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * inv;
  return out;
}

/** Statistics of a factor over the texts of one request (batchZscore); texts without the score are left out. */
export function batchStats(values: ReadonlyArray<number | undefined>): FactorStats {
  const kept: number[] = [];
  for (const v of values) if (v !== undefined) kept.push(v);
  return statsOf(kept);
}

function statsOf(values: ArrayLike<number>): FactorStats {
  const kept: number[] = [];
  for (let i = 0; i < values.length; i++) if (!Number.isNaN(values[i])) kept.push(values[i]);
  const sorted = Float64Array.from(kept).sort();
  const n = sorted.length;
  let mean = 0;
  for (let i = 0; i < n; i++) mean += sorted[i];
  mean = n > 0 ? mean / n : 0;
  let v = 0;
  for (let i = 0; i < n; i++) v += (sorted[i] - mean) * (sorted[i] - mean);
  const std = n > 0 ? Math.sqrt(v / n) : 0;
  return { n, mean, std, sorted };
}

/** Cached statistics of a factor over rows 0..n-1 of the normalization sample (the n most frequent words). */
function sampleStats(
  index: VectorIndex,
  cache: StatsCache,
  key: string,
  values: (n: number) => ArrayLike<number>,
): FactorStats {
  let s = cache.get(key);
  if (!s) {
    s = statsOf(values(Math.min(NORMALIZATION_WORDS, index.size)));
    cache.set(key, s);
  }
  return s;
}

/** Statistics of the intrinsic modelRank factor s = 2f - 1 over the most frequent words. */
export function modelRankStats(index: VectorIndex, cache: StatsCache): FactorStats {
  return sampleStats(index, cache, 'modelRank', (n) => {
    const vals = new Float64Array(n);
    for (let r = 0; r < n; r++) vals[r] = 2 * frequencyScore(r + 1, index.size) - 1;
    return vals;
  });
}

export function dimensionStats(index: VectorIndex, dim: DimensionQuery, cache: StatsCache): FactorStats | null {
  const query = dim.query;
  if (!query) return null;
  return sampleStats(index, cache, dim.statsKey, (n) => {
    const rows = new Int32Array(n);
    for (let i = 0; i < n; i++) rows[i] = i;
    return index.scores(query, rows);
  });
}

export function mapperStats(index: VectorIndex, mapper: ResolvedMapper, cache: StatsCache): FactorStats {
  return sampleStats(index, cache, `mapper:${mapper.values.info.key}:${mapper.variable}`, (n) => {
    const vals = new Float64Array(n);
    for (let r = 0; r < n; r++) vals[r] = mapper.values.value(mapper.variable, r);
    return vals;
  });
}

/**
 * zscore: (s - mean) / std clipped to [-3, 3], divided by 3 (0 when std is 0).
 * percentile: (count below + half the count equal) / n, mapped to [-1, 1] (0 without sample).
 */
export function normalize(value: number, stats: FactorStats | null, mode: Normalization): number {
  if (mode === 'none' || !stats) return value;
  if (mode === 'zscore') {
    if (!(stats.std > 0)) return 0;
    const z = (value - stats.mean) / stats.std;
    return Math.max(-3, Math.min(3, z)) / 3;
  }
  const a = stats.sorted;
  if (a.length === 0) return 0;
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  const below = lo;
  hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] <= value) lo = mid + 1;
    else hi = mid;
  }
  const equal = lo - below;
  const p = (below + equal / 2) / a.length;
  return 2 * p - 1;
}

/** A simple bounded Map cache (insertion-order eviction), usable as StatsCache. */
/** A byte bound of a BoundedCache: entries' sizes, the most they may add up to, and the budget's say. */
export interface CacheBounds<V> {
  maxBytes: number;
  sizeOf: (value: V, key: string) => number;
  /** Asked before an entry's bytes are added (the Worker's memory budget): false keeps the entry out. */
  mayGrow?: (bytes: number) => boolean;
}

/**
 * Least-recently-used cache of at most `capacity` entries and, with bounds, at most
 * `bounds.maxBytes` bytes. An entry that does not fit (or that the budget refuses once the
 * older entries are gone) is not kept: the caller computes it again next time.
 */
export class BoundedCache<V> {
  private readonly map = new Map<string, V>();
  private readonly sizes = new Map<string, number>();
  private held = 0;
  constructor(
    private readonly capacity: number,
    private readonly bounds?: CacheBounds<V>,
  ) {}
  get(key: string): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }
  set(key: string, value: V): void {
    this.remove(key);
    const b = this.bounds;
    if (b) {
      const size = b.sizeOf(value, key);
      if (size > b.maxBytes) return;
      while (this.map.size > 0 && (this.held + size > b.maxBytes || (b.mayGrow && !b.mayGrow(size))))
        this.remove(this.map.keys().next().value as string);
      if (this.held + size > b.maxBytes || (b.mayGrow && !b.mayGrow(size))) return;
      this.sizes.set(key, size);
      this.held += size;
    }
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.remove(this.map.keys().next().value as string);
  }
  private remove(key: string): void {
    if (!this.map.delete(key)) return;
    this.held -= this.sizes.get(key) ?? 0;
    this.sizes.delete(key);
  }
  get size(): number {
    return this.map.size;
  }
  /** Bytes of the entries held (0 without bounds). */
  get bytes(): number {
    return this.held;
  }
}
