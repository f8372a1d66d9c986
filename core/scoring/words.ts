/**
 * POST .../word-scores: whitelist mode and find-and-score mode (decisions.md "Scores").
 */
import { MAX_K } from '../kernels';
import { cacheKeyOf, type RowSource, type VectorIndex } from '../types';
import { POS_MASK, DEFAULT_WORDRANK_LIMIT } from '../vocab-quality';
import { NEIGHBOURHOOD, neighbourhoodAntonyms, seedAntonyms } from './antonyms';
import { candidateFilter, type CandidateFilter, type WordLexicon } from './candidates';
import {
  requestDimensions,
  frequencyScore,
  hasLetter,
  phraseOf,
  isPhrase,
  seedCentroid,
  seedSet,
  type Phrase,
} from './common';
import type { ResolvedMapper, ScoredWord, StoredDimensionSeeds, WordScoresRequest, WordScoresResponse } from './types';

export const FIND_LIMIT_DEFAULT = 100;

export interface WordScoringInput {
  index: VectorIndex;
  mappers: ResolvedMapper[];
  storedDimensions: StoredDimensionSeeds;
  /** Stop-word and dictionary rules of seed expansion (`expand`); candidates.ts languageLexicon. */
  lexicon?: WordLexicon;
  /** English companion of an aligned model: seeds the model lacks are looked up there. */
  companion?: RowSource | null;
}

/** Per index (models are immutable): the rows that contain a letter, for the find-and-score fallback. */
const letterRowsByIndex = new WeakMap<object, Int32Array>();

/** Rows of the vocabulary whose entry contains a letter, in frequency order (computed once per index). */
function letterRowsOf(index: VectorIndex): Int32Array {
  let rows = letterRowsByIndex.get(cacheKeyOf(index));
  if (!rows) {
    const out = new Int32Array(index.size);
    let n = 0;
    for (let r = 0; r < index.size; r++) if (hasLetter(index.word(r))) out[n++] = r;
    rows = out.slice(0, n);
    letterRowsByIndex.set(cacheKeyOf(index), rows);
  }
  return rows;
}

/**
 * The first row of each new lower-cased word in `rows` (best first) that `filter` accepts (every
 * row when null), up to `limit`: how ranked rows become candidate words (find-and-score, expansion).
 */
export function pickCandidates(
  index: VectorIndex,
  rows: ArrayLike<number>,
  limit: number,
  filter: CandidateFilter | null,
): number[] {
  const seen = new Set<string>();
  const picked: number[] = [];
  for (let i = 0; i < rows.length && picked.length < limit; i++) {
    const r = rows[i];
    const lower = index.word(r).toLowerCase();
    if (seen.has(lower) || (filter && !filter.accept(r))) continue;
    seen.add(lower);
    picked.push(r);
  }
  return picked;
}

/**
 * Find-and-score candidates (also seed expansion's): the `limit` distinct lower-cased words
 * closest to the centroid that the candidate filter (core/scoring/candidates.ts, with the
 * vocabulary quality rules of core/vocab-quality.ts) accepts. A cased vocabulary may hold
 * one word in several casings; the closest entry stands for the word and the others do not use
 * up the limit. The fast path takes the kernel's top-k with headroom for skipped rows, widening
 * k while rows are skipped; when that is not enough, it ranks the accepted rows explicitly,
 * widening k until `limit` distinct words are found or every accepted row is ranked (at most
 * MAX_K rows).
 */
export function findCandidates(
  index: VectorIndex,
  centroid: Float32Array,
  limit: number,
  filter: CandidateFilter,
  excludedCount = 0,
): number[] {
  const pick = (rows: ArrayLike<number>, checkEligible: boolean): number[] =>
    pickCandidates(index, rows, limit, checkEligible ? filter : null);
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

/** A whitelist entry to score: a vocabulary row or a phrase. */
type Scored = { row: number; phrase?: undefined } | { row: -1; phrase: Phrase };

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function scoreWords(req: WordScoresRequest, input: WordScoringInput): WordScoresResponse {
  const { index, mappers } = input;
  const dims = requestDimensions(req, input);
  const seeds = seedSet(index, req.seedWords);
  const centroid = seedCentroid(index, seeds);

  // Entries to score, in output order, distinct.
  let entries: Scored[];
  const whitelist = req.whitelistWords ?? [];
  if (whitelist.length > 0) {
    entries = [];
    // One entry per lower-cased word or phrase (a repeated row has a repeated word).
    const seenWords = new Set<string>();
    for (const w of whitelist) {
      if (isPhrase(w)) {
        const p = phraseOf(index, w);
        if (!p || seenWords.has(p.key)) continue;
        seenWords.add(p.key);
        entries.push({ row: -1, phrase: p });
        continue;
      }
      const r = index.rowOf(w.trim());
      if (r < 0) continue;
      const lower = index.word(r).toLowerCase();
      if (seenWords.has(lower)) continue;
      seenWords.add(lower);
      entries.push({ row: r });
    }
  } else if (centroid) {
    const limit = req.limit ?? FIND_LIMIT_DEFAULT;
    const phraseRows = seeds.phrases.flatMap((p) => p.rows);
    const excludedWords = new Set<string>();
    for (const w of req.seedWords ?? [])
      for (const part of w.trim().toLowerCase().split(/\s+/u)) excludedWords.add(part);
    const rankLimit = req.wordrankLimit ?? DEFAULT_WORDRANK_LIMIT;
    const seedRowList = [...seeds.rows, ...phraseRows];
    const excludedRows = new Set(seedRowList);
    let seedPos = 0;
    for (const r of seedRowList) seedPos |= index.flags(r) & POS_MASK;
    const filter = candidateFilter(index, {
      cutoff: rankLimit === -1 ? undefined : rankLimit,
      excludedRows,
      excludedWords,
      seedPos,
    });
    if (req.excludeAntonyms === true) {
      // Extension: the seeds' antonyms and the far side of antonym pairs among their nearest words (antonyms.ts).
      const ants = seedAntonyms(index, seedRowList);
      for (const a of ants) excludedRows.add(a);
      const nearest = findCandidates(index, centroid, limit + NEIGHBOURHOOD, filter, excludedRows.size);
      for (const a of neighbourhoodAntonyms(index, centroid, seedRowList, ants, nearest)) excludedRows.add(a);
    }
    entries = findCandidates(index, centroid, limit, filter, excludedRows.size).map((row) => ({ row }));
  } else {
    entries = [];
  }

  const rowArr = Int32Array.from(entries.filter((e) => !e.phrase).map((e) => e.row));
  // Scores of the row entries via the kernel; of phrases by their vectors.
  const rowScores = (query: Float32Array | null): ((e: Scored, i: number) => number) | null => {
    if (!query) return null;
    const s = rowArr.length > 0 ? index.scores(query, rowArr) : new Float32Array(0);
    const at = new Map<number, number>();
    let k = 0;
    entries.forEach((e, i) => {
      if (!e.phrase) at.set(i, s[k++]);
    });
    return (e, i) => (e.phrase ? dot(query, e.phrase.vector) : at.get(i)!);
  };
  const seedScores = rowScores(centroid);
  const dimScores = dims.map((d) => rowScores(d.query));
  const weight = req.seedScore ?? null;
  const mapperValue = (m: ResolvedMapper, e: Scored): number => {
    if (!e.phrase) return m.values.value(m.variable, e.row);
    // A phrase: the mean of its words' values (none when a word has none).
    let sum = 0;
    for (const r of e.phrase.rows) sum += m.values.value(m.variable, r);
    return sum / e.phrase.rows.length;
  };

  const data: ScoredWord[] = entries.map((e, i) => {
    const seedScore = seedScores ? seedScores(e, i) : null;
    const dimensionScores: Record<string, number> = {};
    dims.forEach((d, k) => {
      const s = dimScores[k];
      if (s) dimensionScores[d.key] = s(e, i);
    });
    const mapperScores: Record<string, number> = {};
    for (const m of mappers) {
      const v = mapperValue(m, e);
      if (!Number.isNaN(v)) mapperScores[m.id] = v;
    }
    return {
      // A phrase is returned as written; its rank is that of its least frequent word.
      word: e.phrase ? e.phrase.text : index.word(e.row).toLowerCase(),
      seedScore,
      modelRank: e.phrase ? Math.max(...e.phrase.rows) + 1 : e.row + 1,
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
