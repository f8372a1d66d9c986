/**
 * The text scorer's lean path (core/scoring/batch.ts, issue 17) gives the same response, bit for
 * bit, as the item path (token and composed-item objects, the path of `explain` and of plain
 * tokenizer functions), on the real tokenizer, language data, default or aligned models and
 * mapper bundles, for both compositions, every representation, normalization and a goal; and
 * the tokenizer's word table (core/tokenizer/word-table.ts) returns only what was stored, with
 * bounded probing even when every form collides.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ALIGNED, alignedModelFile, builtAlignedLanguages } from '../../build/aligned-models';
import { DEFAULT_MODEL_ID } from '../../build/default-model';
import { languageFile } from '../../build/lang-data';
import { loadDefaultModel, loadModelFile, readArrayBuffer } from '../../build/load-model';
import { GENERATED } from '../../build/wrangler';
import { parseMapperBundle } from '../../core/mapper-bundle';
import type { EmbeddingModel } from '../../core/model';
import { prng } from '../../core/prng';
import {
  BoundedCache,
  scoreTexts,
  type FactorStats,
  type ResolvedMapper,
  type TextScoresRequest,
} from '../../core/scoring';
import { parseLanguageData, scoringTokenizer, tokenize, type Language, type LanguageData } from '../../core/tokenizer';
import { INITIAL_SLOTS, MAX_PROBE, WordTable, wordHash } from '../../core/tokenizer/word-table';

interface Setup {
  model: EmbeddingModel;
  data: LanguageData;
  mappers: ResolvedMapper[];
  id: string;
}

const setups: Partial<Record<Language, Setup>> = {};

beforeAll(() => {
  const english = loadDefaultModel();
  for (const language of ['en', 'de', 'fr', 'ja'] as const) {
    // de/fr/ja on their aligned model where it is built, else on the English one (the rules and the tokenizer still run).
    const aligned = language !== 'en' && builtAlignedLanguages().includes(language);
    const model = aligned ? loadModelFile(alignedModelFile(ALIGNED[language as 'de'])) : english;
    const id = aligned ? ALIGNED[language as 'de'].id : DEFAULT_MODEL_ID;
    const mappers = ['sentiment', 'afinn'].map((key) => {
      const values = parseMapperBundle(readArrayBuffer(path.join(GENERATED, 'mappers', id, `${key}.bin`)), {
        id,
        vocabularySize: model.size,
        checksum: model.manifest.checksum,
      });
      return { id: `${key}_valence`, variable: 'valence', values };
    });
    setups[language] = { model, data: parseLanguageData(fs.readFileSync(languageFile(language))), mappers, id };
  }
}, 600_000);

/** Seeded texts that exercise every rule: vocabulary and stop words, the composition lists, caps, "!", emoticons, emoji, URLs. */
function texts(s: Setup, n: number, seed: number): string[] {
  const rand = prng(seed);
  const c = s.data.meta.composition!;
  const lists = [
    ...c.negators,
    ...Object.keys(c.boosters),
    ...c.contrast,
    ...c.notNegating,
    ...c.polarStopWords,
    ...Object.keys(c.emoticons).slice(0, 40),
    ...Object.keys(c.emoji).slice(0, 40),
  ];
  const vocab: string[] = [];
  for (let r = 0; r < 3000 && r < s.model.size; r++) vocab.push(s.model.word(r));
  const extra = ["don't", "isn't", 'GREAT', 'Bad', 'www.example.com', 'https://x.org/a?b=1', 'a-b-c', '(ok)', '...'];
  const ja = s.data.language === 'ja';
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const words: string[] = [];
    const len = Math.floor(rand() * 30);
    for (let j = 0; j < len; j++) {
      const x = rand();
      let w =
        x < 0.55
          ? vocab[Math.floor(rand() * vocab.length)]!
          : x < 0.85
            ? lists[Math.floor(rand() * lists.length)]!
            : extra[Math.floor(rand() * extra.length)]!;
      if (rand() < 0.05) w = w.toUpperCase();
      const p = rand();
      if (p < 0.06) w += '!';
      else if (p < 0.12) w += ',';
      else if (p < 0.18) w += ja ? '。' : '.';
      words.push(w);
    }
    out.push(words.join(ja && rand() < 0.5 ? '' : ' '));
  }
  return out;
}

const DIMENSIONS: Record<Language, TextScoresRequest['dimensions']> = {
  en: [
    { id: 1, type: 'manual', words: ['food', 'pizza'] },
    { id: 2, type: 'axis', words: ['good', 'great'], oppositeWords: ['bad', 'awful'] },
  ],
  de: [
    { id: 1, type: 'manual', words: ['Essen', 'Pizza'] },
    { id: 2, type: 'axis', words: ['gut'], oppositeWords: ['schlecht'] },
  ],
  fr: [
    { id: 1, type: 'manual', words: ['repas', 'pizza'] },
    { id: 2, type: 'axis', words: ['bon'], oppositeWords: ['mauvais'] },
  ],
  ja: [
    { id: 1, type: 'manual', words: ['料理', 'ピザ'] },
    { id: 2, type: 'axis', words: ['良い'], oppositeWords: ['悪い'] },
  ],
};

describe('lean text scoring path (batch.ts)', () => {
  for (const language of ['en', 'de', 'fr', 'ja'] as const) {
    it(`${language}: the same response as the item path for every composition, representation and normalization`, () => {
      const s = setups[language]!;
      const lean = scoringTokenizer(s.data);
      let leanCalls = 0;
      const counted = Object.assign((t: string) => lean(t), {
        forms: (t: string, out: Parameters<typeof lean.forms>[1]) => {
          leanCalls++;
          return lean.forms(t, out);
        },
      });
      // The item path: the scoring tokenizer's tokens without its lean `forms`.
      const plain = (t: string) => lean(t);
      const input = (tok: typeof plain) => ({
        index: s.model,
        tokenize: tok,
        mappers: s.mappers,
        storedDimensions: new Map(),
        stats: new BoundedCache<FactorStats>(64),
        composition: s.data.meta.composition,
      });
      const all = texts(s, 300, 17);
      for (const composition of ['rules', 'mean'] as const) {
        for (const representation of ['meanCosine', 'meanVector', 'sif', 'contentMean'] as const) {
          for (const normalization of ['none', 'zscore'] as const) {
            const req: TextScoresRequest = {
              texts: all,
              embeddingModelId: s.id,
              dimensions: DIMENSIONS[language],
              mapperKeys: s.mappers.map((m) => m.id),
              composition,
              representation,
              normalization,
              goalConfig: {
                modelRankScore: 1,
                dimensions: [{ id: 2, weight: 2 }],
                mappers: [{ id: 'sentiment_valence', weight: 1 }],
                normalization,
              },
            };
            const before = leanCalls;
            const a = scoreTexts(req, input(counted));
            expect(leanCalls - before).toBe(all.length);
            const b = scoreTexts(req, input(plain));
            expect(a.tokenCount).toBe(b.tokenCount);
            expect(a.response).toEqual(b.response);
          }
        }
      }
      // explain takes the item path with either tokenizer.
      const req: TextScoresRequest = {
        texts: all.slice(0, 50),
        embeddingModelId: s.id,
        mapperKeys: ['sentiment_valence'],
        explain: true,
      };
      expect(scoreTexts(req, input(counted)).response).toEqual(scoreTexts(req, input(plain)).response);
    });
  }

  it('a form seen in two models keeps the rows of each (per-form results are tagged with their index)', () => {
    const en = setups.en!;
    const other = setups.de!.model;
    const tok = scoringTokenizer(en.data);
    const req: TextScoresRequest = {
      texts: ['The pizza was not good at all!', 'Ich mag Pizza.'],
      embeddingModelId: 'x',
      mapperKeys: [],
    };
    const run = (model: EmbeddingModel, t: typeof tok | ((x: string) => ReturnType<typeof tok>)) =>
      scoreTexts(req, {
        index: model,
        tokenize: t,
        mappers: [],
        storedDimensions: new Map(),
        stats: new BoundedCache<FactorStats>(8),
        composition: en.data.meta.composition,
      }).response;
    const plain = (x: string) => tok(x);
    for (let k = 0; k < 2; k++) {
      expect(run(en.model, tok)).toEqual(run(en.model, plain));
      expect(run(other, tok)).toEqual(run(other, plain));
    }
  });
});

describe('word table of the tokenizer (word-table.ts)', () => {
  it('returns exactly what was stored for random forms, across growth and restarts (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 12 }), { maxLength: 400 }), fc.integer(), (words, seed) => {
        const table = new WordTable<string>(150, 10, seed);
        const ref = new Map<string, string>();
        const text = words.join(' ');
        let at = 0;
        for (const w of words) {
          const hit = table.get(text, at, at + w.length);
          if (hit !== undefined) expect(hit).toBe(ref.get(w));
          else {
            table.add(text, at, at + w.length, `v:${w}`);
            ref.set(w, `v:${w}`);
          }
          expect(table.size).toBeLessThanOrEqual(150);
          at += w.length + 1;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('forms that all land on one slot: at most MAX_PROBE are kept, the others stay uncached, none is confused', () => {
    const seed = 12345;
    const mask = INITIAL_SLOTS - 1;
    const target = wordHash(seed, 'a', 0, 1) & mask;
    const colliding: string[] = [];
    for (let i = 0; colliding.length < 3 * MAX_PROBE; i++) {
      const w = `w${i}`;
      if ((wordHash(seed, w, 0, w.length) & mask) === target) colliding.push(w);
    }
    const table = new WordTable<string>(1000, 64, seed);
    for (const w of colliding) if (table.get(w, 0, w.length) === undefined) table.add(w, 0, w.length, w);
    let cached = 0;
    for (const w of colliding) {
      const v = table.get(w, 0, w.length);
      if (v !== undefined) {
        expect(v).toBe(w);
        cached++;
      }
    }
    expect(cached).toBe(MAX_PROBE);
  });

  it('a text of 700 forms repeated tokenizes the same cold and warm, each token its own text', () => {
    const d = setups.en!.data;
    const text = Array.from({ length: 5000 }, (_, i) => `w${i % 700}x`).join(' ');
    expect(tokenize(text, d, { synonyms: false })).toEqual(tokenize(text, d, { synonyms: false }));
    expect(tokenize(text, d, { synonyms: false }).tokens.map((t) => t.string)).toEqual(text.split(' '));
  });
});
