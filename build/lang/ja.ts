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
import { BLOOM_VERSION, buildBloom, buildPairBits } from '../../core/tokenizer/bloom';
import { languageMeta, Lexicon } from './lexicon';

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
  const conj = ipadicPredicates();
  // Dictionary forms keyed with their conjugation type ("食べる\t0"), flagged VERB or ADJ, and
  // the na-adjective stems: the rules rebuild every form from them (core/tokenizer/conjugation-ja.ts).
  // Part-of-speech flags only: FLAG.KNOWN stays the Sudachi words that mergeKnownHiragana joins.
  for (const [key, kind] of conj.bases) lex.flag(key, kind === 'adjective' ? FLAG.ADJ : FLAG.VERB);
  for (const stem of conj.naAdjectives) lex.flag(stem, FLAG.ADJ);
  const predicates = [...conj.forms, ...conj.naAdjectives];
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
      ...languageMeta('ja', sources, stop, {
        segmenterFeatures,
        conjugationRules: conj.rules.length,
        dictionaryForms: conj.bases.size,
        conjugatedForms: conj.forms.size,
        // The rules' reading against IPADIC's lowest-cost one, over every form (per 10,000).
        conjugationAgreement: Math.round((10_000 * conj.agreement.same) / conj.agreement.total),
      }),
      segmenter: { bias, tables },
      conjugation: {
        types: conj.types,
        rules: conj.rules,
        auxiliaries: [...conj.auxiliaries].sort(),
        endings: [...conj.endings].sort(),
        bloomVersion: BLOOM_VERSION,
      },
      // IPADIC's licence asks for its notice in every copy, modified ones included.
      notices: [ipadicNotice()],
    },
    // Bloom filters and a pair bit set (core/tokenizer/bloom.ts): the conjugated forms and
    // na-adjective stems; the dictionary-form keys; the na-adjective stems alone; the words of other parts of speech; the unit pairs inside those forms
    // whose second unit is hiragana (where two pieces can meet inside one form).
    [
      ['JBLM', buildBloom(predicates, 1 << 20)],
      ['JBAS', buildBloom(conj.bases.keys(), 1 << 18)],
      ['JNAD', buildBloom(conj.naAdjectives, 1 << 15)],
      ['JOTH', buildBloom(conj.otherWords, 1 << 18)],
      ['JJUN', buildPairBits(predicates, 1 << 18, (u) => u >= 0x3041 && u <= 0x309f)],
    ],
  );
}
