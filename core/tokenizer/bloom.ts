/**
 * A Bloom filter over strings, kept as a section of a language file (built once at build time,
 * read zero-copy): "certainly not in the set" for a piece of text without a substring, a string
 * hash or a dictionary search. Japanese keeps its conjugated forms in one (conjugation-ja.ts
 * asks it before the language data's binary search). Two FNV-1a hashes over the UTF-16 units
 * (different bases), BLOOM_PROBES probes by double hashing (Kirsch & Mitzenmacher 2006);
 * deterministic, so the build and every runtime agree.
 */

/** Probes per string: with 2^21 bits and ~120k strings, about 0.4% false positives. */
export const BLOOM_PROBES = 3;
/** The hashing and probing of this module: a language file records it, and a reader ignores filters built otherwise. */
export const BLOOM_VERSION = 1;

function hashes(text: string, start: number, end: number): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x0100019d);
  }
  a ^= a >>> 15;
  b = Math.imul(b ^ (b >>> 13), 0x5bd1e995);
  return [a >>> 0, (b | 1) >>> 0];
}

/** Whether text[start, end) may be in the set (false: certainly not). `bits` holds a power of two of bits. */
export function bloomHas(bits: Uint32Array, text: string, start: number, end: number): boolean {
  const mask = bits.length * 32 - 1;
  const [a, b] = hashes(text, start, end);
  for (let k = 0; k < BLOOM_PROBES; k++) {
    const bit = (a + Math.imul(k, b)) & mask;
    if ((bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false;
  }
  return true;
}

/** A filter of `size` bits (a power of two, at least 32) holding every string of `items`. */
export function buildBloom(items: Iterable<string>, size: number): Uint32Array {
  if (size < 32 || (size & (size - 1)) !== 0) throw new Error(`bloom: ${size} bits is no power of two`);
  const bits = new Uint32Array(size / 32);
  const mask = size - 1;
  for (const s of items) {
    const [a, b] = hashes(s, 0, s.length);
    for (let k = 0; k < BLOOM_PROBES; k++) {
      const bit = (a + Math.imul(k, b)) & mask;
      bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  }
  return bits;
}

/**
 * A one-probe bit set of unit pairs (a, b): "a can be followed by b" inside some string of a set,
 * certainly not when the bit is clear. `bits` holds a power of two of bits.
 */
function pairBit(a: number, b: number, mask: number): number {
  return (Math.imul(a, 0x9e3779b1) ^ Math.imul(b, 0x85ebca6b)) & mask;
}

export function pairBitsHas(bits: Uint32Array, a: number, b: number): boolean {
  const bit = pairBit(a, b, bits.length * 32 - 1);
  return (bits[bit >>> 5]! & (1 << (bit & 31))) !== 0;
}

/** The pair bit set of `size` bits (a power of two) over every adjacent pair of units in `items` whose second unit passes `second`. */
export function buildPairBits(items: Iterable<string>, size: number, second: (unit: number) => boolean): Uint32Array {
  if (size < 32 || (size & (size - 1)) !== 0) throw new Error(`bloom: ${size} bits is no power of two`);
  const bits = new Uint32Array(size / 32);
  for (const s of items)
    for (let i = 0; i + 1 < s.length; i++) {
      const b = s.charCodeAt(i + 1);
      if (!second(b)) continue;
      const bit = pairBit(s.charCodeAt(i), b, size - 1);
      bits[bit >>> 5]! |= 1 << (bit & 31);
    }
  return bits;
}
