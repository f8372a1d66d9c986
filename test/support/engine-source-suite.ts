/**
 * One engine, three sources (issue 33): the same cases for every EngineSource (core/engine.ts),
 * whether the engine reads R2/D1 in workerd, IndexedDB/HTTP in Chromium or files in Node. Each
 * runner (test/worker/engine-source.test.ts, test/e2e/engine-source-browser.test.ts,
 * test/node/engine-source.test.ts) puts the default model, its sentiment and afinn bundles, the
 * en/de/fr/ja language data and STORED_DIMENSION where its source reads them, and hands over the
 * engine's calls. The cases assert the interface's rules and relations between answers, never
 * numbers copied from a run, so they hold for any correct source.
 * Not a test file itself: no project's include glob (`*.test.ts`) matches it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../core/engine';
import { asApiError } from '../../core/problem';
import type {
  AutocompleteResponse,
  SimilarityMatrixResponse,
  TextScoresResponse,
  Tokenization,
  WordAvailabilitiesResponse,
  WordScoresResponse,
} from '../../core/responses';

/** The default model: built on every machine, like its two mapper bundles below. */
export const MODEL = 'en-glove-6b-100d';
/**
 * The default English model (build/paths.ts DEFAULT_MODEL_ID; test/node/subword.test.ts checks
 * they agree), the one with a sub-word table: the subwordFallback cases score on it, and each
 * runner puts it and its table where its source reads them. MODEL has no table.
 */
export const SUBWORD_MODEL = 'en-distilled-glove-use-100d';
/** Mapper bundles of MODEL built without Debian data (pattern needs it: test/support/optional-data.ts). */
export const MAPPER_BUNDLES = ['sentiment', 'afinn'] as const;
/** Language data every machine builds (only the de/fr synonyms come from Debian, and no case reads them). */
export const LANGUAGES = ['en', 'de', 'fr', 'ja'] as const;
/** The stored dimension each runner puts into its source (D1, the service's download, the CLI's file). */
export const STORED_DIMENSION = { id: 4343, name: 'weather', language: 'en', words: ['rain', 'storm', 'snow', 'wind'] };
/** No source stores this id. */
const MISSING_DIMENSION_ID = 999_999;

/** A refusal as every source reports it: the problem's code and HTTP status. */
export class SourceProblem extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    detail: string,
  ) {
    super(`${status} ${code}: ${detail}`);
    this.name = 'SourceProblem';
  }
}

/** The engine's calls as a source's public API offers them; refusals reject with a SourceProblem. */
export interface EngineCalls {
  /** tokenCount: what the API meters, where the source's API reports it. */
  textScores(body: unknown): Promise<{ response: TextScoresResponse; tokenCount?: number }>;
  wordScores(body: unknown): Promise<WordScoresResponse>;
  autocomplete(body: unknown): Promise<AutocompleteResponse>;
  wordAvailabilities(embeddingModelId: string, body: unknown): Promise<WordAvailabilitiesResponse>;
  similarityMatrix(embeddingModelId: string, body: unknown): Promise<SimilarityMatrixResponse>;
  tokenize(body: unknown): Promise<Tokenization>;
}

/** An engine's calls, its refusals mapped to their problem as the Worker renders them (asApiError). */
export function engineCalls(engine: Engine): EngineCalls {
  const refused = (err: unknown): never => {
    const problem = asApiError(err);
    throw problem ? new SourceProblem(problem.code, problem.status, problem.message) : err;
  };
  return {
    textScores: (body) => engine.textScores(body).catch(refused),
    wordScores: (body) => engine.wordScores(body).catch(refused),
    autocomplete: (body) => engine.autocomplete(body).catch(refused),
    wordAvailabilities: (id, body) => engine.wordAvailabilities(id, body).catch(refused),
    similarityMatrix: (id, body) => engine.similarityMatrix(id, body).catch(refused),
    tokenize: (body) => engine.tokenize(body).catch(refused),
  };
}

export interface SuiteOptions {
  /** Why the source's API does not report text-scores' tokenCount (that case is skipped, saying so). */
  noTokenCount?: string;
  /**
   * The answer of the CLI's engine in Node to the same call (test/support/node-engine.ts), as
   * JSON carries it: answers that must be identical in every runtime are compared with it.
   */
  reference: (call: 'textScores' | 'wordScores' | 'similarityMatrix', args: unknown[]) => Promise<unknown>;
}

/** An answer as JSON carries it (the reference crosses a process or runtime boundary that way). */
const asJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x));

/** The problem a call was refused with; fails when it answered. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; status: number }> {
  const outcome = await call.then(
    () => null,
    (err: unknown) => err,
  );
  expect(outcome, 'the call answered instead of being refused').toBeInstanceOf(SourceProblem);
  const { code, status } = outcome as SourceProblem;
  return { code, status };
}

const POSITIVE = 'What a wonderful, happy day: the food was excellent and everyone loved it.';
const NEGATIVE = 'A terrible, awful day: the food was horrible and everyone hated it.';
const WEATHER = 'Heavy rain and strong wind all night, then snow by the morning.';
const FINANCE = 'Quarterly revenue fell and investors sold their shares in the bank.';

/** Registers the cases for the source whose engine `setup` builds (run once, before them). */
export function describeEngineSource(name: string, setup: () => Promise<EngineCalls>, options: SuiteOptions) {
  describe(`EngineSource contract: ${name}`, () => {
    let engine: EngineCalls;
    beforeAll(async () => {
      engine = await setup();
    });

    describe('refusals', () => {
      it('an unknown model id is 404 EMBEDDING_MODEL_NOT_FOUND on every model call', async () => {
        const id = 'no-such-model-x';
        const calls = [
          () => engine.textScores({ texts: ['a'], embeddingModelId: id }),
          () => engine.wordScores({ seedWords: ['good'], embeddingModelId: id }),
          () => engine.autocomplete({ word: 'go', embeddingModelId: id }),
          () => engine.wordAvailabilities(id, { words: ['good'] }),
          () => engine.similarityMatrix(id, { words: ['good', 'bad'] }),
        ];
        for (const call of calls)
          expect(await refusal(call())).toEqual({ code: 'EMBEDDING_MODEL_NOT_FOUND', status: 404 });
      });

      it('an unknown mapper key is 422 MAPPER_NOT_FOUND', async () => {
        const notFound = { code: 'MAPPER_NOT_FOUND', status: 422 };
        const texts = { texts: ['nice'], embeddingModelId: MODEL };
        expect(await refusal(engine.textScores({ ...texts, mapperKeys: ['sentiment_nope'] }))).toEqual(notFound);
        const words = { seedWords: ['good'], whitelistWords: ['nice'], embeddingModelId: MODEL };
        expect(await refusal(engine.wordScores({ ...words, mapperKeys: ['nosuch_valence'] }))).toEqual(notFound);
      });

      it('a stored dimension id that does not exist is 422 DIMENSION_NOT_FOUND', async () => {
        const dimensions = [{ id: MISSING_DIMENSION_ID, type: 'dimension' }];
        const notFound = { code: 'DIMENSION_NOT_FOUND', status: 422 };
        expect(await refusal(engine.textScores({ texts: ['rain'], embeddingModelId: MODEL, dimensions }))).toEqual(
          notFound,
        );
        const words = { seedWords: ['rain'], whitelistWords: ['snow'], embeddingModelId: MODEL, dimensions };
        expect(await refusal(engine.wordScores(words))).toEqual(notFound);
      });

      it('a body outside the schema is 422 VALIDATION_FAILED, an unknown language 422 UNSUPPORTED_LANGUAGE', async () => {
        const invalid = { code: 'VALIDATION_FAILED', status: 422 };
        expect(await refusal(engine.textScores({ texts: 'not an array', embeddingModelId: MODEL }))).toEqual(invalid);
        expect(await refusal(engine.wordScores({ seedWords: ['a'], embeddingModelId: MODEL, limit: 5000 }))).toEqual(
          invalid,
        );
        expect(await refusal(engine.tokenize({ language: 'xx', text: 'hello' }))).toEqual({
          code: 'UNSUPPORTED_LANGUAGE',
          status: 422,
        });
      });
    });

    describe('text-scores on the default model', () => {
      const texts = [POSITIVE, NEGATIVE, WEATHER, FINANCE];
      const request = (order: string[], extra: Record<string, unknown> = {}) => ({
        texts: order,
        embeddingModelId: MODEL,
        // The stored dimension beside a manual one with its seed words: equal scores mean the source handed over exactly those seeds.
        dimensions: [
          { id: STORED_DIMENSION.id, type: 'dimension' },
          { id: 1, type: 'manual', words: STORED_DIMENSION.words },
        ],
        mapperKeys: ['sentiment_valence', 'afinn_valence'],
        ...extra,
      });

      it('one entry per text, in order; the stored dimension and the mappers score what they mean', async () => {
        const { response } = await engine.textScores(request(texts));
        expect(response.data).toHaveLength(texts.length);
        const reversed = await engine.textScores(request([...texts].reverse()));
        expect(reversed.response.data).toEqual([...response.data].reverse());
        const [pos, neg, weather, finance] = response.data;
        for (const t of response.data) {
          expect(Object.keys(t.dimensionScores).sort()).toEqual(['1', String(STORED_DIMENSION.id)]);
          expect(Object.keys(t.mapperScores).sort()).toEqual(['afinn_valence', 'sentiment_valence']);
          expect(t.dimensionScores[String(STORED_DIMENSION.id)]).toBeCloseTo(t.dimensionScores['1'], 10);
          // No goalConfig: no goal score and no factors.
          expect(t.goalScore).toBeUndefined();
          expect(t.goalScoreFactors).toEqual([]);
        }
        for (const key of ['sentiment_valence', 'afinn_valence'])
          expect(pos.mapperScores[key], key).toBeGreaterThan(neg.mapperScores[key]);
        const weatherDim = String(STORED_DIMENSION.id);
        expect(weather.dimensionScores[weatherDim]).toBeGreaterThan(finance.dimensionScores[weatherDim]);
      });

      it('goalConfig adds goalScore and its factors; a factor weight pulls the goal its way', async () => {
        const goal = (weight: number) =>
          engine.textScores(
            request([POSITIVE, NEGATIVE], { goalConfig: { mappers: [{ id: 'sentiment_valence', weight }] } }),
          );
        const [up, down] = [await goal(1), await goal(-1)];
        for (const t of [...up.response.data, ...down.response.data]) {
          expect(typeof t.goalScore).toBe('number');
          expect(t.goalScoreFactors.map((f) => f.type)).toContain('mapper');
        }
        expect(up.response.data[0].goalScore).toBeGreaterThan(up.response.data[1].goalScore!);
        expect(down.response.data[0].goalScore).toBeLessThan(down.response.data[1].goalScore!);
      });

      it('languageMismatch: German and Japanese texts are flagged on the English model, English and short texts are not; word-scores never carries it', async () => {
        const german = 'Das Wetter ist heute nicht gut, und wir bleiben mit den Kindern zu Hause.';
        const japanese = '今日は雨が降っていて、とても寒いです。';
        const { response } = await engine.textScores(request([WEATHER, german, 'Super!', japanese]));
        expect(response.data.map((t) => t.languageMismatch ?? null)).toEqual([
          null,
          { modelLanguage: 'en', detectedLanguage: 'de', evidence: 'stop-words' },
          null,
          { modelLanguage: 'en', detectedLanguage: 'ja', evidence: 'script' },
        ]);
        // A text's result depends on that text alone: the flagged text scored with other texts is the same.
        const alone = await engine.textScores(request([german]));
        expect(alone.response.data[0]).toEqual(response.data[1]);
        const words = await engine.wordScores({
          seedWords: ['rain'],
          whitelistWords: ['snow', 'Wetter'],
          embeddingModelId: MODEL,
        });
        for (const w of words.data) expect(w).not.toHaveProperty('languageMismatch');
        expect(words.averages).not.toHaveProperty('languageMismatch');
      });

      it.skipIf(options.noTokenCount !== undefined)("tokenCount is the tokenizer's count over the texts", async () => {
        const { tokenCount } = await engine.textScores(request(texts));
        let counted = 0;
        for (const text of texts) counted += (await engine.tokenize({ language: 'en', text })).tokenCount;
        expect(tokenCount).toBe(counted);
      });
      if (options.noTokenCount !== undefined)
        console.warn(`[tests] ${name}: skipped "tokenCount is the tokenizer's count": ${options.noTokenCount}`);
    });

    describe('word-scores', () => {
      const seeds = { seedWords: ['happy', 'joy'], embeddingModelId: MODEL };

      it('whitelist: the available words once each, as written, in request order; goalScore = seedScore weight x seedScore', async () => {
        const whitelist = ['Delight', 'misery', 'table', 'notaword123x', 'delight', 'misery'];
        const r = await engine.wordScores({ ...seeds, whitelistWords: whitelist, seedScore: 0.5 });
        const available = await engine.wordAvailabilities(MODEL, { words: whitelist });
        const expected = [...new Set(available.availabilities.filter((a) => a.isAvailable).map((a) => a.word))];
        expect(r.data.map((w) => w.word)).toEqual(expected);
        // Two forms of one word are both kept, each as sent, with the same scores.
        expect(expected).toEqual(['Delight', 'misery', 'table', 'delight']);
        expect(r.data[0]!.seedScore).toBe(r.data[3]!.seedScore);
        const by = new Map(r.data.map((w) => [w.word, w]));
        expect(by.get('delight')!.seedScore).toBeGreaterThan(by.get('table')!.seedScore!);
        expect(by.get('delight')!.seedScoreQuartile).toBe(1);
        for (const w of r.data) expect(w.goalScore).toBeCloseTo(0.5 * w.seedScore!, 6);
        const unweighted = await engine.wordScores({ ...seeds, whitelistWords: whitelist, seedScore: null });
        expect(unweighted.data.every((w) => w.goalScore === null)).toBe(true);
      });

      it('whitelist: mapper values and a stored dimension merged with request words', async () => {
        const r = await engine.wordScores({
          ...seeds,
          whitelistWords: ['wonderful', 'horrible', 'snow', 'profit'],
          mapperKeys: ['sentiment_valence'],
          dimensions: [
            { id: STORED_DIMENSION.id, type: 'dimension', words: ['hail'] },
            { id: 1, type: 'manual', words: [...STORED_DIMENSION.words, 'hail'] },
          ],
        });
        const by = new Map(r.data.map((w) => [w.word, w]));
        expect(by.get('wonderful')!.mapperScores.sentiment_valence).toBeGreaterThan(
          by.get('horrible')!.mapperScores.sentiment_valence,
        );
        const stored = String(STORED_DIMENSION.id);
        for (const w of r.data) expect(w.dimensionScores[stored], w.word).toBeCloseTo(w.dimensionScores['1'], 6);
        expect(by.get('snow')!.dimensionScores[stored]).toBeGreaterThan(by.get('profit')!.dimensionScores[stored]);
      });

      it('find-and-score: up to limit words near the seeds, best first, within wordrankLimit, seeds left out', async () => {
        const water = { seedWords: ['ocean', 'river', 'lake'], embeddingModelId: MODEL };
        const found = await engine.wordScores({ ...water, limit: 10, wordrankLimit: 20_000 });
        expect(found.data).toHaveLength(10);
        const scores = found.data.map((w) => w.seedScore!);
        expect(scores).toEqual([...scores].sort((a, b) => b - a));
        for (const w of found.data) {
          expect(w.modelRank).toBeLessThanOrEqual(20_000);
          expect(water.seedWords).not.toContain(w.word);
        }
        const far = await engine.wordScores({ ...water, whitelistWords: ['computer', 'finance', 'election'] });
        expect(Math.min(...scores)).toBeGreaterThan(Math.max(...far.data.map((w) => w.seedScore!)));
      });
    });

    describe('vocabulary', () => {
      it('autocomplete: at most ten completions of the prefix; a whitelist keeps only its words, most frequent first', async () => {
        const open = await engine.autocomplete({ word: 'ocea', embeddingModelId: MODEL });
        expect(open.suggestions.length).toBeGreaterThan(0);
        expect(open.suggestions.length).toBeLessThanOrEqual(10);
        for (const s of open.suggestions) expect(s.toLowerCase().startsWith('ocea'), s).toBe(true);
        const whitelistWords = ['apple', 'apply', 'banana', 'April'];
        const listed = await engine.autocomplete({ word: 'ap', embeddingModelId: MODEL, whitelistWords });
        expect([...listed.suggestions].map((s) => s.toLowerCase()).sort()).toEqual(['apple', 'apply', 'april']);
        const ranks = await engine.wordScores({
          seedWords: ['fruit'],
          whitelistWords: listed.suggestions,
          embeddingModelId: MODEL,
        });
        const modelRanks = ranks.data.map((w) => w.modelRank);
        expect(modelRanks).toEqual([...modelRanks].sort((a, b) => a - b));
      });

      it('word-availabilities: one entry per word, in order; a whitelist narrows what is available', async () => {
        const words = ['apple', 'notaword123x', 'Banana', ' river '];
        const r = await engine.wordAvailabilities(MODEL, { words });
        expect(r.availabilities).toEqual([
          { word: 'apple', isAvailable: true },
          { word: 'notaword123x', isAvailable: false },
          { word: 'Banana', isAvailable: true },
          { word: ' river ', isAvailable: true },
        ]);
        const narrowed = await engine.wordAvailabilities(MODEL, {
          words: ['apple', 'banana', 'river'],
          whitelistWords: ['apple', 'RIVER'],
        });
        expect(narrowed.availabilities.map((a) => a.isAvailable)).toEqual([true, false, true]);
      });

      it('similarity matrix: unknown words dropped, square, symmetric, diagonal 1, two decimals', async () => {
        const r = await engine.similarityMatrix(MODEL, { words: ['king', 'queen', 'notaword123x', 'banana', 'king'] });
        expect(r.words).toEqual(['king', 'queen', 'banana']);
        expect(r.matrix).toHaveLength(3);
        for (let i = 0; i < 3; i++) {
          expect(r.matrix[i]).toHaveLength(3);
          expect(r.matrix[i][i]).toBe(1);
          for (let j = 0; j < 3; j++) {
            expect(r.matrix[i][j]).toBe(r.matrix[j][i]);
            expect(Math.round(r.matrix[i][j] * 100) / 100).toBe(r.matrix[i][j]);
          }
        }
        expect(r.matrix[0][1]).toBeGreaterThan(r.matrix[0][2]);
      });
    });

    describe('subwordFallback (sub-word composition of words outside the vocabulary)', () => {
      // Not in the default model's vocabulary (the first case checks it).
      const typo = 'beautifull';
      const coined = 'doomscrolling';
      const wordBody = {
        seedWords: ['beautiful'],
        whitelistWords: ['lovely', typo, 'table', coined, 'gorgeous'],
        embeddingModelId: SUBWORD_MODEL,
        subwordFallback: true,
      };

      it('word-scores: composed words identical to the CLI engine in Node, marked, ranked past the vocabulary, in the last quartile', async () => {
        const available = await engine.wordAvailabilities(SUBWORD_MODEL, { words: [typo, coined] });
        expect(available.availabilities.map((a) => a.isAvailable)).toEqual([false, false]);
        const r = await engine.wordScores(wordBody);
        expect(asJson(r)).toEqual(await options.reference('wordScores', [wordBody]));
        expect(r.data.map((w) => w.word)).toEqual(['lovely', typo, 'table', coined, 'gorgeous']);
        const by = new Map(r.data.map((w) => [w.word, w]));
        const known = r.data.filter((w) => !w.composed);
        for (const w of [by.get(typo)!, by.get(coined)!]) {
          expect(w.composed).toBe(true);
          expect(w.modelRankQuartile).toBe(4);
          for (const k of known) expect(w.modelRank).toBeGreaterThan(k.modelRank);
        }
        expect(by.get(typo)!.modelRank).toBe(by.get(coined)!.modelRank);
        for (const k of known) expect(k).not.toHaveProperty('composed');
        // The typo means its word: nearer the seed "beautiful" than an unrelated word is.
        expect(by.get(typo)!.seedScore).toBeGreaterThan(0.5);
        expect(by.get(typo)!.seedScore).toBeGreaterThan(by.get('table')!.seedScore!);
      });

      it('the option off (or on without an unknown word) answers as before; availability never composes', async () => {
        const off = await engine.wordScores({ ...wordBody, subwordFallback: false });
        expect(off).toEqual(await engine.wordScores({ ...wordBody, subwordFallback: undefined }));
        expect(off.data.map((w) => w.word)).toEqual(['lovely', 'table', 'gorgeous']);
        const knownOnly = { ...wordBody, whitelistWords: ['lovely', 'table', 'gorgeous'] };
        expect(await engine.wordScores(knownOnly)).toEqual(
          await engine.wordScores({ ...knownOnly, subwordFallback: false }),
        );
        const texts = {
          texts: [POSITIVE, WEATHER],
          embeddingModelId: SUBWORD_MODEL,
          dimensions: [{ id: 1, type: 'manual', words: STORED_DIMENSION.words }],
        };
        expect((await engine.textScores({ ...texts, subwordFallback: true })).response).toEqual(
          (await engine.textScores(texts)).response,
        );
        const matrix = await engine.similarityMatrix(SUBWORD_MODEL, { words: ['king', typo] });
        expect(matrix).toEqual({ words: ['king'], matrix: [[1]] });
      });

      it('text-scores and similarity matrices compose too, identically to the CLI engine in Node', async () => {
        const body = {
          texts: [`What a ${typo} day`, `${typo} ${coined}`, '12345 67890 +++'],
          embeddingModelId: SUBWORD_MODEL,
          dimensions: [{ id: 1, type: 'manual', words: ['beautiful', 'pretty'] }],
          subwordFallback: true,
        };
        const { response } = await engine.textScores(body);
        expect(asJson(response)).toEqual(await options.reference('textScores', [body]));
        const without = (await engine.textScores({ ...body, subwordFallback: false })).response;
        // A text of unknown words alone gets scores only when they are composed; one without a letter never.
        expect(without.data[1].dimensionScores).toEqual({});
        expect(response.data[1].dimensionScores['1']).toBeGreaterThan(0);
        expect(response.data[2]).toEqual(without.data[2]);
        const args = [SUBWORD_MODEL, { words: ['beautiful', typo, 'table', '12345'], subwordFallback: true }];
        const m = await engine.similarityMatrix(args[0] as string, args[1]);
        expect(asJson(m)).toEqual(await options.reference('similarityMatrix', args));
        expect(m.words).toEqual(['beautiful', typo, 'table']);
        expect(m.composedWords).toEqual([typo]);
        expect(m.matrix[1][1]).toBe(1);
        expect(m.matrix[0][1]).toBe(m.matrix[1][0]);
        expect(m.matrix[0][1]).toBeGreaterThan(m.matrix[1][2]);
      });

      it('a model without a sub-word table accepts the option and composes no word', async () => {
        const m = await engine.similarityMatrix(MODEL, { words: ['beautiful', typo], subwordFallback: true });
        expect(m).toEqual({ words: ['beautiful'], matrix: [[1]], composedWords: [] });
        const r = await engine.wordScores({ ...wordBody, embeddingModelId: MODEL });
        expect(r).toEqual(await engine.wordScores({ ...wordBody, embeddingModelId: MODEL, subwordFallback: false }));
      });

      it('a non-boolean subwordFallback is 422 VALIDATION_FAILED', async () => {
        const invalid = { code: 'VALIDATION_FAILED', status: 422 };
        expect(await refusal(engine.wordScores({ ...wordBody, subwordFallback: 'yes' }))).toEqual(invalid);
        expect(
          await refusal(engine.textScores({ texts: ['a'], embeddingModelId: SUBWORD_MODEL, subwordFallback: 1 })),
        ).toEqual(invalid);
        expect(await refusal(engine.similarityMatrix(SUBWORD_MODEL, { words: ['a'], subwordFallback: null }))).toEqual(
          invalid,
        );
      });
    });

    describe('tokenize with the language data of the source', () => {
      // [language, text, a known word's surface form, its lemma, a stop word's surface form]
      const cases: Array<[string, string, string, string, string]> = [
        ['en', 'The geese ran home.', 'geese', 'goose', 'The'],
        ['de', 'Die Kinder spielen im Garten.', 'Kinder', 'Kind', 'Die'],
        ['fr', "L'homme voit les chevaux.", 'chevaux', 'cheval', "L'"],
        ['ja', '私は東京に住んでいます。', '東京', '東京', 'は'],
      ];
      for (const [language, text, word, lemma, stop] of cases) {
        it(`${language}: offsets, the lemma of "${word}", "${stop}" a stop word`, async () => {
          const r = await engine.tokenize({ language, text });
          expect(r.tokenCount).toBe(r.tokens.length);
          for (const t of r.tokens) expect(text.slice(t.indexStart, t.indexEnd)).toBe(t.string);
          const known = r.tokens.find((t) => t.string === word);
          expect(known, JSON.stringify(r.tokens)).toMatchObject({ token: lemma, isStop: false });
          expect(r.tokens.find((t) => t.string === stop)).toMatchObject({ isStop: true });
        });
      }
    });
  });
}
