/**
 * The tokenizer's word cache (so a repeated word costs one lookup): a value per surface form, looked up by the form's
 * characters in the text, so a token costs a hash over its UTF-16 code units and one compare
 * instead of a substring, its string hash and a Map probe. Open addressing with linear probing
 * over a seeded FNV-1a hash; keys live in one Uint16Array pool.
 *
 * Bounded and linear on any input: at most `capacity` forms of at most `maxLength` units (then
 * the table starts over, as the Map it replaces did), and a probe looks at most MAX_PROBE slots
 * (a form whose run is full is not cached: the caller computes it afresh), so colliding forms
 * cost a bounded amount of work per token. The seed is random per table.
 */

/** Slots a lookup or insert looks at before giving up. */
export const MAX_PROBE = 32;
/** Slots of a new table (it doubles at half load). */
export const INITIAL_SLOTS = 1 << 12;
const INITIAL_POOL = 1 << 15;

export class WordTable<T> {
  /** Entry index + 1 per slot; 0 is empty. */
  private slots = new Int32Array(INITIAL_SLOTS);
  private hashes = new Int32Array(INITIAL_SLOTS >> 1);
  private keyStart = new Int32Array(INITIAL_SLOTS >> 1);
  private keyLength = new Int32Array(INITIAL_SLOTS >> 1);
  private pool = new Uint16Array(INITIAL_POOL);
  private poolUsed = 0;
  private values: T[] = [];
  /** Hash of the last get() (add() after a miss reuses it). */
  private lastHash = 0;

  constructor(
    readonly capacity: number,
    readonly maxLength: number,
    /** Hash seed (random unless a test fixes it). */
    private readonly seed = (Math.random() * 0x100000000) | 0,
  ) {}

  get size(): number {
    return this.values.length;
  }

  private hash(text: string, start: number, end: number): number {
    return wordHash(this.seed, text, start, end);
  }

  /** The value of the form text[start, end), or undefined. */
  get(text: string, start: number, end: number): T | undefined {
    const len = end - start;
    if (len > this.maxLength) return undefined;
    const h = (this.lastHash = this.hash(text, start, end));
    const { slots, hashes, keyStart, keyLength, pool } = this;
    const mask = slots.length - 1;
    for (let p = 0, s = h & mask; p < MAX_PROBE; p++, s = (s + 1) & mask) {
      const e = slots[s] - 1;
      if (e < 0) return undefined;
      if (hashes[e] !== h || keyLength[e] !== len) continue;
      const k = keyStart[e];
      let i = 0;
      while (i < len && pool[k + i] === text.charCodeAt(start + i)) i++;
      if (i === len) return this.values[e];
    }
    return undefined;
  }

  /** Stores the value of text[start, end) right after get() missed it (not stored when its probe run is full). */
  add(text: string, start: number, end: number, value: T): void {
    const len = end - start;
    if (len > this.maxLength) return;
    if (this.values.length >= this.capacity) this.clear();
    if (2 * (this.values.length + 1) > this.slots.length) this.grow();
    const h = this.lastHash;
    const mask = this.slots.length - 1;
    let s = h & mask;
    let p = 0;
    while (this.slots[s] !== 0 && p < MAX_PROBE) {
      s = (s + 1) & mask;
      p++;
    }
    if (p === MAX_PROBE) return;
    const e = this.values.length;
    if (e >= this.hashes.length) {
      const n = 2 * this.hashes.length;
      this.hashes = resized(this.hashes, n);
      this.keyStart = resized(this.keyStart, n);
      this.keyLength = resized(this.keyLength, n);
    }
    if (this.poolUsed + len > this.pool.length) {
      const pool = new Uint16Array(Math.max(2 * this.pool.length, this.poolUsed + len));
      pool.set(this.pool.subarray(0, this.poolUsed));
      this.pool = pool;
    }
    for (let i = 0; i < len; i++) this.pool[this.poolUsed + i] = text.charCodeAt(start + i);
    this.hashes[e] = h;
    this.keyStart[e] = this.poolUsed;
    this.keyLength[e] = len;
    this.poolUsed += len;
    this.values.push(value);
    this.slots[s] = e + 1;
  }

  clear(): void {
    this.slots = new Int32Array(INITIAL_SLOTS);
    this.hashes = new Int32Array(INITIAL_SLOTS >> 1);
    this.keyStart = new Int32Array(INITIAL_SLOTS >> 1);
    this.keyLength = new Int32Array(INITIAL_SLOTS >> 1);
    this.pool = new Uint16Array(INITIAL_POOL);
    this.poolUsed = 0;
    this.values = [];
  }

  /** Doubles the slots and re-inserts every entry (entries whose run is full are dropped from the index). */
  private grow(): void {
    const slots = new Int32Array(2 * this.slots.length);
    const mask = slots.length - 1;
    for (let e = 0; e < this.values.length; e++) {
      let s = this.hashes[e] & mask;
      for (let p = 0; p < MAX_PROBE; p++, s = (s + 1) & mask) {
        if (slots[s] === 0) {
          slots[s] = e + 1;
          break;
        }
      }
    }
    this.slots = slots;
  }
}

function resized(a: Int32Array, n: number): Int32Array<ArrayBuffer> {
  const out = new Int32Array(n);
  out.set(a);
  return out;
}

/** The table's hash of text[start, end): FNV-1a over the UTF-16 units from a seeded basis, then mixed. */
export function wordHash(seed: number, text: string, start: number, end: number): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = start; i < end; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  h ^= h >>> 16;
  return Math.imul(h, 0x45d9f3b) ^ (h >>> 13);
}
