/**
 * MurmurHash3_x86_32 over u32 words: the artifact's section, content and header checksums (and
 * the plagiarism fingerprints).
 */

const C1 = 0xcc9e2d51;
const C2 = 0x1b873593;

/** Mixes words[start..end) into state h; returns the new state (not finalized). */
export function murmur3Update(h: number, words: Uint32Array, start = 0, end = words.length): number {
  for (let i = start; i < end; i++) {
    let k = words[i]!;
    k = Math.imul(k, C1);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, C2);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  return h;
}

/** Final avalanche of MurmurHash3_x86_32; byteLength is the total number of hashed bytes. */
export function murmur3Finalize(h: number, byteLength: number): number {
  h ^= byteLength;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * MurmurHash3_x86_32 (seed 0) of `length` bytes at `offset`, zero-padded to a multiple of 4.
 * Fast path: a Uint32Array view when the offset is 4-aligned and the padded range is inside the buffer.
 */
export function murmur3(buffer: ArrayBufferLike, offset: number, length: number): number {
  const words = Math.ceil(length / 4);
  if (offset % 4 === 0 && offset + words * 4 <= buffer.byteLength) {
    const view = new Uint32Array(buffer, offset, words);
    if (length % 4 !== 0) {
      // Bytes past `length` inside the last word must count as zero.
      const h = murmur3Update(0, view, 0, words - 1);
      return murmur3Finalize(murmur3Update(h, new Uint32Array([lastWord(buffer, offset, length)])), words * 4);
    }
    return murmur3Finalize(murmur3Update(0, view), words * 4);
  }
  const copy = new Uint8Array(words * 4);
  copy.set(new Uint8Array(buffer, offset, length));
  return murmur3Finalize(murmur3Update(0, new Uint32Array(copy.buffer)), words * 4);
}

function lastWord(buffer: ArrayBufferLike, offset: number, length: number): number {
  const bytes = new Uint8Array(buffer, offset, length);
  const start = length - (length % 4);
  let w = 0;
  for (let i = start; i < length; i++) w |= bytes[i]! << (8 * (i - start));
  return w >>> 0;
}

export function hex32(value: number): string {
  return (value >>> 0).toString(16).padStart(8, '0');
}

/** What the manifest's checksum field holds for a content checksum. */
export function formatChecksum(value: number): string {
  return `murmur3:${hex32(value)}`;
}
