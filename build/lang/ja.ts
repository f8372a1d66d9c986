/**
 * Japanese: the TinySegmenter model (tiny-segmenter) for word segmentation, Sudachi synonyms
 * (sudachi-synonyms-dictionary), stop words from stopwords-iso, and IPADIC's conjugated forms
 * (kuromoji's dictionary, build/lang/ipadic.ts): each form of a verb or i-adjective with its
 * dictionary form as lemma, na-adjective stems, and the auxiliaries' forms (meta.conjugation).
 */
import { FLAG } from '../../core/tokenizer/data';
import { CLOSED_CLASSES } from './closed-classes';
import { isoStopWords, npmSource, pkgRequire } from './inputs';
import { ipadicNotice, ipadicPredicates } from './ipadic';
import { BLOOM_VERSION, buildBloom } from '../../core/tokenizer/bloom';
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
  const { forms, naAdjectives, auxiliaries, endings, otherWords } = ipadicPredicates();
  // Verbs and adjectives only (an auxiliary is no word to merge into or cut after), with
  // part-of-speech flags only: FLAG.KNOWN stays the Sudachi words that mergeKnownHiragana joins
  // (with every conjugated form known, て|い|た would become ていた).
  const predicates: string[] = [...naAdjectives];
  for (const [form, { base, kind }] of forms) {
    if (kind === 'auxiliary') continue;
    predicates.push(form);
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
      'Apache-2.0 package; IPADIC 2.7.0 data under the IPADIC licence (BSD-style; its notice is meta.notices)',
      'Japanese conjugated forms with their dictionary forms, na-adjective stems, auxiliaries (IPADIC)',
    ),
  ];
  const segmenterFeatures = Object.values(tables).reduce((s, t) => s + Object.keys(t).length, 0);
  return lex.pack(
    {
      ...languageMeta('ja', sources, stop, { segmenterFeatures, conjugatedForms: predicates.length }),
      segmenter: { bias, tables },
      conjugation: {
        auxiliaries: [...auxiliaries].sort(),
        endings: [...endings].sort(),
        junctions: junctionsOf(predicates),
        bloomVersion: BLOOM_VERSION,
      },
      // IPADIC's licence asks for its notice in every copy, modified ones included.
      notices: [ipadicNotice()],
    },
    // Bloom filters (core/tokenizer/bloom.ts): the conjugated forms and na-adjective stems; the
    // words of other parts of speech the split leaves whole.
    [
      ['JBLM', buildBloom(predicates, 1 << 21)],
      ['JOTH', buildBloom(otherWords, 1 << 18)],
    ],
  );
}
