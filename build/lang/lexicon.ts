/**
 * The lexicon a language builder fills: one entry per key (form, lemma, stop word, synonym) with
 * its flags, lemma, lemma after a determiner and synonyms; then packed into the language file
 * (core/tokenizer/format.ts) with its meta.
 */
import { LIMITS } from '../../core/limits';
import { buildStringTable, encodeContainer, type LanguageMeta, type SectionData } from '../../core/tokenizer/format';
import { FLAG, NONE, POS_FLAGS, SYN_POS_SHIFT } from '../../core/tokenizer/data';
import type { Language } from '../../core/tokenizer/languages';
import { COMPOSITION_SOURCES, compositionData } from '../composition-lists';
import { pkgVersion, type Source } from './inputs';

/** Synonyms kept per word (the similarity filter and the thesauri stop at this many). */
export const MAX_SYNONYMS = LIMITS.synonymsPerToken;

/** A synonym with the part of speech (FLAG.NOUN...ADV bits) of the sense it came from; 0 unknown. */
export interface Syn {
  word: string;
  pos: number;
}

export interface Entry {
  flags: number;
  lemma?: string;
  nounLemma?: string;
  synonyms?: Syn[];
}

export class Lexicon {
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
  /** A closed-class form (article, pronoun, contraction) with its fixed lemma and no nominal reading. */
  fixLemma(form: string, lemma: string): void {
    const e = this.entry(form);
    e.lemma = lemma;
    e.flags |= FLAG.KNOWN;
    delete e.nounLemma;
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

  /** The language file: the key tables, then `extra` sections of the language (ja: JBLM). */
  pack(meta: LanguageMeta, extra: Array<[string, SectionData]> = []): Uint8Array {
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
      // No lemma at all (ja): an empty section, not a NONE per key.
      ['LEMM', lemmas.some((l) => l !== NONE) ? lemmas : new Uint32Array(0)],
      ['NIDX', Uint32Array.from(nIdx)],
      ['NVAL', Uint32Array.from(nVal)],
      ['SIDX', Uint32Array.from(sIdx)],
      ['SOFF', Uint32Array.from(sOff)],
      ['SLST', Uint32Array.from(sList)],
      ...extra,
    ];
    return encodeContainer(meta, sections);
  }
}

/**
 * The meta of a language file: its sources, its composition word lists and its counts, starting
 * with the stop words' (pack adds the composition sources and the key counts).
 */
export function languageMeta(
  language: Language,
  sources: Source[],
  stop: string[],
  counts: Record<string, number> = {},
): LanguageMeta {
  return {
    language,
    formatVersion: 1,
    sources,
    composition: compositionData(language, stop),
    counts: { stopWords: stop.length, ...counts },
  };
}
