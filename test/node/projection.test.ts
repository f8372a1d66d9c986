/**
 * Dictionary projection (core/projection.ts) on a tiny fixture dictionary with exact expected
 * vectors, the dictionary parsers (build/dictionaries.ts), the German compound fallback, the
 * multilingual mapper application, and the metadata of the Debian-built aligned models (skipped
 * with one line when apt-get is unavailable and they were not built).
 */
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { writeArtifact } from '../../core/artifact';
import { parseMapperBundle, writeMapperBundle } from '../../core/mapper-bundle';
import { EmbeddingModel } from '../../core/model';
import {
  ArraySpace,
  COMPOUND_FEATURE,
  compoundHeadRow,
  contentWords,
  orderProjected,
  projectWord,
  englishCompanionOf,
  LEGACY_ENGLISH_MODEL_ID,
  vectorSpaceOf,
} from '../../core/projection';
import { quantizeRows } from '../../core/quantize';
import { VOCAB_FLAG } from '../../core/vocab-quality';
import type { MapperBundleInfo, ModelManifest } from '../../core/types';
import { translateWords } from '../../core/translation';
import { alignedManifestFile, builtAligned } from '../../build/aligned-models';
import { GLOVE_MODEL_ID } from '../../build/paths';
import {
  dictdNumber,
  dictdTranslations,
  parseDing,
  parseEdict,
  reverseDictionary,
  stripNotes,
} from '../../build/dictionaries';
import { applyToAligned } from '../../build/mapper/multilingual';
import { loadKernels } from '../../build/load-model';

// English fixture space: 4 words in rank order, unit vectors along axes / diagonals (dims 3).
const EN_WORDS = ['dog', 'house', 'hound', 'spear'];
const EN_VECS = new Float32Array([1, 0, 0, 0, 1, 0, Math.SQRT1_2, Math.SQRT1_2, 0, 0, 0, 1]);
const en = new ArraySpace(3, EN_WORDS, EN_VECS);
const N = 4;
const w = (rank: number): number => Math.log((N + 1) / rank);

function close(actual: Float32Array, expected: number[]): void {
  expect(actual.length).toBe(expected.length);
  actual.forEach((x, i) => expect(x).toBeCloseTo(expected[i]!, 6));
}

function normalize(v: number[]): number[] {
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

describe('projection on a fixture dictionary', () => {
  it('weights each translation by ln((N + 1) / rank) and normalizes the sum', () => {
    const p = projectWord('Hund', [
      { space: en, phrase: 'dog' },
      { space: en, phrase: 'hound' },
    ])!;
    // dog (rank 1) along x, hound (rank 3) on the x/y diagonal.
    const expected = normalize([w(1) + w(3) * Math.SQRT1_2, w(3) * Math.SQRT1_2, 0]);
    close(p.vector, expected);
    expect(p.rank).toBe(1); // the best English rank among its translations
  });

  it('uses phrases only without a single-word translation; a phrase is the normalized mean of its content words', () => {
    const withSingle = projectWord('Aalspieß', [
      { space: en, phrase: 'spear' },
      { space: en, phrase: 'dog spear' },
    ])!;
    close(withSingle.vector, [0, 0, 1]);
    const phraseOnly = projectWord('Hundespieß', [{ space: en, phrase: 'a dog spear' }])!;
    // content words dog + spear, mean normalized; rank of the rarer word (spear: 4).
    close(phraseOnly.vector, normalize([1, 0, 1]));
    expect(phraseOnly.rank).toBe(4);
    expect(projectWord('X', [{ space: en, phrase: 'dog' }], { phrases: false })).not.toBeNull();
    expect(projectWord('Y', [{ space: en, phrase: 'dog spear' }], { phrases: false })).toBeNull();
  });

  it('drops unknown translations, counts a repeated one once and returns null without any', () => {
    const a = projectWord('a', [
      { space: en, phrase: 'house' },
      { space: en, phrase: 'house' },
      { space: en, phrase: 'cat' },
    ])!;
    close(a.vector, [0, 1, 0]);
    expect(projectWord('b', [{ space: en, phrase: 'cat' }])).toBeNull();
    expect(projectWord('c', [])).toBeNull();
  });

  it('projects through a second space (French through German) with that space’s ranks', () => {
    const de = new ArraySpace(3, ['Hund', 'Haus'], new Float32Array([1, 0, 0, 0, 1, 0]));
    const p = projectWord('chien', [
      { space: de, phrase: 'Hund' },
      { space: en, phrase: 'house' },
    ])!;
    close(p.vector, normalize([Math.log(3 / 1), w(2), 0]));
  });

  it('senseOrder: a translation also weighs 1 / sqrt(its place in its own space’s list)', () => {
    const de = new ArraySpace(3, ['Hund', 'Haus'], new Float32Array([1, 0, 0, 0, 1, 0]));
    const list = [
      { space: en, phrase: 'spear' },
      { space: en, phrase: 'house' },
      { space: en, phrase: 'spear' }, // repeated: counts once and takes no place
      { space: en, phrase: 'cat' }, // not in the space: takes no place
      { space: en, phrase: 'dog' },
      { space: de, phrase: 'Haus' }, // first of the German list
    ];
    const p = projectWord('x', list, { senseOrder: true })!;
    close(p.vector, normalize([w(1) / Math.sqrt(3), w(2) / Math.sqrt(2) + Math.log(3 / 2), w(4)]));
    // Without it, the weights are the ranks' alone.
    close(projectWord('x', list)!.vector, normalize([w(1), w(2) + Math.log(3 / 2), w(4)]));
  });

  it('orders rows by rank, then priority, then word', () => {
    const mk = (word: string, rank: number) => ({ word, rank, vector: new Float32Array(3) });
    const ordered = orderProjected([mk('b', 2), mk('a', 2), mk('c', 1)]);
    expect(ordered.map((x) => x.word)).toEqual(['c', 'a', 'b']);
    const common = new Set(['b']);
    expect(orderProjected([mk('b', 9), mk('a', 1)], (x) => (common.has(x.word) ? 0 : 1)).map((x) => x.word)).toEqual([
      'b',
      'a',
    ]);
  });

  it('cleans translations: notes, "to", articles, sth./sb.', () => {
    expect(contentWords('to walk the dog')).toEqual(['walk', 'dog']);
    expect(contentWords("sth. sb.'s")).toEqual([]);
    expect(stripNotes('Zeitung {f} /Ztg./ [journ.] (Tages-)')).toBe('Zeitung');
  });
});

describe('dictionary parsers', () => {
  it('Ding: aligned | parts, ; synonyms, grammar words and notes stripped', () => {
    const d = parseDing(
      [
        '# comment :: ignored',
        'Aalspieß {m} | Aalspieße {pl} :: eel spear | eel spears',
        'sich freuen {vr} :: to be glad; to rejoice',
        'Zeitung {f} /Ztg./; Blatt {n} | Zeitungen {pl} | die morgige Zeitung :: newspaper; paper | newspapers',
      ].join('\n'),
    );
    expect(d.get('Aalspieß')).toEqual(['eel spear']);
    expect(d.get('Aalspieße')).toEqual(['eel spears']);
    expect(d.get('freuen')).toEqual(['to be glad', 'to rejoice']);
    // Part counts differ (3 vs 2): only the first parts are paired.
    expect(d.get('Zeitung')).toEqual(['newspaper', 'paper']);
    expect(d.get('Blatt')).toEqual(['newspaper', 'paper']);
    expect(d.has('Zeitungen')).toBe(false);
  });

  it('Ding mainEntriesFirst: the lines a word starts come before those where it is a later synonym', () => {
    const text = [
      'Code {m}; Kode {m}; Schlüssel {m} [comp.] :: code; cipher',
      'Schlüssel {m} (zu etw.) | Schlüssel {pl} :: key | keys',
      'dummes Zeug {n}; Käse {m} [Dt.] :: nonsense; baloney',
      'Käse {m} [cook.] :: cheese; code',
    ].join('\n');
    const main = parseDing(text, { mainEntriesFirst: true });
    expect(main.get('Schlüssel')).toEqual(['key', 'keys', 'code', 'cipher']);
    expect(main.get('Käse')).toEqual(['cheese', 'code', 'nonsense', 'baloney']);
    // By default, file order (as the models on GloVe were built).
    const plain = parseDing(text);
    expect(plain.get('Schlüssel')).toEqual(['code', 'cipher', 'key', 'keys']);
    expect(plain.get('Käse')).toEqual(['nonsense', 'baloney', 'cheese', 'code']);
  });

  it('dictd: base64 offsets, numbered senses, glosses skipped', () => {
    expect(dictdNumber('B')).toBe(1);
    expect(dictdNumber('BA')).toBe(64);
    const e = dictdTranslations('maison /mɛ.zɔ̃/ <n, fem>\n1. Haus 2.\nBâtiment servant de logis\n 3.\nMaisonnée\n');
    expect(e).toEqual({ headword: 'maison', phrases: ['Haus'] });
    expect(dictdTranslations('abyssin /x/\n1. abyssin\n2. Abyssin, Ethiopian\n').phrases).toEqual([
      'abyssin',
      'Abyssin',
      'Ethiopian',
    ]);
    expect(reverseDictionary(new Map([['house', ['maison', 'pomme de terre']]]))).toEqual(
      new Map([['maison', ['house']]]),
    );
  });

  it('EDICT: kanji and kana forms, notes stripped, (P) marks common entries', () => {
    const { dict, common } = parseEdict(
      '犬 [いぬ] /(n) (1) dog (Canis familiaris)/(2) snoop/(P)/\nリンス /(n,vs) (hair) rinse/\n',
    );
    expect(dict.get('犬')).toEqual(['dog', 'snoop']);
    expect(dict.get('いぬ')).toEqual(['dog', 'snoop']);
    expect(dict.get('リンス')).toEqual(['rinse']);
    expect([...common].sort()).toEqual(['いぬ', '犬']);
  });
});

/** A tiny German model with the compound fallback feature. */
function germanFixture(features: string[]): EmbeddingModel {
  const words = ['Spielplatz', 'Kinder', 'Haus', 'schön'];
  const vecs = new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 1, Math.SQRT1_2, Math.SQRT1_2, 0]);
  const { rows, scales } = quantizeRows(vecs, 4, 3);
  const manifest = {
    id: 'de-fixture',
    language: 'de',
    country: 'DE',
    version: '1',
    sources: [],
    features,
    tag: '',
    trainingYear: '',
    trainingMonth: '',
    labels: { label: '', languageLabel: '', countryLabel: '', monthLabel: '' },
    tokenCount: 0,
    hasTranslation: true,
    license: '',
  };
  return EmbeddingModel.fromArrayBuffer(writeArtifact({ manifest, words, rows, scales, dims: 3 }), loadKernels());
}

describe('German compound fallback', () => {
  it('an unknown compound takes its longest known head at lookup time', () => {
    const m = germanFixture([COMPOUND_FEATURE]);
    expect(m.rowOf('Kinderspielplatz')).toBe(0);
    expect(m.rowOf('kinderspielplatz')).toBe(0);
    expect(m.rowOf('Ferienhaus')).toBe(2);
    expect(m.rowOf('wunderschön')).toBe(3);
    expect(m.entryRow('Kinderspielplatz')).toBe(-1);
    // Heads shorter than 4 characters or modifiers shorter than 3 are not split off.
    expect(m.rowOf('Xyhaus')).toBe(-1);
    expect(m.rowOf('Xyzhaus')).toBe(2);
    expect(m.rowOf('Xyzaus')).toBe(-1);
  });

  it('is off for models without the feature, and bounded for long tokens', () => {
    expect(germanFixture([]).rowOf('Kinderspielplatz')).toBe(-1);
    expect(compoundHeadRow('x'.repeat(60) + 'haus', () => 1)).toBe(-1);
    expect(compoundHeadRow('Kinderspielplatz', (s) => (s === 'Spielplatz' ? 7 : s === 'Platz' ? 9 : -1))).toBe(7);
  });
});

describe('multilingual mapper bundle', () => {
  it('applies the English ridge weights to the aligned rows, clamped to the scale, and records the cross-lingual check', () => {
    const info = {
      key: 'sentiment',
      variables: ['valence'],
      translationKey: 'mappers.sentiment',
      label: 'Sentiment',
      language: 'en',
      country: 'US',
      multilingual: false,
      modelId: 'en-fixture',
      scales: { valence: { min: -1, max: 1, description: '' } },
      lexicon: { name: 'x', version: '1', license: 'MIT' },
      trainingWords: { valence: 2 },
      metrics: { valence: { pearsonR: 0.9, spearmanRho: 0.9 } },
      method: 'ensemble',
      linearModel: { method: 'ridge', metrics: { valence: { pearsonR: 0.8, spearmanRho: 0.8 } } },
      anchoring: { valence: { method: 'lexicon values; others shrunk' } },
    } as unknown as MapperBundleInfo;
    const english = writeMapperBundle(
      info,
      { valence: [0.5, -0.5] },
      { linear: { valence: { weights: Float32Array.from([2, -1, 0]), bias: 0.1 } } },
    );
    const words = ['gut', 'schlecht', 'neutral'];
    const vecs = new Float32Array([1, 0, 0, 0, 1, 0, 0, 0, 1]);
    const { rows, scales } = quantizeRows(vecs, 3, 3);
    const manifest = { id: 'de-fixture', language: 'de', checksum: 'murmur3:00000000' } as ModelManifest;
    const translations = new Map([
      ['gut', ['good']],
      ['schlecht', ['bad']],
    ]);
    const ratings = {
      valence: new Map([
        ['good', 0.8],
        ['bad', -0.7],
      ]),
    };
    const applied = applyToAligned(
      'en-fixture',
      english,
      { manifest, words, rows, scales, dims: 3 },
      {
        translations,
        ratings,
      },
    );
    const b = parseMapperBundle(applied.bytes, { id: 'de-fixture', vocabularySize: 3 });
    expect(b.info.multilingual).toBe(true);
    expect(b.info.language).toBeNull();
    expect(b.value('valence', 0)).toBeCloseTo(1, 3); // 2 + 0.1 clamped to 1
    expect(b.value('valence', 1)).toBeCloseTo(-0.9, 3);
    expect(b.value('valence', 2)).toBeCloseTo(0.1, 3);
    expect(b.info.metrics).toEqual(info.linearModel!.metrics);
    expect(applied.info.crossLingual!.words).toBe(2);
    // The aligned values are not anchored: the English anchoring record is not carried over.
    expect(b.info.anchoring).toBeUndefined();
    // The bundle says which English model's weights it applies (the aligned model's companion).
    expect((applied.info as { appliedFrom?: string }).appliedFrom).toMatch(/^en-fixture\/sentiment\b/);
  });
});

describe('the English companion of a model', () => {
  const aligned = ['dictionary-projected', 'aligned-en'];
  it('is the manifest englishModelId of an aligned model, GloVe for one built before the field, none for others', () => {
    expect(englishCompanionOf({ features: aligned, englishModelId: 'en-new' })).toBe('en-new');
    expect(englishCompanionOf({ features: aligned })).toBe(LEGACY_ENGLISH_MODEL_ID);
    expect(LEGACY_ENGLISH_MODEL_ID).toBe(GLOVE_MODEL_ID);
    // An English model, or any model not aligned, has none (an englishModelId alone does not make one).
    expect(englishCompanionOf({ features: ['glove'] })).toBeNull();
    expect(englishCompanionOf({ features: [], englishModelId: 'en-new' })).toBeNull();
  });
  it('gives the vector space two models must share to translate between them', () => {
    const deNew = { id: 'de-new', features: aligned, englishModelId: 'en-new' };
    const deOld = { id: 'de-old', features: aligned };
    expect(vectorSpaceOf(deNew)).toBe('en-new');
    expect(vectorSpaceOf({ id: 'en-new' })).toBe('en-new');
    expect(vectorSpaceOf(deOld)).toBe(GLOVE_MODEL_ID);
    expect(vectorSpaceOf(deOld)).not.toBe(vectorSpaceOf(deNew));
  });
});

describe('translation through the shared space', () => {
  it('returns the nearest target words, skipping the word itself and entries without a letter', () => {
    const m = germanFixture([]);
    const out = translateWords(m, m, ['Kinder', 'nope'], 2);
    expect(out[0]!.translations.map((t) => t.word)).toEqual(['schön', 'Spielplatz']);
    expect(out[1]).toEqual({ word: 'nope', isAvailable: false, translations: [] });
  });

  it('skips phrase rows of the target (a word translates to words)', () => {
    const words = ['dog', 'hot dog', 'cat'];
    const vecs = new Float32Array([1, 0, 0, 0.99, 0.141, 0, 0.8, 0.6, 0]);
    const { rows, scales } = quantizeRows(vecs, 3, 3);
    const flags = Uint16Array.from([VOCAB_FLAG.LETTER, VOCAB_FLAG.LETTER | VOCAB_FLAG.PHRASE, VOCAB_FLAG.LETTER]);
    const manifest = { ...germanFixture([]).manifest, id: 'en-fixture', language: 'en' };
    const en = EmbeddingModel.fromArrayBuffer(
      writeArtifact({ manifest, words, rows, scales, dims: 3, flags }),
      loadKernels(),
    );
    const de = germanFixture([]);
    // "Spielplatz" sits on "dog" (1, 0, 0): "hot dog" is nearer than "cat" but not a translation.
    expect(translateWords(de, en, ['Spielplatz'], 2)[0]!.translations.map((t) => t.word)).toEqual(['dog', 'cat']);
  });
});

const built = builtAligned();
if (built.length === 0)
  console.warn(
    '[projection.test] catalog metadata skipped: no aligned model built (apt-get unavailable: Debian/Ubuntu as root needed)',
  );

describe.skipIf(built.length === 0)('catalog metadata of the built aligned models', () => {
  it.each(built.map((spec) => [spec.id, spec] as const))('%s', (_id, spec) => {
    const lang = spec.language;
    const m = JSON.parse(fs.readFileSync(alignedManifestFile(spec), 'utf8')) as ModelManifest;
    expect(m.id).toBe(spec.id);
    expect(m.language).toBe(lang);
    expect(m.country).toBe({ de: 'DE', fr: 'FR', ja: 'JP' }[lang]);
    expect(m.features).toEqual(expect.arrayContaining(['dictionary-projected', 'aligned-en', 'int8-quantized']));
    expect(m.hasTranslation).toBe(true);
    expect(m.quantization).toBe('int8-rowscale');
    expect(m.dimensions).toBe(100);
    expect(m.trainingYear + m.trainingMonth).toBe(spec.trainingYear + spec.trainingMonth);
    expect(m.sources.join(' ')).toMatch(/debian:/);
    expect(m.license).toMatch(lang === 'de' ? /GPL/ : /CC-BY-SA/);
    expect(m.vocabularySize).toBeGreaterThan(20_000);
    // Its English companion: named when it is not GloVe (the GloVe-based models predate the field);
    // the sources and the tag name it too.
    if (spec.english.id === GLOVE_MODEL_ID) expect(m.englishModelId).toBeUndefined();
    else expect(m.englishModelId).toBe(spec.english.id);
    expect(m.sources.join(' ')).toContain(spec.english.id);
    expect(m.tag).toBe(spec.tag);
  });
});
