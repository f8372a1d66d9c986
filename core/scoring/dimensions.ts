/**
 * The query vector of each requested dimension (decisions.md "Scores"): seeds, axes, stored
 * seeds and the expansion extension, with the per-model cache of expansion words. Split from
 * common.ts so the seed building blocks there do not import the expansion they feed.
 */
import { cacheKeyOf, type RowSource, type VectorIndex } from '../types';
import type { WordLexicon } from './candidates';
import {
  BoundedCache,
  ScoringError,
  seedCentroid,
  seedSet,
  SPACE,
  unit,
  type DimensionQuery,
  type SeedSet,
} from './common';
import {
  contrastContextSteps,
  contrastiveExpansionRows,
  expansionRows,
  type ContrastContext,
  type ExpansionMode,
} from './expansion';
import { checkDimensionRequests } from './request-checks';
import { drain, type Steps } from './steps';
import { COST } from '../cost';
import type { DimensionRequest, StoredDimensionSeeds } from './types';

/** Cache key of a seed set (ignores order). */
function seedKey(seeds: SeedSet): string {
  const phrases = seeds.phrases.map((p) => p.key).sort();
  return (
    sortedKey(seeds.rows) +
    (phrases.length ? `+${phrases.join('|')}` : '') +
    (seeds.companionRows.length > 0 ? `+en:${sortedKey(seeds.companionRows)}` : '')
  );
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
  return drain(dimensionQuerySteps(index, dimensions, stored, lexicon, companion, expansion));
}

/** dimensionQueries in steps: one after each competitor's scan and each expansion (steps.ts). */
export function* dimensionQuerySteps(
  index: VectorIndex,
  dimensions: readonly DimensionRequest[] | undefined,
  stored: StoredDimensionSeeds,
  lexicon?: WordLexicon,
  companion?: RowSource | null,
  expansion: ExpansionMode = 'nearest',
): Steps<DimensionQuery[]> {
  checkDimensionRequests(dimensions);
  // First every dimension's seeds, then expansions: a contrastive expansion needs
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
  const seeded = (dimensions ?? []).map((d, i) => {
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

  const queries: DimensionQuery[] = [];
  for (let k = 0; k < seeded.length; k++) {
    const { d, words, storedName, pos } = seeded[k];
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
        if (contrastive) contrast ??= yield* contrastContextSteps(index, competitors);
        rows = contrastive
          ? contrastiveExpansionRows(index, contrast!, k, pos.rows, words, d.expand, lexicon)
          : expansionRows(index, pos.rows, words, d.expand, lexicon);
        store?.set(key, rows);
        yield COST.expansionScan;
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
    queries.push({
      id: d.id,
      key: String(d.id),
      name: d.name ?? storedName ?? String(d.id),
      query,
      statsKey,
      axis: d.type === 'axis',
      ...(expandedWords ? { expandedWords } : {}),
    });
  }
  return queries;
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
  return drain(requestDimensionSteps(req, input));
}

/** requestDimensions in steps (steps.ts). */
export function requestDimensionSteps(
  req: { dimensions?: readonly DimensionRequest[]; expansion?: ExpansionMode },
  input: {
    index: VectorIndex;
    storedDimensions: StoredDimensionSeeds;
    lexicon?: WordLexicon;
    companion?: RowSource | null;
  },
): Steps<DimensionQuery[]> {
  return dimensionQuerySteps(
    input.index,
    req.dimensions,
    input.storedDimensions,
    input.lexicon,
    input.companion,
    req.expansion,
  );
}
