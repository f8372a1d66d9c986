/**
 * The language-mismatch check (core/scoring/language-mismatch.ts, issue 35): on every pair of
 * model and text language the flag names the text's language (evidence "script" when Japanese
 * is one side, else "stop-words"), a text in the model's own language is never flagged, nor are
 * short texts, texts mixing two languages about evenly or Chinese; the profile words are stop
 * words of their language's real data. Then text-scores (scoreTexts) on the real models (the
 * default model; the aligned de/fr/ja models where this machine built them) attaches exactly
 * that flag, and the scores are the ones the same request gets without the check.
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { ALIGNED, alignedModelFile } from '../../build/aligned-models';
import { languageFile } from '../../build/lang-data';
import { loadDefaultModel, loadModelFile } from '../../build/load-model';
import type { EmbeddingModel } from '../../core/model';
import type { LanguageMismatch, ScoredText } from '../../core/responses';
import { BoundedCache, scoreTexts, type FactorStats, type TextScoresRequest } from '../../core/scoring';
import { languageMismatch, languageProfile, PROFILE_WORDS } from '../../core/scoring/language-mismatch';
import { parseLanguageData, scoringTokenizer, tokenize, type LanguageData } from '../../core/tokenizer';
import { needs } from '../support/optional-data';

const LANGUAGES = ['en', 'de', 'fr', 'ja'] as const;
type Lang = (typeof LANGUAGES)[number];

/** Two everyday texts per language, written for this test. */
const TEXTS: Record<Lang, string[]> = {
  en: [
    'The hotel was clean and the staff were friendly, but the breakfast was not worth the price.',
    'I bought this phone last week and it works great with my car, so I can recommend it.',
  ],
  de: [
    'Das Hotel war sauber und das Personal sehr freundlich, aber das Frühstück ist den Preis nicht wert.',
    'Ich habe das Handy letzte Woche gekauft und es funktioniert gut mit meinem Auto.',
  ],
  fr: [
    "L'hôtel était propre et le personnel très aimable, mais le petit-déjeuner ne vaut pas le prix.",
    'J’ai acheté ce téléphone la semaine dernière et il fonctionne très bien avec ma voiture.',
  ],
  ja: [
    'ホテルは清潔でスタッフもとても親切でしたが、朝食は値段に見合いませんでした。',
    '先週このスマートフォンを買いましたが、車との接続も問題なく使えています。',
  ],
};

/** Never flagged, whatever the model: too short, two languages about evenly, or no language the check knows. */
const NEVER = [
  '',
  'Super!',
  'OK',
  'Great value for money.',
  'Sehr gut!',
  'Très bien.',
  'すごい！',
  '最高',
  "I love Paris: c'est la vie, and the food is great.",
  'Das ist gut and the food is great.',
  'Il est là, and it is here.',
  '这是一个很好的产品，我很喜欢。',
  '12345 !!! :-) https://example.com/a?b=c',
];

function expected(model: Lang, text: Lang): LanguageMismatch | null {
  if (model === text) return null;
  const evidence = model === 'ja' || text === 'ja' ? 'script' : 'stop-words';
  return { modelLanguage: model, detectedLanguage: text, evidence };
}

describe('languageMismatch: every pair of model and text language', () => {
  for (const model of LANGUAGES)
    for (const text of LANGUAGES)
      it(`${text} text, ${model} model: ${model === text ? 'not flagged' : `flagged ${text}`}`, () => {
        for (const t of TEXTS[text]) expect(languageMismatch(t, model), t).toEqual(expected(model, text));
      });

  it('short texts, even mixes of two languages and Chinese are never flagged', () => {
    for (const model of LANGUAGES)
      for (const t of NEVER) expect(languageMismatch(t, model), `${model}: ${t}`).toBeNull();
  });

  it('script: a Japanese text with a Latin brand name is Japanese; an English text with a Japanese place name is English', () => {
    for (const model of ['en', 'de', 'fr'] as const)
      expect(languageMismatch('新しいiPhoneを買いました', model)).toEqual(expected(model, 'ja'));
    expect(languageMismatch('新しいiPhoneを買いました', 'ja')).toBeNull();
    const english = 'I visited 東京 and the food there was amazing.';
    expect(languageMismatch(english, 'en')).toBeNull();
    expect(languageMismatch(english, 'ja')).toEqual(expected('ja', 'en'));
  });

  it('stop-words: elisions with either apostrophe, capitals and accents count; a word only starting like a profile word does not', () => {
    // c', est, l', qu', il ("là" is not "la").
    expect(languageProfile('C’est là, l’amour qu’il a.').hits).toEqual({ en: 0, de: 0, fr: 5 });
    expect(languageProfile("C'EST LÀ, L'AMOUR QU'IL A.").hits).toEqual({ en: 0, de: 0, fr: 5 });
    expect(languageProfile('Über die Straße, FÜR ihn.').hits).toEqual({ en: 0, de: 3, fr: 0 });
    // "theater", "andere", "lesen", "dies", "isn" are no profile words; "don't" and "it's" are.
    expect(languageProfile('theater andere lesen dies isn').hits).toEqual({ en: 0, de: 0, fr: 0 });
    expect(languageProfile("don't it's").hits).toEqual({ en: 2, de: 0, fr: 0 });
    expect(languageProfile('Die ganze Welt')).toMatchObject({ latin: 12, kana: 0, kanji: 0 });
    expect(languageProfile('東京に住んでいます')).toMatchObject({ latin: 0, kana: 6, kanji: 3 });
  });

  it('an unknown model language is never flagged', () => {
    expect(languageMismatch(TEXTS.fr[0], 'es')).toBeNull();
    expect(languageMismatch(TEXTS.ja[0], 'xx')).toBeNull();
  });
});

describe('profile words on the real language data', () => {
  const data: Partial<Record<Lang, LanguageData>> = {};
  beforeAll(() => {
    for (const l of ['en', 'de', 'fr'] as const) data[l] = parseLanguageData(fs.readFileSync(languageFile(l)));
  });

  it("every profile word (elisions aside) is a stop word of its language's data, and counts once for that language only", () => {
    for (const [language, list] of Object.entries(PROFILE_WORDS) as Array<[Exclude<Lang, 'ja'>, string]>) {
      for (const word of list.split(' ')) {
        const hits = { en: 0, de: 0, fr: 0, [language]: 1 };
        if (word.endsWith("'")) {
          expect(languageProfile(`${word}x`).hits, word).toEqual(hits);
          continue;
        }
        expect(languageProfile(word).hits, word).toEqual(hits);
        const tokens = tokenize(word, data[language]!).tokens;
        expect(
          tokens.map((t) => t.isStop),
          `${language} "${word}"`,
        ).toEqual([true]);
      }
    }
  });
});

describe('text-scores on the real models: the flag, and the same scores as without the check', () => {
  interface Setup {
    model: EmbeddingModel;
    data: LanguageData;
  }
  const setups = new Map<Lang, Setup>();
  beforeAll(() => {
    const data = (l: Lang) => parseLanguageData(fs.readFileSync(languageFile(l)));
    setups.set('en', { model: loadDefaultModel(), data: data('en') });
    for (const l of ['de', 'fr', 'ja'] as const)
      if (needs(`language mismatch on the ${l} model`, `${l}-model`))
        setups.set(l, { model: loadModelFile(alignedModelFile(ALIGNED[l])), data: data(l) });
  }, 600_000);

  const allTexts = LANGUAGES.flatMap((l) => TEXTS[l].map((t) => [l, t] as const));

  function score(s: Setup, extra: Partial<TextScoresRequest>, checked: boolean): ScoredText[] {
    const req: TextScoresRequest = {
      texts: [...allTexts.map(([, t]) => t), ...NEVER],
      embeddingModelId: s.model.manifest.id,
      // Seeds every model has: frequent words of its own vocabulary.
      dimensions: [{ id: 1, type: 'manual', words: [s.model.word(300), s.model.word(400)] }],
      ...extra,
    };
    return scoreTexts(req, {
      index: s.model,
      tokenize: scoringTokenizer(s.data),
      mappers: [],
      storedDimensions: new Map(),
      stats: new BoundedCache<FactorStats>(16),
      composition: s.data.meta.composition,
      ...(checked ? { language: s.model.manifest.language } : {}),
    }).response.data;
  }

  for (const model of LANGUAGES)
    it(`${model} model: each text's flag as the check gives it; every score as without the check`, (ctx) => {
      const s = setups.get(model);
      if (!s) return ctx.skip();
      expect(s.model.manifest.language).toBe(model);
      for (const extra of [{}, { explain: true }, { composition: 'mean' as const, normalization: 'zscore' as const }]) {
        const checked = score(s, extra, true);
        const plain = score(s, extra, false);
        allTexts.forEach(([language], i) => {
          const want = expected(model, language);
          if (want) expect(checked[i].languageMismatch, `${language} text ${i}`).toEqual(want);
          else expect(checked[i], `${language} text ${i}`).not.toHaveProperty('languageMismatch');
        });
        for (let i = allTexts.length; i < checked.length; i++)
          expect(checked[i]).not.toHaveProperty('languageMismatch');
        // Removing the flag gives the response without the check, score for score.
        const stripped = checked.map(({ languageMismatch: _, ...rest }) => rest);
        expect(stripped).toEqual(plain);
        expect(plain.some((t) => Object.keys(t.dimensionScores).length > 0)).toBe(true);
      }
    });
});
