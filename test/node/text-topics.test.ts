/**
 * Dimensions that tell what a text is about (core/scoring): top-level normalization, the text
 * representations and seed expansion, on the real default model (build/generated, real WASM
 * kernels) and the real English language data, against float64 references of the documented
 * formulas (docs/dimensions.md).
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_WORDRANK_LIMIT, passesQualityFilter, VOCAB_FLAG } from '../../core/vocab-quality';
import { languageFile } from '../../build/lang-data';
import { loadDefaultModel } from '../../build/load-model';
import { parseMapperBundle } from '../../core/mapper-bundle';
import type { EmbeddingModel } from '../../core/model';
import {
  backgroundMean,
  BoundedCache,
  languageLexicon,
  NORMALIZATION_WORDS,
  ScoringError,
  scoreTexts,
  scoreWords,
  SIF_A,
  tokenRow,
  type DimensionRequest,
  type FactorStats,
  type ResolvedMapper,
  type TextScoresRequest,
  type TextScoringInput,
} from '../../core/scoring';
import { FLAG } from '../../core/tokenizer/data';
import { parseLanguageData, tokenize, type LanguageData } from '../../core/tokenizer';

let model: EmbeddingModel;
let lang: LanguageData;
let input: TextScoringInput;
let afinn: ResolvedMapper;

const TEXTS = [
  'The river flows through a deep valley below the snowy mountains, past a quiet lake.',
  'The company reported higher revenue and profit, and its shares rose on the stock market.',
  'She scored twice as the team won the football championship final.',
  'Coffee, coffee and more coffee!',
];
const SEEDS = {
  1: ['river', 'mountain', 'lake'],
  2: ['business', 'company', 'market'],
  3: ['football', 'team', 'player'],
};
const dims = Object.entries(SEEDS).map(([id, words]) => ({ id: Number(id), type: 'manual' as const, words }));

beforeAll(() => {
  model = loadDefaultModel();
  lang = parseLanguageData(fs.readFileSync(languageFile('en')));
  const file = 'build/generated/mappers/en-glove-6b-100d/afinn.bin';
  const bundle = parseMapperBundle(new Uint8Array(fs.readFileSync(file)));
  afinn = { id: `${bundle.info.key}_${bundle.info.variables[0]}`, variable: bundle.info.variables[0], values: bundle };
  input = {
    index: model,
    tokenize: (text) => tokenize(text, lang, { synonyms: false }).tokens,
    mappers: [afinn],
    storedDimensions: new Map(),
    stats: new BoundedCache<FactorStats>(100),
    lexicon: languageLexicon(lang),
  };
});

const score = (req: Partial<TextScoresRequest>) =>
  // composition "mean": these tests check the representation formulas (the rules: test/node/composition.test.ts).
  scoreTexts(
    { texts: TEXTS, embeddingModelId: model.manifest.id, dimensions: dims, composition: 'mean', ...req },
    input,
  ).response;

/** float64 unit vector of a row as the model stores it (dequantized). */
const vec = (r: number): Float64Array => Float64Array.from(model.vector(r));
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};
const unit = (a: ArrayLike<number>) => {
  const n = Math.sqrt(dot(a, a));
  return Float64Array.from(a, (x) => x / n);
};
/** Mean of the rows' unit vectors, re-normalized (decisions.md "Seed centroid"). */
function centroid64(rows: number[]): Float64Array {
  const c = new Float64Array(model.dims);
  for (const r of rows) {
    const u = unit(vec(r));
    for (let j = 0; j < c.length; j++) c[j] += u[j];
  }
  return unit(c);
}
const rowsOf = (words: string[]) => words.map((w) => model.rowOf(w)).filter((r) => r >= 0);
/** In-vocabulary non-stop token rows of a text (lemma first). */
const contentRows = (text: string) =>
  tokenize(text, lang, { synonyms: false })
    .tokens.filter((t) => !t.isStop)
    .map((t) => tokenRow(model, t))
    .filter((r) => r >= 0);

/** Mean, population std and sorted values of a factor over the NORMALIZATION_WORDS most frequent rows. */
function refStats(value: (row: number) => number) {
  const xs: number[] = [];
  for (let r = 0; r < NORMALIZATION_WORDS; r++) {
    const v = value(r);
    if (!Number.isNaN(v)) xs.push(v);
  }
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const std = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / xs.length);
  return { mean, std, xs: xs.sort((a, b) => a - b) };
}
const zscore = (x: number, s: { mean: number; std: number }) => Math.max(-3, Math.min(3, (x - s.mean) / s.std)) / 3;
const percentile = (x: number, s: { xs: number[] }) =>
  (2 * (s.xs.filter((y) => y < x).length + s.xs.filter((y) => y === x).length / 2)) / s.xs.length - 1;

describe('top-level normalization of dimensionScores and mapperScores', () => {
  it('zscore and percentile use the statistics of the 20,000 most frequent words; none and goalConfig are unchanged', () => {
    const goalConfig = {
      dimensions: [{ id: 1, weight: 3 }],
      mappers: [{ id: afinn.id, weight: -2 }],
      normalization: 'zscore' as const,
    };
    const raw = score({ mapperKeys: [afinn.id], goalConfig });
    const z = score({ mapperKeys: [afinn.id], goalConfig, normalization: 'zscore' });
    const p = score({ mapperKeys: [afinn.id], goalConfig, normalization: 'percentile' });
    expect(score({ mapperKeys: [afinn.id], goalConfig, normalization: 'none' })).toEqual(raw);
    const all = Int32Array.from({ length: NORMALIZATION_WORDS }, (_, r) => r);
    for (const [id, words] of Object.entries(SEEDS)) {
      const q = model.centroid(rowsOf(words))!;
      const cosines = model.scores(q, all);
      const s = refStats((r) => cosines[r]);
      raw.data.forEach((t, i) => {
        const x = t.dimensionScores[id];
        expect(z.data[i].dimensionScores[id]).toBeCloseTo(zscore(x, s), 9);
        expect(p.data[i].dimensionScores[id]).toBeCloseTo(percentile(x, s), 9);
      });
    }
    const ms = refStats((r) => afinn.values.value(afinn.variable, r));
    raw.data.forEach((t, i) => {
      const x = t.mapperScores[afinn.id];
      expect(z.data[i].mapperScores[afinn.id]).toBeCloseTo(zscore(x, ms), 9);
      expect(p.data[i].mapperScores[afinn.id]).toBeCloseTo(percentile(x, ms), 9);
      // goalConfig normalizes the raw values itself: the goal score does not depend on the top-level field.
      expect(z.data[i].goalScore).toBe(t.goalScore);
      expect(z.data[i].goalScoreFactors).toEqual(t.goalScoreFactors);
    });
    // The normalized scores are not the raw ones (the field does something).
    expect(z.data[0].dimensionScores['1']).not.toBeCloseTo(raw.data[0].dimensionScores['1'], 3);
  });
});

describe("batchZscore: statistics over the request's own texts", () => {
  it('standardizes each dimension and mapper over the texts that have the score, clipped and divided by 3', () => {
    const texts = [...TEXTS, 'zzqx vvbn', 'A quiet lake in the mountains.'];
    const req: TextScoresRequest = {
      texts,
      embeddingModelId: model.manifest.id,
      dimensions: dims,
      mapperKeys: [afinn.id],
    };
    const raw = scoreTexts({ ...req, composition: 'mean' }, input).response;
    const b = scoreTexts({ ...req, composition: 'mean', normalization: 'batchZscore' }, input).response;
    const check = (values: Array<number | undefined>, got: Array<number | undefined>) => {
      const xs = values.filter((v): v is number => v !== undefined);
      expect(xs.length).toBeGreaterThan(2);
      const mean = xs.reduce((a, x) => a + x, 0) / xs.length;
      const std = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length);
      values.forEach((v, i) => {
        if (v === undefined) expect(got[i]).toBeUndefined();
        else expect(got[i]).toBeCloseTo(zscore(v, { mean, std }), 12);
      });
      // Centred on the batch: the unclipped z-scores sum to 0.
      expect(xs.reduce((a, x) => a + (x - mean) / std, 0)).toBeCloseTo(0, 9);
    };
    for (const id of Object.keys(SEEDS))
      check(
        raw.data.map((t) => t.dimensionScores[id]),
        b.data.map((t) => t.dimensionScores[id]),
      );
    check(
      raw.data.map((t) => t.mapperScores[afinn.id]),
      b.data.map((t) => t.mapperScores[afinn.id]),
    );
    // The text without an in-vocabulary token has no entry, as with any normalization.
    expect(b.data[4].dimensionScores).toEqual({});
    // A batch of one text: the std is 0, so every score is 0.
    const one = scoreTexts({ ...req, texts: [TEXTS[0]], normalization: 'batchZscore' }, input).response;
    expect(Object.values(one.data[0].dimensionScores)).toEqual([0, 0, 0]);
    // The same text ranks differently against different batches: the statistics are the batch's.
    const other = scoreTexts({ ...req, texts: [TEXTS[0], TEXTS[1]], normalization: 'batchZscore' }, input).response;
    expect(other.data[0].dimensionScores['1']).not.toBeCloseTo(b.data[0].dimensionScores['1'], 3);
  });
});

describe('text representations', () => {
  it('contentMean weighs only content words (dictionary, not proper noun, acronym, number or 1-2 letters); a text without one falls back to the plain mean', () => {
    const texts = [
      'Gmina Wola is a village in Poland with 1,200 people and a church from 1850.',
      'Warsaw Krakow Gdansk',
    ];
    const res = scoreTexts(
      {
        texts,
        embeddingModelId: model.manifest.id,
        dimensions: dims,
        composition: 'mean',
        representation: 'contentMean',
      },
      input,
    ).response;
    const isContent = (r: number) => {
      const f = model.flags(r);
      const non = VOCAB_FLAG.PROPER | VOCAB_FLAG.ACRONYM | VOCAB_FLAG.NUMBER | VOCAB_FLAG.SHORT;
      return (f & VOCAB_FLAG.DICTIONARY) !== 0 && (f & non) === 0;
    };
    const rows = contentRows(texts[0]);
    const kept = rows.filter(isContent);
    // The sentence has both kinds, so the weights matter.
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(rows.length);
    expect(kept).toContain(model.rowOf('village'));
    expect(kept).not.toContain(model.rowOf('poland'));
    const names = contentRows(texts[1]);
    expect(names.length).toBeGreaterThan(0);
    expect(names.filter(isContent)).toEqual([]);
    for (const [id, words] of Object.entries(SEEDS)) {
      const q = centroid64(rowsOf(words));
      const mean = (rs: number[]) => rs.reduce((a, r) => a + dot(q, vec(r)), 0) / rs.length;
      expect(res.data[0].dimensionScores[id]).toBeCloseTo(mean(kept), 3);
      expect(res.data[1].dimensionScores[id]).toBeCloseTo(mean(names), 3);
    }
  });

  it('meanCosine, meanVector and sif compute their documented formulas (float64 reference)', () => {
    const V = model.size;
    const H = Math.log(V) + 0.5772156649015329 + 1 / (2 * V);
    const w = (r: number) => SIF_A / (SIF_A + 1 / ((r + 1) * H));
    const byRep = {
      meanCosine: score({ representation: 'meanCosine' }),
      meanVector: score({ representation: 'meanVector' }),
      sif: score({ representation: 'sif' }),
    };
    expect(score({})).toEqual(byRep.meanCosine); // the default (docs/dimensions.md)
    TEXTS.forEach((text, i) => {
      const rows = contentRows(text);
      expect(rows.length).toBeGreaterThan(0);
      for (const [id, words] of Object.entries(SEEDS)) {
        const q = centroid64(rowsOf(words));
        const cosines = rows.map((r) => dot(q, vec(r)));
        const sum = new Float64Array(model.dims);
        const wsum = new Float64Array(model.dims);
        let wTotal = 0;
        for (const r of rows) {
          const u = vec(r);
          for (let j = 0; j < u.length; j++) {
            sum[j] += u[j];
            wsum[j] += w(r) * u[j];
          }
          wTotal += w(r);
        }
        const meanCosine = cosines.reduce((a, b) => a + b, 0) / rows.length;
        const meanVector = dot(q, unit(sum));
        const sif = rows.reduce((a, r, k) => a + w(r) * cosines[k], 0) / wTotal;
        // Tolerance: the kernels scan with a 16-bit quantized query; the references use the f32 centroid's float64 copy.
        expect(byRep.meanCosine.data[i].dimensionScores[id]).toBeCloseTo(meanCosine, 3);
        expect(byRep.meanVector.data[i].dimensionScores[id]).toBeCloseTo(meanVector, 3);
        expect(byRep.sif.data[i].dimensionScores[id]).toBeCloseTo(sif, 3);
        expect(byRep.sif.data[i].dimensionScores[id]).toBeCloseTo(dot(q, wsum) / wTotal, 3);
      }
    });
    // A repeated word: meanVector of one distinct token is that token's cosine.
    const coffee = model.rowOf('coffee');
    const q3 = centroid64(rowsOf(SEEDS[3]));
    expect(byRep.meanVector.data[3].dimensionScores['3']).toBeCloseTo(dot(q3, unit(vec(coffee))), 3);
    // The weights do what SIF says: frequent words weigh less.
    expect(w(model.rowOf('the'))).toBeLessThan(0.2);
    expect(w(model.rowOf('valley'))).toBeGreaterThan(0.9);
  });

  it('the representations differ: meanVector is on a larger scale than the mean of cosines', () => {
    const a = score({ representation: 'meanCosine' });
    const b = score({ representation: 'meanVector' });
    expect(b.data[0].dimensionScores['1']).toBeGreaterThan(a.data[0].dimensionScores['1'] + 0.1);
  });
});

describe('seed expansion (expand)', () => {
  /**
   * The documented rule by brute force: the rows below the cutoff that the rules accept, ranked by
   * cos(centroid, w) - b . w with b the mean vector of the 20,000 most frequent rows.
   */
  const all = Int32Array.from({ length: DEFAULT_WORDRANK_LIMIT }, (_, r) => r);
  function referenceExpansion(seeds: string[], n: number, rank?: () => ArrayLike<number>): string[] {
    const seedRowList = rowsOf(seeds);
    const c = model.centroid(seedRowList)!;
    const b = new Float64Array(model.dims);
    const nb = Math.min(20_000, model.size);
    for (let r = 0; r < nb; r++) model.vector(r).forEach((x, j) => (b[j] += x / nb));
    const q = Float32Array.from(c, (x, j) => x - b[j]);
    const s = rank ? rank() : model.scores(q, all);
    const order = [...all].sort((a, b) => s[b] - s[a] || a - b);
    const out: string[] = [];
    const excluded = new Set([...seeds, ...seedRowList.map((r) => model.word(r))].map((x) => x.toLowerCase()));
    for (const r of order) {
      const word = model.word(r).toLowerCase();
      if (excluded.has(word) || out.includes(word) || !/\p{L}/u.test(word)) continue;
      // The vocabulary flags of the artifact (docs/vocabulary.md) apply to every candidate.
      if (!passesQualityFilter(model, r, { rankLimit: DEFAULT_WORDRANK_LIMIT })) continue;
      const tokens = tokenize(word, lang, { synonyms: false }).tokens;
      if (tokens.length !== 1 || tokens[0].isStop) continue;
      if (!lang.has(tokens[0].token, FLAG.KNOWN) && !lang.has(word, FLAG.KNOWN)) continue;
      out.push(word);
      if (out.length === n) break;
    }
    return out;
  }

  it('adds the N nearest frequent, dictionary, non-stop words with a letter, not among the seeds, and lists them under explain', () => {
    const expand = [
      { id: 1, type: 'manual' as const, words: ['coffee'], expand: 12 },
      { id: 2, type: 'manual' as const, words: ['happy', 'glad'], expand: 50 },
      { id: 3, type: 'manual' as const, words: ['river', 'lake'], expand: 0 },
    ];
    const res = scoreTexts(
      { texts: TEXTS, embeddingModelId: model.manifest.id, dimensions: expand, explain: true, composition: 'mean' },
      input,
    ).response;
    for (const t of res.data) {
      expect(Object.keys(t.explanation!.dimensions)).toEqual(['1', '2', '3']);
      expect(t.explanation!.dimensions['3'].expandedWords).toEqual([]);
      expect(Array.isArray(t.explanation!.dimensions['3'].tokens)).toBe(true);
    }
    const ex = res.data[0].explanation!.dimensions;
    for (const d of expand.slice(0, 2)) {
      const words = ex[String(d.id)].expandedWords!;
      expect(words).toHaveLength(d.expand);
      expect(new Set(words).size).toBe(words.length);
      expect(words).toEqual(referenceExpansion(d.words, d.expand));
      for (const word of words) {
        expect(d.words).not.toContain(word);
        expect(word).toMatch(/\p{L}/u);
        expect(model.rowOf(word)).toBeLessThan(DEFAULT_WORDRANK_LIMIT);
        expect(tokenize(word, lang, { synonyms: false }).tokens[0].isStop).toBe(false);
      }
    }
    // The words a person expects near the seeds; the pronouns that are among the nearest rows (we, you, me) are stop words and skipped.
    expect(ex['1'].expandedWords).toContain('tea');
    for (const stop of ['we', 'you', 'me']) expect(ex['2'].expandedWords).not.toContain(stop);
  });

  it('expansion "contrastive" ranks by cos(c_k, w) - max(b . w, cos(c_j, w) of the other dimensions); with one dimension it is "nearest"', () => {
    const seeds = [['plant'], ['factory', 'industry'], ['animal']];
    const request = (expansion: 'nearest' | 'contrastive', dimensions: DimensionRequest[]) =>
      scoreTexts(
        {
          texts: TEXTS.slice(0, 1),
          embeddingModelId: model.manifest.id,
          dimensions,
          expansion,
          explain: true,
          composition: 'mean',
        },
        input,
      ).response.data[0].explanation!.dimensions;
    const dimensions: DimensionRequest[] = [
      { id: 1, type: 'manual', words: seeds[0], expand: 15 },
      { id: 2, type: 'manual', words: seeds[1] },
      { id: 3, type: 'manual', words: seeds[2], expand: 15 },
      // An axis is no competitor (its query is a difference of poles).
      { id: 4, type: 'axis', words: ['good'], oppositeWords: ['bad'] },
    ];
    const contrastive = request('contrastive', dimensions);
    const nearest = request('nearest', dimensions);
    // The documented margin, by brute force over the same kernel scores.
    const cos = seeds.map((w) => model.scores(model.centroid(rowsOf(w))!, all));
    const background = model.scores(backgroundMean(model), all);
    const margin = (k: number) => () =>
      Float64Array.from(
        all,
        (r) => cos[k][r] - Math.max(background[r], ...cos.filter((_, j) => j !== k).map((c) => c[r])),
      );
    expect(contrastive['1'].expandedWords).toHaveLength(15);
    expect(contrastive['1'].expandedWords).toEqual(referenceExpansion(seeds[0], 15, margin(0)));
    expect(contrastive['3'].expandedWords).toEqual(referenceExpansion(seeds[2], 15, margin(2)));
    // "plant" alone expands toward its industrial sense; against factory/industry seeds its words
    // are the ones nearer to "plant" than to them.
    const toIndustry = (w: string) => cos[1][model.rowOf(w)] - cos[0][model.rowOf(w)];
    expect(nearest['1'].expandedWords!.filter((w) => toIndustry(w) > 0).length).toBeGreaterThan(0);
    for (const w of contrastive['1'].expandedWords!) expect(toIndustry(w)).toBeLessThan(0);
    // One dimension with seeds: nothing to contrast with, the same words as nearest.
    const alone: DimensionRequest[] = [{ id: 1, type: 'manual', words: seeds[0], expand: 15 }, dimensions[3]];
    expect(request('contrastive', alone)['1'].expandedWords).toEqual(request('nearest', alone)['1'].expandedWords);
  });

  it('remembers expansions per model, keyed by every seed that decides them: a changed competitor changes the words', () => {
    const words = (expansion: 'nearest' | 'contrastive', dimensions: DimensionRequest[]) =>
      scoreTexts(
        { texts: TEXTS.slice(0, 1), embeddingModelId: model.manifest.id, dimensions, expansion, explain: true },
        input,
      ).response.data[0].explanation!.dimensions['1'].expandedWords!;
    const background = model.scores(backgroundMean(model), all);
    /** The contrastive reference of seedSets[0] against the other seed sets (brute force). */
    const reference = (seedSets: string[][], n: number) => {
      const cos = seedSets.map((w) => model.scores(model.centroid(rowsOf(w))!, all));
      const margin = () =>
        Float64Array.from(all, (r) => cos[0][r] - Math.max(background[r], ...cos.slice(1).map((c) => c[r])));
      return referenceExpansion(seedSets[0], n, margin);
    };
    const plant: DimensionRequest = { id: 1, type: 'manual', words: ['plant'], expand: 12 };
    const against = (seeds: string[]): DimensionRequest[] => [plant, { id: 2, type: 'manual', words: seeds }];
    const industry = words('contrastive', against(['factory', 'industry']));
    const garden = words('contrastive', against(['flower', 'garden']));
    // The competitor decides the words, so a cache that ignored it would answer the first list twice.
    expect(garden).not.toEqual(industry);
    expect(industry).toEqual(reference([['plant'], ['factory', 'industry']], 12));
    expect(garden).toEqual(reference([['plant'], ['flower', 'garden']], 12));
    expect(words('contrastive', against(['factory', 'industry']))).toEqual(
      reference([['plant'], ['factory', 'industry']], 12),
    );
    // The competitors' order, N and the mode are part of the key too.
    const swapped: DimensionRequest[] = [
      { id: 2, type: 'manual', words: ['flower', 'garden'] },
      { ...plant, id: 1 },
    ];
    expect(
      scoreTexts(
        {
          texts: TEXTS.slice(0, 1),
          embeddingModelId: model.manifest.id,
          dimensions: swapped,
          expansion: 'contrastive',
          explain: true,
        },
        input,
      ).response.data[0].explanation!.dimensions['1'].expandedWords,
    ).toEqual(garden);
    expect(words('contrastive', [{ ...plant, expand: 4 }, against(['flower', 'garden'])[1]])).toEqual(
      garden.slice(0, 4),
    );
    expect(words('nearest', against(['flower', 'garden']))).toEqual(referenceExpansion(['plant'], 12));
  });

  it('a repeated expansion scans nothing; each lexicon has its own cache; a model head keeps none', () => {
    /** The model with its scans over the candidate rows counted (a new index object: a cache of its own). */
    const counted = (rows?: number) => {
      const index = Object.create(model) as EmbeddingModel & { scans: number; rows?: number };
      index.scans = 0;
      index.scores = (q, r) => {
        if (r.length >= 1000) index.scans++;
        return model.scores(q, r);
      };
      if (rows !== undefined) index.rows = rows;
      return index;
    };
    const dimensions: DimensionRequest[] = [
      { id: 1, type: 'manual', words: ['plant'], expand: 10 },
      { id: 2, type: 'manual', words: ['factory', 'industry'], expand: 10 },
    ];
    const run = (index: EmbeddingModel & { scans: number }, lexicon = input.lexicon) => {
      index.scans = 0;
      const ex = scoreTexts(
        {
          texts: TEXTS.slice(0, 1),
          embeddingModelId: model.manifest.id,
          dimensions,
          expansion: 'contrastive',
          explain: true,
        },
        { ...input, index, lexicon },
      ).response.data[0].explanation!.dimensions;
      return { words: [ex['1'].expandedWords, ex['2'].expandedWords], scans: index.scans };
    };
    const index = counted();
    const first = run(index);
    expect(first.scans).toBeGreaterThan(0);
    expect(run(index)).toEqual({ words: first.words, scans: 0 });
    // Another lexicon (the same language data parsed again) finds the words afresh, and the first
    // lexicon's cache is still there afterwards.
    const other = languageLexicon(parseLanguageData(fs.readFileSync(languageFile('en'))));
    expect(other).not.toBe(input.lexicon);
    const second = run(index, other);
    expect(second.words).toEqual(first.words);
    expect(second.scans).toBeGreaterThan(0);
    expect(run(index).scans).toBe(0);
    // A model head (fewer rows present than the model has) is never answered from a cache.
    const head = counted(model.size - 1);
    expect(run(head).scans).toBeGreaterThan(0);
    expect(run(head).scans).toBeGreaterThan(0);
  });

  it("the expanded dimension's query is unit(centroid(seeds) + centroid(expansion words))", () => {
    const d = { id: 7, type: 'manual' as const, words: ['coffee'], expand: 10 };
    const res = scoreTexts(
      { texts: TEXTS, embeddingModelId: model.manifest.id, dimensions: [d], explain: true, composition: 'mean' },
      input,
    ).response;
    const added = res.data[0].explanation!.dimensions['7'].expandedWords!;
    const c = centroid64(rowsOf(d.words));
    const e = centroid64(rowsOf(added));
    const q = unit(c.map((x, j) => x + e[j]));
    TEXTS.forEach((text, i) => {
      const rows = contentRows(text);
      const ref = rows.reduce((a, r) => a + dot(q, vec(r)), 0) / rows.length;
      expect(res.data[i].dimensionScores['7']).toBeCloseTo(ref, 3);
    });
    // Without expand the same seeds give another score.
    const plain = scoreTexts(
      {
        texts: TEXTS,
        embeddingModelId: model.manifest.id,
        dimensions: [{ ...d, expand: undefined }],
        composition: 'mean',
      },
      input,
    ).response;
    expect(plain.data[0].dimensionScores['7']).not.toBeCloseTo(res.data[0].dimensionScores['7'], 4);
    expect(plain.data[0].explanation).toBeUndefined();
  });

  it('word-scores dimensions expand the same way; axis dimensions refuse expand', () => {
    const words = scoreWords(
      {
        seedWords: ['tea'],
        whitelistWords: ['espresso', 'river'],
        embeddingModelId: model.manifest.id,
        dimensions: [{ id: 1, type: 'manual', words: ['coffee'], expand: 10 }],
      },
      { index: model, mappers: [], storedDimensions: new Map(), lexicon: input.lexicon },
    );
    const text = scoreTexts(
      {
        texts: ['espresso', 'river'],
        embeddingModelId: model.manifest.id,
        dimensions: [{ id: 1, type: 'manual', words: ['coffee'], expand: 10 }],
      },
      input,
    ).response;
    expect(words.data.map((w) => w.dimensionScores['1'])).toEqual(text.data.map((t) => t.dimensionScores['1']));
    expect(() =>
      score({ dimensions: [{ id: 1, type: 'axis', words: ['good'], oppositeWords: ['bad'], expand: 5 }] }),
    ).toThrow(ScoringError);
  });
});
