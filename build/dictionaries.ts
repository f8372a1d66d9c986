/**
 * Parsers of the bilingual dictionaries the aligned models are projected through
 * (build/aligned-models.ts). Each returns headword -> translation phrases (cleaned, in
 * dictionary order); only single-token headwords are kept (a model row is one token).
 *
 *   Ding (trans-de-en)      "Aalspieß {m} | Aalspieße {pl} :: eel spear | eel spears"
 *   dictd (FreeDict, WikDict)  .index "headword<TAB>b64 offset<TAB>b64 length" + .dict(.dz)
 *   EDICT (JMdict, EUC-JP)  "漢字 [かな] /(n) gloss/gloss/(P)/"
 */
import zlib from 'node:zlib';

export type Dictionary = Map<string, string[]>;

/** Strips {...} [...] (...) <...> notes and collapses spaces. */
export function stripNotes(s: string): string {
  let out = s;
  // Nested brackets ("(von jdm. (etw.))") need repeated passes.
  for (let i = 0; i < 3; i++) out = out.replace(/\{[^{}]*\}|\[[^[\]]*\]|\([^()]*\)|<[^<>]*>/g, ' ');
  // Ding abbreviations: "Zeitung {f} /Ztg./"
  out = out.replace(/(^|\s)\/\S[^/]*\//g, ' ');
  return out.replace(/\s+/g, ' ').trim();
}

/** German side words that are grammar, not the headword ("sich freuen", "jdm. helfen"). */
const DE_GRAMMAR = new Set(['sich', 'jdm.', 'jdn.', 'jds.', 'etw.', 'jd.', 'etw', 'jdm', 'jdn']);

/** A cleaned headword that is one token (letters first; letters, digits, ' and - inside), or null. */
export function singleToken(term: string, grammar?: ReadonlySet<string>): string | null {
  let words = stripNotes(term).split(' ').filter(Boolean);
  if (grammar) words = words.filter((w) => !grammar.has(w));
  if (words.length !== 1) return null;
  const w = words[0]!;
  return /^\p{L}[\p{L}\p{M}\p{N}'’-]*$/u.test(w) && !w.endsWith('-') ? w : null;
}

function add(dict: Dictionary, word: string, phrases: readonly string[]): void {
  if (phrases.length === 0) return;
  let list = dict.get(word);
  if (!list) dict.set(word, (list = []));
  for (const p of phrases) if (!list.includes(p)) list.push(p);
}

/** Cleaned translation phrases of one side of a dictionary line. */
function phrasesOf(side: string, separator: RegExp): string[] {
  const out: string[] = [];
  for (const raw of side.split(separator)) {
    const p = stripNotes(raw);
    if (p && !out.includes(p)) out.push(p);
  }
  return out;
}

/**
 * Ding: "de terms | de forms :: en terms | en forms". The `|` parts correspond one to one
 * (headword, then inflected forms or examples); `;` separates synonyms within a part. When the
 * part counts differ only the first parts are paired.
 */
export function parseDing(text: string, options: { mainEntriesFirst?: boolean } = {}): Dictionary {
  const dict: Dictionary = new Map();
  // With mainEntriesFirst: word -> its lines' phrases with the word's place among the line's terms.
  const entries = new Map<string, Array<{ place: number; phrases: string[] }>>();
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const sep = line.indexOf(' :: ');
    if (sep < 0) continue;
    const de = line.slice(0, sep).split(' | ');
    const en = line.slice(sep + 4).split(' | ');
    const pairs = de.length === en.length ? de.length : 1;
    for (let i = 0; i < pairs; i++) {
      const phrases = phrasesOf(en[i]!, /;\s*/);
      de[i]!.split(/;\s*/).forEach((term, place) => {
        const w = singleToken(term, DE_GRAMMAR);
        if (!w) return;
        if (!options.mainEntriesFirst) return add(dict, w, phrases);
        let list = entries.get(w);
        if (!list) entries.set(w, (list = []));
        list.push({ place, phrases });
      });
    }
  }
  // Ding's lines are in alphabetical order; a line that starts with the word is one of its main
  // entries ("Schlüssel {m} :: key" before "Code {m}; Kode {m}; Schlüssel {m} :: code"), so those
  // come first, then the lines where it is the second term, and so on (stable: file order within).
  for (const [w, list] of entries) {
    list.sort((a, b) => a.place - b.place);
    for (const e of list) add(dict, w, e.phrases);
  }
  return dict;
}

/** dictd base64 number (alphabet A-Z a-z 0-9 + /). */
export function dictdNumber(s: string): number {
  const A = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  let n = 0;
  for (const c of s) {
    const v = A.indexOf(c);
    if (v < 0) return NaN;
    n = n * 64 + v;
  }
  return n;
}

/**
 * The translation lines of a dictd entry (FreeDict TEI export, WikDict): the first line after
 * the headword and every later line that starts a numbered sense ("2. ..."); other lines are
 * glosses in the headword's language. A trailing empty sense number ("Haus 2.") is dropped.
 */
export function dictdTranslations(entry: string): { headword: string; phrases: string[] } {
  const lines = entry.split('\n');
  const headword = (lines[0] ?? '')
    .replace(/\s+\/.*$/, '')
    .replace(/\s+<.*$/, '')
    .trim();
  const phrases: string[] = [];
  for (let i = 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (i > 1 && !/^\s*\d+\.\s+\S/.test(line)) continue;
    const body = line.replace(/^\s*\d+\.\s*/, '').replace(/\s+\d+\.\s*$/, '');
    for (const p of phrasesOf(body, /[,;]\s*/)) if (!phrases.includes(p)) phrases.push(p);
  }
  return { headword, phrases };
}

/** Parses a dictd dictionary (index text + .dict or .dict.dz bytes) into headword -> phrases. */
export function parseDictd(indexText: string, dictBytes: Uint8Array, compressed = true): Dictionary {
  const data = compressed ? zlib.gunzipSync(dictBytes) : Buffer.from(dictBytes);
  const dict: Dictionary = new Map();
  for (const line of indexText.split('\n')) {
    const [head, off, len] = line.split('\t');
    if (
      !head ||
      off === undefined ||
      len === undefined ||
      head.startsWith('00-database') ||
      head.startsWith('00database')
    )
      continue;
    const start = dictdNumber(off);
    const length = dictdNumber(len);
    if (!Number.isFinite(start) || !Number.isFinite(length)) continue;
    const entry = data.toString('utf8', start, start + length);
    const { headword, phrases } = dictdTranslations(entry);
    const w = singleToken(headword);
    if (w) add(dict, w, phrases);
  }
  return dict;
}

/** Reverses a dictionary: each single-token translation gets the headword as its translation. */
export function reverseDictionary(dict: Dictionary): Dictionary {
  const out: Dictionary = new Map();
  for (const [head, phrases] of dict) {
    for (const p of phrases) {
      const w = singleToken(p);
      if (w) add(out, w, [head]);
    }
  }
  return out;
}

/** Merges b into a (a's translations first). */
export function mergeDictionaries(a: Dictionary, b: Dictionary): Dictionary {
  const out: Dictionary = new Map();
  for (const [k, v] of a) out.set(k, [...v]);
  for (const [k, v] of b) add(out, k, v);
  return out;
}

export interface EdictResult {
  dict: Dictionary;
  /** Forms of entries marked common, "(P)" (JMdict news1/ichi1/spec1/gai1 priority). */
  common: Set<string>;
}

/**
 * EDICT (already decoded from EUC-JP): "KANJI [KANA] /gloss/gloss/(P)/" or "KANA /gloss/".
 * Both the kanji and the kana form get the glosses; part-of-speech and sense notes are stripped.
 */
export function parseEdict(text: string): EdictResult {
  const dict: Dictionary = new Map();
  const common = new Set<string>();
  for (const line of text.split('\n')) {
    const slash = line.indexOf(' /');
    if (slash < 0) continue;
    const head = line.slice(0, slash);
    const m = /^(\S+)(?: \[(\S+)\])?$/.exec(head);
    if (!m) continue;
    const glossPart = line.slice(slash + 2);
    if (glossPart.startsWith('EDICT')) continue;
    const glosses = glossPart.split('/');
    const isCommon = glosses.some((g) => g.trim() === '(P)') || /\(P\)\s*$/.test(glosses[glosses.length - 2] ?? '');
    const phrases: string[] = [];
    for (const g of glosses) {
      if (g.startsWith('EntL')) continue;
      const p = stripNotes(g);
      if (p && !phrases.includes(p)) phrases.push(p);
    }
    for (const form of [m[1]!, m[2]].filter((f): f is string => !!f)) {
      for (const f of form.split(';')) {
        const w = stripNotes(f);
        if (!w || /\s/.test(w)) continue;
        add(dict, w, phrases);
        if (isCommon) common.add(w);
      }
    }
  }
  return { dict, common };
}
