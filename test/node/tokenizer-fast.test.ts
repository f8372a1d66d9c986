/**
 * Issue 17: the fast tokenizer paths give exactly what the slow ones give.
 *   - The char-code word scanner (core/tokenizer/scan.ts) against Intl.Segmenter of this runtime:
 *     every pair and triple of a wide set of characters, random texts mixing its characters with
 *     others (which go to Intl.Segmenter), and the per-locale agreement check itself.
 *   - The per-language word cache of tokenize() against computing every form afresh, on texts
 *     that put the context-dependent words (determiners, contractions, articles, separable
 *     verbs, elisions, s'il) in every neighbourhood, cold and warm, with and without synonyms.
 *   - The compiled TinySegmenter (integer-keyed tables) against the published string algorithm,
 *     on the Japanese gold sentences and random texts of the model's own characters.
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
import { segmentAlphabetic } from '../../core/tokenizer/alphabetic';
import { icuWords } from '../../core/tokenizer/icu-words';
import type { Span } from '../../core/tokenizer/segment';
import { ctype, tinySegment } from '../../core/tokenizer/tiny-segmenter';
import type { SegmenterModel } from '../../core/tokenizer/data';
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

/** TinySegmenter as published (Taku Kudo, BSD): string features, string-keyed tables (its ctype is core's). */
function tinySegmentReference(chars: string[], model: SegmenterModel): number[] {
  const get = (name: string, key: string): number => model.tables.get(name)?.get(key) ?? 0;
  const seg = ['B3', 'B2', 'B1', ...chars, 'E1', 'E2', 'E3'];
  const ct = ['O', 'O', 'O', ...chars.map(ctype), 'O', 'O', 'O'];
  const cuts: number[] = [];
  let [p1, p2, p3] = ['U', 'U', 'U'];
  for (let i = 4; i < seg.length - 3; ++i) {
    const [w1, w2, w3, w4, w5, w6] = [seg[i - 3], seg[i - 2], seg[i - 1], seg[i], seg[i + 1], seg[i + 2]] as string[];
    const [c1, c2, c3, c4, c5, c6] = [ct[i - 3], ct[i - 2], ct[i - 1], ct[i], ct[i + 1], ct[i + 2]] as string[];
    let score = model.bias;
    score += get('UP1', p1) + get('UP2', p2) + get('UP3', p3) + get('BP1', p1 + p2) + get('BP2', p2 + p3);
    score += get('UW1', w1) + get('UW2', w2) + get('UW3', w3) + get('UW4', w4) + get('UW5', w5) + get('UW6', w6);
    score += get('BW1', w2 + w3) + get('BW2', w3 + w4) + get('BW3', w4 + w5);
    score += get('TW1', w1 + w2 + w3) + get('TW2', w2 + w3 + w4) + get('TW3', w3 + w4 + w5) + get('TW4', w4 + w5 + w6);
    score += get('UC1', c1) + get('UC2', c2) + get('UC3', c3) + get('UC4', c4) + get('UC5', c5) + get('UC6', c6);
    score += get('BC1', c2 + c3) + get('BC2', c3 + c4) + get('BC3', c4 + c5);
    score += get('TC1', c1 + c2 + c3) + get('TC2', c2 + c3 + c4) + get('TC3', c3 + c4 + c5) + get('TC4', c4 + c5 + c6);
    score += get('UQ1', p1 + c1) + get('UQ2', p2 + c2) + get('UQ3', p3 + c3);
    score += get('BQ1', p2 + c2 + c3) + get('BQ2', p2 + c3 + c4) + get('BQ3', p3 + c2 + c3) + get('BQ4', p3 + c3 + c4);
    score +=
      get('TQ1', p2 + c1 + c2 + c3) +
      get('TQ2', p2 + c2 + c3 + c4) +
      get('TQ3', p3 + c1 + c2 + c3) +
      get('TQ4', p3 + c2 + c3 + c4);
    let p = 'O';
    if (score > 0) {
      cuts.push(i - 3);
      p = 'B';
    }
    [p1, p2, p3] = [p2, p3, p];
  }
  return cuts;
}

describe('the compiled TinySegmenter', () => {
  const codePoints = (text: string): string[] => Array.from(text);
  const compare = (text: string): void => {
    const model = data.ja.segmenter!;
    const chars = codePoints(text);
    const fast = tinySegment(
      chars.map((c) => c.codePointAt(0)!),
      chars.length,
      model,
    );
    const cuts: number[] = [];
    for (let i = 0; i < fast.length; i++) if (fast[i] === 1) cuts.push(i);
    expect(cuts, text).toEqual(tinySegmentReference(chars, model));
  };

  it('skips runs between Japanese text that hold no letter or digit: they never hold a token (property)', () => {
    // segmentJapanese no longer hands such runs to segmentAlphabetic; this is why that is exact.
    const others = [
      '。',
      '、',
      '「',
      '」',
      '・',
      ' ',
      '!',
      '?',
      '.',
      '-',
      '/',
      ':',
      '@',
      '😀',
      '♪',
      '\u3000',
      '\u0301',
      '~',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...others), { minLength: 1, maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(/[\p{L}\p{N}]/u.test(text)).toBe(false);
        expect(segmentAlphabetic(text, 0, text.length, 'ja', null)).toEqual([]);
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it('cuts the Japanese gold sentences exactly where the published algorithm does', () => {
    const gold = JSON.parse(fs.readFileSync(path.join(here, '..', 'gold', 'tokens-ja.json'), 'utf8')) as {
      sentences: Array<{ text: string }>;
    };
    expect(gold.sentences.length).toBeGreaterThanOrEqual(8);
    for (const { text } of gold.sentences) compare(text);
  });

  it("cuts random texts of the model's characters, the markers' letters, digits and others exactly alike (property)", () => {
    const model = data.ja.segmenter!;
    // Every character of the model's word tables, plus the letters of its markers and strangers.
    const pool = new Set<string>(['B', 'E', '1', '2', '3', 'x', '😀', '。', '、', ' ', 'ａ', '９']);
    for (const [name, table] of model.tables)
      if (/^[UBT]W/.test(name)) for (const key of table.keys()) for (const ch of key) pool.add(ch);
    const chars = [...pool];
    expect(chars.length).toBeGreaterThan(300);
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: chars.length - 1 }), { minLength: 1, maxLength: 60 }), (picks) =>
        compare(picks.map((i) => chars[i]).join('')),
      ),
      { numRuns: 400, seed: 17 },
    );
  });
});
