/**
 * Hashed word n-gram fingerprints with winnowing (Schleimer, Wilkerson, Aiken 2003).
 *
 * Each n-gram of NGRAM_WORDS normalized words gets a 48-bit hash (a safe JS integer, stored
 * as an SQLite INTEGER). Winnowing keeps the minimum hash of every window of WINDOW
 * consecutive n-gram hashes. Guarantee: two texts sharing a run of at least
 * NGRAM_WORDS + WINDOW - 1 = 8 consecutive words share at least one fingerprint (both select
 * the minimum of the identical window), so a fingerprint lookup finds every source that can
 * hold a match of 8 words, while storing only about 2 / (WINDOW + 1) = 50% of the n-grams.
 */
import { murmur3Finalize } from '../artifact';

export const NGRAM_WORDS = 6;
export const WINDOW = 3;
/** A match is a run of at least this many consecutive words (decisions.md). */
export const MIN_RUN_WORDS = 8;

// The guarantee above holds only while this is true.
if (NGRAM_WORDS + WINDOW - 1 > MIN_RUN_WORDS) throw new Error('winnowing parameters miss runs of MIN_RUN_WORDS');

const FNV_PRIME = 0x01000193;

/** Two independent 32-bit FNV-1a hashes of a word (over UTF-16 code units). */
function wordHashes(word: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < word.length; i++) {
    const c = word.charCodeAt(i);
    a = Math.imul(a ^ c, FNV_PRIME);
    b = Math.imul(b ^ c, 0x5bd1e995) ^ (b >>> 15);
  }
  return [a >>> 0, b >>> 0];
}

/** murmur3 finalizer (fmix32): full avalanche of a 32-bit value. */
const fmix32 = (h: number): number => murmur3Finalize(h, 0);

/**
 * 48-bit hash of every n-gram of n consecutive words: element i hashes words[i .. i+n).
 * Order-sensitive; equal word sequences always hash equally.
 */
export function ngramHashes(norms: readonly string[], n: number = NGRAM_WORDS): number[] {
  const count = norms.length - n + 1;
  if (count <= 0) return [];
  const wa = new Uint32Array(norms.length);
  const wb = new Uint32Array(norms.length);
  for (let i = 0; i < norms.length; i++) {
    const [a, b] = wordHashes(norms[i]);
    wa[i] = a;
    wb[i] = b;
  }
  const out = new Array<number>(count);
  for (let i = 0; i < count; i++) {
    let a = 0x9747b28c ^ n;
    let b = 0x1b873593 ^ n;
    for (let j = i; j < i + n; j++) {
      a = Math.imul(a ^ wa[j], 0xcc9e2d51);
      a = (a << 15) | (a >>> 17);
      b = Math.imul(b ^ wb[j], 0x27d4eb2d);
      b = (b << 13) | (b >>> 19);
    }
    out[i] = fmix32(a) * 65536 + (fmix32(b) & 0xffff);
  }
  return out;
}

/**
 * Robust winnowing: for every window of `window` consecutive hashes, select the minimum
 * (the rightmost one on ties); return the distinct selected hash values, ascending.
 * Fewer hashes than a window: the minimum of all of them.
 */
export function winnow(hashes: readonly number[], window: number = WINDOW): number[] {
  const selected = new Set<number>();
  if (hashes.length === 0) return [];
  if (window <= 1 || hashes.length <= window) {
    if (window <= 1) for (const h of hashes) selected.add(h);
    else selected.add(Math.min(...hashes));
    return [...selected].sort((x, y) => x - y);
  }
  let minPos = -1;
  for (let end = window - 1; end < hashes.length; end++) {
    const start = end - window + 1;
    if (minPos < start) {
      // The previous minimum left the window: rescan it (rightmost minimum).
      minPos = start;
      for (let i = start + 1; i <= end; i++) if (hashes[i] <= hashes[minPos]) minPos = i;
    } else if (hashes[end] <= hashes[minPos]) {
      minPos = end;
    }
    selected.add(hashes[minPos]);
  }
  return [...selected].sort((x, y) => x - y);
}

/** Fingerprints of a normalized word sequence: winnowed n-gram hashes, distinct, ascending. */
export function fingerprints(norms: readonly string[]): number[] {
  return winnow(ngramHashes(norms, NGRAM_WORDS), WINDOW);
}
