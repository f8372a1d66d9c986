/**
 * bench:overload's requests: the heavy shape families whose largest admitted request the bench
 * looks for (each with its size axes, bisected in order), the small requests of the mixed
 * traffic, and the ~2 MB text-scores body of the refusal section. Words come from the default
 * model's vocabulary (loaded in this process), texts as bench/api.ts builds them.
 */
import { DEFAULT_MODEL_ID } from '../../build/default-model';
import { loadDefaultModel } from '../../build/load-model';
import { LIMITS } from '../../core/limits';
import { PROSE } from '../traffic';
import type { Req } from './http';

export const MODEL = DEFAULT_MODEL_ID;

/** One size parameter of a family: bisected between lo and hi (integers) with the others fixed. */
export interface Axis {
  name: string;
  lo: number;
  hi: number;
}

export type Size = Record<string, number>;

export interface Family {
  name: string;
  /** What one request of the family holds (for the tables). */
  what: string;
  /** Bisected in order: the first up to its cap (or hi), then the next from its lo, and so on. */
  axes: Axis[];
  build(size: Size): Req;
}

/** The words the requests are made of: the model's vocabulary by frequency rank. */
export interface Vocab {
  /** Row r of the model (rank r), for r < 20,001: what bench/api.ts's texts are made of. */
  ranked: string[];
  /** Words of letters only, by frequency, from rank 100 on (whitelists, seeds, matrices). */
  letters: string[];
}

export function loadVocab(): Vocab {
  const model = loadDefaultModel();
  const ranked = Array.from({ length: 20_001 }, (_, r) => model.word(r));
  const letters: string[] = [];
  for (let r = 100; letters.length < 30_000 && r < model.size; r++) {
    const w = model.word(r);
    if (/^\p{L}{3,}$/u.test(w)) letters.push(w);
  }
  return { ranked, letters };
}

/**
 * bench/api.ts's text(i): 200 words of the 20,000 most frequent, on a stride. `typos`: every
 * 25th word gets a letter more (an unknown word the sub-word fallback composes).
 */
export function apiText(v: Vocab, i: number, typos = false): string {
  const words: string[] = [];
  for (let k = 0; k < 200; k++)
    words.push(v.ranked[((i * 7919 + k * 104729) % 20_000) + 1] + (typos && k % 25 === 24 ? 'q' : ''));
  return words.join(' ');
}

/**
 * A text of `chars` characters (code units) of the same words, a sentence every 12 words;
 * `typos`: every 25th word gets a letter more (an unknown word the sub-word fallback composes).
 */
export function longText(v: Vocab, chars: number, offset = 0, typos = false): string {
  const out: string[] = [];
  let n = 0;
  for (let k = 0; n < chars; k++) {
    let w = v.ranked[(((offset + k) * 104729) % 20_000) + 1];
    if (typos && k % 25 === 24) w += 'q';
    if (k % 12 === 11) w += '.';
    out.push(w);
    n += w.length + 1;
  }
  return out.join(' ').slice(0, chars);
}

/** bench/api.ts's dimensions (stored "Positive", a manual one, an axis) and goal. */
export const API_DIMENSIONS = [
  { id: 1, type: 'dimension' as const },
  { id: 20, type: 'manual' as const, words: ['science', 'research', 'laboratory'] },
  { id: 21, type: 'axis' as const, words: ['good', 'great'], oppositeWords: ['bad', 'awful'] },
];
export const API_GOAL = {
  modelRankScore: 0.5,
  dimensions: [
    { id: 1, weight: 3 },
    { id: 20, weight: -1 },
    { id: 21, weight: 2 },
  ],
  normalization: 'zscore' as const,
};
const SEEDS = ['happy', 'joy', 'delight', 'cheerful'];

/**
 * `n` manual dimensions of 4 seeds each (other seeds per dimension), with `expand` when given;
 * `draw` picks another set of seeds (a request the server's caches have not seen).
 */
export function manualDimensions(v: Vocab, n: number, expand?: number, firstId = 1000, draw = 0) {
  const at = (i: number) => 200 + ((draw * 401 + i * 4) % (v.letters.length - 204));
  return Array.from({ length: n }, (_, i) => ({
    id: firstId + i,
    type: 'manual' as const,
    name: `d${i}`,
    words: v.letters.slice(at(i), at(i) + 4),
    ...(expand ? { expand } : {}),
  }));
}

const post = (path: string, body: unknown): Req => ({ method: 'POST', path, body: JSON.stringify(body) });

let draws = 0;
/** A request whose every send draws new seeds (`make(draw)`): cold expansions and statistics each time. */
const postFresh = (path: string, make: (draw: number) => unknown): Req => ({
  ...post(path, make(0)),
  fresh: () => JSON.stringify(make(++draws)),
});

export interface FamilyContext {
  /** The workspace of the requests. */
  ws: string;
  vocab: Vocab;
  /** The English model's mapper keys (at most 4). */
  mapperKeys: string[];
  /** An aligned model (de/fr/ja) for word-translations, when one is served. */
  alignedModel?: string;
}

/** The heavy families of decisions.md "Admission and cost" (translations only with an aligned model). */
export function heavyFamilies(ctx: FamilyContext): Family[] {
  const { vocab: v, mapperKeys } = ctx;
  const w = `/api/v1/workspaces/${ctx.ws}`;
  const m = `/api/v1/embedding-models/${MODEL}`;
  const families: Family[] = [
    {
      name: 'text-scores-long',
      what: 'texts of <= 100,000 characters, 3 dimensions + goal (zscore)',
      axes: [{ name: 'characters', lo: 2_000, hi: LIMITS.bodyBytes - 8_192 }],
      build: ({ characters }) => {
        const text = longText(v, characters);
        const texts: string[] = [];
        for (let i = 0; i < text.length; i += LIMITS.charactersPerText)
          texts.push(text.slice(i, i + LIMITS.charactersPerText));
        return post(`${w}/text-scores`, {
          texts,
          embeddingModelId: MODEL,
          dimensions: API_DIMENSIONS,
          goalConfig: API_GOAL,
        });
      },
    },
    {
      name: 'text-scores-dims',
      what: `dimensions (4 seeds, expand 50, contrastive), explain, subwordFallback, ${mapperKeys.length} mappers, batchZscore; texts of 200 words`,
      axes: [
        { name: 'dimensions', lo: 1, hi: LIMITS.dimensionsPerRequest },
        { name: 'texts', lo: 10, hi: LIMITS.textsPerRequest },
      ],
      build: ({ dimensions, texts }) =>
        postFresh(`${w}/text-scores`, (draw) => ({
          texts: Array.from({ length: texts }, (_, i) => apiText(v, i, true)),
          embeddingModelId: MODEL,
          dimensions: manualDimensions(v, dimensions, 50, 1000, draw),
          expansion: 'contrastive',
          explain: true,
          subwordFallback: true,
          mapperKeys,
          normalization: 'batchZscore',
        })),
    },
    {
      name: 'word-scores-whitelist',
      what: `whitelist words, 4 seeds, seedScore 1, ${mapperKeys.length} mappers; bench/api.ts's 3 dimensions + manual ones`,
      axes: [
        { name: 'words', lo: 500, hi: LIMITS.seedOrWhitelistWords },
        { name: 'dimensions', lo: 3, hi: LIMITS.dimensionsPerRequest },
      ],
      build: ({ words, dimensions }) =>
        post(`${w}/word-scores`, {
          seedWords: SEEDS,
          whitelistWords: v.letters.slice(0, words),
          embeddingModelId: MODEL,
          dimensions: [...API_DIMENSIONS, ...manualDimensions(v, dimensions - 3)],
          mapperKeys,
          seedScore: 1,
        }),
    },
    {
      name: 'word-scores-find',
      what: `find-and-score, 4 seeds, dimensions (expand 50, contrastive), ${mapperKeys.length} mappers`,
      axes: [
        { name: 'limit', lo: 100, hi: LIMITS.findLimitMax },
        { name: 'dimensions', lo: 1, hi: LIMITS.dimensionsPerRequest },
      ],
      build: ({ limit, dimensions }) =>
        postFresh(`${w}/word-scores`, (draw) => ({
          seedWords: SEEDS,
          embeddingModelId: MODEL,
          limit,
          dimensions: manualDimensions(v, dimensions, 50, 1000, draw),
          expansion: 'contrastive',
          mapperKeys,
          seedScore: 1,
        })),
    },
    {
      name: 'word-similarity-matrix',
      what: 'words (every 10th unknown), subwordFallback',
      axes: [{ name: 'words', lo: 20, hi: LIMITS.similarityMatrixWords }],
      build: ({ words }) =>
        post(`${m}/word-similarity-matrices`, {
          words: v.letters.slice(0, words).map((x, i) => (i % 10 === 9 ? `${x}q` : x)),
          subwordFallback: true,
        }),
    },
  ];
  if (ctx.alignedModel)
    families.push({
      name: 'word-translations',
      what: `English words into ${ctx.alignedModel}, limit ${LIMITS.translationsPerWord}`,
      axes: [{ name: 'words', lo: 1, hi: LIMITS.translationWords }],
      build: ({ words }) =>
        post(`${m}/word-translations`, {
          words: v.letters.slice(0, words),
          limit: LIMITS.translationsPerWord,
          targetModelId: ctx.alignedModel,
        }),
    });
  families.push(
    {
      name: 'plagiarism-check',
      what: 'text against a corpus of 10 pages it partly copies',
      axes: [{ name: 'characters', lo: 1_000, hi: LIMITS.charactersPerText }],
      build: ({ characters }) => post(`${w}/plagiarism-checks`, { text: longText(v, characters) }),
    },
    {
      name: 'tokenization',
      what: 'English text',
      axes: [{ name: 'characters', lo: 1_000, hi: LIMITS.charactersPerText }],
      build: ({ characters }) => post(`${w}/tokenizations`, { language: 'en', text: longText(v, characters, 7) }),
    },
  );
  return families;
}

/** The reference pages of the plagiarism family: 10 slices of 10,000 characters of the text it checks. */
export function plagiarismPages(v: Vocab): Array<{ url: string; title: string; text: string }> {
  const text = longText(v, 200_000);
  return Array.from({ length: 10 }, (_, i) => ({
    url: `https://overload.bench/page-${i}`,
    title: `bench:overload page ${i}`,
    text: text.slice(i * 20_000, i * 20_000 + 10_000),
  }));
}

/** The small requests of the mixed traffic, in turn. */
export function smallRequests(ws: string, v: Vocab): Array<{ kind: string; req: Req }> {
  const w = `/api/v1/workspaces/${ws}`;
  return [
    {
      // The README's example.
      kind: 'word-scores (README)',
      req: post(`${w}/word-scores`, {
        seedWords: ['happy', 'joy'],
        embeddingModelId: MODEL,
        limit: 5,
        seedScore: 1,
      }),
    },
    {
      // bench/api.ts's text-scores request: 10 texts x 200 words, 3 dimensions, goal with zscore.
      kind: 'text-scores 10x200',
      req: textScores10x200(ws, v),
    },
    { kind: 'tokenization (sentence)', req: post(`${w}/tokenizations`, { language: 'en', text: PROSE }) },
    {
      kind: 'autocomplete',
      req: post(`${w}/autocomplete-suggestions`, { word: 'hap', embeddingModelId: MODEL }),
    },
    { kind: 'GET /api/health', req: { method: 'GET', path: '/api/health' } },
  ];
}

/** bench/api.ts's text-scores request (its `textReq`): 10 texts x 200 words, 3 dimensions, goal with zscore. */
export function textScores10x200(ws: string, v: Vocab): Req {
  return post(`/api/v1/workspaces/${ws}/text-scores`, {
    texts: Array.from({ length: 10 }, (_, i) => apiText(v, i)),
    embeddingModelId: MODEL,
    dimensions: API_DIMENSIONS,
    goalConfig: API_GOAL,
  });
}

/**
 * The largest text-scores body the limits allow (~2 MB): 100 texts, 100 dimensions with expand 50
 * (contrastive), explain, subwordFallback, the mappers (up to 4), batchZscore.
 */
export function largestTextScoresBody(ws: string, v: Vocab, mapperKeys: string[]): Req {
  const shape = (chars: number) => ({
    texts: Array.from({ length: LIMITS.textsPerRequest }, (_, i) => longText(v, chars, i * 1000, true)),
    embeddingModelId: MODEL,
    dimensions: manualDimensions(v, LIMITS.dimensionsPerRequest, 50),
    expansion: 'contrastive',
    explain: true,
    subwordFallback: true,
    mapperKeys,
    normalization: 'batchZscore',
  });
  const overhead = JSON.stringify(shape(0)).length;
  const perText = Math.floor((LIMITS.bodyBytes - 4_096 - overhead) / LIMITS.textsPerRequest);
  return post(`/api/v1/workspaces/${ws}/text-scores`, shape(perText));
}
