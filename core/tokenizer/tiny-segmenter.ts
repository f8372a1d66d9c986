/**
 * The Japanese word-boundary model: TinySegmenter on tables compiled once per model of the
 * language file (japanese.ts applies it to runs of Japanese script).
 */
import type { SegmenterModel } from './data';

/** TinySegmenter's character type (exported for its test's reference implementation). */
export function ctype(ch: string): string {
  if (/[一二三四五六七八九十百千万億兆]/.test(ch)) return 'M';
  if (/[一-龠々〆ヵヶ]/.test(ch)) return 'H';
  if (/[ぁ-ん]/.test(ch)) return 'I';
  if (/[ァ-ヴーｱ-ﾝﾞｰ]/.test(ch)) return 'K';
  if (/[a-zA-Zａ-ｚＡ-Ｚ]/.test(ch)) return 'A';
  if (/[0-9０-９]/.test(ch)) return 'N';
  return 'O';
}

/*
 * TinySegmenter (Taku Kudo, BSD) scores each position from ~40 features: n-grams of the
 * characters around it (UW/BW/TW), of their character types (UC/BC/TC), of the previous
 * decisions (UP/BP) and mixes (UQ/BQ/TQ). The model's tables are keyed by the features'
 * concatenated strings; they are compiled once per model to integer keys, so a position costs
 * array and integer-map lookups instead of ~40 string concatenations and string-map lookups
 * (about 5x faster). The lookups, their order and the additions are the reference's, so the
 * score of every position is the same double and the cuts are the same
 * (test/node/tokenizer-fast.test.ts compares them with the string implementation).
 */

/** Character types: O M H I K A N (ctype), and previous decisions: U O B. */
const CTYPES = 'OMHIKAN';
const PREVS = 'UOB';
const MARKERS = ['B3', 'B2', 'B1', 'E1', 'E2', 'E3'] as const;

interface CompiledSegmenter {
  bias: number;
  /** Symbol ids: the markers and every character in a table key (others are 0: no key holds them). */
  ids: Map<string, number>;
  /** The characters' ids by code point (one array load per character instead of a string-keyed lookup). */
  bmpIds: Int32Array;
  astralIds: Map<number, number>;
  /** Symbol count + 1 (keys are mixed-radix numbers of ids). */
  radix: number;
  /** UW1..UW6 by symbol: uw[k * radix + id]. */
  uw: Float64Array;
  /** BW1..BW3 and TW1..TW4 by id pairs and triples. */
  bw: Array<Map<number, number>>;
  tw: Array<Map<number, number>>;
  /** UC/BC/TC, UP/BP and UQ/BQ/TQ by type and decision codes. */
  uc: Float64Array;
  bc: Float64Array;
  tc: Float64Array;
  up: Float64Array;
  bp: Float64Array;
  uq: Float64Array;
  bq: Float64Array;
  tq: Float64Array;
}

const compiled = new WeakMap<SegmenterModel, CompiledSegmenter>();

/** Every way to read `key` as `arity` symbols (markers or single code points). */
function symbolParses(key: string, arity: number): string[][] {
  if (arity === 0) return key.length === 0 ? [[]] : [];
  const out: string[][] = [];
  for (const m of MARKERS)
    if (key.startsWith(m)) for (const rest of symbolParses(key.slice(m.length), arity - 1)) out.push([m, ...rest]);
  const cp = key.codePointAt(0);
  if (cp !== undefined) {
    const ch = String.fromCodePoint(cp);
    for (const rest of symbolParses(key.slice(ch.length), arity - 1)) out.push([ch, ...rest]);
  }
  return out;
}

/** Codes of a key over small alphabets (e.g. 'BHI' over PREVS, CTYPES, CTYPES), or -1. */
function smallCode(key: string, alphabets: string[]): number {
  if (key.length !== alphabets.length) return -1;
  let code = 0;
  for (let i = 0; i < key.length; i++) {
    const d = alphabets[i]!.indexOf(key[i]!);
    if (d < 0) return -1;
    code = code * alphabets[i]!.length + d;
  }
  return code;
}

function compileSegmenter(model: SegmenterModel): CompiledSegmenter {
  const known = compiled.get(model);
  if (known) return known;
  const table = (name: string): Map<string, number> => model.tables.get(name) ?? new Map();
  const ids = new Map<string, number>();
  for (const m of MARKERS) ids.set(m, ids.size + 1);
  const wordTables: Array<[string, number]> = [
    ...[1, 2, 3, 4, 5, 6].map((k): [string, number] => [`UW${k}`, 1]),
    ...[1, 2, 3].map((k): [string, number] => [`BW${k}`, 2]),
    ...[1, 2, 3, 4].map((k): [string, number] => [`TW${k}`, 3]),
  ];
  const parsed = new Map<string, Array<[string[], number]>>();
  for (const [name, arity] of wordTables) {
    const entries: Array<[string[], number]> = [];
    for (const [key, v] of table(name))
      for (const parse of symbolParses(key, arity)) {
        for (const sym of parse) if (!ids.has(sym)) ids.set(sym, ids.size + 1);
        entries.push([parse, v]);
      }
    parsed.set(name, entries);
  }
  const radix = ids.size + 1;
  const keyOf = (parse: string[]): number => parse.reduce((k, sym) => k * radix + ids.get(sym)!, 0);
  const uw = new Float64Array(6 * radix);
  for (let k = 0; k < 6; k++) for (const [parse, v] of parsed.get(`UW${k + 1}`)!) uw[k * radix + keyOf(parse)] = v;
  const maps = (prefix: string, n: number) =>
    Array.from({ length: n }, (_, k) => new Map(parsed.get(`${prefix}${k + 1}`)!.map(([p, v]) => [keyOf(p), v])));
  const small = (prefix: string, n: number, alphabets: string[]): Float64Array => {
    const size = alphabets.reduce((a, b) => a * b.length, 1);
    const out = new Float64Array(n * size);
    for (let k = 0; k < n; k++)
      for (const [key, v] of table(`${prefix}${k + 1}`)) {
        const code = smallCode(key, alphabets);
        if (code >= 0) out[k * size + code] = v;
      }
    return out;
  };
  const c = CTYPES;
  const p = PREVS;
  const bmpIds = new Int32Array(0x10000);
  const astralIds = new Map<number, number>();
  for (const [sym, id] of ids) {
    const cp = sym.codePointAt(0)!;
    if (sym.length !== (cp > 0xffff ? 2 : 1)) continue; // a marker
    if (cp > 0xffff) astralIds.set(cp, id);
    else bmpIds[cp] = id;
  }
  const out: CompiledSegmenter = {
    bias: model.bias,
    ids,
    bmpIds,
    astralIds,
    radix,
    uw,
    bw: maps('BW', 3),
    tw: maps('TW', 4),
    uc: small('UC', 6, [c]),
    bc: small('BC', 3, [c, c]),
    tc: small('TC', 4, [c, c, c]),
    up: small('UP', 3, [p]),
    bp: small('BP', 2, [p, p]),
    uq: small('UQ', 3, [p, c]),
    bq: small('BQ', 4, [p, c, c]),
    tq: small('TQ', 4, [p, c, c, c]),
  };
  compiled.set(model, out);
  return out;
}

/** ctype as a code (index in CTYPES), cached for the BMP. */
const ctypeCodes = new Uint8Array(0x10000).fill(255);
function ctypeCode(cp: number): number {
  if (cp < 0x10000) {
    let t = ctypeCodes[cp]!;
    if (t === 255) ctypeCodes[cp] = t = CTYPES.indexOf(ctype(String.fromCharCode(cp)));
    return t;
  }
  return CTYPES.indexOf(ctype(String.fromCodePoint(cp)));
}

/**
 * TinySegmenter over code points: a cut before cps[i] for each i < n with cut[i] = 1 (the
 * reference's boundaries, computed on the compiled tables). Exported for its test.
 */
export function tinySegment(cps: ArrayLike<number>, n: number, model: SegmenterModel): Uint8Array {
  const m = compileSegmenter(model);
  const { bmpIds, astralIds } = m;
  const R = m.radix;
  // Symbols and types with three markers / 'O's on each side, as the reference's seg and ct.
  const sym = new Float64Array(n + 6);
  const ct = new Uint8Array(n + 6);
  sym[0] = m.ids.get('B3')!;
  sym[1] = m.ids.get('B2')!;
  sym[2] = m.ids.get('B1')!;
  sym[n + 3] = m.ids.get('E1')!;
  sym[n + 4] = m.ids.get('E2')!;
  sym[n + 5] = m.ids.get('E3')!;
  for (let i = 0; i < n; i++) {
    const cp = cps[i]!;
    sym[i + 3] = cp > 0xffff ? (astralIds.get(cp) ?? 0) : bmpIds[cp]!;
    ct[i + 3] = ctypeCode(cp);
  }
  const { uw, bw, tw, uc, bc, tc, up, bp, uq, bq, tq } = m;
  const [bw1, bw2, bw3] = bw as [Map<number, number>, Map<number, number>, Map<number, number>];
  const [tw1, tw2, tw3, tw4] = tw as [
    Map<number, number>,
    Map<number, number>,
    Map<number, number>,
    Map<number, number>,
  ];
  const cut = new Uint8Array(n + 1);
  let p1 = 0; // U
  let p2 = 0;
  let p3 = 0;
  for (let i = 4; i < n + 3; ++i) {
    const w1 = sym[i - 3]!;
    const w2 = sym[i - 2]!;
    const w3 = sym[i - 1]!;
    const w4 = sym[i]!;
    const w5 = sym[i + 1]!;
    const w6 = sym[i + 2]!;
    const c1 = ct[i - 3]!;
    const c2 = ct[i - 2]!;
    const c3 = ct[i - 1]!;
    const c4 = ct[i]!;
    const c5 = ct[i + 1]!;
    const c6 = ct[i + 2]!;
    let score = m.bias;
    score += up[p1]! + up[3 + p2]! + up[6 + p3]! + bp[p1 * 3 + p2]! + bp[9 + p2 * 3 + p3]!;
    score += uw[w1]! + uw[R + w2]! + uw[2 * R + w3]! + uw[3 * R + w4]! + uw[4 * R + w5]! + uw[5 * R + w6]!;
    score += (bw1.get(w2 * R + w3) ?? 0) + (bw2.get(w3 * R + w4) ?? 0) + (bw3.get(w4 * R + w5) ?? 0);
    score +=
      (tw1.get((w1 * R + w2) * R + w3) ?? 0) +
      (tw2.get((w2 * R + w3) * R + w4) ?? 0) +
      (tw3.get((w3 * R + w4) * R + w5) ?? 0) +
      (tw4.get((w4 * R + w5) * R + w6) ?? 0);
    score += uc[c1]! + uc[7 + c2]! + uc[14 + c3]! + uc[21 + c4]! + uc[28 + c5]! + uc[35 + c6]!;
    score += bc[c2 * 7 + c3]! + bc[49 + c3 * 7 + c4]! + bc[98 + c4 * 7 + c5]!;
    score +=
      tc[(c1 * 7 + c2) * 7 + c3]! +
      tc[343 + (c2 * 7 + c3) * 7 + c4]! +
      tc[686 + (c3 * 7 + c4) * 7 + c5]! +
      tc[1029 + (c4 * 7 + c5) * 7 + c6]!;
    score += uq[p1 * 7 + c1]! + uq[21 + p2 * 7 + c2]! + uq[42 + p3 * 7 + c3]!;
    score +=
      bq[(p2 * 7 + c2) * 7 + c3]! +
      bq[147 + (p2 * 7 + c3) * 7 + c4]! +
      bq[294 + (p3 * 7 + c2) * 7 + c3]! +
      bq[441 + (p3 * 7 + c3) * 7 + c4]!;
    score +=
      tq[((p2 * 7 + c1) * 7 + c2) * 7 + c3]! +
      tq[1029 + ((p2 * 7 + c2) * 7 + c3) * 7 + c4]! +
      tq[2058 + ((p3 * 7 + c1) * 7 + c2) * 7 + c3]! +
      tq[3087 + ((p3 * 7 + c2) * 7 + c3) * 7 + c4]!;
    let p = 1; // O
    if (score > 0) {
      cut[i - 3] = 1; // boundary before chars[i - 3]
      p = 2; // B
    }
    p1 = p2;
    p2 = p3;
    p3 = p;
  }
  return cut;
}
