/**
 * Text-score composition (core/scoring/composition/; docs/text-scores.md): every
 * rule per language on the real tokenizer and language data, the value transform, and the
 * scorer: "mean" is the documented plain mean (property), "rules" orders negated/boosted texts,
 * `explain` lists the contributing tokens.
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ensureLanguageData, languageFile } from '../../build/lang-data';
import {
  compileComposition,
  composeText,
  composedValue,
  FACTORS,
  scoreTexts,
  type ComposedItem,
  type ResolvedMapper,
} from '../../core/scoring';
import {
  composeForms,
  computeFormInfo,
  scoredByDefault,
  stopFlag,
  type CompiledComposition,
} from '../../core/scoring/composition';
import { C_PAIR_HEAD, C_PAIR_TAIL, SEEN_BANG, SEEN_BANG_WIDE } from '../../core/scoring/composition/bits';
import { pairEntry } from '../../core/scoring/composition/compile';
import { clauseAt, readGaps, seenIn, seenInText } from '../../core/scoring/composition/scan';
import {
  newFormTokens,
  parseLanguageData,
  scoringTokenizer,
  tokenize,
  type Language,
  type LanguageData,
} from '../../core/tokenizer';
import type { MapperBundleInfo, MapperValues } from '../../core/types';
import { modelFromVectors } from './support/model-fixture';

const data: Partial<Record<Language, LanguageData>> = {};
beforeAll(async () => {
  await ensureLanguageData();
  for (const l of ['en', 'de', 'fr', 'ja'] as const) data[l] = parseLanguageData(fs.readFileSync(languageFile(l)));
}, 600_000);

function compose(lang: Language, text: string): ComposedItem[] {
  const d = data[lang]!;
  // The scorer's tokens: with their lookup forms (a Japanese auxiliary is read like a stop word).
  return composeText(text, scoringTokenizer(d)(text), compileComposition(d.meta.composition));
}

/** The item of a word (by surface string, lower-cased). */
function item(items: ComposedItem[], s: string): ComposedItem {
  const it = items.find((x) => x.string.toLowerCase() === s);
  if (!it) throw new Error(`no item "${s}" in ${items.map((x) => x.string).join(' ')}`);
  return it;
}
const has = (items: ComposedItem[], s: string): boolean => items.some((x) => x.string.toLowerCase() === s);

describe('language data carries the composition lists', () => {
  it('every language has negators, boosters, contrast words, emoticons and emoji with sources', () => {
    for (const l of ['en', 'de', 'fr', 'ja'] as const) {
      const c = data[l]!.meta.composition!;
      expect(c.negators.length).toBeGreaterThan(5);
      expect(Object.keys(c.boosters).length).toBeGreaterThan(10);
      expect(c.contrast.length).toBeGreaterThan(0);
      expect(c.emoticons[':)']).toBeGreaterThan(0);
      expect(c.emoji['😡']).toBeLessThan(0);
      expect(data[l]!.meta.sources.some((s) => s.name === 'npm:sentiment')).toBe(true);
    }
  });
  it('negators and boosters stay stop words for lookup but are never scored as words', () => {
    const t = tokenize('It is not very good', data.en!, { synonyms: false }).tokens;
    expect(t.find((x) => x.string === 'not')!.isStop).toBe(true);
    const items = compose('en', 'It is not very good');
    expect(has(items, 'not')).toBe(false);
    expect(has(items, 'very')).toBe(false);
    expect(item(items, 'good').rules).toEqual(expect.arrayContaining(['negated', 'intensified']));
  });
});

describe('en rules', () => {
  it('negation flips the next scored tokens', () => {
    expect(item(compose('en', 'The movie was not good.'), 'good').negations).toBe(1);
    expect(item(compose('en', 'The movie was good.'), 'good').negations).toBe(0);
  });
  it("contractions negate: n't, dont, cannot", () => {
    expect(item(compose('en', "The movie wasn't good."), 'good').negations).toBe(1);
    expect(item(compose('en', 'I dont like it.'), 'like').negations).toBe(1);
    expect(item(compose('en', 'I cannot recommend it.'), 'recommend').negations).toBe(1);
  });
  it('the scope ends at a clause boundary', () => {
    const items = compose('en', 'The food was not good, the dessert was great.');
    expect(item(items, 'good').negations).toBe(1);
    expect(item(items, 'dessert').negations).toBe(0);
    expect(item(items, 'great').negations).toBe(0);
    expect(item(compose('en', 'Not good. Great dessert.'), 'great').negations).toBe(0);
  });
  it('the scope ends after three scored tokens', () => {
    const items = compose('en', 'not nice movie plot twist ending');
    expect(['nice', 'movie', 'plot'].map((w) => item(items, w).negations)).toEqual([1, 1, 1]);
    expect(item(items, 'twist').negations).toBe(0);
  });
  it('double negation negates twice (flip, flip: positive, damped)', () => {
    const it2 = item(compose('en', "I can't say it was not good."), 'good');
    expect(it2.negations).toBe(2);
    expect(composedValue(0.5, it2, 0, true)).toBeCloseTo(0.5 * 0.74 * 0.74, 10);
  });
  it('"not only ... but" is neither a negation nor a contrast', () => {
    const items = compose('en', 'It was not only good but great.');
    expect(item(items, 'good').negations).toBe(0);
    expect(item(items, 'good').weight).toBe(1);
    expect(item(items, 'great').weight).toBe(1);
  });
  it('boosters and dampeners (one and two words) scale the distance from neutral', () => {
    expect(item(compose('en', 'very good'), 'good').scale).toBeCloseTo(FACTORS.booster, 10);
    expect(item(compose('en', 'slightly good'), 'good').scale).toBeCloseTo(FACTORS.dampener, 10);
    expect(item(compose('en', 'kind of good'), 'good').rules).toContain('downtoned');
    expect(has(compose('en', 'kind of good'), 'kind')).toBe(false);
    expect(FACTORS.booster).toBeCloseTo(1 + 0.293 / 1.544, 10);
  });
  it('a lengthened booster or negator acts as the word ("sooo good", "nooot good"), so does one in a hashtag (#NotHappy)', () => {
    expect(item(compose('en', 'sooo good'), 'good').scale).toBeCloseTo(FACTORS.booster, 10);
    expect(has(compose('en', 'sooo good'), 'sooo')).toBe(false);
    expect(item(compose('en', 'nooot good'), 'good').negations).toBe(1);
    expect(item(compose('en', 'I am #NotHappy'), 'happy').negations).toBe(1);
  });

  it('contrast weights the sentence before "but" 0.5 and after it 1.5', () => {
    const items = compose('en', 'The food was bad but the service was great. Nice place.');
    expect(item(items, 'bad').weight).toBe(0.5);
    expect(item(items, 'great').weight).toBe(1.5);
    expect(item(items, 'nice').weight).toBe(1);
  });
  it('all caps amplify only in mixed-case text', () => {
    expect(item(compose('en', 'The food was GOOD'), 'good').rules).toContain('caps');
    expect(item(compose('en', 'THE FOOD WAS GOOD'), 'good').rules).not.toContain('caps');
  });
  it('exclamation marks amplify their sentence (at most 4)', () => {
    expect(item(compose('en', 'Good!!'), 'good').scale).toBeCloseTo(1 + 2 * FACTORS.exclamation, 10);
    expect(item(compose('en', 'Good!!!!!!'), 'good').scale).toBeCloseTo(1 + 4 * FACTORS.exclamation, 10);
    expect(item(compose('en', 'Good!! Bad.'), 'bad').scale).toBe(1);
  });
  it('emoticons and emoji become items with their lexicon valence', () => {
    const items = compose('en', 'Nice phone :) 😡 :D');
    const sym = items.filter((x) => x.tokenIndex < 0);
    expect(sym.map((x) => x.string)).toEqual([':)', '😡', ':D']);
    expect(sym[0].valence).toBeGreaterThan(0);
    expect(sym[1].valence).toBeLessThan(0);
    expect(
      has(
        items.filter((x) => x.tokenIndex >= 0),
        'd',
      ),
    ).toBe(false);
    // Emoticons with letters, and at a sentence's end; a word with a mark is no emoticon, nor is
    // an emoticon stuck to a word (VADER reads whitespace-separated chunks).
    const more = compose('en', 'fun x-d and great:) but a well-made :-/. movie');
    expect(more.filter((x) => x.tokenIndex < 0).map((x) => x.string)).toEqual(['x-d', ':-/']);
    expect(has(more, 'well-made')).toBe(true);
  });
});

describe('de rules', () => {
  it('nicht and kein negate forward; a clause-final nicht looks back', () => {
    expect(item(compose('de', 'Der Film war nicht gut.'), 'gut').negations).toBe(1);
    expect(item(compose('de', 'Es war kein gutes Essen.'), 'gutes').negations).toBe(1);
    expect(item(compose('de', 'Ich mag den Film nicht.'), 'mag').negations).toBe(1);
    expect(item(compose('de', 'Das Essen war gut.'), 'gut').negations).toBe(0);
  });
  it('the scope ends at the comma; double negation counts twice', () => {
    const items = compose('de', 'Das Essen war nicht gut, der Nachtisch war toll.');
    expect(item(items, 'toll').negations).toBe(0);
    expect(item(compose('de', 'Es ist nicht so, dass es nicht gut ist.'), 'gut').negations).toBe(1);
    expect(item(compose('de', 'Niemand sagt nicht gut'), 'gut').negations).toBe(2);
  });
  it('"nicht nur ... sondern" is neither a negation nor a contrast', () => {
    const items = compose('de', 'Der Film war nicht nur gut, sondern toll.');
    expect(item(items, 'gut').negations).toBe(0);
    expect(item(items, 'gut').weight).toBe(1);
  });
  it('boosters, dampeners, contrast, caps, exclamation, emoji', () => {
    expect(item(compose('de', 'sehr gut'), 'gut').rules).toContain('intensified');
    expect(item(compose('de', 'ein bisschen langweilig'), 'langweilig').rules).toContain('downtoned');
    const c = compose('de', 'Das Essen war schlecht, aber der Service war toll.');
    expect(item(c, 'schlecht').weight).toBe(0.5);
    expect(item(c, 'toll').weight).toBe(1.5);
    expect(item(compose('de', 'Das Essen war GUT'), 'gut').rules).toContain('caps');
    expect(item(compose('de', 'Toller Service!'), 'toller').rules).toContain('exclamation');
    expect(compose('de', 'Die Pizza 😍').some((x) => x.rules.includes('emoji'))).toBe(true);
  });
  it('a booster with nothing to boost is scored as a word ("Das war super.")', () => {
    expect(has(compose('de', 'Das war super.'), 'super')).toBe(true);
    expect(has(compose('de', 'Das war super Essen.'), 'super')).toBe(false);
  });
});

describe('fr rules', () => {
  it('ne ... pas is one negation (negative concord), pas alone negates too', () => {
    expect(item(compose('fr', "Le film n'était pas bon."), 'bon').negations).toBe(1);
    expect(item(compose('fr', "Je n'ai jamais rien vu de bon."), 'bon').negations).toBe(1);
    expect(item(compose('fr', "C'est pas mauvais."), 'mauvais').negations).toBe(1);
  });
  it('plus negates only after ne; ne ... que restricts without negating; sans negates', () => {
    expect(item(compose('fr', 'Je ne le trouve plus ennuyeux.'), 'ennuyeux').negations).toBe(1);
    expect(item(compose('fr', 'Il est plus ennuyeux.'), 'ennuyeux').negations).toBe(0);
    expect(item(compose('fr', 'Sans intérêt.'), 'intérêt').negations).toBe(1);
  });
  it('the scope ends at the comma; non seulement ... mais is no contrast', () => {
    expect(item(compose('fr', "Ce n'est pas bon, c'est excellent."), 'excellent').negations).toBe(0);
    expect(item(compose('fr', 'Le film était non seulement bon mais excellent.'), 'excellent').weight).toBe(1);
  });
  it('boosters, dampeners, contrast, emoticons', () => {
    expect(item(compose('fr', 'très bon'), 'bon').rules).toContain('intensified');
    expect(item(compose('fr', 'un peu sale'), 'sale').rules).toContain('downtoned');
    const c = compose('fr', 'La nourriture était mauvaise, mais le service était excellent.');
    expect(item(c, 'mauvaise').weight).toBe(0.5);
    expect(item(c, 'excellent').weight).toBe(1.5);
    expect(compose('fr', 'Joli téléphone :(').find((x) => x.string === ':(')!.valence).toBeLessThan(0);
  });
});

describe('ja rules', () => {
  it('negative auxiliaries negate the predicate before them', () => {
    expect(item(compose('ja', 'この映画は良くない。'), '良く').negations).toBe(1);
    expect(item(compose('ja', '面白くなかった。'), '面白く').negations).toBe(1);
    expect(item(compose('ja', 'この映画は良い。'), '良い').negations).toBe(0);
  });
  it('ませ|ん is one negation; the scope stops at the clause boundary', () => {
    expect(item(compose('ja', '美味しくありません。'), '美味しく').negations).toBe(1);
    expect(item(compose('ja', '料理は良い。悪くない。'), '良い').negations).toBe(0);
  });
  it('boosters, dampeners, contrast (しかし), exclamation, emoji', () => {
    expect(item(compose('ja', 'かなり良い。'), '良い').rules).toContain('intensified');
    expect(item(compose('ja', 'ちょっと悪い。'), '悪い').rules).toContain('downtoned');
    const c = compose('ja', '料理は悪いしかしサービスは良い。');
    expect(item(c, '悪い').weight).toBe(0.5);
    expect(item(c, '良い').weight).toBe(1.5);
    expect(item(compose('ja', '最高です！'), '最高').rules).toContain('exclamation');
    expect(compose('ja', 'ピザ😍').some((x) => x.rules.includes('emoji'))).toBe(true);
  });
});

describe('event-driven traversal', () => {
  // Content words per language, with sentiment and without.
  const WORDS: Record<Language, string[]> = {
    en: ['good', 'bad', 'movie', 'great', 'terrible', 'happy', 'plot', 'love', 'boring', 'food'],
    de: ['gut', 'schlecht', 'Film', 'toll', 'schrecklich', 'Essen', 'liebe', 'langweilig', 'mag', 'Haus'],
    fr: ['bon', 'mauvais', 'film', 'génial', 'horrible', 'repas', 'aime', 'ennuyeux', 'belle', 'maison'],
    ja: ['映画', '良い', '悪い', '楽しかっ', '嫌い', '美味しい', '普通', '問題', 'です', 'た'],
  };
  const PUNCT = ['.', ',', '!', '!!!', '?', ';', ':', ' - ', '…', '。', '、', '！', '\n', '"', '(', ')'];
  // Between pieces: mostly a space, sometimes nothing ("good,bad", "great!"), a tab, NBSP or two spaces.
  const JOINS = [' ', ' ', ' ', '', '\t', '\u00a0', '  '];

  /**
   * The lean path's view of a text (composeForms over the tokenizer's forms, prepared as
   * core/scoring/batch.ts prepares them) as composeText's items: must equal composeText's.
   */
  function leanItems(lang: Language, text: string, rules: CompiledComposition): unknown {
    const ft = scoringTokenizer(data[lang]!).forms(text, newFormTokens());
    let summary = 0;
    for (let k = 0; k < ft.count; k++) {
      const f = ft.forms[k];
      const info = computeFormInfo(rules, f);
      f.compositionInfo = info;
      f.compositionClasses = info.cls;
      f.compositionFlags = info.flags | stopFlag(f.isStop);
      f.composedBy = rules;
      summary |= info.summary;
    }
    const r = composeForms(text, ft.count, summary, ft.forms, ft.starts, ft.ends, rules);
    const out: Array<[number, number, number, number]> = [];
    for (let k = 0; k < ft.count; k++) {
      if (r === null ? scoredByDefault(ft.forms[k]) : r.scratch.kind[k] === 0)
        out.push(r === null ? [k, 0, 1, 1] : [k, r.scratch.negations[k], r.scratch.scale[k], r.scratch.weight[k]]);
    }
    return { tokens: out, symbols: r === null ? [] : r.symbols.map((x) => [x.string, x.indexStart, x.weight]) };
  }

  /**
   * The shortcuts the rules take must not change what they read. The rules visit only the tokens of
   * the lists (a token of no list matches no rule: rules.ts markFunctionWords) and jump between
   * negators while no scope is open (no token between them can change: applyNegation). What they
   * read lazily must equal a full read of the text:
   * - what the text holds (seenInText from the tokens' summaries and the non-plain gaps) is what a
   *   scan of every character finds;
   * - a clause break before a token read from its gap (clauseAt) is the one readGaps finds when it
   *   reads every gap;
   * - a phrase head is looked up with its next token only when that token can end a phrase or the
   *   head holds a space: no other pair is a phrase.
   */
  function checkShortcuts(lang: Language, text: string, rules: CompiledComposition): void {
    const tokens = scoringTokenizer(data[lang]!)(text);
    const n = tokens.length;
    const starts = Int32Array.from(tokens, (t) => t.indexStart);
    const ends = Int32Array.from(tokens, (t) => t.indexEnd);
    const infos = tokens.map((t) => computeFormInfo(rules, t));
    const summary = infos.reduce((acc, f) => acc | f.summary, 0);
    let whole = seenIn(rules, text, 0, text.length);
    if (whole & SEEN_BANG_WIDE) whole = (whole & ~SEEN_BANG_WIDE) | (text.includes('\uff01') ? SEEN_BANG : 0);
    expect(seenInText(rules, text, n, starts, ends, summary)).toBe(whole);
    const clauseBefore = new Uint8Array(n + 1);
    readGaps(text, n, starts, ends, clauseBefore, new Int32Array(n + 1));
    for (let j = 1; j < n; j++)
      expect(clauseAt(text, starts, ends, clauseBefore, false, j), `break before token ${j}`).toBe(
        clauseBefore[j] === 1,
      );
    for (let i = 0; i + 1 < n; i++) {
      if (!(infos[i].cls & C_PAIR_HEAD) || infos[i + 1].cls & C_PAIR_TAIL || infos[i].spaced) continue;
      expect(pairEntry(rules, infos[i], infos[i + 1]), `phrase ${tokens[i].string} ${tokens[i + 1].string}`).toBe(null);
    }
  }

  // The composition visits only the list words and the tokens near them and reads a gap only when
  // a rule asks; a full read must find the same (checkShortcuts), and the lean path the same items.
  for (const lang of ['en', 'de', 'fr', 'ja'] as const) {
    it(`${lang}: the shortcuts read what a full read does, on random texts of list words, words, punctuation and symbols`, () => {
      const c = data[lang]!.meta.composition!;
      const pieces = [
        ...c.negators,
        ...(c.negationNeedsOpener ?? []),
        ...(c.negationOpeners ?? []),
        ...c.notNegating,
        ...Object.keys(c.boosters),
        ...c.contrast,
        ...c.polarStopWords,
        ...WORDS[lang],
        ...WORDS[lang],
        ...PUNCT,
        // Every seventh emoticon (some hold letters: "x-d", "o.O", "j/k") and emoji, alone and
        // stuck to a word ("good:)").
        ...Object.keys(c.emoticons).filter((_, k) => k % 7 === 0),
        ...Object.keys(c.emoticons)
          .filter((_, k) => k % 11 === 0)
          .map((e, k) => WORDS[lang][k % WORDS[lang].length] + e),
        ...Object.keys(c.emoji).slice(0, 10),
      ];
      const rules = compileComposition(c);
      const piece = fc.tuple(fc.constantFrom(...pieces), fc.integer({ min: 0, max: 3 }), fc.constantFrom(...JOINS));
      let composed = 0;
      fc.assert(
        fc.property(fc.array(piece, { minLength: 1, maxLength: 14 }), (parts) => {
          const text = parts
            .map(
              ([p, k, join], j) =>
                (j > 0 ? (lang === 'ja' && join === ' ' ? '' : join) : '') + (k === 0 ? p.toUpperCase() : p),
            )
            .join('');
          const items = compose(lang, text);
          checkShortcuts(lang, text, rules);
          // The lean path (forms) gives the same scored tokens, emphasis, weights and symbols.
          expect(leanItems(lang, text, rules)).toEqual({
            tokens: items.filter((x) => x.tokenIndex >= 0).map((x) => [x.tokenIndex, x.negations, x.scale, x.weight]),
            symbols: items.filter((x) => x.tokenIndex < 0).map((x) => [x.string, x.indexStart, x.weight]),
          });
          if (items.some((x) => x.rules.length > 0)) composed++;
        }),
        { numRuns: 1500, seed: 13 },
      );
      // The texts do exercise the rules.
      expect(composed).toBeGreaterThan(500);
    });
  }
});

describe('value transform', () => {
  const base: ComposedItem = {
    tokenIndex: 0,
    string: 'x',
    token: 'x',
    indexStart: 0,
    indexEnd: 1,
    negations: 1,
    scale: 1,
    weight: 1,
    rules: [],
  };
  it('bipolar: flip and damp by N_SCALAR around the neutral point; unipolar: damp by 1 + N_SCALAR', () => {
    expect(composedValue(0.5, base, 0, true)).toBeCloseTo(-0.37, 10);
    expect(composedValue(0.5, base, 0, false)).toBeCloseTo(0.13, 10);
    expect(composedValue(0.8, base, 0.5, true)).toBeCloseTo(0.5 - 0.74 * 0.3, 10);
    expect(composedValue(0.8, { ...base, negations: 0, scale: 2 }, 0.5, true)).toBeCloseTo(1.1, 10);
  });
});

// ------------------------------------------------------------------------------------------------
// Scorer on a small model: vocabulary words with random vectors, a hand-set bipolar mapper.

const WORDS = [
  'good',
  'bad',
  'great',
  'movie',
  'food',
  'nice',
  'awful',
  'phone',
  'plot',
  'music',
  'not',
  'very',
  'the',
  'was',
  'but',
  'it',
];
const VALUES: Record<string, number> = {
  good: 0.5,
  bad: -0.6,
  great: 0.8,
  nice: 0.4,
  awful: -0.8,
  movie: 0.05,
  food: -0.02,
  phone: 0.01,
  plot: -0.03,
  music: 0.1,
};
const DIMS = 8;

function fixture() {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648) * 2 - 1;
  const vectors = Float32Array.from({ length: WORDS.length * DIMS }, rand);
  const { model } = modelFromVectors(WORDS, vectors, DIMS);
  const info = {
    key: 'test',
    variables: ['valence'],
    scales: { valence: { min: -1, max: 1, description: '' } },
  } as unknown as MapperBundleInfo;
  const values: MapperValues = {
    info,
    value: (_v, row) => VALUES[model.word(row)] ?? NaN,
    isLexiconRow: (row) => ['good', 'bad', 'great'].includes(model.word(row)),
  };
  const mappers: ResolvedMapper[] = [{ id: 'test_valence', variable: 'valence', values }];
  return { model, mappers };
}

describe('scoreTexts with composition', () => {
  const { model, mappers } = fixture();
  const run = (texts: string[], extra: Record<string, unknown> = {}) =>
    scoreTexts(
      {
        texts,
        embeddingModelId: 'm',
        mapperKeys: ['test_valence'],
        dimensions: [
          { id: 1, type: 'manual', words: ['good'] },
          { id: 2, type: 'axis', words: ['good'], oppositeWords: ['bad'] },
        ],
        ...extra,
      },
      {
        index: model,
        tokenize: (t) => tokenize(t, data.en!, { synonyms: false }).tokens,
        mappers,
        storedDimensions: new Map(),
        stats: new Map(),
        composition: data.en!.meta.composition,
      },
    ).response.data;

  it('"mean" is the plain mean over in-vocabulary non-stop tokens (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...WORDS, 'unknownword', '!', ',', ':)'), { minLength: 0, maxLength: 12 }),
        (words) => {
          const text = words.join(' ');
          const [d] = run([text], { composition: 'mean' });
          const toks = tokenize(text, data.en!, { synonyms: false }).tokens.filter(
            (t) => !t.isStop && model.rowOf(t.token) >= 0,
          );
          const vals = toks.map((t) => VALUES[t.token]).filter((v) => v !== undefined);
          if (vals.length === 0) expect(d.mapperScores.test_valence).toBeUndefined();
          else expect(d.mapperScores.test_valence).toBeCloseTo(vals.reduce((s, v) => s + v, 0) / vals.length, 6);
          const cos = model.scores(
            model.centroid([model.rowOf('good')])!,
            toks.map((t) => model.rowOf(t.token)),
          );
          if (toks.length > 0)
            expect(d.dimensionScores['1']).toBeCloseTo(cos.reduce((s, v) => s + v, 0) / cos.length, 5);
          // explain does not change the scores
          const [e] = run([text], { composition: 'mean', explain: true });
          expect(e.mapperScores).toEqual(d.mapperScores);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('"rules" is the default and orders negated, boosted and contrasted texts', () => {
    const [good, notGood, veryGood, notBad, bad] = run([
      'good movie',
      'not good movie',
      'very good movie',
      'not bad',
      'bad',
    ]).map((d) => d.mapperScores.test_valence);
    expect(good).toBeGreaterThan(notGood);
    expect(veryGood).toBeGreaterThan(good);
    expect(notBad).toBeGreaterThan(bad);
    expect(notGood).toBeCloseTo((0.5 * -0.74 + 0.05 * -0.74) / 2, 6);
    const [a, b] = run(['awful plot but great music', 'great music but awful plot']).map(
      (d) => d.mapperScores.test_valence,
    );
    expect(a).toBeGreaterThan(b);
  });

  it('negation damps a unipolar dimension and flips an axis dimension', () => {
    const [pos, neg] = run(['good', 'not good']);
    expect(neg.dimensionScores['1']).toBeCloseTo(pos.dimensionScores['1'] * 0.26, 5);
    expect(neg.dimensionScores['2']).toBeCloseTo(pos.dimensionScores['2'] * -0.74, 5);
  });

  it('emoticons count on bipolar mappers, not on dimensions', () => {
    const [d] = run([':)']);
    expect(d.mapperScores.test_valence).toBeGreaterThan(0);
    expect(d.dimensionScores['1']).toBeUndefined();
  });

  it('explain lists at most 10 tokens per factor by |weight x (value - neutral)| with offsets and rules', () => {
    const text = 'The movie was not good but the music was great :) and nice nice nice nice nice nice nice nice';
    const [d] = run([text], { explain: true });
    const m = d.explanation!.mappers.test_valence.tokens;
    expect(m.length).toBe(10);
    for (const t of m) expect(text.slice(t.indexStart, t.indexEnd)).toBe(t.string);
    const keys = m.map((t) => Math.abs(t.weight * t.value));
    expect([...keys].sort((x, y) => y - x)).toEqual(keys);
    expect(m[0]).toMatchObject({ string: 'great', weight: 1.5, rules: ['contrast', 'lexicon'] });
    const good = run([text.replace(' and nice nice nice nice nice nice nice nice', '')], {
      explain: true,
    })[0].explanation!.mappers.test_valence.tokens.find((t) => t.string === 'good')!;
    expect(good.rules).toEqual(['negated', 'contrast', 'lexicon']);
    expect(good.value).toBeCloseTo(0.5 * -0.74, 6);
    expect(Object.keys(d.explanation!.dimensions)).toEqual(['1', '2']);
    expect(run([text])[0].explanation).toBeUndefined();
  });
});
