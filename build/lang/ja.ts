/**
 * Japanese: the TinySegmenter model (tiny-segmenter) for word segmentation, Sudachi synonyms
 * (sudachi-synonyms-dictionary), stop words from stopwords-iso, and IPADIC's conjugated forms
 * (kuromoji's dictionary, build/lang/ipadic.ts): each form of a verb or i-adjective with its
 * dictionary form as lemma, na-adjective stems, and the auxiliaries' forms (meta.conjugation).
 */
import { FLAG } from '../../core/tokenizer/data';
import { CLOSED_CLASSES } from './closed-classes';
import { isoStopWords, npmSource, pkgRequire } from './inputs';
import { ipadicPredicates } from './ipadic';
import { buildBloom } from '../../core/tokenizer/bloom';
import { languageMeta, Lexicon } from './lexicon';

/** The pairs of adjacent units inside the forms whose second unit is hiragana (LanguageMeta conjugation.junctions). */
function junctionsOf(forms: Iterable<string>): number[] {
  const pairs = new Set<number>();
  for (const form of forms)
    for (let i = 0; i + 1 < form.length; i++) {
      const b = form.charCodeAt(i + 1);
      if (b >= 0x3041 && b <= 0x309f) pairs.add(form.charCodeAt(i) * 65536 + b);
    }
  return [...pairs].sort((a, b) => a - b);
}

export function buildJapanese(): Uint8Array {
  const lex = new Lexicon();
  const TinySegmenter = pkgRequire<new () => Record<string, unknown>>('tiny-segmenter', 'lib/index.js');
  const model = new TinySegmenter();
  const tables: Record<string, Record<string, number>> = {};
  for (const [k, v] of Object.entries(model))
    if (/^[A-Z]{2}\d__$/.test(k)) tables[k.slice(0, 3)] = v as Record<string, number>;
  const bias = model.BIAS__ as number;

  const stop = isoStopWords('ja');
  for (const w of stop) lex.flag(w, FLAG.STOP);

  type Item = { midashi: string; expandControl: number; gokeiSyubetsu: string; hyoukiYure: string };
  const groups = pkgRequire<Array<{ id: string; items: Item[] }>>(
    'sudachi-synonyms-dictionary',
    'sudachi-synonyms-dictionary.json',
  );
  for (const g of groups) {
    const usable = g.items.filter(
      (it) => it.expandControl !== 2 && it.gokeiSyubetsu !== '間違い' && it.hyoukiYure !== '間違い表記',
    );
    for (const it of usable) {
      lex.flag(it.midashi, FLAG.KNOWN);
      if (it.expandControl !== 0) continue; // 1: not a trigger itself
      lex.addSynonyms(
        it.midashi,
        usable.map((u) => ({ word: u.midashi, pos: 0 })),
      );
    }
  }
  lex.markClosedClasses(CLOSED_CLASSES.ja.function, CLOSED_CLASSES.ja.numbers);
  // After the closed classes: a conjugated form must not take its lemma's stop or function flag
  // (the stop words stay stopwords-iso's list: まし is none although ます is one).
  const { forms, naAdjectives, auxiliaries } = ipadicPredicates();
  // Part-of-speech flags only: FLAG.KNOWN stays the Sudachi words that mergeKnownHiragana joins
  // (with every conjugated form known, て|い|た would become ていた).
  for (const [form, { base, kind }] of forms) {
    const e = lex.entry(form);
    e.flags |= kind === 'adjective' ? FLAG.ADJ : FLAG.VERB;
    if (base !== form) e.lemma = base;
  }
  for (const stem of naAdjectives) lex.flag(stem, FLAG.ADJ);
  const sources = [
    npmSource('tiny-segmenter', 'BSD-3-Clause (TinySegmenter, Taku Kudo)', 'Japanese word segmentation model'),
    npmSource('sudachi-synonyms-dictionary', 'Apache-2.0', 'Japanese synonyms (Sudachi synonym dictionary)'),
    npmSource('stopwords-iso', 'MIT', 'Japanese stop words'),
    npmSource(
      'kuromoji',
      'Apache-2.0 package; IPADIC 2.7.0 data under the IPADIC licence (BSD-style, notice kept)',
      'Japanese conjugated forms with their dictionary forms, na-adjective stems, auxiliaries (IPADIC)',
    ),
  ];
  const segmenterFeatures = Object.values(tables).reduce((s, t) => s + Object.keys(t).length, 0);
  const predicates = [...forms.keys(), ...naAdjectives];
  return lex.pack(
    {
      ...languageMeta('ja', sources, stop, { segmenterFeatures, conjugatedForms: forms.size }),
      segmenter: { bias, tables },
      conjugation: { auxiliaries: [...auxiliaries].sort(), junctions: junctionsOf(predicates) },
    },
    // The conjugated forms and na-adjective stems as a Bloom filter (core/tokenizer/bloom.ts).
    [['JBLM', buildBloom(predicates)]],
  );
}
