/**
 * Contract rows the interface writes and the engine must keep (docs/spec/decisions.md "Contract
 * precision"), on the real default model through the engine as the CLI runs it (core/engine.ts
 * over cli/local.ts): token offsets in code points by default and in the unit asked for; words
 * written another way (NFD, full width, soft hyphen, zero-width joiner, diacritics) found by the
 * lookup rule and answered in the request's own forms; nulls for means over nothing; whitelist
 * mode ignoring `limit` and `wordrankLimit`; character limits in code points.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { FileSource } from '../../cli/local';
import { createEngine, type Engine } from '../../core/engine';
import { LIMITS } from '../../core/limits';
import { codePointLength, convertOffsets, type OffsetUnit } from '../../core/offsets';
import { requestSchemas } from '../../core/requests';
import { lookupKey } from '../../core/word-lookup';
import { DEFAULT_MODEL_ID, ROOT } from '../../build/paths';

const M = DEFAULT_MODEL_ID;
let engine: Engine;

beforeAll(() => {
  engine = createEngine(new FileSource({ build: false }));
});

/** The text between two offsets counted in `unit`, as a client in that unit slices it. */
function sliceIn(unit: OffsetUnit, text: string, start: number, end: number): string {
  if (unit === 'utf16') return text.slice(start, end);
  if (unit === 'codePoint') return Array.from(text).slice(start, end).join('');
  return Buffer.from(text, 'utf8').subarray(start, end).toString('utf8');
}

const UNITS: OffsetUnit[] = ['codePoint', 'utf16', 'utf8'];
const MIXED = [
  '😀 happy',
  'The 👩‍👩‍👧 family loved the café 🎉🎉 — really!',
  'Ａ full-width ｈａｐｐｙ day, e\u0301te\u0301 and 𝒽𝒶𝓅𝓅𝓎 math letters',
  "plain ASCII text doesn't change",
  '東京𠮷野家で食べた😋',
];

describe('token offsets', () => {
  it('"😀 happy": happy is 2..7 in code points (the default), 3..8 in UTF-16, 5..10 in UTF-8', async () => {
    const at = async (offsetUnit?: OffsetUnit) => {
      const r = await engine.tokenize({ language: 'en', text: '😀 happy', ...(offsetUnit ? { offsetUnit } : {}) });
      const t = r.tokens.find((x) => x.string === 'happy')!;
      return [t.indexStart, t.indexEnd];
    };
    expect(await at()).toEqual([2, 7]);
    expect(await at('codePoint')).toEqual([2, 7]);
    expect(await at('utf16')).toEqual([3, 8]);
    expect(await at('utf8')).toEqual([5, 10]);
  });

  it('in every unit, slicing the text by the offsets gives each token string (tokenizations)', async () => {
    for (const language of ['en', 'ja'])
      for (const text of MIXED)
        for (const offsetUnit of UNITS) {
          const r = await engine.tokenize({ language, text, offsetUnit });
          expect(r.tokens.length).toBeGreaterThan(0);
          for (const t of r.tokens) expect(sliceIn(offsetUnit, text, t.indexStart, t.indexEnd), text).toBe(t.string);
        }
  });

  it('text-scores explanations use the same offsets as tokenizations, in every unit', async () => {
    for (const offsetUnit of [undefined, ...UNITS]) {
      const { response } = await engine.textScores({
        embeddingModelId: M,
        texts: MIXED,
        mapperKeys: ['sentiment_valence'],
        dimensions: [{ id: 1, type: 'manual', words: ['family', 'food'] }],
        explain: true,
        ...(offsetUnit ? { offsetUnit } : {}),
      });
      let seen = 0;
      response.data.forEach((d, i) => {
        const e = d.explanation!;
        for (const f of [...Object.values(e.dimensions), ...Object.values(e.mappers)])
          for (const t of f.tokens) {
            seen++;
            expect(sliceIn(offsetUnit ?? 'codePoint', MIXED[i]!, t.indexStart, t.indexEnd)).toBe(t.string);
          }
      });
      expect(seen).toBeGreaterThan(10);
    }
  });

  it('convertOffsets leaves texts without astral characters (or, for UTF-8, ASCII texts) untouched', () => {
    const spans = () => [{ indexStart: 2, indexEnd: 5 }];
    expect(convertOffsets('café au lait', spans(), 'codePoint')).toEqual(spans());
    expect(convertOffsets('cafe au lait', spans(), 'utf8')).toEqual(spans());
    expect(convertOffsets('café au lait', spans(), 'utf8')).toEqual([{ indexStart: 2, indexEnd: 6 }]);
    expect(convertOffsets('😀 café', [{ indexStart: 3, indexEnd: 7 }], 'utf8')).toEqual([
      { indexStart: 5, indexEnd: 10 },
    ]);
  });

  it('an unknown offsetUnit is 422', async () => {
    await expect(engine.tokenize({ language: 'en', text: 'a', offsetUnit: 'bytes' })).rejects.toMatchObject({
      status: 422,
    });
  });
});

describe('character limits count code points', () => {
  const S = requestSchemas();
  const astral = (n: number) => '😀'.repeat(n);
  it(`a text of ${LIMITS.charactersPerText} emoji (twice as many UTF-16 units) is accepted; one more is not`, () => {
    expect(codePointLength(astral(LIMITS.charactersPerText))).toBe(LIMITS.charactersPerText);
    expect(
      S.TokenizationRequestSchema.safeParse({ language: 'en', text: astral(LIMITS.charactersPerText) }).success,
    ).toBe(true);
    expect(
      S.TokenizationRequestSchema.safeParse({ language: 'en', text: astral(LIMITS.charactersPerText + 1) }).success,
    ).toBe(false);
    expect(
      S.TextScoresRequestSchema.safeParse({ texts: [astral(LIMITS.charactersPerText)], embeddingModelId: M }).success,
    ).toBe(true);
    expect(
      S.TextScoresRequestSchema.safeParse({ texts: ['a'.repeat(LIMITS.charactersPerText + 1)], embeddingModelId: M })
        .success,
    ).toBe(false);
  });
});

describe('words written another way', () => {
  const FORMS: Array<[string, string]> = [
    ['café', 'cafe'], // NFC, folded
    ['cafe\u0301', 'cafe'], // NFD
    ['naïve', 'naive'],
    ['résumé', 'resume'],
    ['ｈａｐｐｙ', 'happy'], // full width
    ['hap\u00ADpy', 'happy'], // soft hyphen
    ['hap\u200Dpy', 'happy'], // zero-width joiner
    ['HAPPY', 'happy'],
  ];

  it('the lookup key: NFKC without default-ignorable code points; ASCII as is', () => {
    expect(lookupKey('ｈａｐｐｙ')).toBe('happy');
    expect(lookupKey('cafe\u0301')).toBe('café');
    expect(lookupKey('hap\u00ADpy')).toBe('happy');
    expect(lookupKey('Happy')).toBe('Happy');
  });

  it('availabilities find each form; the words are answered as sent, allow-lists compare keys', async () => {
    const words = FORMS.map(([w]) => w);
    const r = await engine.wordAvailabilities(M, { words });
    expect(r.availabilities.map((a) => a.word)).toEqual(words);
    expect(r.availabilities.every((a) => a.isAvailable)).toBe(true);
    const allowed = await engine.wordAvailabilities(M, { words: ['ｈａｐｐｙ', 'café'], whitelistWords: ['happy'] });
    expect(allowed.availabilities.map((a) => a.isAvailable)).toEqual([true, false]);
  });

  it('text scores of each form equal those of the plain word', async () => {
    // All caps is emphasis in a text (composition rules), so HAPPY is left to the lookups above.
    const texts = FORMS.filter(([a]) => a !== 'HAPPY').flatMap(([a, b]) => [
      `we were ${a} there`,
      `we were ${b} there`,
    ]);
    const { response } = await engine.textScores({
      embeddingModelId: M,
      texts,
      mapperKeys: ['sentiment_valence'],
      dimensions: [{ id: 1, type: 'manual', words: ['coffee', 'joy'] }],
    });
    for (let i = 0; i < texts.length; i += 2) {
      expect(response.data[i], texts[i]).toEqual(response.data[i + 1]);
      expect(response.data[i]!.modelRankScore).not.toBeNull();
    }
  });

  it('seeds, whitelists and matrices: the same rows, each form kept as sent (two forms of one word both kept)', async () => {
    const seedsA = await engine.wordScores({ embeddingModelId: M, seedWords: ['ｈａｐｐｙ', 'cafe\u0301'], limit: 10 });
    const seedsB = await engine.wordScores({ embeddingModelId: M, seedWords: ['happy', 'cafe'], limit: 10 });
    expect(seedsA.data).toEqual(seedsB.data);
    expect(seedsA.data.length).toBe(10);

    const whitelist = ['café', 'cafe', 'cafe\u0301', 'ｈａｐｐｙ', 'happy', 'happy'];
    const w = await engine.wordScores({ embeddingModelId: M, seedWords: ['joy'], whitelistWords: whitelist });
    expect(w.data.map((d) => d.word)).toEqual(['café', 'cafe', 'cafe\u0301', 'ｈａｐｐｙ', 'happy']);
    expect(new Set(w.data.slice(0, 3).map((d) => d.seedScore)).size).toBe(1);
    expect(w.data[3]!.seedScore).toBe(w.data[4]!.seedScore);

    const m = await engine.similarityMatrix(M, { words: ['naïve', 'naive', 'hap\u00ADpy'] });
    expect(m.words).toEqual(['naïve', 'naive', 'hap\u00ADpy']);
    expect(m.matrix[0]![1]).toBe(1);
  });

  it('autocomplete completes a full-width prefix as the plain one', async () => {
    const a = await engine.autocomplete({ embeddingModelId: M, word: 'ｈａｐｐ' });
    const b = await engine.autocomplete({ embeddingModelId: M, word: 'happ' });
    expect(a.suggestions).toEqual(b.suggestions);
    expect(a.suggestions.length).toBeGreaterThan(0);
  });
});

describe('a mean over nothing is null', () => {
  it('a text with no known word: modelRankScore null, and goalScore null with a goalConfig', async () => {
    const { response } = await engine.textScores({
      embeddingModelId: M,
      texts: ['zzqqxv wwqqyx', 'a happy day'],
      dimensions: [{ id: 1, type: 'manual', words: ['joy'] }],
      goalConfig: { dimensions: [{ id: 1, weight: 2 }] },
    });
    expect(response.data[0]!.modelRankScore).toBeNull();
    expect(response.data[0]!.goalScore).toBeNull();
    expect(typeof response.data[1]!.modelRankScore).toBe('number');
    expect(typeof response.data[1]!.goalScore).toBe('number');
  });

  it('every goal weight 0: goalScore null', async () => {
    const { response } = await engine.textScores({
      embeddingModelId: M,
      texts: ['a happy day'],
      dimensions: [{ id: 1, type: 'manual', words: ['joy'] }],
      goalConfig: { dimensions: [{ id: 1, weight: 0 }] },
    });
    expect(response.data[0]!.goalScore).toBeNull();
  });

  it('word-scores over an empty scored set: every averages field null', async () => {
    const r = await engine.wordScores({
      embeddingModelId: M,
      seedWords: ['joy'],
      whitelistWords: ['zzqqxv'],
      seedScore: 1,
    });
    expect(r.data).toEqual([]);
    expect(r.averages).toMatchObject({ modelRankScore: null, seedScore: null, goalScore: null });
  });

  it('the OpenAPI document declares each of them nullable', () => {
    const doc = JSON.parse(fs.readFileSync(path.join(ROOT, 'client', 'openapi.json'), 'utf8')) as {
      components: { schemas: Record<string, { properties: Record<string, { type?: unknown }> }> };
    };
    const s = doc.components.schemas;
    const nullable = (p: { type?: unknown }) => Array.isArray(p.type) && p.type.includes('null');
    expect(nullable(s.ScoredText!.properties.modelRankScore!)).toBe(true);
    expect(nullable(s.ScoredText!.properties.goalScore!)).toBe(true);
    expect(nullable(s.ScoredWord!.properties.seedScore!)).toBe(true);
    expect(nullable(s.ScoredWord!.properties.goalScore!)).toBe(true);
    const averages = (s.WordScoresResponse!.properties.averages as unknown as { properties: Record<string, object> })
      .properties;
    for (const k of ['modelRankScore', 'seedScore', 'goalScore']) expect(nullable(averages[k]!)).toBe(true);
  });
});

describe('whitelist mode ignores limit and wordrankLimit', () => {
  it('any integer is accepted with a whitelist; the same values without one are 422; a wrong type is 422 either way', async () => {
    for (const extra of [{ limit: 0 }, { limit: -3 }, { limit: 5000 }, { wordrankLimit: 0 }, { wordrankLimit: -7 }]) {
      const r = await engine.wordScores({
        embeddingModelId: M,
        seedWords: ['joy'],
        whitelistWords: ['glad'],
        ...extra,
      });
      expect(r.data.map((d) => d.word)).toEqual(['glad']);
      await expect(engine.wordScores({ embeddingModelId: M, seedWords: ['joy'], ...extra })).rejects.toMatchObject({
        status: 422,
      });
    }
    await expect(
      engine.wordScores({ embeddingModelId: M, seedWords: ['joy'], whitelistWords: ['glad'], limit: 1.5 }),
    ).rejects.toMatchObject({ status: 422 });
    await expect(
      engine.wordScores({ embeddingModelId: M, seedWords: ['joy'], whitelistWords: ['glad'], wordrankLimit: 'x' }),
    ).rejects.toMatchObject({ status: 422 });
  });
});
