/**
 * Issue 12, defect 3: text processing is linear. Timings belong to the bench
 * (bench/hostile-text.ts); here the structure is checked: Intl.Segmenter (quadratic on long
 * strings in V8) only ever sees windows of about 1 KB whose lengths add up to about the text's
 * length, the hostile inputs of the issue are tokenized completely and exactly, and cutting
 * runs without white space into windows gives the same words as segmenting the whole run.
 */
import fs from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ensureLanguageData, languageFile } from '../../build/lang-data';
import {
  parseLanguageData,
  segment,
  SUPPORTED_LANGUAGES,
  tokenize,
  type Language,
  type LanguageData,
} from '../../core/tokenizer/index';
import { countWords, splitWords } from '../../core/plagiarism';
import { icuWords } from '../../core/tokenizer/icu-words';
import { scanWords } from '../../core/tokenizer/scan';

const data = {} as Record<Language, LanguageData>;
beforeAll(async () => {
  await ensureLanguageData();
  for (const l of SUPPORTED_LANGUAGES) data[l] = parseLanguageData(fs.readFileSync(languageFile(l)));
});

/** Records the length of every string given to Intl.Segmenter.prototype.segment while `fn` runs. */
function segmenterInputs(fn: () => void): number[] {
  const lengths: number[] = [];
  const original = Intl.Segmenter.prototype.segment;
  Intl.Segmenter.prototype.segment = function (this: Intl.Segmenter, input: string) {
    lengths.push(input.length);
    return original.call(this, input);
  };
  try {
    fn();
  } finally {
    Intl.Segmenter.prototype.segment = original;
  }
  return lengths;
}

const HOSTILE: Array<[string, string]> = [
  ['"." x 100,000', '.'.repeat(100_000)],
  ['40,000 CJK characters', '漢字かな'.repeat(10_000)],
  ['"a" x 100,000', 'a'.repeat(100_000)],
  ['"a@" x 50,000', 'a@'.repeat(50_000)],
  ['e-mail-like runs', `${'x'.repeat(70)}@b.co `.repeat(1300)],
  ['URL with 99,000 trailing dots', `http://${'.'.repeat(99_000)}a`],
  ['"a " x 50,000', 'a '.repeat(50_000)],
  ["French elisions l'l'l'...", "l'".repeat(50_000)],
  ['hyphen chain', 'a-'.repeat(50_000)],
];

function expectExactTokens(text: string, language: Language): number {
  const { tokens, tokenCount } = tokenize(text, data[language]);
  expect(tokenCount).toBe(tokens.length);
  // Plain checks per token (tens of thousands), one assertion over the list of violations.
  const bad: string[] = [];
  let last = 0;
  for (const t of tokens) {
    if (
      t.indexStart < last ||
      t.indexEnd <= t.indexStart ||
      t.string !== text.slice(t.indexStart, t.indexEnd) ||
      typeof t.token !== 'string'
    ) {
      bad.push(JSON.stringify(t));
      if (bad.length > 5) break;
    }
    last = t.indexEnd;
  }
  expect(bad).toEqual([]);
  return tokenCount;
}

describe('linear segmentation (defect 3)', () => {
  afterEach(() => expect(typeof Intl.Segmenter.prototype.segment).toBe('function'));

  for (const l of SUPPORTED_LANGUAGES) {
    it(`${l}: every hostile input is tokenized exactly, through segmenter windows of at most 1,024 characters`, () => {
      for (const [name, text] of HOSTILE) {
        let count = 0;
        const lengths = segmenterInputs(() => {
          count = expectExactTokens(text, l);
        });
        const total = lengths.reduce((a, b) => a + b, 0);
        expect(Math.max(0, ...lengths), `${l} ${name}`).toBeLessThanOrEqual(1024);
        // Each character is segmented at most about twice (a window is re-read from its last safe boundary).
        expect(total, `${l} ${name}`).toBeLessThanOrEqual(2 * text.length + 1024);
        if (name.startsWith('"."')) expect(count).toBe(0);
        if (name === '"a " x 50,000') expect(count).toBe(50_000);
        if (name.startsWith('"a@"')) expect(count).toBe(50_000);
      }
    });
  }

  it('en: 40,000 CJK characters become words covering every character (no character lost at a window cut)', () => {
    const text = '東京都に住んでいます。'.repeat(4000);
    const { tokens } = tokenize(text, data.en);
    const covered = tokens.reduce((n, t) => n + (t.indexEnd - t.indexStart), 0);
    // Everything but the 4,000 full stops is inside a token.
    expect(covered).toBe(text.length - 4000);
  });

  it('cutting a run without white space into windows gives the words of the whole run (property)', () => {
    const piece = fc.constantFrom(
      'word',
      'x',
      '.',
      ',',
      '...',
      "l'homme",
      'e-mail',
      '123',
      '4.5',
      'ÄÖÜ',
      '__',
      'a.b',
      "don't",
      '-',
      '!',
      '‘',
      '’',
    );
    fc.assert(
      fc.property(
        fc.array(piece, { minLength: 400, maxLength: 1500 }),
        fc.constantFrom<Language>('en', 'de', 'fr'),
        (pieces, l) => {
          const text = pieces.join('');
          const seg = new Intl.Segmenter(l, { granularity: 'word' });
          // Reference: the whole run at once (affordable at these lengths), word-like segments with a letter or digit.
          const whole = [...seg.segment(text)]
            .filter((s) => s.isWordLike && /[\p{L}\p{N}]/u.test(s.segment))
            .map((s) => [s.index, s.index + s.segment.length]);
          const windows: number[][] = [];
          segmenterInputs(() => {
            // The tokenizer's own windowing, before its corrections (hyphens, elisions, contractions).
            for (const sp of segment(text, data[l])) windows.push([sp.start, sp.end]);
          });
          // Corrections only join or split words; every reference boundary inside a window-free
          // stretch is a boundary of ours: compare the sets of word starts and ends.
          const ours = new Set(windows.flat());
          const missing = whole
            .flat()
            .filter((b) => !ours.has(b) && !/[-'’]/.test(text[b - 1] ?? '') && !/[-'’]/.test(text[b] ?? ''));
          expect(missing).toEqual([]);
        },
      ),
      { numRuns: 60, seed: 12 },
    );
  });

  it('ASCII text is segmented by the char-code scanner exactly as Intl.Segmenter segments it (property)', () => {
    // Every ASCII character that takes part in a UAX #29 word rule, and some that do not.
    const piece = fc.constantFrom(
      'a',
      'Z',
      'word',
      '7',
      '42',
      '_',
      '.',
      ',',
      ';',
      ':',
      "'",
      '-',
      '@',
      ' ',
      '\n',
      '\r\n',
      '\t',
      '"',
      '!',
      '/',
      '(',
      '#',
      '$',
      '%',
      '+',
      '=',
      '?',
      '`',
      '~',
      '\x00',
      '\x7f',
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 80 }), fc.constantFrom<Language>('en', 'de', 'fr'), (pieces, l) => {
        const text = pieces.join('');
        const seg = new Intl.Segmenter(l, { granularity: 'word' });
        const icu = [...seg.segment(text)]
          .filter((s) => s.isWordLike && /[\p{L}\p{N}]/u.test(s.segment))
          .map((s) => ({ start: s.index, end: s.index + s.segment.length }));
        expect(scanWords(text, 0, text.length, l, (a, b) => icuWords(text, a, b, l))).toEqual(icu);
      }),
      { numRuns: 5000, seed: 1212 },
    );
  });

  it('"a@" x 50,000 costs ICU nothing and gives the words "a " x 50,000 gives (defect 3, issue 12 follow-up)', () => {
    // The ICU segment iterator costs about the same per segment, so text of one-letter words cost
    // three times prose of the same length; Latin-script stretches go through the char-code scanner (core/tokenizer/scan.ts).
    for (const l of SUPPORTED_LANGUAGES) {
      for (const text of ['a@'.repeat(50_000), 'a '.repeat(50_000), 'a.'.repeat(50_000)]) {
        let spans: Array<{ start: number; end: number }> = [];
        const lengths = segmenterInputs(() => (spans = segment(text, data[l])));
        expect(lengths, l).toEqual([]);
        if (text.startsWith('a.')) expect(spans).toEqual([{ start: 0, end: text.length - 1 }]);
        else expect(spans.map((s) => text.slice(s.start, s.end))).toEqual(Array.from({ length: 50_000 }, () => 'a'));
      }
    }
  });

  it('plagiarism word splitting handles the hostile inputs completely', () => {
    expect(countWords('.'.repeat(100_000))).toBe(0);
    expect(countWords('漢'.repeat(40_000))).toBe(1);
    expect(splitWords('a '.repeat(50_000))).toHaveLength(50_000);
    expect(countWords(`${'x'.repeat(99_990)} y`)).toBe(2);
  });
});
