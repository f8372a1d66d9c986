/**
 * POST .../word-scores: whitelist mode and find-and-score mode (decisions.md "Scores").
 */
import { MAX_K } from '../kernels';
import type { VectorIndex } from '../types';
import { candidateFilter, type CandidateFilter, type WordLexicon } from './candidates';
import { dimensionQueries, frequencyScore, hasLetter, seedRows } from './common';
import type {
  ResolvedMapper,
  ScoredWord,
  StoredDimensionSeeds,
  WordScoresRequest,
  WordScoresResponse,
} from './types';

export const FIND_LIMIT_DEFAULT = 100;

export interface WordScoringInput {
  index: VectorIndex;
  mappers: ResolvedMapper[];
  storedDimensions: StoredDimensionSeeds;
  /** Stop-word and dictionary rules of seed expansion (`expand`); candidates.ts languageLexicon. */
  lexicon?: WordLexicon;
}

/** Per index (models are immutable): the rows that contain a letter, for the find-and-score fallback. */
const letterRowsByIndex = new WeakMap<VectorIndex, Int32Array>();

/** Rows of the vocabulary whose entry contains a letter, in frequency order (computed once per index). */
function letterRowsOf(index: VectorIndex): Int32Array {
  let rows = letterRowsByIndex.get(index);
  if (!rows) {
    const out = new Int32Array(index.size);
    let n = 0;
    for (let r = 0; r < index.size; r++) if (hasLetter(index.word(r))) out[n++] = r;
    rows = out.slice(0, n);
    letterRowsByIndex.set(index, rows);
  }
  return rows;
}

/**
 * Find-and-score candidates: the `limit` distinct lower-cased words closest to the centroid
 * that the candidate filter (core/scoring/candidates.ts) accepts. A cased vocabulary may hold
 * one word in several casings; the closest entry stands for the word and the others do not use
 * up the limit. The fast path takes the kernel's top-k with headroom for skipped rows, widening
 * k while rows are skipped; when that is not enough, it ranks the accepted rows explicitly,
 * widening k until `limit` distinct words are found or every accepted row is ranked (at most
 * MAX_K rows).
 */
export function findCandidates(index: VectorIndex, centroid: Float32Array, limit: number, filter: CandidateFilter, excludedCount = 0): number[] {
  /** The first row of each new lower-cased word in `rows` (best first), up to `limit`. */
  const pick = (rows: Int32Array, checkEligible: boolean): number[] => {
    const seen = new Set<string>();
    const picked: number[] = [];
    for (let i = 0; i < rows.length && picked.length < limit; i++) {
      const r = rows[i];
      const lower = index.word(r).toLowerCase();
      if (seen.has(lower) || (checkEligible && !filter.accept(r))) continue;
      seen.add(lower);
      picked.push(r);
    }
    return picked;
  };
  const { available, cutoff } = filter;
  let k = Math.min(MAX_K, available, limit + excludedCount + 32);
  if (k <= 0) return [];
  for (;;) {
    const first = index.topK(centroid, k, cutoff !== undefined ? { rankCutoff: cutoff } : undefined);
    const picked = pick(first.rows, true);
    if (picked.length >= limit || first.rows.length < k) return picked;
    if (k >= MAX_K || k >= available) break;
    k = Math.min(MAX_K, available, 4 * k);
  }
  // Too many skipped rows or casings: rank the eligible rows explicitly.
  const letters = letterRowsOf(index);
  const rows: number[] = [];
  for (let i = 0; i < letters.length; i++) {
    const r = letters[i];
    if (r >= available) break;
    if (filter.accept(r)) rows.push(r);
  }
  if (rows.length === 0) return [];
  const eligible = Int32Array.from(rows);
  for (let kk = Math.min(limit, eligible.length, MAX_K); ; kk = Math.min(2 * kk, eligible.length, MAX_K)) {
    const ranked = pick(index.topK(centroid, kk, { rows: eligible }).rows, false);
    if (ranked.length >= limit || kk >= eligible.length || kk >= MAX_K) return ranked;
  }
}

/** Quartile 1..4 of each value within the set (1 = best); ties share the better quartile; -1 for null. */
function quartiles(values: Array<number | null>, better: (a: number, b: number) => number): number[] {
  const idx = values.map((v, i) => i).filter((i) => values[i] !== null);
  idx.sort((a, b) => better(values[a] as number, values[b] as number) || a - b);
  const out = values.map(() => -1);
  const n = idx.length;
  let groupStart = 0;
  for (let p = 0; p < n; p++) {
    if (p > 0 && values[idx[p]] !== values[idx[p - 1]]) groupStart = p;
    out[idx[p]] = Math.floor((4 * groupStart) / n) + 1;
  }
  return out;
}

function avg(values: Array<number | null | undefined>): number | null {
  let s = 0;
  let n = 0;
  for (const v of values) {
    if (v !== null && v !== undefined) {
      s += v;
      n++;
    }
  }
  return n > 0 ? s / n : null;
}

export function scoreWords(req: WordScoresRequest, input: WordScoringInput): WordScoresResponse {
  const { index, mappers } = input;
  const dims = dimensionQueries(index, req.dimensions, input.storedDimensions, input.lexicon);
  const seeds = seedRows(index, req.seedWords);
  const centroid = index.centroid(seeds);

  // Rows to score, in output order, distinct.
  let rows: number[];
  const whitelist = req.whitelistWords ?? [];
  if (whitelist.length > 0) {
    rows = [];
    // One row per lower-cased word (a repeated row has a repeated word).
    const seenWords = new Set<string>();
    for (const w of whitelist) {
      const r = index.rowOf(w.trim());
      if (r < 0) continue;
      const lower = index.word(r).toLowerCase();
      if (seenWords.has(lower)) continue;
      seenWords.add(lower);
      rows.push(r);
    }
  } else if (centroid) {
    const limit = req.limit ?? FIND_LIMIT_DEFAULT;
    const cutoff = req.wordrankLimit === undefined || req.wordrankLimit === -1 ? undefined : req.wordrankLimit;
    const excludedWords = new Set((req.seedWords ?? []).map((w) => w.trim().toLowerCase()));
    rows = findCandidates(index, centroid, limit, candidateFilter(index, { cutoff, excludedRows: new Set(seeds), excludedWords }), seeds.length);
  } else {
    rows = [];
  }

  const rowArr = Int32Array.from(rows);
  const seedScores = centroid && rowArr.length > 0 ? index.scores(centroid, rowArr) : null;
  const dimScores = dims.map((d) => (d.query && rowArr.length > 0 ? index.scores(d.query, rowArr) : null));
  const weight = req.seedScore ?? null;

  const data: ScoredWord[] = rows.map((r, i) => {
    const seedScore = seedScores ? seedScores[i] : null;
    const dimensionScores: Record<string, number> = {};
    dims.forEach((d, k) => {
      const s = dimScores[k];
      if (s) dimensionScores[d.key] = s[i];
    });
    const mapperScores: Record<string, number> = {};
    for (const m of mappers) {
      const v = m.values.value(m.variable, r);
      if (!Number.isNaN(v)) mapperScores[m.id] = v;
    }
    return {
      word: index.word(r).toLowerCase(),
      seedScore,
      modelRank: r + 1,
      seedScoreQuartile: -1,
      modelRankQuartile: -1,
      dimensionScores,
      mapperScores,
      goalScore: weight !== null && seedScore !== null ? weight * seedScore : null,
    };
  });

  const sq = quartiles(
    data.map((d) => d.seedScore),
    (a, b) => b - a,
  );
  const rq = quartiles(
    data.map((d) => d.modelRank),
    (a, b) => a - b,
  );
  data.forEach((d, i) => {
    d.seedScoreQuartile = sq[i];
    d.modelRankQuartile = rq[i];
  });

  const dimensionAverages: Record<string, number> = {};
  for (const d of dims) {
    const a = avg(data.map((w) => w.dimensionScores[d.key]));
    if (a !== null) dimensionAverages[d.key] = a;
  }
  const mapperAverages: Record<string, number> = {};
  for (const m of mappers) {
    const a = avg(data.map((w) => w.mapperScores[m.id]));
    if (a !== null) mapperAverages[m.id] = a;
  }

  return {
    data,
    averages: {
      modelRankScore: avg(data.map((w) => frequencyScore(w.modelRank, index.size))),
      seedScore: avg(data.map((w) => w.seedScore)),
      dimensionScores: dimensionAverages,
      mapperScores: mapperAverages,
      goalScore: avg(data.map((w) => w.goalScore)),
    },
  };
}
