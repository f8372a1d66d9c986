/**
 * A loaded language: zero-copy views into the language file (see format.ts). One sorted key
 * table holds every string (forms, lemmas, stop words, synonyms); per key a flag byte and a
 * lemma index; sparse tables give the lemma after a determiner and the synonyms.
 */
import { decodeContainer, StringTable, u32, type LanguageMeta } from './format';
import { normalizeLanguage, type Language } from './languages';

export const NONE = 0xffffffff;

export const FLAG = {
  STOP: 1,
  NOUN: 2,
  VERB: 4,
  ADJ: 8,
  ADV: 16,
  /** A known lemma or form of the language's lexicon. */
  KNOWN: 32,
  /** Pronoun, auxiliary or modal verb (closed classes; every one is also a stop word). */
  FUNCTION: 64,
  /** A number word ("twelve", "zwölf", "douze"); not a stop word, never given synonyms. */
  NUMBER: 128,
} as const;

/** Part-of-speech bits of FLAG (a synonym link stores them in SLST bits 28..31 as POS_SHIFTed FLAG >> 1). */
export const POS_FLAGS = FLAG.NOUN | FLAG.VERB | FLAG.ADJ | FLAG.ADV;
/** SLST entry = key index | (POS bits >> 1) << SYN_POS_SHIFT; POS 0 = unknown. */
export const SYN_POS_SHIFT = 28;
const SYN_KEY_MASK = (1 << SYN_POS_SHIFT) - 1;

export interface SynonymLink {
  word: string;
  /** FLAG.NOUN | VERB | ADJ | ADV bits of the sense the synonym came from; 0 when the source has none. */
  pos: number;
}

/** Binary search in a sorted Uint32Array; index or -1. */
function search(a: Uint32Array, v: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const x = a[mid];
    if (x === v) return mid;
    if (x < v) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

const FIND_CACHE_MAX = 4096;

/** The sections every language file has. */
const KEY_TABLE_SECTIONS = new Set(['KOFF', 'KBYT', 'FLAG', 'LEMM', 'NIDX', 'NVAL', 'SIDX', 'SOFF', 'SLST']);

export interface SegmenterModel {
  bias: number;
  tables: Map<string, Map<string, number>>;
}

export class LanguageData {
  readonly language: Language;
  readonly meta: LanguageMeta;
  readonly keys: StringTable;
  readonly byteLength: number;
  readonly segmenter: SegmenterModel | null;
  /** Sections the language has beside the key tables (ja: JBLM, JBAS, JNAD, JOTH, JJUN; conjugation-ja.ts reads them). */
  readonly extraSections: ReadonlyMap<string, Uint8Array>;
  private readonly flags: Uint8Array;
  private readonly lemmas: Uint32Array;
  private readonly nIdx: Uint32Array;
  private readonly nVal: Uint32Array;
  private readonly sIdx: Uint32Array;
  private readonly sOff: Uint32Array;
  private readonly sList: Uint32Array;

  constructor(buf: ArrayBuffer | Uint8Array) {
    const { meta, sections } = decodeContainer(buf);
    const language = normalizeLanguage(meta.language);
    if (!language) throw new Error(`language file for unsupported language ${meta.language}`);
    this.language = language;
    this.meta = meta;
    const need = (name: string) => {
      const s = sections.get(name);
      if (!s) throw new Error(`language file ${meta.language}: missing section ${name}`);
      return s;
    };
    this.keys = new StringTable(u32(need('KOFF')), need('KBYT'));
    this.flags = need('FLAG');
    this.lemmas = u32(need('LEMM'));
    this.nIdx = u32(need('NIDX'));
    this.nVal = u32(need('NVAL'));
    this.sIdx = u32(need('SIDX'));
    this.sOff = u32(need('SOFF'));
    this.sList = u32(need('SLST'));
    this.byteLength = buf.byteLength;
    if (meta.segmenter) {
      const tables = new Map<string, Map<string, number>>();
      for (const [name, t] of Object.entries(meta.segmenter.tables)) tables.set(name, new Map(Object.entries(t)));
      this.segmenter = { bias: meta.segmenter.bias, tables };
    } else this.segmenter = null;
    this.extraSections = new Map([...sections].filter(([name]) => !KEY_TABLE_SECTIONS.has(name)));
  }

  /** Recent find results: a text's frequent words are looked up many times per token (UTF-8 encoding and a binary search each). */
  private readonly found = new Map<string, number>();

  /** Key index of a string, or -1. */
  find(key: string): number {
    let i = this.found.get(key);
    if (i === undefined) {
      i = this.keys.indexOf(key);
      // Bounded: cleared when full (words of hostile or long texts cannot grow it further).
      if (this.found.size >= FIND_CACHE_MAX) this.found.clear();
      if (key.length <= 64) this.found.set(key, i);
    }
    return i;
  }
  flagsOf(i: number): number {
    return i < 0 ? 0 : this.flags[i];
  }
  has(key: string, flag: number): boolean {
    return (this.flagsOf(this.find(key)) & flag) !== 0;
  }
  /** The lemma of a form (by key index), or null when the form is its own lemma / unknown. */
  lemmaOf(i: number): string | null {
    // An empty LEMM section: a language without lemmas (ja).
    if (i < 0 || i >= this.lemmas.length) return null;
    const l = this.lemmas[i];
    return l === NONE ? null : this.keys.get(l);
  }
  /** The lemma of a form read as noun/adjective (after a determiner), or null. */
  nounLemmaOf(i: number): string | null {
    if (i < 0) return null;
    const k = search(this.nIdx, i);
    return k < 0 ? null : this.keys.get(this.nVal[k]);
  }
  synonymsOf(i: number): string[] {
    return this.synonymLinksOf(i).map((l) => l.word);
  }
  /** Synonyms with the part of speech of the sense they came from. */
  synonymLinksOf(i: number): SynonymLink[] {
    if (i < 0) return [];
    const k = search(this.sIdx, i);
    if (k < 0) return [];
    const out: SynonymLink[] = [];
    for (let p = this.sOff[k]; p < this.sOff[k + 1]; p++) {
      const v = this.sList[p];
      out.push({ word: this.keys.get(v & SYN_KEY_MASK), pos: ((v >>> SYN_POS_SHIFT) << 1) & POS_FLAGS });
    }
    return out;
  }
}

/** Parses a language file (the bytes of lang/{language}.bin). */
export function parseLanguageData(buf: ArrayBuffer | Uint8Array): LanguageData {
  return new LanguageData(buf);
}
