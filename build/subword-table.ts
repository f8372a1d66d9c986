/**
 * The sub-word table of the default English model (core/subword.ts; docs/models-and-kernels.md
 * "Sub-word fallback"): B bucket vectors in the model's space such that, for each vocabulary
 * word, the mean of its n-grams' bucket vectors is as close as possible to the word's unit row
 * (least squares). Trained by stochastic gradient descent, as fastText trains its n-grams:
 * buckets start at zero; words are visited in an order shuffled per epoch by the seeded PRNG
 * (core/prng.ts); each visit moves every bucket of the word by lr * (row - mean), lr falling
 * linearly from LEARNING_RATE to 0 over the run. Same model bytes -> same table bytes.
 *
 * Trained on the SUBWORD_TRAINING_WORDS most frequent single words with a letter (phrase rows,
 * numbers and rarer words are left out). B, the words and the epochs were chosen by
 * `npx tsx build/subword-table.ts --measure`: held-out words of the model, never the dev pairs
 * (docs/models-and-kernels.md has the figures).
 *
 * Output: build/generated/subword/{modelId}.bin (R2 subword/{modelId}.bin), rebuilt when the
 * model's checksum or this recipe changes (stamp beside it). Follows DEFAULT_MODEL_ID.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeWord, parseArtifact } from '../core/artifact';
import { prng } from '../core/prng';
import { quantizeRows } from '../core/quantize';
import { R2_KEYS } from '../core/storage-keys';
import { ngramBuckets, writeSubwordTable, type SubwordTableMeta } from '../core/subword';
import type { EnsureOptions, R2Artifact } from './ensure';
import { DEFAULT_MODEL_FILE, DEFAULT_MODEL_ID, subwordTableFile } from './paths';
import { stampMatches, withLock, writeAtomic, writeStamp } from './stamp';

/** Buckets, training words and epochs of the shipped table (chosen by --measure). */
export const SUBWORD_BUCKETS = 131_072;
/** The most frequent single words with a letter: rarer rows are noisy and pull composed vectors into their own region. */
export const SUBWORD_TRAINING_WORDS = 100_000;
export const SUBWORD_EPOCHS = 10;
export const LEARNING_RATE = 0.1;
/** Bumped when the recipe changes: the table is rebuilt. */
export const SUBWORD_BUILD_VERSION = 1;
const SEED = 36;

const LETTER = /\p{L}/u;

export interface TrainingWords {
  dims: number;
  /** The words' unit rows, dims floats each. */
  targets: Float32Array;
  /** Bucket lists of every word, concatenated; word i's are at from[i] .. from[i + 1] - 1. */
  lists: Int32Array;
  from: Int32Array;
  words: string[];
}

/** The single words with a letter of a model artifact, their unit rows and n-gram buckets. */
export function trainingWords(artifact: Uint8Array, buckets: number): TrainingWords {
  const p = parseArtifact(artifact);
  const words: string[] = [];
  const rows: number[] = [];
  for (let r = 0; r < p.size; r++) {
    const w = decodeWord(p.vocab, p.wordOffsets, r);
    if (!LETTER.test(w) || /\s/u.test(w)) continue;
    words.push(w);
    rows.push(r);
  }
  const dims = p.dims;
  const targets = new Float32Array(rows.length * dims);
  const parts: Int32Array[] = [];
  const from = new Int32Array(rows.length + 1);
  rows.forEach((r, i) => {
    const s = p.scales[r]!;
    for (let d = 0; d < dims; d++) targets[i * dims + d] = p.rows[r * dims + d]! * s;
    const list = ngramBuckets(words[i]!, buckets);
    parts.push(list);
    from[i + 1] = from[i]! + list.length;
  });
  const lists = new Int32Array(from[rows.length]!);
  parts.forEach((l, i) => lists.set(l, from[i]!));
  return { dims, targets, lists, from, words };
}

/** Bucket vectors (buckets x dims floats) trained on the words `use` selects. */
export function trainBuckets(
  t: TrainingWords,
  buckets: number,
  epochs: number,
  use: (i: number) => boolean = () => true,
  learningRate = LEARNING_RATE,
): Float32Array {
  const { dims, targets, lists, from } = t;
  const z = new Float32Array(buckets * dims);
  const order: number[] = [];
  for (let i = 0; i < t.words.length; i++) if (use(i)) order.push(i);
  const random = prng(SEED);
  const mean = new Float32Array(dims);
  const total = epochs * order.length;
  let step = 0;
  for (let e = 0; e < epochs; e++) {
    // Fisher-Yates with the seeded PRNG: the same order on every machine.
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const x = order[i]!;
      order[i] = order[j]!;
      order[j] = x;
    }
    for (const i of order) {
      const a = from[i]!;
      const b = from[i + 1]!;
      const lr = learningRate * (1 - step++ / total);
      if (b === a) continue;
      mean.fill(0);
      for (let k = a; k < b; k++) {
        const base = lists[k]! * dims;
        for (let d = 0; d < dims; d++) mean[d] += z[base + d]!;
      }
      const inv = 1 / (b - a);
      const tb = i * dims;
      // mean becomes the step: lr * (row - mean)
      for (let d = 0; d < dims; d++) mean[d] = lr * (targets[tb + d]! - mean[d]! * inv);
      for (let k = a; k < b; k++) {
        const base = lists[k]! * dims;
        for (let d = 0; d < dims; d++) z[base + d] += mean[d]!;
      }
    }
  }
  return z;
}

/** Mean cosine of the composed vectors (float buckets) of the words `use` selects with their rows. */
export function meanCosine(t: TrainingWords, z: Float32Array, use: (i: number) => boolean): number {
  const { dims, targets, lists, from } = t;
  const v = new Float64Array(dims);
  let sum = 0;
  let n = 0;
  for (let i = 0; i < t.words.length; i++) {
    if (!use(i)) continue;
    v.fill(0);
    for (let k = from[i]!; k < from[i + 1]!; k++) {
      const base = lists[k]! * dims;
      for (let d = 0; d < dims; d++) v[d] += z[base + d]!;
    }
    let dot = 0;
    let norm = 0;
    for (let d = 0; d < dims; d++) {
      dot += v[d]! * targets[i * dims + d]!;
      norm += v[d]! * v[d]!;
    }
    sum += norm > 0 ? dot / Math.sqrt(norm) : 0;
    n++;
  }
  return n > 0 ? sum / n : 0;
}

/** int8 rows with one scale each that keep each bucket vector's length (int8 * scale is the vector). */
export function quantizeBuckets(
  z: Float32Array,
  buckets: number,
  dims: number,
): { rows: Int8Array; scales: Float32Array } {
  const q = quantizeRows(z, buckets, dims);
  for (let b = 0; b < buckets; b++) {
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += z[b * dims + d]! * z[b * dims + d]!;
    q.scales[b] = q.scales[b]! * Math.sqrt(norm);
  }
  return q;
}

/** The table artifact of a model artifact. */
export function buildSubwordTable(
  artifact: Uint8Array,
  /** exclude: words left out of training (bench:subword leaves out the dev pairs' words). */
  options: { buckets?: number; epochs?: number; words?: number; exclude?: ReadonlySet<string> } = {},
): { bytes: Uint8Array<ArrayBuffer>; meta: SubwordTableMeta } {
  const buckets = options.buckets ?? SUBWORD_BUCKETS;
  const epochs = options.epochs ?? SUBWORD_EPOCHS;
  const words = options.words ?? SUBWORD_TRAINING_WORDS;
  const manifest = parseArtifact(artifact).manifest;
  const t = trainingWords(artifact, buckets);
  const exclude = options.exclude;
  const used = (i: number) => i < words && !exclude?.has(t.words[i]!);
  const z = trainBuckets(t, buckets, epochs, used);
  const { rows, scales } = quantizeBuckets(z, buckets, t.dims);
  const meta: SubwordTableMeta = {
    modelId: manifest.id,
    modelChecksum: manifest.checksum,
    hash: 'fnv1a32',
    training: {
      version: SUBWORD_BUILD_VERSION,
      words: Math.min(words, t.words.length),
      epochs,
      learningRate: LEARNING_RATE,
      seed: SEED,
      trainingMeanCosine: Number(meanCosine(t, z, used).toFixed(4)),
    },
  };
  return { bytes: writeSubwordTable(meta, rows, scales, t.dims), meta };
}

const stampFile = (id: string) => subwordTableFile(id).replace(/\.bin$/, '.stamp.json');

function stampFor(modelChecksum: string) {
  return {
    version: SUBWORD_BUILD_VERSION,
    model: DEFAULT_MODEL_ID,
    modelChecksum,
    buckets: SUBWORD_BUCKETS,
    words: SUBWORD_TRAINING_WORDS,
    epochs: SUBWORD_EPOCHS,
    learningRate: LEARNING_RATE,
  };
}

function modelChecksum(): string {
  return JSON.parse(fs.readFileSync(DEFAULT_MODEL_FILE.replace(/\.emb$/, '.json'), 'utf8')).checksum;
}

function isFresh(): boolean {
  return (
    fs.existsSync(subwordTableFile(DEFAULT_MODEL_ID)) &&
    stampMatches(stampFile(DEFAULT_MODEL_ID), stampFor(modelChecksum()))
  );
}

function artifacts(): R2Artifact[] {
  return [{ key: R2_KEYS.subwordTable(DEFAULT_MODEL_ID), file: subwordTableFile(DEFAULT_MODEL_ID) }];
}

/** Ensure step (after the default model): the default model's table, when missing or stale. */
export async function ensureSubwordTable(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  if (isFresh()) return artifacts();
  const file = subwordTableFile(DEFAULT_MODEL_ID);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return withLock(
    file.replace(/\.bin$/, '.lock'),
    5 * 60_000,
    isFresh,
    async () => {
      const started = Date.now();
      const checksum = modelChecksum();
      const { bytes, meta } = buildSubwordTable(new Uint8Array(fs.readFileSync(DEFAULT_MODEL_FILE)));
      writeAtomic(file, bytes);
      writeStamp(stampFile(DEFAULT_MODEL_ID), stampFor(checksum));
      console.error(
        `[build] sub-word table ${DEFAULT_MODEL_ID}: ${SUBWORD_BUCKETS} buckets, ${(bytes.length / 1e6).toFixed(1)} MB, ` +
          `${meta.training.words} words, ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      return artifacts();
    },
    artifacts,
  );
}

/**
 * --measure: the held-out mean cosine of composed vectors with their rows, for words a person
 * types: every 20th of the 50,000 most frequent words is held out, the tables are trained on the
 * others among the N most frequent, for each bucket count, N and epoch count (learning rate
 * LEARNING_RATE). Last line one JSON object.
 */
async function measure(): Promise<void> {
  const artifact = new Uint8Array(fs.readFileSync(DEFAULT_MODEL_FILE));
  const held = (i: number) => i % 20 === 0 && i < 50_000;
  const results: Array<{ buckets: number; words: number; epochs: number; heldOut: number }> = [];
  for (const buckets of [65_536, 131_072]) {
    const t = trainingWords(artifact, buckets);
    for (const words of [25_000, 50_000, 100_000, t.words.length]) {
      for (const epochs of [1, 3, 5, 10, 20]) {
        // The whole vocabulary only up to 10 epochs (it is far behind and slow).
        if (words === t.words.length && epochs > 10) continue;
        const started = Date.now();
        const z = trainBuckets(t, buckets, epochs, (i) => i < words && !held(i));
        const r = { buckets, words, epochs, heldOut: Number(meanCosine(t, z, held).toFixed(4)) };
        results.push(r);
        console.log(
          `buckets ${buckets} (${((buckets * (t.dims + 4)) / 1e6).toFixed(1)} MB), ${words} words, ${epochs} epochs: ` +
            `held-out cos ${r.heldOut} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
        );
      }
    }
  }
  console.log(JSON.stringify({ model: DEFAULT_MODEL_ID, results }));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  (process.argv.includes('--measure') ? measure() : ensureSubwordTable()).catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
