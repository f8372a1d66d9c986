/**
 * Building blocks shared by the scorers: frequency score, dimension query vectors, request
 * cross-checks and the normalization statistics (decisions.md "Scores").
 */
import { cacheKeyOf, type RowSource, type VectorIndex } from '../types';
import type { WordLexicon } from './candidates';
import {
  contrastContext,
  contrastiveExpansionRows,
  expansionRows,
  type ContrastContext,
  type ExpansionMode,
} from './expansion';
import { ln } from './ln';
import type {
  DimensionRequest,
  FactorStats,
  GoalConfig,
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

/** f(rank) = 1 - ln(rank)/ln(V), in [0, 1]; rank is 1-based. */
export function frequencyScore(rank: number, vocabularySize: number): number {
  if (vocabularySize <= 1) return 1;
  return 1 - ln(rank) / ln(vocabularySize);
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

const SPACE = /\s+/u;

/** True when the trimmed entry holds more than one word. */
export function isPhrase(entry: string): boolean {
  return SPACE.test(entry.trim());
}

/**
 * A phrase's vector: the mean of its words' unit vectors, re-normalized; null when any word is
 * unknown (decisions.md "Vocabulary quality").
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

/** Cache key of a seed set (ignores order). */
function seedKey(seeds: SeedSet): string {
  const phrases = seeds.phrases.map((p) => p.key).sort();
  return (
    sortedKey(seeds.rows) +
    (phrases.length ? `+${phrases.join('|')}` : '') +
    (seeds.companionRows.length > 0 ? `+en:${sortedKey(seeds.companionRows)}` : '')
  );
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

function unit(v: Float32Array): Float32Array | null {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  if (!(s > 0)) return null;
  const inv = 1 / Math.sqrt(s);
  const out = new Float32Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = v[i] * inv;
  return out;
}

/** unit(a + b) of two unit vectors (null when either is missing or they cancel). */
function halfAndHalf(a: Float32Array | null, b: Float32Array | null): Float32Array | null {
  if (!a || !b) return null;
  const sum = new Float32Array(a.length);
  for (let j = 0; j < a.length; j++) sum[j] = a[j] + b[j];
  return unit(sum);
}

/** The rows in ascending order, comma-separated (a stats cache key that ignores seed order). */
const sortedKey = (rows: readonly number[]): string => [...rows].sort((a, b) => a - b).join(',');

/**
 * Query vector of each requested dimension. `manual`: centroid of `words`. `dimension`:
 * centroid of the stored seeds merged with `words` (unknown id: DIMENSION_NOT_FOUND).
 * `axis`: unit(centroid(words) - centroid(oppositeWords)), so the score is
 * cos(word, centroid(+) - centroid(-)). Seeds outside the vocabulary are ignored; a phrase
 * ("ice cream") counts as one seed with the mean of its words' unit vectors (seedSet).
 * `expand: N` (manual, dimension) adds N expansion words (expansion.ts; the lexicon supplies
 * the stop-word and dictionary rules of the candidate filter): the query becomes
 * unit(centroid(seeds) + centroid(expansion words)), so the seeds keep half the weight.
 * `expansion: "contrastive"` ranks every dimension's candidates against the other dimensions'
 * seeds too (expansion.ts contrastContext).
 */
export function dimensionQueries(
  index: VectorIndex,
  dimensions: readonly DimensionRequest[] | undefined,
  stored: StoredDimensionSeeds,
  lexicon?: WordLexicon,
  companion?: RowSource | null,
  expansion: ExpansionMode = 'nearest',
): DimensionQuery[] {
  // First every dimension's seeds (and the checks), then expansions: a contrastive expansion needs
  // the seed centroids of all the request's dimensions.
  // Every dimension's seed and opposite words (phrases word by word), fetched together by a
  // row-sharded model's view instead of one engine run per dimension.
  if (index.prefetch) {
    const rows: number[] = [];
    for (const d of dimensions ?? []) {
      const words = [...(d.type === 'dimension' ? (stored.get(d.id)?.words ?? []) : []), ...(d.words ?? [])];
      for (const e of [...words, ...(d.oppositeWords ?? [])])
        for (const w of e.trim().split(SPACE)) {
          const r = index.rowOf(w);
          if (r >= 0) rows.push(r);
        }
    }
    if (rows.length > 0) index.prefetch(rows);
  }
  const ids = new Set<number>();
  const seeded = (dimensions ?? []).map((d, i) => {
    if (ids.has(d.id))
      throw new ScoringError('VALIDATION_FAILED', `Dimension id ${d.id} is repeated`, `dimensions.${i}.id`);
    ids.add(d.id);
    if (d.oppositeWords !== undefined && d.type !== 'axis') {
      throw new ScoringError(
        'VALIDATION_FAILED',
        'oppositeWords is only allowed for dimensions of type axis',
        `dimensions.${i}.oppositeWords`,
      );
    }
    if (d.expand && d.type === 'axis') {
      // Nearest neighbours of a pole include its antonyms (good -> bad), so expansion would blur the axis.
      throw new ScoringError(
        'VALIDATION_FAILED',
        'expand is not allowed for dimensions of type axis',
        `dimensions.${i}.expand`,
      );
    }
    let words = d.words ?? [];
    let storedName: string | undefined;
    if (d.type === 'dimension') {
      const seeds = stored.get(d.id);
      if (!seeds)
        throw new ScoringError('DIMENSION_NOT_FOUND', `No stored dimension with id ${d.id}`, `dimensions.${i}.id`);
      words = [...seeds.words, ...words];
      storedName = seeds.name;
    }
    return { d, words, storedName, pos: seedSet(index, words, companion) };
  });
  // Contrastive: the competitors are the non-axis dimensions with seeds in the vocabulary.
  const expanding = seeded.some((s) => s.d.expand && s.d.type !== 'axis' && s.pos.rows.length > 0);
  const competitors =
    expansion === 'contrastive' && expanding
      ? seeded.map((s) => (s.d.type === 'axis' ? null : index.centroid(s.pos.rows)))
      : [];
  const contrastive = competitors.filter((c) => c !== null).length > 1;
  // The competitors' scans are the expensive part: made on the first expansion the cache lacks.
  let contrast: ContrastContext | null = null;
  let cache = expanding ? expansionCache(index, lexicon) : null;
  const competitorKey =
    cache && contrastive ? seeded.map((s, j) => (competitors[j] ? s.pos.rows.join(',') : '-')).join(';') : '';
  // Requests with very many seeds are not remembered: their keys would crowd the isolate's memory.
  if (competitorKey.length > EXPANSION_KEY_MAX_LENGTH) cache = null;

  return seeded.map(({ d, words, storedName, pos }, k) => {
    let expandedWords: string[] | undefined;
    let added: number[] = [];
    if (d.expand !== undefined && d.type !== 'axis') {
      // Everything that decides the words: mode (with the competitors' seed rows and this
      // dimension's place among them), N, the seed rows and the seed words (excluded as words).
      const key = cache
        ? `${cache.prefix}${contrastive ? `c${k}:${competitorKey}` : 'n'}|${d.expand}|${pos.rows.join(',')}|${words.map((w) => w.trim().toLowerCase()).join('\u0000')}`
        : '';
      const store = cache && key.length <= EXPANSION_KEY_MAX_LENGTH ? cache.cache : null;
      let rows = store?.get(key);
      if (!rows) {
        rows = contrastive
          ? contrastiveExpansionRows(
              index,
              (contrast ??= contrastContext(index, competitors)),
              k,
              pos.rows,
              words,
              d.expand,
              lexicon,
            )
          : expansionRows(index, pos.rows, words, d.expand, lexicon);
        store?.set(key, rows);
      }
      added = [...rows];
      expandedWords = added.map((r) => index.word(r).toLowerCase());
    }
    let query: Float32Array | null;
    let statsKey: string;
    if (d.type === 'axis') {
      const neg = seedSet(index, d.oppositeWords, companion);
      const cp = seedCentroid(index, pos, companion);
      const cn = seedCentroid(index, neg, companion);
      if (cp && cn) {
        const diff = new Float32Array(cp.length);
        for (let j = 0; j < cp.length; j++) diff[j] = cp[j] - cn[j];
        query = unit(diff);
      } else {
        query = null;
      }
      statsKey = `axis:${seedKey(pos)}|${seedKey(neg)}`;
    } else if (added.length > 0) {
      // The seeds and the expansion weigh alike, however many words the expansion adds.
      query = halfAndHalf(seedCentroid(index, pos, companion), index.centroid(added));
      statsKey = `dim:${seedKey(pos)}+${sortedKey(added)}`;
    } else {
      query = seedCentroid(index, pos, companion);
      statsKey = `dim:${seedKey(pos)}`;
    }
    // Goal factor label: the request's name, else the stored dimension's name, else the id.
    return {
      id: d.id,
      key: String(d.id),
      name: d.name ?? storedName ?? String(d.id),
      query,
      statsKey,
      axis: d.type === 'axis',
      ...(expandedWords ? { expandedWords } : {}),
    };
  });
}

/** Expansions remembered per model and lexicon (see expansionCache), and the longest key kept. */
export const EXPANSION_CACHE_SIZE = 512;
export const EXPANSION_KEY_MAX_LENGTH = 4096;

/** Bytes the expansion cache of one model may hold (keys and rows; counted by the Worker's memory budget). */
export const EXPANSION_CACHE_BYTES = 2_000_000;

/** Per model: one cache; each entry's key starts with its lexicon's number (0: none). */
const expansionCaches = new WeakMap<object, BoundedCache<readonly number[]>>();
const lexiconIds = new WeakMap<WordLexicon, number>();
let lexiconCount = 0;

/**
 * The expansion rows already found for this model (and lexicon: a key names it): clients that
 * classify batch after batch send the same dimensions each time, and a contrastive expansion
 * scans the candidate rows once per competing dimension (docs/dimensions.md). None for a model
 * head (core/partial-index.ts): its answers are replaced once the complete model is in.
 */
function expansionCache(
  index: VectorIndex,
  lexicon: WordLexicon | undefined,
): { cache: BoundedCache<readonly number[]>; prefix: string } | null {
  if (index.rows !== undefined && index.rows < index.size) return null;
  let cache = expansionCaches.get(cacheKeyOf(index));
  if (!cache)
    expansionCaches.set(
      cacheKeyOf(index),
      (cache = new BoundedCache<readonly number[]>(EXPANSION_CACHE_SIZE, {
        maxBytes: EXPANSION_CACHE_BYTES,
        sizeOf: (rows, key) => 2 * key.length + 8 * rows.length + 64,
        mayGrow: (bytes) => index.mayGrow?.(bytes) ?? true,
      })),
    );
  let id = 0;
  if (lexicon) {
    id = lexiconIds.get(lexicon) ?? 0;
    if (id === 0) lexiconIds.set(lexicon, (id = ++lexiconCount));
  }
  return { cache, prefix: `${id}|` };
}

/** Bytes held by the model's expansion cache (the Worker's memory budget and diagnostics). */
export function expansionCacheBytes(index: VectorIndex): number {
  return expansionCaches.get(cacheKeyOf(index))?.bytes ?? 0;
}

/** dimensionQueries of a request's `dimensions` and `expansion` (text-scores and word-scores alike). */
export function requestDimensions(
  req: { dimensions?: readonly DimensionRequest[]; expansion?: ExpansionMode },
  input: {
    index: VectorIndex;
    storedDimensions: StoredDimensionSeeds;
    lexicon?: WordLexicon;
    companion?: RowSource | null;
  },
): DimensionQuery[] {
  return dimensionQueries(
    input.index,
    req.dimensions,
    input.storedDimensions,
    input.lexicon,
    input.companion,
    req.expansion,
  );
}

/** goalConfig must reference requested dimensions and mapperKeys, each at most once. */
export function checkGoalConfig(
  goal: GoalConfig,
  dimensions: readonly DimensionQuery[],
  mappers: readonly ResolvedMapper[],
): void {
  checkGoalRefs(goal.dimensions, new Set(dimensions.map((d) => d.id)), 'dimension', "the request's dimensions");
  checkGoalRefs(goal.mappers, new Set(mappers.map((m) => m.id)), 'mapper', "the request's mapperKeys");
}

/** goalConfig.dimensions / goalConfig.mappers: each id requested, none repeated. */
function checkGoalRefs<T>(
  refs: ReadonlyArray<{ id: T }> | undefined,
  requested: ReadonlySet<T>,
  kind: 'dimension' | 'mapper',
  among: string,
): void {
  const seen = new Set<T>();
  (refs ?? []).forEach((g, i) => {
    if (!requested.has(g.id))
      throw new ScoringError(
        'VALIDATION_FAILED',
        `goalConfig ${kind} ${g.id} is not among ${among}`,
        `goalConfig.${kind}s.${i}.id`,
      );
    if (seen.has(g.id))
      throw new ScoringError(
        'VALIDATION_FAILED',
        `goalConfig ${kind} ${g.id} is repeated`,
        `goalConfig.${kind}s.${i}.id`,
      );
    seen.add(g.id);
  });
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
