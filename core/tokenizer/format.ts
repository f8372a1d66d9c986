/**
 * Binary container of tokenizer language data (R2 key lang/{language}.bin).
 *
 *   'TOKL' | u32 version | u32 metaLength | meta JSON (UTF-8) | pad to 4
 *   then sections: 4-byte ASCII name | u32 byteLength | payload | pad to 4
 *
 * Every section starts at a 4-byte aligned offset, so Uint32 sections are read as zero-copy
 * views into the one buffer: a loaded language costs its file size plus a few small maps,
 * not a JS object per entry. Runtime-agnostic (no Node, DOM or Worker APIs).
 */
export const FORMAT_MAGIC = 'TOKL';
/** 2: synonym links carry their part of speech (SLST high bits), flags FUNCTION and NUMBER. */
export const FORMAT_VERSION = 2;

export interface LanguageMeta {
  language: string;
  formatVersion: number;
  /** Data sources with versions and licenses (for the README and provenance). */
  sources: Array<{ name: string; version: string; license: string; use: string }>;
  counts: Record<string, number>;
  /** Japanese: the TinySegmenter model (feature tables and bias). */
  segmenter?: { bias: number; tables: Record<string, Record<string, number>> };
  /**
   * Japanese: every surface form of an auxiliary (IPADIC 助動詞 and suffix verbs) and the
   * nominalizing suffixes: the pieces a conjugated word can carry (japanese.ts splits them off).
   */
  conjugation?: {
    /** IPADIC's conjugation types the rules and the dictionary-form keys ("base\ttype") index. */
    types: string[];
    /** [surface ending, dictionary ending, type index], most followed first (build/lang/ipadic.ts). */
    rules: Array<[string, string, number]>;
    /** Surfaces of the auxiliaries and the nominal suffixes: what the split cuts off. */
    auxiliaries: string[];
    /** Those that carry no meaning of their own (their cheapest IPADIC entry is an auxiliary or a particle): not scored. */
    endings: string[];
    /** core/tokenizer/bloom.ts BLOOM_VERSION of the sections JBLM, JBAS, JNAD, JOTH and JJUN (a reader ignores other versions). */
    bloomVersion: number;
  };
  /** Copyright notices the data's licences ask every copy to carry (ja: IPADIC's). */
  notices?: string[];
  /** Word lists of the text-score composition rules (core/scoring/composition/; build/composition-lists.ts). */
  composition?: CompositionData;
}

/**
 * Composition word lists of a language. Keys are lower-cased; a key with a space (or, for
 * Japanese, `joiner` '') spans two tokens. Values of `boosters`: 1 booster, -1 dampener.
 */
export interface CompositionData {
  negators: string[];
  /** forward: the scope follows the negator; backward: it precedes (Japanese auxiliaries); forward-else-backward: a negator with nothing to negate before the clause ends looks back (German clause-final "nicht"). */
  negationDirection: 'forward' | 'backward' | 'forward-else-backward';
  /** Negators that negate only inside the scope of an opener (fr "plus" after "ne"; ja "ん" after "ませ"). */
  negationNeedsOpener?: string[];
  negationOpeners?: string[];
  /** Negative concord (fr, ja): a second negator inside a scope continues it instead of negating again. */
  negativeConcord?: boolean;
  /**
   * Tokens a backward negation scope does not cross (ja: the case particles を, に, へ, から, より,
   * まで: ない negates its predicate, not the object before it; 問題を解決できなかった).
   */
  scopeBarriers?: string[];
  /** Two-token sequences whose first token is not a negation ("not only"). */
  notNegating: string[];
  boosters: Record<string, number>;
  contrast: string[];
  /** Stop words that carry sentiment: scored by the rules although they are stop words. */
  polarStopWords: string[];
  /** Emoticon and emoji valence in [-1, 1]. */
  emoticons: Record<string, number>;
  emoji: Record<string, number>;
  /** How two tokens are joined into a key (' ' by default; '' for Japanese). */
  joiner?: string;
}

export type SectionData = Uint8Array | Uint32Array;

const utf8 = new TextEncoder();

function pad4(n: number): number {
  return (4 - (n % 4)) % 4;
}

/** Serializes meta + named sections (names are 4 ASCII characters). */
export function encodeContainer(meta: LanguageMeta, sections: Array<[string, SectionData]>): Uint8Array {
  const metaBytes = utf8.encode(JSON.stringify(meta));
  let size = 12 + metaBytes.length + pad4(metaBytes.length);
  for (const [, data] of sections) size += 8 + data.byteLength + pad4(data.byteLength);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let p = 0;
  for (let i = 0; i < 4; i++) out[p++] = FORMAT_MAGIC.charCodeAt(i);
  view.setUint32(p, FORMAT_VERSION, true);
  view.setUint32(p + 4, metaBytes.length, true);
  p += 8;
  out.set(metaBytes, p);
  p += metaBytes.length + pad4(metaBytes.length);
  for (const [name, data] of sections) {
    if (name.length !== 4) throw new Error(`section name must have 4 characters: ${name}`);
    for (let i = 0; i < 4; i++) out[p++] = name.charCodeAt(i);
    view.setUint32(p, data.byteLength, true);
    p += 4;
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), p);
    p += data.byteLength + pad4(data.byteLength);
  }
  return out;
}

export interface Container {
  meta: LanguageMeta;
  sections: Map<string, Uint8Array>;
}

export function decodeContainer(input: ArrayBuffer | Uint8Array): Container {
  // Copy into a fresh aligned buffer when the view is not 4-byte aligned.
  let bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (bytes.byteOffset % 4 !== 0) bytes = bytes.slice();
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const magic = String.fromCharCode(bytes[0], bytes[1], bytes[2], bytes[3]);
  if (bytes.byteLength < 12 || magic !== FORMAT_MAGIC) throw new Error('not a tokenizer language file (bad magic)');
  const version = view.getUint32(4, true);
  if (version !== FORMAT_VERSION) throw new Error(`unsupported language file version ${version}`);
  const metaLength = view.getUint32(8, true);
  let p = 12;
  const meta = JSON.parse(new TextDecoder().decode(bytes.subarray(p, p + metaLength))) as LanguageMeta;
  p += metaLength + pad4(metaLength);
  const sections = new Map<string, Uint8Array>();
  while (p + 8 <= bytes.byteLength) {
    const name = String.fromCharCode(bytes[p], bytes[p + 1], bytes[p + 2], bytes[p + 3]);
    const len = view.getUint32(p + 4, true);
    p += 8;
    if (p + len > bytes.byteLength) throw new Error(`truncated section ${name}`);
    sections.set(name, bytes.subarray(p, p + len));
    p += len + pad4(len);
  }
  return { meta, sections };
}

/** Zero-copy Uint32 view of a section (sections are 4-byte aligned). */
export function u32(section: Uint8Array | undefined): Uint32Array {
  if (!section) return new Uint32Array(0);
  return new Uint32Array(section.buffer, section.byteOffset, section.byteLength >>> 2);
}

/**
 * Sorted, unique strings as one UTF-8 blob plus offsets; lookup by binary search on bytes
 * (UTF-8 byte order equals code point order).
 */
export class StringTable {
  readonly size: number;
  private readonly decoder = new TextDecoder();

  constructor(
    private readonly offsets: Uint32Array,
    private readonly bytes: Uint8Array,
  ) {
    this.size = Math.max(0, offsets.length - 1);
  }

  get(i: number): string {
    return this.decoder.decode(this.bytes.subarray(this.offsets[i], this.offsets[i + 1]));
  }

  /** Index of the UTF-8 encoded key, or -1. */
  indexOfBytes(key: Uint8Array): number {
    let lo = 0;
    let hi = this.size - 1;
    const b = this.bytes;
    const o = this.offsets;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = o[mid];
      const e = o[mid + 1];
      const n = e - s;
      let cmp = 0;
      const m = n < key.length ? n : key.length;
      for (let k = 0; k < m; k++) {
        const d = b[s + k] - key[k];
        if (d !== 0) {
          cmp = d;
          break;
        }
      }
      if (cmp === 0) cmp = n - key.length;
      if (cmp === 0) return mid;
      if (cmp < 0) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  indexOf(key: string): number {
    return this.indexOfBytes(utf8.encode(key));
  }

  /** Whether some key starts with `prefix` (one binary search for the first key >= prefix). */
  hasPrefix(prefix: string): boolean {
    const key = utf8.encode(prefix);
    const b = this.bytes;
    const o = this.offsets;
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareBytes(b.subarray(o[mid], o[mid + 1]), key) < 0) lo = mid + 1;
      else hi = mid;
    }
    if (lo >= this.size || o[lo + 1] - o[lo] < key.length) return false;
    for (let k = 0; k < key.length; k++) if (b[o[lo] + k] !== key[k]) return false;
    return true;
  }

  byteLength(): number {
    return this.offsets.byteLength + this.bytes.byteLength;
  }
}

/** Builds the two sections of a StringTable from unique strings (sorted here). */
export function buildStringTable(strings: Iterable<string>): {
  sorted: string[];
  offsets: Uint32Array;
  bytes: Uint8Array;
} {
  const encoded = [...new Set(strings)].map((s) => ({ s, b: utf8.encode(s) }));
  encoded.sort((x, y) => compareBytes(x.b, y.b));
  const offsets = new Uint32Array(encoded.length + 1);
  let total = 0;
  for (let i = 0; i < encoded.length; i++) {
    offsets[i] = total;
    total += encoded[i].b.length;
  }
  offsets[encoded.length] = total;
  const bytes = new Uint8Array(total);
  for (let i = 0; i < encoded.length; i++) bytes.set(encoded[i].b, offsets[i]);
  return { sorted: encoded.map((e) => e.s), offsets, bytes };
}

export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const m = Math.min(a.length, b.length);
  for (let i = 0; i < m; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}
