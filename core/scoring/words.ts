/**
 * POST .../word-scores: whitelist mode and find-and-score mode (decisions.md "Scores").
 */
import type { RowSource, VectorIndex } from '../types';
import { POS_MASK, DEFAULT_WORDRANK_LIMIT, VOCAB_FLAG } from '../vocab-quality';
import { NEIGHBOURHOOD, neighbourhoodAntonyms, seedAntonyms } from './antonyms';
import { candidateFilter, type WordLexicon } from './candidates';
import { requestDimensionSteps } from './dimensions';
import { drain, type Steps } from './steps';
import { COST } from '../cost';
import { findCandidates } from './find';
import {
  frequencyScore,
  phraseEntryRow,
  phraseOf,
  isPhrase,
  scoredRow,
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

/**
 * modelRank of a row: its position, except where there is no corpus frequency: a composed word
 * (a row past the vocabulary) has the rank just past it, vocabularySize + 1; a phrase row
 * (VOCAB_FLAG.PHRASE) the rank of its least frequent word, as for any phrase.
 */
function entryRank(index: VectorIndex, row: number): number {
  if (row >= index.size) return index.size + 1;
  if (!(index.flags(row) & VOCAB_FLAG.PHRASE)) return row + 1;
  const ranks = index
    .word(row)
    .split(' ')
    .map((w) => index.rowOf(w));
  return ranks.every((r) => r >= 0) ? Math.max(...ranks) + 1 : row + 1;
}

/** An entry to score: a vocabulary row (a whitelist word keeps the form the request wrote) or a phrase. */
type Scored = { row: number; phrase?: undefined; word?: string } | { row: -1; phrase: Phrase; word?: undefined };

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}

export function scoreWords(req: WordScoresRequest, input: WordScoringInput): WordScoresResponse {
  return drain(scoreWordsSteps(req, input));
}

/** Words scored between two steps of scoreWordsSteps. */
const WORDS_PER_STEP = 500;

/** scoreWords in steps (steps.ts): after each seed expansion, each dimension's scan of the words, and each WORDS_PER_STEP words. */
export function* scoreWordsSteps(req: WordScoresRequest, input: WordScoringInput): Steps<WordScoresResponse> {
  const { index, mappers } = input;
  const dims = yield* requestDimensionSteps(req, input);
  const seeds = seedSet(index, req.seedWords);
  const centroid = seedCentroid(index, seeds);

  // Entries to score, in output order, distinct.
  let entries: Scored[];
  const whitelist = req.whitelistWords ?? [];
  if (whitelist.length > 0) {
    entries = [];
    // One entry per word as written (trimmed), or per phrase: "café" and "cafe" are both scored,
    // each under its own form, though both find the row of "cafe" (core/word-lookup.ts).
    const seenWords = new Set<string>();
    for (const w of whitelist) {
      const own = isPhrase(w) ? phraseEntryRow(index, w) : -1;
      if (isPhrase(w) && own < 0) {
        const p = phraseOf(index, w);
        if (!p || seenWords.has(p.key)) continue;
        seenWords.add(p.key);
        entries.push({ row: -1, phrase: p });
        continue;
      }
      const word = w.trim();
      if (seenWords.has(word)) continue;
      const r = own >= 0 ? own : scoredRow(index, word);
      if (r < 0) continue;
      seenWords.add(word);
      entries.push({ row: r, word });
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
  const dimScores: Array<ReturnType<typeof rowScores>> = [];
  for (const d of dims) {
    dimScores.push(rowScores(d.query));
    yield entries.length * COST.listWordFactor;
  }
  const weight = req.seedScore ?? null;
  const mapperValue = (m: ResolvedMapper, e: Scored): number => {
    if (!e.phrase) return m.values.value(m.variable, e.row);
    // A phrase: the mean of its words' values (none when a word has none).
    let sum = 0;
    for (const r of e.phrase.rows) sum += m.values.value(m.variable, r);
    return sum / e.phrase.rows.length;
  };

  const data: ScoredWord[] = [];
  const perEntry = COST.whitelistWord + (1 + dims.length + mappers.length) * COST.listWordFactor;
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
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
    data.push({
      // A phrase is returned as written; its rank is that of its least frequent word.
      word: e.phrase ? e.phrase.text : (e.word ?? index.word(e.row).toLowerCase()),
      seedScore,
      modelRank: e.phrase ? Math.max(...e.phrase.rows) + 1 : entryRank(index, e.row),
      seedScoreQuartile: -1,
      modelRankQuartile: -1,
      dimensionScores,
      mapperScores,
      goalScore: weight !== null && seedScore !== null ? weight * seedScore : null,
      ...(!e.phrase && e.row >= index.size ? { composed: true as const } : {}),
    });
    if ((i + 1) % WORDS_PER_STEP === 0) yield WORDS_PER_STEP * perEntry;
  }

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
    // A composed word has no frequency rank: always the last quartile.
    d.modelRankQuartile = d.composed ? 4 : rq[i];
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
