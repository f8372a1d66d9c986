/**
 * POST .../text-scores: request -> response JSON, over a VectorIndex, a tokenizer, resolved
 * mappers and stored dimension seeds (decisions.md "Scores").
 */
import { cacheKeyOf, type RowSource, type VectorIndex } from '../types';
import {
  batchStats,
  dimensionStats,
  frequencyScore,
  mapperStats,
  modelRankStats,
  normalize,
  type DimensionQuery,
} from './common';
import type { WordLexicon } from './candidates';
import { requestDimensionSteps } from './dimensions';
import { drain, textGroups, type Steps } from './steps';
import { COST } from '../cost';
import { spanConverter } from '../offsets';
import { checkGoalReferences } from './request-checks';
import { DEFAULT_REPRESENTATION, dimensionTextScores } from './representation';
import {
  compileComposition,
  composeText,
  composedScore,
  dimensionScale,
  mapperScale,
  plainItems,
  type CompiledComposition,
  type TextItems,
} from './composition';
import type { CompositionData } from '../tokenizer/format';
import type { ScoringTokenizer } from '../tokenizer';
import { batchScores, buildBatch, type RawTextScores } from './batch';
import { languageMismatch } from './language-mismatch';
import type {
  FactorStats,
  FormLike,
  GoalConfig,
  GoalScoreFactor,
  Normalization,
  Representation,
  ResolvedMapper,
  ScoredText,
  StatsCache,
  StoredDimensionSeeds,
  TextExplanation,
  TextScoresRequest,
  TextScoresResponse,
  TokenLike,
} from './types';

export interface TextScoringInput {
  index: VectorIndex;
  /** The texts' tokens; core/tokenizer scoringTokenizer adds `forms`, which the scorer's lean path (batch.ts) takes. */
  tokenize: ((text: string) => TokenLike[]) & { forms?: ScoringTokenizer['forms'] };
  mappers: ResolvedMapper[];
  storedDimensions: StoredDimensionSeeds;
  /** English companion of an aligned model: seeds the model lacks are looked up there. */
  companion?: RowSource | null;
  stats: StatsCache;
  /** Stop-word and dictionary rules of seed expansion (`expand`); candidates.ts languageLexicon. */
  lexicon?: WordLexicon;
  /** The language's composition word lists (language data meta.composition); rules without lists still apply caps and "!". */
  composition?: CompositionData | null;
  /** The model's language: a text that looks like another language gets `languageMismatch` (language-mismatch.ts); absent: no check. */
  language?: string;
}

export interface TextScoringResult {
  response: TextScoresResponse;
  /** Tokens counted by the tokenizer over all texts (metering). */
  tokenCount: number;
}

/** Row of a token: its lookup form (the lemma; a Japanese dictionary form) first, then the surface form, lower-cased; -1 when neither is known. */
export function tokenRow(index: VectorIndex, t: TokenLike): number {
  return tokenRowCached(index, t, null);
}

/**
 * Rows of lower-cased forms per vector index (rowOf answers), so a form seen before costs one
 * Map lookup instead of its UTF-8 encoding and hash probe. At most ROW_CACHE_SIZE forms of at
 * most ROW_CACHE_MAX_LENGTH characters per index; then the cache starts over.
 */
const ROW_CACHE_SIZE = 50_000;
const ROW_CACHE_MAX_LENGTH = 64;
const rowCaches = new WeakMap<object, Map<string, number>>();

function rowCacheOf(index: VectorIndex): Map<string, number> {
  let c = rowCaches.get(cacheKeyOf(index));
  if (!c) rowCaches.set(cacheKeyOf(index), (c = new Map()));
  return c;
}

function cachedRow(index: VectorIndex, cache: Map<string, number> | null, word: string): number {
  if (!cache || word.length > ROW_CACHE_MAX_LENGTH) return index.rowOf(word);
  let r = cache.get(word);
  if (r === undefined) {
    if (cache.size >= ROW_CACHE_SIZE) cache.clear();
    cache.set(word, (r = index.rowOf(word)));
  }
  return r;
}

function tokenRowCached(index: VectorIndex, t: FormLike, cache: Map<string, number> | null): number {
  const lookup = t.lookup ?? t.token;
  // '': an auxiliary, looked up by nothing (core/tokenizer TokenForm.lookup).
  if (lookup === '') return -1;
  const lemma = lookup.toLowerCase();
  let r = cachedRow(index, cache, lemma);
  if (r < 0) {
    const surface = t.string.toLowerCase();
    if (surface !== lemma) r = cachedRow(index, cache, surface);
    // subwordFallback: the surface form of a non-stop token composed (not cached here: composed rows are the request's own).
    if (r < 0 && index.composeRow && !t.isStop) r = index.composeRow(surface);
  }
  return r;
}

interface TextRows {
  /** In-vocabulary tokens (stop words included): modelRankScore. */
  all: number[];
  /** In-vocabulary non-stop tokens: dimension and mapper scores. */
  content: number[];
  /** Composed items (composition "rules", or `explain`), tokens aligned with `content`. */
  items?: TextItems;
}

function mean(values: ArrayLike<number>, from: number, to: number): number | null {
  let s = 0;
  let n = 0;
  for (let i = from; i < to; i++) {
    const v = values[i];
    if (!Number.isNaN(v)) {
      s += v;
      n++;
    }
  }
  return n > 0 ? s / n : null;
}

/** A goalConfig factor, resolved once per request. */
interface GoalFactor extends Omit<GoalScoreFactor, 'value'> {
  w: number;
  /** The factor's value for a scored text before normalization; undefined when the text has none. */
  raw: (t: ScoredText) => number | undefined;
  /** Normalization statistics (cached per model); null when mode is 'none'. */
  stats: FactorStats | null;
}

/**
 * Factors in response order: modelRank, then goalConfig.dimensions, then goalConfig.mappers; a
 * step after each factor whose statistics it computes.
 */
function* goalFactors(
  goal: GoalConfig,
  mode: Normalization,
  dims: readonly DimensionQuery[],
  input: TextScoringInput,
): Steps<GoalFactor[]> {
  const { index, mappers, stats } = input;
  let computed = 0;
  const norm = (compute: () => FactorStats | null): FactorStats | null => {
    if (mode === 'none') return null;
    computed++;
    return compute();
  };
  const out: GoalFactor[] = [];
  if (goal.modelRankScore !== undefined) {
    const raw = (t: ScoredText) => (t.modelRankScore !== null ? 2 * t.modelRankScore - 1 : undefined);
    out.push({
      field: 'modelRank',
      id: 'modelRank',
      type: 'intrinsic',
      w: goal.modelRankScore,
      raw,
      stats: norm(() => modelRankStats(index, stats)),
    });
  }
  for (const g of goal.dimensions ?? []) {
    const d = dims.find((x) => x.id === g.id)!;
    out.push({
      field: d.name,
      id: d.key,
      type: 'dimension',
      w: g.weight,
      raw: (t) => t.dimensionScores[d.key],
      stats: norm(() => dimensionStats(index, d, stats)),
    });
    if (computed > 0) yield COST.factorStats;
  }
  for (const g of goal.mappers ?? []) {
    const m = mappers.find((x) => x.id === g.id)!;
    out.push({
      field: m.id,
      id: m.id,
      type: 'mapper',
      w: g.weight,
      raw: (t) => t.mapperScores[m.id],
      stats: norm(() => mapperStats(index, m, stats)),
    });
    if (computed > 0) yield COST.factorStats;
  }
  return out;
}

/** The scores of `items` normalized with their statistics (items without a score stay absent). */
function normalizedScores<T>(
  items: readonly T[],
  key: (x: T) => string,
  values: Record<string, number>,
  stats: ReadonlyArray<FactorStats | null>,
  mode: Normalization,
): Record<string, number> {
  const out: Record<string, number> = {};
  items.forEach((x, k) => {
    const v = values[key(x)];
    if (v !== undefined) out[key(x)] = normalize(v, stats[k], mode);
  });
  return out;
}

/** `explain: true`: per factor the tokens that drove it (composed.ts), and per dimension the expansion words. */
function emptyExplanation(dims: readonly DimensionQuery[], mappers: readonly ResolvedMapper[]): TextExplanation {
  const dimensions: TextExplanation['dimensions'] = {};
  for (const d of dims)
    dimensions[d.key] = d.expandedWords ? { tokens: [], expandedWords: [...d.expandedWords] } : { tokens: [] };
  const mapperOut: TextExplanation['mappers'] = {};
  for (const m of mappers) mapperOut[m.id] = { tokens: [] };
  return { dimensions, mappers: mapperOut };
}

export function scoreTexts(req: TextScoresRequest, input: TextScoringInput): TextScoringResult {
  return drain(scoreTextsSteps(req, input));
}

/** Work units of the texts scored between two steps (core/cost.ts's per-character prices decide how many characters). */
const STEP_UNITS = 15;

/**
 * scoreTexts in steps (steps.ts): after each seed expansion, and after each group of texts worth
 * about STEP_UNITS (more factors, or explain, mean fewer characters a group). A text's scores do not depend on the others of its group, so the
 * groups give the same numbers as one batch.
 */
export function* scoreTextsSteps(req: TextScoresRequest, input: TextScoringInput): Steps<TextScoringResult> {
  const { index, mappers } = input;
  const dims: DimensionQuery[] = yield* requestDimensionSteps(req, input);
  if (req.goalConfig)
    checkGoalReferences(
      req.goalConfig,
      dims.map((d) => d.id),
      mappers.map((m) => m.id),
    );

  const rules = (req.composition ?? 'rules') === 'rules';
  const compiled = rules ? compileComposition(input.composition) : null;
  const representation = req.representation ?? DEFAULT_REPRESENTATION;
  const rowCache = rowCacheOf(index);
  const tokenizer = input.tokenize;
  let tokenCount = 0;
  const rawScores: RawTextScores[] = [];
  let explanations: Array<TextExplanation | null> | null = null;
  const factors = dims.length + mappers.length;
  const perChar = COST.textChar + factors * (COST.textCharFactor + (req.explain ? COST.explainCharFactor : 0));
  for (const [from, to] of textGroups(req.texts, Math.max(1000, Math.floor(STEP_UNITS / perChar)))) {
    const texts = req.texts.slice(from, to);
    let chars = 0;
    for (const t of texts) chars += t.length;
    if (!req.explain && tokenizer.forms) {
      // The lean path: no token or item objects (batch.ts); the same scores.
      const batch = buildBatch(
        texts,
        tokenizer as ScoringTokenizer,
        index,
        (t) => tokenRowCached(index, t, rowCache),
        compiled,
      );
      tokenCount += batch.tokenCount;
      for (const r of batchScores(batch, index, dims, mappers, representation)) rawScores.push(r);
    } else {
      const items = itemScores(req, texts, input, dims, compiled, representation, rowCache);
      tokenCount += items.tokenCount;
      for (const r of items.rawScores) rawScores.push(r);
      explanations ??= [];
      for (const e of items.explanations) explanations.push(e);
    }
    yield chars * perChar;
  }

  const goal = req.goalConfig;
  const mode = goal?.normalization ?? 'none';
  const goalFactorList = goal ? yield* goalFactors(goal, mode, dims, input) : null;
  // Top-level normalization (extension) of dimensionScores and mapperScores; goalConfig keeps the raw values.
  const requested = req.normalization ?? 'none';
  // batchZscore: zscore with the statistics of the request's own raw scores instead of the words'.
  const batch = requested === 'batchZscore';
  const outMode: Normalization = batch ? 'zscore' : requested;
  const outStats = (value: (t: RawTextScores) => number | undefined, words: () => FactorStats | null) =>
    outMode === 'none' ? null : batch ? batchStats(rawScores.map(value)) : words();
  // A step after each factor whose word statistics are computed.
  const outStatsSteps = function* <F>(
    factors: readonly F[],
    value: (f: F) => (t: RawTextScores) => number | undefined,
    words: (f: F) => FactorStats | null,
  ): Steps<Array<FactorStats | null>> {
    const out: Array<FactorStats | null> = [];
    for (const f of factors) {
      out.push(outStats(value(f), () => words(f)));
      if (outMode !== 'none' && !batch) yield COST.factorStats;
    }
    return out;
  };
  const dimOutStats = yield* outStatsSteps(
    dims,
    (d) => (t) => t.dimensionScores[d.key],
    (d) => dimensionStats(index, d, input.stats),
  );
  const mapperOutStats = yield* outStatsSteps(
    mappers,
    (m) => (t) => t.mapperScores[m.id],
    (m) => mapperStats(index, m, input.stats),
  );

  const data: ScoredText[] = rawScores.map(({ modelRankScore, dimensionScores, mapperScores }, i) => {
    const explanation = explanations?.[i] ?? null;
    const raw: ScoredText = { modelRankScore, goalScoreFactors: [], dimensionScores, mapperScores };
    const scored: ScoredText =
      outMode === 'none'
        ? raw
        : {
            ...raw,
            goalScoreFactors: [],
            dimensionScores: normalizedScores(dims, (d) => d.key, dimensionScores, dimOutStats, outMode),
            mapperScores: normalizedScores(mappers, (m) => m.id, mapperScores, mapperOutStats, outMode),
          };
    if (goalFactorList) {
      const applied: Array<{ f: GoalFactor; s: number }> = [];
      for (const f of goalFactorList) {
        const v = f.raw(raw);
        if (v !== undefined) applied.push({ f, s: normalize(v, f.stats, mode) });
      }
      let wSum = 0;
      for (const { f } of applied) wSum += Math.abs(f.w);
      let goalScore = 0;
      for (const { f, s } of applied) {
        const value = wSum > 0 ? (f.w * s) / wSum : 0;
        goalScore += value;
        scored.goalScoreFactors.push({ field: f.field, value, type: f.type, id: f.id });
      }
      // A mean over nothing is null: no factor has a score for this text, or every weight is 0.
      scored.goalScore = wSum > 0 ? goalScore : null;
    }
    if (explanation) {
      // Token offsets in the unit the request asks for (core/offsets.ts), computed in UTF-16.
      const convert = spanConverter(req.texts[i]!, req.offsetUnit);
      if (convert) {
        for (const f of Object.values(explanation.dimensions)) convert(f.tokens);
        for (const f of Object.values(explanation.mappers)) convert(f.tokens);
      }
      scored.explanation = explanation;
    }
    const mismatch = input.language ? languageMismatch(req.texts[i], input.language) : null;
    if (mismatch) scored.languageMismatch = mismatch;
    return scored;
  });

  return { response: { data }, tokenCount };
}

/**
 * The scores of every text through token objects and composed items: the path of `explain`
 * and of tokenizers without `forms` (the lean path, batch.ts, gives the same scores).
 */
function itemScores(
  req: TextScoresRequest,
  texts: readonly string[],
  input: TextScoringInput,
  dims: readonly DimensionQuery[],
  compiled: CompiledComposition | null,
  representation: Representation,
  rowCache: Map<string, number>,
): { tokenCount: number; rawScores: RawTextScores[]; explanations: Array<TextExplanation | null> } {
  const { index, mappers } = input;
  const rules = compiled !== null;
  let tokenCount = 0;
  const perText: TextRows[] = texts.map((text) => {
    const tokens = input.tokenize(text);
    tokenCount += tokens.length;
    const all: number[] = [];
    const content: number[] = [];
    const rows = new Int32Array(tokens.length);
    for (let j = 0; j < tokens.length; j++) {
      const t = tokens[j];
      const r = (rows[j] = tokenRowCached(index, t, rowCache));
      if (r < 0) continue;
      all.push(r);
      if (!t.isStop && !compiled && !req.explain) content.push(r);
    }
    if (!compiled && !req.explain) return { all, content };
    // Composed items: tokens in the vocabulary (aligned with content) and emoticons/emoji.
    const items: TextItems = { tokens: [], symbols: [] };
    for (const it of compiled ? composeText(text, tokens, compiled) : plainItems(tokens)) {
      if (it.tokenIndex < 0) items.symbols.push(it);
      else if (rows[it.tokenIndex] >= 0) {
        items.tokens.push(it);
        content.push(rows[it.tokenIndex]);
      }
    }
    return { all, content, items };
  });

  // One kernel call per dimension over the content tokens of every text.
  const offsets: number[] = [0];
  for (const t of perText) offsets.push(offsets[offsets.length - 1] + t.content.length);
  const flat = new Int32Array(offsets[offsets.length - 1]);
  perText.forEach((t, i) => flat.set(t.content, offsets[i]));
  const composedDims = perText.some((t) => t.items);
  // meanCosine with composed items: per-token cosines (one kernel call per dimension), composed below;
  // the vector representations score the text vector of the same tokens (composition does not apply to them).
  const tokenCos = composedDims
    ? dims.map((d) => (d.query && flat.length > 0 ? index.scores(d.query, flat) : null))
    : null;
  const dimScores =
    composedDims && representation === 'meanCosine'
      ? null
      : dimensionTextScores(
          index,
          dims,
          perText.map((t) => t.content),
          representation,
        );
  const mapperValues = mappers.map((m) => {
    const v = new Float64Array(flat.length);
    for (let i = 0; i < flat.length; i++) v[i] = m.values.value(m.variable, flat[i]);
    return v;
  });

  const V = index.size;
  const mapperScales = mappers.map(mapperScale);

  const explanations: Array<TextExplanation | null> = [];
  const rawScores: RawTextScores[] = perText.map((t, i) => {
    let fSum = 0;
    for (const r of t.all) fSum += frequencyScore(r + 1, V);
    const modelRankScore = t.all.length > 0 ? fSum / t.all.length : null;

    const dimensionScores: Record<string, number> = {};
    const mapperScores: Record<string, number> = {};
    const explanation = req.explain ? emptyExplanation(dims, mappers) : null;
    const items = t.items;
    dims.forEach((d, k) => {
      const s = tokenCos?.[k];
      const c =
        items && s
          ? composedScore(s, offsets[i], items, dimensionScale(d.axis), false, explanation && (() => []))
          : null;
      if (c?.tokens) explanation!.dimensions[d.key].tokens = c.tokens;
      const m = dimScores ? dimScores[k][i] : (c?.score ?? null);
      if (m !== null) dimensionScores[d.key] = m;
    });
    mappers.forEach((m, k) => {
      if (items) {
        const scale = mapperScales[k];
        const lexicon =
          explanation &&
          (m.values.isLexiconRow
            ? (q: number) => (m.values.isLexiconRow!(t.content[q]) ? ['lexicon'] : ['shrunk'])
            : () => []);
        const c = composedScore(mapperValues[k], offsets[i], items, scale, rules && scale.bipolar, lexicon);
        if (!c) return;
        mapperScores[m.id] = c.score;
        if (c.tokens) explanation!.mappers[m.id].tokens = c.tokens;
        return;
      }
      const v = mean(mapperValues[k], offsets[i], offsets[i + 1]);
      if (v !== null) mapperScores[m.id] = v;
    });

    explanations.push(explanation);
    return { modelRankScore, dimensionScores, mapperScores };
  });
  return { tokenCount, rawScores, explanations };
}
