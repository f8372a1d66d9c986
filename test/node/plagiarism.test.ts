import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  buildSnippet,
  compareMatches,
  countWords,
  fingerprints,
  matchSource,
  MIN_RUN_WORDS,
  ngramHashes,
  NGRAM_WORDS,
  percentage,
  sharedRuns,
  splitWords,
  winnow,
  WINDOW,
  WordAutomaton,
} from '../../core/plagiarism';

const norms = (text: string) => splitWords(text).map((w) => w.norm);

/** Reference: every maximal common run of >= min words, by brute force over all alignments. */
function naiveRuns(a: string[], b: string[], min: number) {
  const runs: Array<{ inputStart: number; sourceStart: number; length: number }> = [];
  for (let i = 0; i < a.length; i++) {
    for (let j = 0; j < b.length; j++) {
      if (i > 0 && j > 0 && a[i - 1] === b[j - 1]) continue; // not the start of a maximal run
      let len = 0;
      while (i + len < a.length && j + len < b.length && a[i + len] === b[j + len]) len++;
      if (len >= min) runs.push({ inputStart: i, sourceStart: j, length: len });
    }
  }
  return runs.sort((x, y) => x.inputStart - y.inputStart || x.sourceStart - y.sourceStart);
}

/** Reference: covered input words (each once) and the first longest maximal run, from naiveRuns. */
function naiveShared(a: string[], b: string[], min: number) {
  const runs = naiveRuns(a, b, min);
  if (runs.length === 0) return null;
  const covered = new Set<number>();
  for (const r of runs) for (let i = r.inputStart; i < r.inputStart + r.length; i++) covered.add(i);
  let longest = runs[0];
  for (const r of runs) if (r.length > longest.length) longest = r;
  return { wordsMatched: covered.size, longest };
}

/** Reference winnowing: min of each window, rightmost on ties. */
function naiveWinnow(h: number[], w: number): number[] {
  if (h.length === 0) return [];
  if (h.length <= w) return [Math.min(...h)];
  const out = new Set<number>();
  for (let s = 0; s + w <= h.length; s++) out.add(Math.min(...h.slice(s, s + w)));
  return [...out].sort((x, y) => x - y);
}

describe('word splitting (decisions.md: strip Unicode punctuation, split on white space)', () => {
  it('strips punctuation, lower-cases and keeps offsets of the original chunks', () => {
    const text = '  Hello, World!  "Don\'t" -- stop…\tnow. ';
    const words = splitWords(text);
    expect(words.map((w) => w.norm)).toEqual(['hello', 'world', 'dont', 'stop', 'now']);
    for (const w of words) expect(text.slice(w.start, w.end)).not.toMatch(/\s/);
    expect(text.slice(words[0].start, words[0].end)).toBe('Hello,');
    expect(text.slice(words[2].start, words[2].end)).toBe('"Don\'t"');
    expect(countWords(text)).toBe(words.length);
  });

  it('drops chunks that are only punctuation, in any script', () => {
    expect(countWords('a — b ¿ c « d » e 、 f 。')).toBe(6);
    expect(countWords('... !!! ?? --')).toBe(0);
  });

  it('handles Unicode letters, full-width forms and composed/decomposed accents alike', () => {
    const composed = 'Café ÉCOLE Straße Ελληνικά Русский ＡＢＣ';
    const decomposed = 'Cafe\u0301 E\u0301COLE STRASSE ελληνικά русский abc';
    expect(norms(composed)).toEqual(['café', 'école', 'straße', 'ελληνικά', 'русский', 'abc']);
    // ß upper-cases to SS, which lower-cases to ss: a different word; the rest is equal.
    const a = norms(composed);
    const b = norms(decomposed);
    expect(b[2]).toBe('strasse');
    expect([a[0], a[1], a[3], a[4], a[5]]).toEqual([b[0], b[1], b[3], b[4], b[5]]);
  });

  it('counts 14 vs 15 words exactly as punctuation stripping says', () => {
    const base = Array.from({ length: 14 }, (_, i) => `w${i},`).join(' ');
    expect(countWords(base)).toBe(14);
    expect(countWords(`${base} — ; !`)).toBe(14);
    expect(countWords(`${base} last.`)).toBe(15);
  });
});

describe('fingerprints', () => {
  it('hashes equal n-grams equally and different ones (almost surely) differently', () => {
    const h = ngramHashes(norms('a b c d e f a b c d e f x'), NGRAM_WORDS);
    expect(h).toHaveLength(13 - NGRAM_WORDS + 1);
    expect(h[0]).toBe(h[6]);
    expect(new Set(h).size).toBe(7);
    for (const v of h) expect(Number.isSafeInteger(v) && v >= 0 && v < 2 ** 48).toBe(true);
    // Order matters.
    expect(ngramHashes(['a', 'b'], 2)[0]).not.toBe(ngramHashes(['b', 'a'], 2)[0]);
  });

  it('winnows like the reference definition', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 60 }),
        fc.integer({ min: 2, max: 6 }),
        (h, w) => {
          expect(winnow(h, w)).toEqual(naiveWinnow(h, w));
        },
      ),
    );
  });

  it('keeps about half of the n-grams and always shares one fingerprint for a shared run of 8 words', () => {
    const vocab = Array.from({ length: 5000 }, (_, i) => `v${i}`);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: vocab.length - 1 }), { minLength: 0, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: vocab.length - 1 }), { minLength: MIN_RUN_WORDS, maxLength: MIN_RUN_WORDS }),
        fc.array(fc.integer({ min: 0, max: vocab.length - 1 }), { minLength: 0, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: vocab.length - 1 }), { minLength: 0, maxLength: 40 }),
        (pre, shared, post, other) => {
          const a = [...pre, ...shared, ...post].map((i) => vocab[i]);
          const b = [...other, ...shared].map((i) => vocab[i]);
          const fa = new Set(fingerprints(a));
          expect(fingerprints(b).some((h) => fa.has(h))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
    const long = Array.from({ length: 5000 }, (_, i) => vocab[(i * 7919) % vocab.length]);
    const density = fingerprints(long).length / (long.length - NGRAM_WORDS + 1);
    expect(density).toBeGreaterThan(0.3);
    expect(density).toBeLessThan(2 / (WINDOW + 1) + 0.1);
  });
});

describe('run verification', () => {
  const words = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('a shared run of 7 words is not a match, 8 is', () => {
    const seven = words(7, 's');
    const eight = words(8, 's');
    expect(sharedRuns([...words(5, 'a'), ...seven, ...words(5, 'b')], [...words(3, 'c'), ...seven, 'x'])).toBeNull();
    expect(sharedRuns([...words(5, 'a'), ...eight, ...words(5, 'b')], [...words(3, 'c'), ...eight, 'x'])).toEqual({
      wordsMatched: 8,
      longest: { inputStart: 5, sourceStart: 3, length: 8 },
    });
  });

  it('covers and picks the longest run exactly as a brute-force comparison of all alignments (repetitive texts too)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 50 }),
        fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 50 }),
        fc.integer({ min: 1, max: 9 }),
        (a, b, min) => {
          expect(sharedRuns(a, b, min)).toEqual(naiveShared(a, b, min));
        },
      ),
      { numRuns: 1000 },
    );
    // Larger alphabets and copied passages: the first longest run at its first place in the source.
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 120 }),
        fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 120 }),
        fc.nat(120),
        fc.nat(120),
        (a, b, cut, at) => {
          const input = a.map(String);
          const source = [
            ...b.slice(0, at),
            ...a.slice(cut % (a.length + 1), (cut % (a.length + 1)) + 12),
            ...b.slice(at),
          ].map(String);
          expect(sharedRuns(input, source, 8)).toEqual(naiveShared(input, source, 8));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('counts each covered input word once across overlapping runs', () => {
    // Input words 0-9 are source 10-19, input 5-14 are source 40-49, input 30-37 are source 0-7.
    const input = words(40, 'i');
    const source = words(60, 'x');
    for (let k = 0; k < 10; k++) source[10 + k] = input[k];
    for (let k = 0; k < 10; k++) source[40 + k] = input[5 + k];
    for (let k = 0; k < 8; k++) source[k] = input[30 + k];
    expect(sharedRuns(input, source)!.wordsMatched).toBe(15 + 8);
    expect(percentage(23, 40)).toBe(57.5);
    expect(percentage(1, 3)).toBe(33.33);
    expect(percentage(3, 3)).toBe(100);
  });

  it('is linear on repetitive texts: the automaton has at most 2n states, and "a" x 50,000 against "a" x 500,000 finishes', () => {
    // Comparing alignments (n-gram hits verified per diagonal, then each run's words counted)
    // does about n * m = 2.5e10 steps here: far beyond the test timeout.
    const a = Array.from({ length: 50_000 }, () => 'a');
    const automaton = new WordAutomaton(a);
    expect(automaton.stateCount).toBe(a.length + 1);
    const source = Array.from({ length: 500_000 }, () => 'a');
    expect(sharedRuns(automaton, source)).toEqual({
      wordsMatched: 50_000,
      longest: { inputStart: 0, sourceStart: 0, length: 50_000 },
    });
    // A short phrase repeated, against the same phrase repeated with a break every 1,000 words.
    const phrase = 'to be or not to be that is'.split(' ');
    const input = Array.from({ length: 40_000 }, (_, i) => phrase[i % phrase.length]);
    const broken = Array.from({ length: 400_000 }, (_, i) =>
      i % 1000 === 999 ? `break${i}` : phrase[i % phrase.length],
    );
    const prepared = new WordAutomaton(input);
    expect(prepared.stateCount).toBeLessThanOrEqual(2 * input.length);
    const m = sharedRuns(prepared, broken)!;
    expect(m.wordsMatched).toBe(input.length);
    expect(m.longest).toEqual({ inputStart: 0, sourceStart: 0, length: 999 });
    // Through matchSource with the words of real text.
    const text = 'a '.repeat(50_000);
    const r = matchSource(splitWords(text), 'a '.repeat(200_000))!;
    expect(r.wordsMatched).toBe(50_000);
    expect(r.matchPercentage).toBe(100);
  });

  it('builds a snippet of the matched words alone by default, as written in the source', () => {
    const source = Array.from({ length: 100 }, (_, i) => `Word${i}${i % 10 === 0 ? ',' : ''}`).join('  ');
    const sourceWords = splitWords(source);
    const run = { inputStart: 0, sourceStart: 40, length: 12 };
    // White space collapsed; the words' punctuation kept; no word before or after the run, no ellipsis.
    const expected = Array.from({ length: 12 }, (_, i) => `Word${40 + i}${i % 10 === 0 ? ',' : ''}`).join(' ');
    expect(buildSnippet(source, sourceWords, run)).toBe(expected);
    expect(buildSnippet(source, sourceWords, run, 0)).toBe(expected);
    expect(matchSource(splitWords(`x y z ${expected} q r s`), source)!.matchSnippet).toBe(expected);
  });

  it('builds a snippet with configured context words either side and the matched words intact', () => {
    const source = Array.from({ length: 100 }, (_, i) => `Word${i}${i % 10 === 0 ? ',' : ''}`).join('  ');
    const sourceWords = splitWords(source);
    const snippet = buildSnippet(source, sourceWords, { inputStart: 0, sourceStart: 40, length: 12 }, 20);
    expect(snippet.startsWith('… Word20')).toBe(true);
    expect(snippet.endsWith('Word71 …')).toBe(true);
    expect(snippet).toContain(
      sourceWords
        .slice(40, 52)
        .map((w) => source.slice(w.start, w.end))
        .join(' '),
    );
    expect(countWords(snippet)).toBe(20 + 12 + 20);
    // At the edges there is nothing to elide.
    const edge = buildSnippet(source, sourceWords, { inputStart: 0, sourceStart: 0, length: 99 }, 20);
    expect(edge.startsWith('Word0,')).toBe(true);
    expect(edge.endsWith('Word99')).toBe(true);
  });

  it('matches through changed case and punctuation and reports words and percentage', () => {
    const src = 'The quick brown fox jumps over the lazy dog near the quiet river bank today, said nobody at all.';
    const input =
      'Intro words here: THE QUICK, brown fox -- jumps over the lazy dog; near the quiet river! More words follow here.';
    const inputWords = splitWords(input);
    const m = matchSource(inputWords, src);
    expect(m).not.toBeNull();
    // "the quick brown fox jumps over the lazy dog near the quiet river" = 13 words.
    expect(m!.wordsMatched).toBe(13);
    expect(m!.matchPercentage).toBe(percentage(13, inputWords.length));
    expect(m!.matchSnippet).toContain('The quick brown fox jumps over the lazy dog near the quiet river');
    expect(
      matchSource(splitWords('completely unrelated words that share nothing with the source at all ok'), src),
    ).toBeNull();
  });

  it('works on a 100,000-character input', () => {
    const vocab = Array.from({ length: 3000 }, (_, i) => `t${(i * 2654435761) % 100000}`);
    let seed = 7;
    const rnd = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % vocab.length;
    const parts: string[] = [];
    for (let len = 0; len < 99_000; len += parts[parts.length - 1].length + 1) parts.push(vocab[rnd()]);
    const src = Array.from({ length: 300 }, () => vocab[rnd()]);
    const copied = src.slice(100, 150);
    const input = [...parts.slice(0, 5000), ...copied, ...parts.slice(5000)].join(' ').slice(0, 100_000);
    expect(input.length).toBeLessThanOrEqual(100_000);
    const m = matchSource(splitWords(input), src.join(' '));
    expect(m).not.toBeNull();
    expect(m!.wordsMatched).toBeGreaterThanOrEqual(50);
  });

  it('orders matches by wordsMatched descending, then url', () => {
    const list = [
      { url: 'b', wordsMatched: 10 },
      { url: 'a', wordsMatched: 10 },
      { url: 'c', wordsMatched: 30 },
    ];
    expect(list.sort(compareMatches).map((m) => m.url)).toEqual(['c', 'a', 'b']);
  });
});
