/**
 * Issue 17: the fast tokenizer paths give exactly what the slow ones give.
 *   - The char-code word scanner (core/tokenizer/scan.ts) against Intl.Segmenter of this runtime:
 *     every pair and triple of a wide set of characters, random texts mixing its characters with
 *     others (which go to Intl.Segmenter), and the per-locale agreement check itself.
 *   - The per-language word cache of tokenize() against computing every form afresh, on texts
 *     that put the context-dependent words (determiners, contractions, articles, separable
 *     verbs, elisions, s'il) in every neighbourhood, cold and warm, with and without synonyms.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ensureLanguageData, languageFile } from '../../build/lang-data';
import {
  parseLanguageData,
  tokenize,
  tokenizeWith,
  newWordCache,
  SUPPORTED_LANGUAGES,
  type Language,
  type LanguageData,
} from '../../core/tokenizer/index';
import { probeText, scannerAgrees, scanWords, scanWordsUnchecked } from '../../core/tokenizer/scan';
import { icuWords, type Span } from '../../core/tokenizer/segment';
import { prng } from '../../core/prng';

const here = path.dirname(fileURLToPath(import.meta.url));
const data = {} as Record<Language, LanguageData>;
beforeAll(async () => {
  await ensureLanguageData();
  for (const l of SUPPORTED_LANGUAGES) data[l] = parseLanguageData(fs.readFileSync(languageFile(l)));
}, 600_000);

/** Intl.Segmenter word-like segments with a letter or digit (what the tokenizer keeps). */
function reference(text: string, locale: string): Span[] {
  const out: Span[] = [];
  for (const s of new Intl.Segmenter(locale, { granularity: 'word' }).segment(text)) {
    if (s.isWordLike && /[\p{L}\p{N}]/u.test(s.segment)) out.push({ start: s.index, end: s.index + s.segment.length });
  }
  return out;
}

const words = (text: string, spans: Span[]) => spans.map((s) => `${s.start}:${text.slice(s.start, s.end)}`);

/** Characters the scanner handles itself: letters of each block, digits, every mid character, punctuation, spaces. */
const SIMPLE = [
  'a',
  'Q',
  'z',
  'é',
  'ß',
  'Ä',
  'ÿ',
  'œ',
  'Ł',
  'ı',
  'ª',
  'µ',
  '0',
  '7',
  '_',
  ':',
  '·',
  ',',
  ';',
  '.',
  "'",
  '\u2018',
  '\u2019',
  '-',
  '"',
  '!',
  '?',
  '@',
  '/',
  '(',
  '«',
  '»',
  '¿',
  '×',
  '\u2013',
  '\u2014',
  '\u201c',
  '\u201d',
  '\u201e',
  '\u2026',
  '\u20ac',
  '\u2022',
  '\u2010',
];
/** Characters that send their chunk to Intl.Segmenter. */
const COMPLEX = [
  '\u00ad',
  '\u0301',
  '\u200b',
  '\u200d',
  '\u00a0',
  '\u202f',
  '\u3000',
  'ǅ',
  'α',
  'я',
  '東',
  'カ',
  '١',
  '😀',
  '\u2024',
  '²',
  '½',
  '\ufe55',
  '\u00b4',
  'ǃ',
];
const SPACES = [' ', '  ', '\n', '\t', '\r\n'];

describe('char-code word scanner (core/tokenizer/scan.ts)', () => {
  it('agrees with Intl.Segmenter on every pair and triple of the scanner characters', () => {
    const chunks: string[] = [];
    for (const a of SIMPLE) {
      for (const b of SIMPLE) {
        chunks.push(a + b);
        for (const c of SIMPLE) chunks.push(a + b + c);
      }
    }
    // In groups of 200 chunks: V8's segment iterator is quadratic in the length of one string
    // (the reference over all 80,000 chunks at once ran for minutes); spaces separate the groups
    // as they separate the chunks, so the words are the same.
    for (let g = 0; g < chunks.length; g += 200) {
      const text = chunks.slice(g, g + 200).join(' ');
      for (const locale of ['en', 'de', 'fr']) {
        const ours = scanWordsUnchecked(text, 0, text.length, () => {
          throw new Error('no chunk of these characters may need Intl.Segmenter');
        });
        expect(words(text, ours).join('|'), text).toBe(words(text, reference(text, locale)).join('|'));
      }
    }
  });

  it('agrees with Intl.Segmenter on random texts that mix in other scripts, marks, emoji and spaces (property)', () => {
    const piece = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...SIMPLE) },
      { weight: 1, arbitrary: fc.constantFrom(...COMPLEX) },
      { weight: 2, arbitrary: fc.constantFrom(...SPACES) },
      {
        weight: 1,
        arbitrary: fc.constantFrom('word', "don't", 'l\u2019été', '3.14', 'U.S.A.', 'a_b', 'x:y', 'Straße', 'e-mail'),
      },
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 300 }), fc.constantFrom('en', 'de', 'fr'), (pieces, locale) => {
        const text = pieces.join('');
        const ours = scanWords(text, 0, text.length, locale, (a, b) => icuWords(text, a, b, locale));
        expect(words(text, ours)).toEqual(words(text, reference(text, locale)));
      }),
      { numRuns: 400, seed: 17 },
    );
  });

  it('sends only the chunks it cannot scan to Intl.Segmenter, consecutive ones in one call', () => {
    const text = 'plain words here αβγ δεζ and more 東京 end';
    const calls: string[] = [];
    const ours = scanWords(text, 0, text.length, 'en', (a, b) => {
      calls.push(text.slice(a, b));
      return icuWords(text, a, b, 'en');
    });
    expect(calls).toEqual(['αβγ δεζ', '東京']);
    expect(words(text, ours)).toEqual(words(text, reference(text, 'en')));
  });

  it('checks itself against this runtime once per locale (the probes agree here)', () => {
    for (const locale of ['en', 'de', 'fr']) expect(scannerAgrees(locale)).toBe(true);
    const probes = probeText();
    expect(
      words(
        probes,
        scanWordsUnchecked(probes, 0, probes.length, () => []),
      ),
    ).toEqual(words(probes, reference(probes, 'en')));
  });
});

/** Texts that put every context-dependent word next to every other, plus the gold sentences. */
function contextTexts(language: Language): string[] {
  const gold = (
    JSON.parse(fs.readFileSync(path.join(here, '..', 'gold', `tokens-${language}.json`), 'utf8')) as {
      sentences: Array<{ text: string }>;
    }
  ).sentences.map((s) => s.text);
  const vocabulary: Record<Language, string[]> = {
    en: [
      'the',
      'a',
      'this',
      "'s",
      'it',
      'he',
      'they',
      'to',
      'can',
      'ca',
      "n't",
      'wo',
      'sha',
      'not',
      'is',
      'was',
      'be',
      'bridges',
      'costs',
      'running',
      'stopped',
      'better',
      'saw',
      'leaves',
      'houses',
      'men',
      "I'm",
      "don't",
      "it's",
      'The',
      'Running',
      'USA',
      'e-mail',
      '3.5',
      'happily',
      'children',
      'went',
    ],
    de: [
      'der',
      'die',
      'das',
      'ein',
      'im',
      'Die',
      'Kinder',
      'spielen',
      'stehe',
      'auf',
      'kommt',
      'an',
      'und',
      'größer',
      'besser',
      'Häusern',
      'Äpfel',
      'gut',
      'sehr',
      'nicht',
      'Lehrer',
      'bringt',
      'mit',
      'Das',
      'schönen',
      'liefen',
      'zu',
      'den',
    ],
    fr: [
      'le',
      'la',
      "l'",
      'les',
      'un',
      'très',
      'si',
      "s'",
      'il',
      'ils',
      'est',
      'été',
      "l'été",
      'suis',
      'homme',
      "qu'il",
      'a',
      'vu',
      'allé',
      'gare',
      'heureux',
      'dit-il',
      'va-t-il',
      'rendez-vous',
      'Aujourd\u2019hui',
      'étudiants',
      'doivent',
    ],
    ja: ['私', 'は', '東京', 'に', '住んで', 'います', '。', 'とても', '良い', 'ません', 'でした', 'ない', '、'],
  };
  const rand = prng(5);
  const vocab = vocabulary[language];
  const sep = language === 'ja' ? '' : ' ';
  const out = [...gold];
  for (let i = 0; i < 300; i++) {
    const parts: string[] = [];
    const len = 2 + Math.floor(rand() * 14);
    for (let j = 0; j < len; j++)
      parts.push(
        vocab[Math.floor(rand() * vocab.length)]! +
          (rand() < 0.1 ? (language === 'ja' ? '。' : '.') : rand() < 0.1 ? ',' : ''),
      );
    out.push(parts.join(sep));
  }
  return out;
}

describe('word cache of tokenize()', () => {
  for (const l of SUPPORTED_LANGUAGES) {
    it(`${l}: cached tokens (cold and warm, with and without synonyms) equal tokens computed afresh`, () => {
      const texts = contextTexts(l);
      for (const synonyms of [false, true]) {
        const cache = newWordCache();
        for (let pass = 0; pass < 2; pass++) {
          for (const t of texts)
            expect(tokenizeWith(t, data[l], synonyms, cache), `${l} ${t}`).toEqual(
              tokenizeWith(t, data[l], synonyms, null),
            );
        }
      }
      // The shared cache of tokenize() itself.
      for (const t of texts)
        expect(tokenize(t, data[l], { synonyms: false })).toEqual(tokenizeWith(t, data[l], false, null));
    });
  }

  it('a form longer than the cached lengths and many distinct forms still tokenize exactly', () => {
    const long = `${'x'.repeat(100)} ${Array.from({ length: 60_000 }, (_, i) => `w${i}`).join(' ')}`;
    const out = tokenize(long, data.en, { synonyms: false });
    expect(out.tokenCount).toBe(60_001);
    expect(out.tokens[0]!.token).toBe('x'.repeat(100));
    expect(out.tokens[60_000]!.token).toBe('w59999');
  });
});
