/**
 * Vocabulary quality on the real models and language data (issue "Word lists people can use",
 * docs/vocabulary.md): every example of the issue, with the exact junk tokens it listed, on
 * en-glove-6b-100d (the model the issue measured, still served unchanged, and the one whose cosines
 * filter the English synonyms); the default model's find-and-score passes the same junk lists and
 * filter rules (last block).
 */
import fs from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadDefaultModel, loadModelFile } from '../../build/load-model';
import { GLOVE_MODEL_FILE } from '../../build/glove-model';
import { languageFile } from '../../build/lang-data';
import type { EmbeddingModel } from '../../core/model';
import { autocomplete, candidateFilter, findCandidates, scoreWords, seedCentroid, seedSet } from '../../core/scoring';
import { parseLanguageData, SUPPORTED_LANGUAGES, tokenize, type LanguageData } from '../../core/tokenizer';
import { FLAG } from '../../core/tokenizer/data';
import { passesQualityFilter, POS_MASK, qualityFilter, VOCAB_FLAG } from '../../core/vocab-quality';

let model: EmbeddingModel;
const langs = new Map<string, LanguageData>();

beforeAll(() => {
  model = loadModelFile(GLOVE_MODEL_FILE);
  for (const l of SUPPORTED_LANGUAGES)
    langs.set(l, parseLanguageData(new Uint8Array(fs.readFileSync(languageFile(l)))));
});

function top(seedWords: string[], extra: Record<string, unknown> = {}, limit = 20): string[] {
  return scoreWords(
    { seedWords, embeddingModelId: model.manifest.id, limit, ...extra },
    { index: model, mappers: [], storedDimensions: new Map() },
  ).data.map((d) => d.word);
}

const JUNK: Array<[string, string[]]> = [
  ['bitcoin', ['gift-giving', 'stickam', 'aleatory', 'supermontage', 'llvm', 'cytotec', 'nuvaring', 'xmodem']],
  ['umami', ['concreteness', 'cuteness']],
  ['eco', ['fea', 'ni', 'hi', 'mex', 'apec', 'tni', 'mrap']],
  ['happy', ['we', 'you', 'know', 'think']],
];

describe('find-and-score: the default quality filter', () => {
  for (const [seed, tokens] of JUNK) {
    it(`${seed}: none of ${tokens.join(', ')} in the top 20`, () => {
      const got = top([seed]);
      expect(got).toHaveLength(20);
      for (const t of tokens) expect(got, `${seed} -> ${t}`).not.toContain(t);
    });
  }

  it('eco with wordrankLimit 20000 has none of the junk either', () => {
    const got = top(['eco'], { wordrankLimit: 20000 });
    for (const t of ['fea', 'ni', 'hi', 'mex', 'apec', 'tni', 'mrap']) expect(got).not.toContain(t);
  });

  it('common seeds keep their good neighbours (coffee -> tea, espresso; berlin -> munich, vienna)', () => {
    expect(top(['coffee'])).toEqual(expect.arrayContaining(['tea', 'espresso']));
    expect(top(['berlin'])).toEqual(expect.arrayContaining(['munich', 'vienna']));
  });

  it('every default candidate is a dictionary word within the 50,000 most frequent, no stop word or pronoun', () => {
    for (const seed of ['happy', 'coffee', 'eco', 'bitcoin']) {
      for (const d of scoreWords(
        { seedWords: [seed], embeddingModelId: 'x', limit: 100 },
        { index: model, mappers: [], storedDimensions: new Map() },
      ).data) {
        const f = model.flags(d.modelRank - 1);
        expect(d.modelRank).toBeLessThanOrEqual(50_000);
        expect(f & VOCAB_FLAG.DICTIONARY, d.word).toBeTruthy();
        expect(f & (VOCAB_FLAG.STOP | VOCAB_FLAG.FUNCTION), d.word).toBe(0);
      }
    }
  });

  it('wordrankLimit -1 keeps the old candidates minus stop words and pronouns', () => {
    const wide = top(['eco'], { wordrankLimit: -1 }, 50);
    expect(wide).toEqual(expect.arrayContaining(['fea', 'mex', 'apec']));
    for (const w of wide) expect(model.flags(model.rowOf(w)) & (VOCAB_FLAG.STOP | VOCAB_FLAG.FUNCTION), w).toBe(0);
    expect(top(['happy'], { wordrankLimit: -1 }, 50)).not.toEqual(expect.arrayContaining(['we']));
  });

  it('excludeAntonyms drops WordNet antonyms: organic -> inorganic; cozy -> uneasy (its adjective cluster)', () => {
    expect(top(['organic'])).toContain('inorganic');
    expect(top(['organic'], { excludeAntonyms: true })).not.toContain('inorganic');
    expect(model.antonyms(model.rowOf('organic'))).toContain(model.rowOf('inorganic'));
    // cozy ~ comfortable <-> uncomfortable ~ uneasy: an indirect (cluster) antonym.
    expect(top(['cozy'])).toContain('uneasy');
    expect(top(['cozy'], { excludeAntonyms: true })).not.toContain('uneasy');
  });

  it('excludeAntonyms: cozy without cramped and dingy (antonym pairs among its nearest words), keeping its own side', () => {
    const plain = top(['cozy']);
    expect(plain).toEqual(expect.arrayContaining(['cramped', 'dingy', 'spacious', 'comfy', 'snug']));
    const got = top(['cozy'], { excludeAntonyms: true });
    expect(got).toHaveLength(20);
    for (const w of ['cramped', 'dingy']) expect(got).not.toContain(w);
    // The other member of each pair, and the seed's synonyms, stay.
    expect(got).toEqual(expect.arrayContaining(['spacious', 'comfy', 'snug']));
    // Neither is a WordNet antonym of cozy itself: the pairs are spacious <-> cramped, cheerful <-> dingy.
    const cozyAnts = model.antonyms(model.rowOf('cozy'));
    for (const w of ['cramped', 'dingy']) expect(cozyAnts).not.toContain(model.rowOf(w));
    expect(model.antonyms(model.rowOf('spacious'))).toContain(model.rowOf('cramped'));
    expect(model.antonyms(model.rowOf('cheerful'))).toContain(model.rowOf('dingy'));
    // Polarity flags decide the dingy pair (cozy +, cheerful +, dingy -).
    expect(model.flags(model.rowOf('cozy')) & VOCAB_FLAG.POSITIVE).toBeTruthy();
    expect(model.flags(model.rowOf('dingy')) & VOCAB_FLAG.NEGATIVE).toBeTruthy();
  });

  it('excludeAntonyms: happy loses sad and sorry (glad <-> sad, glad <-> sorry), keeps glad; antonyms of derivational relatives are linked', () => {
    const got = top(['happy'], { excludeAntonyms: true }, 40);
    expect(got).toContain('glad');
    for (const w of ['sad', 'sorry']) expect(got).not.toContain(w);
    // happy ~ happiness <-> unhappiness (WordNet "+" then "!").
    expect(model.antonyms(model.rowOf('happy'))).toContain(model.rowOf('unhappiness'));
  });

  it('excludeAntonyms leaves seeds without antonym links or polarity alone (bitcoin)', () => {
    expect(top(['bitcoin'], { excludeAntonyms: true })).toEqual(top(['bitcoin']));
  });

  it('findCandidates and qualityFilter are usable on their own (seed expansion)', () => {
    const seeds = seedSet(model, ['coffee', 'tea']);
    const filter = candidateFilter(model, {
      cutoff: 50_000,
      excludedRows: new Set(seeds.rows),
      seedPos: model.flags(seeds.rows[0]!) & POS_MASK,
    });
    const rows = findCandidates(model, seedCentroid(model, seeds)!, 10, filter, seeds.rows.length);
    expect(rows).toHaveLength(10);
    const accept = qualityFilter(model);
    for (const r of rows) expect(accept(r)).toBe(true);
    expect(passesQualityFilter(model, model.rowOf('the'))).toBe(false);
    expect(passesQualityFilter(model, model.rowOf('the'), { rankLimit: -1 })).toBe(false);
  });
});

describe('phrases as seeds and whitelist words', () => {
  it('"ice cream" returns neighbours, without its own words', () => {
    const got = top(['ice cream']);
    expect(got).toHaveLength(20);
    expect(got).not.toContain('ice');
    expect(got).not.toContain('cream');
    expect(got.some((w) => ['chocolate', 'vanilla', 'dessert', 'yogurt'].includes(w))).toBe(true);
    expect(top(['New York']).length).toBe(20);
  });

  it("a phrase vector is the re-normalized mean of its words' unit vectors; an unknown word makes it unknown", () => {
    const s = seedSet(model, ['ice cream', 'zzqxq cream']);
    expect(s.phrases).toHaveLength(1);
    const a = model.vector(model.rowOf('ice'));
    const b = model.vector(model.rowOf('cream'));
    const mean = a.map((x, i) => x + b[i]!);
    const n = Math.hypot(...mean);
    s.phrases[0]!.vector.forEach((x, i) => expect(x).toBeCloseTo(mean[i]! / n, 5));
    expect(top(['zzqxq cream'])).toEqual([]);
  });

  it('whitelist phrases are returned as written and scored by their vector', () => {
    const r = scoreWords(
      {
        seedWords: ['dessert'],
        whitelistWords: ['Ice Cream', 'ice  cream', 'New York', 'zzqxq york', 'cake'],
        embeddingModelId: 'x',
      },
      { index: model, mappers: [], storedDimensions: new Map() },
    );
    expect(r.data.map((d) => d.word)).toEqual(['Ice Cream', 'New York', 'cake']);
    expect(r.data[0]!.seedScore!).toBeGreaterThan(r.data[1]!.seedScore!);
    expect(r.data[0]!.modelRank).toBe(Math.max(model.rowOf('ice'), model.rowOf('cream')) + 1);
  });

  it('phrases work in dimensions words / oppositeWords', () => {
    const r = scoreWords(
      {
        seedWords: [],
        whitelistWords: ['sundae', 'skyscraper'],
        embeddingModelId: 'x',
        dimensions: [{ id: 1, type: 'axis', words: ['ice cream'], oppositeWords: ['New York'] }],
      },
      { index: model, mappers: [], storedDimensions: new Map() },
    );
    expect(r.data[0]!.dimensionScores['1']!).toBeGreaterThan(r.data[1]!.dimensionScores['1']!);
  });
});

describe('synonyms', () => {
  const en = () => langs.get('en')!;
  const syn = (text: string, l = 'en') =>
    tokenize(text, langs.get(l)!).tokens.map((t) => [t.string, t.synonyms] as const);

  it('none of the listed junk senses appear', () => {
    const junk: Array<[string, string[]]> = [
      ['I', ['iodine', 'atomic number 53']],
      ['He', ['helium']],
      ['was', ['beryllium']],
      ['is', ['beryllium']],
      ['are', ['beryllium']],
      ['a', ['angstrom', 'vitamin a']],
      ['it', ['information technology']],
      ['did', ['bash', 'brawl']],
      ['could', ['tin', 'dismiss']],
      ['can', ['tin', 'dismiss']],
      ['May', ['whitethorn']],
      ['fine', ['mulct', 'amercement']],
      ['us', ['united states']],
      ['no', ['nobelium']],
    ];
    for (const [word, bad] of junk) {
      for (const text of [word, `${word} is here.`, `They ${word}.`, `The ${word} was there.`]) {
        for (const [s, syns] of syn(text))
          if (s === word) for (const b of bad) expect(syns, `${text}: ${s}`).not.toContain(b);
      }
    }
  });

  it('"could" is a stop word like "can"; pronouns, auxiliaries and numbers have no synonyms', () => {
    const toks = tokenize('I could go, we can go, she might, 12 twelve cars', en()).tokens;
    const by = (s: string) => toks.find((t) => t.string === s)!;
    expect(by('could').isStop).toBe(true);
    expect(by('can').isStop).toBe(true);
    for (const s of ['I', 'could', 'we', 'can', 'she', 'might', '12', 'twelve']) expect(by(s).synonyms, s).toEqual([]);
    expect(by('cars').synonyms.length).toBeGreaterThan(0);
  });

  it('no synonym for any stop word in any language', () => {
    for (const l of SUPPORTED_LANGUAGES) {
      const data = langs.get(l)!;
      let stops = 0;
      for (let i = 0; i < data.keys.size; i++) {
        if (!(data.flagsOf(i) & FLAG.STOP)) continue;
        stops++;
        const word = data.keys.get(i);
        expect(data.synonymsOf(i), `${l}: ${word}`).toEqual([]);
        for (const t of tokenize(word, data).tokens) if (t.isStop) expect(t.synonyms, `${l}: ${word}`).toEqual([]);
      }
      expect(stops, l).toBeGreaterThan(20);
    }
  });

  it('synonyms of frequent content words pass the similarity filter in the default model', () => {
    let total = 0;
    for (const w of ['car', 'happy', 'big', 'buy', 'fast', 'house']) {
      const [[, syns]] = syn(w);
      total += syns.length;
      for (const s of syns) {
        const v = seedSet(model, [s]);
        const c = seedCentroid(model, v)!;
        expect(model.scores(c, [model.rowOf(w)])[0]!, `${w} ~ ${s}`).toBeGreaterThanOrEqual(0.35 - 0.01);
      }
    }
    expect(total).toBeGreaterThan(5);
  });
});

describe('autocomplete', () => {
  const ac = (word: string) => autocomplete(model, { word, embeddingModelId: 'x' }).suggestions;

  it('"Ber" starts with "Berlin"; the user\'s leading capital is kept, proper nouns capitalized', () => {
    expect(ac('Ber')[0]).toBe('Berlin');
    expect(ac('ber')[0]).toBe('Berlin');
    expect(ac('nas')).toContain('NASA');
  });

  it('junk is excluded and dictionary words come first ("x", "e-")', () => {
    expect(ac('x')).not.toContain('xfdws');
    const e = ac('e-');
    expect(e.slice(0, 2)).toEqual(['e-mail', 'e-commerce']);
    // A hyphenated entry is a word only when every part has a letter.
    expect(e).not.toContain('e-1');
    expect(e).not.toContain('e-sharif');
    expect(e).not.toContain('e-taiba');
  });

  it('"susta" has sustainable in the top 3; "sus" ranks it high: lemmas before their inflected forms', () => {
    expect(ac('susta').slice(0, 3)).toContain('sustainable');
    const sus = ac('sus');
    expect(sus.indexOf('sustainable')).toBeGreaterThanOrEqual(0);
    expect(sus.indexOf('sustainable')).toBeLessThan(3);
    for (const form of ['suspected', 'suspended', 'suspects']) expect(sus.slice(0, 5)).not.toContain(form);
    expect(sus.slice(0, 5)).toEqual(expect.arrayContaining(['suspect', 'suspend']));
  });

  it('an inflected form never comes before its shown lemma, yet a much more frequent form is not buried', () => {
    for (const [prefix, lemma, forms] of [
      ['plan', 'plan', ['plans', 'planned']],
      ['sus', 'suspect', ['suspected', 'suspects']],
      ['soldie', 'soldier', ['soldiers']],
      ['deliv', 'deliver', ['delivered', 'delivering']],
    ] as const) {
      const list = ac(prefix);
      expect(list, prefix).toContain(lemma);
      for (const form of forms) {
        expect(model.flags(model.rowOf(form)) & VOCAB_FLAG.INFLECTED, form).toBeTruthy();
        if (list.includes(form)) expect(list.indexOf(form), `${prefix}: ${form}`).toBeGreaterThan(list.indexOf(lemma));
      }
    }
    // soldiers (rank ~630) is far more frequent than soldiering, soldiery: second, after soldier.
    expect(ac('soldie').slice(0, 2)).toEqual(['soldier', 'soldiers']);
    expect(model.flags(model.rowOf('plans')) & VOCAB_FLAG.INFLECTED).toBeTruthy();
    // A noun in its own right is not a mere form ("planning").
    expect(model.flags(model.rowOf('planning')) & VOCAB_FLAG.INFLECTED).toBe(0);
    expect(ac('plann')).toEqual(expect.arrayContaining(['planning', 'planned']));
  });

  it('the typed word itself is in the top 3 when it is a suggestion; a capital puts proper nouns first', () => {
    expect(ac('inter').slice(0, 3)).toContain('inter');
    expect(ac('inter')[0]).toBe('international');
    expect(ac('plan')[0]).toBe('plan');
    const ber = ac('Ber');
    const proper = ber.map(
      (w) => (model.flags(model.rowOf(w.toLowerCase())) & (VOCAB_FLAG.PROPER | VOCAB_FLAG.ACRONYM)) !== 0,
    );
    expect(proper.slice(0, proper.indexOf(false) < 0 ? proper.length : proper.indexOf(false)).length).toBeGreaterThan(
      3,
    );
    if (proper.indexOf(false) >= 0) expect(proper.slice(proper.indexOf(false))).not.toContain(true);
    for (const w of ber) expect(w[0]).toBe('B');
  });

  it('diacritics are folded: "é" and "ü" find words, "cafe" and "café" find the same entries', () => {
    expect(ac('é').length).toBe(10);
    expect(ac('ü').length).toBe(10);
    expect(ac('café')).toEqual(ac('cafe'));
    expect(ac('cafe')[0]).toBe('cafe');
    const cafeAccent = model.rowOf('café');
    if (cafeAccent >= 0) expect(model.foldedPrefixRows('cafe')).toContain(cafeAccent);
  });
});

describe('find-and-score on the default model (en-distilled-glove-use-100d)', () => {
  let distilled: EmbeddingModel;
  beforeAll(() => {
    distilled = loadDefaultModel();
  });
  const near = (seedWords: string[], limit = 20): string[] =>
    scoreWords(
      { seedWords, embeddingModelId: distilled.manifest.id, limit },
      { index: distilled, mappers: [], storedDimensions: new Map() },
    ).data.map((d) => d.word);

  for (const [seed, tokens] of JUNK)
    it(`${seed}: none of ${tokens.join(', ')} in the top 20`, () => {
      const got = near([seed]);
      expect(got).toHaveLength(20);
      for (const t of tokens) expect(got, `${seed} -> ${t}`).not.toContain(t);
    });

  it('every default candidate is a dictionary word within the 50,000 most frequent, no stop word, pronoun or phrase', () => {
    for (const seed of ['happy', 'coffee', 'eco', 'bitcoin', 'hot dog']) {
      for (const d of scoreWords(
        { seedWords: [seed], embeddingModelId: 'x', limit: 100 },
        { index: distilled, mappers: [], storedDimensions: new Map() },
      ).data) {
        const f = distilled.flags(distilled.rowOf(d.word));
        expect(d.modelRank).toBeLessThanOrEqual(50_000);
        expect(f & VOCAB_FLAG.DICTIONARY, d.word).toBeTruthy();
        expect(f & (VOCAB_FLAG.STOP | VOCAB_FLAG.FUNCTION | VOCAB_FLAG.PHRASE), d.word).toBe(0);
      }
    }
  });

  it("the issue's example: trust, reliable -> trustworthy words", () => {
    const got = near(['trust', 'reliable'], 10);
    expect(
      got.filter((w) => ['trustworthy', 'dependable', 'honest', 'truthful', 'credible'].includes(w)).length,
    ).toBeGreaterThanOrEqual(2);
  });
});
