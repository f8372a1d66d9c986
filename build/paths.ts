/**
 * Where the generated data lives (build/generated/, git-ignored) and the default model's id: the
 * one place the build steps, the CLI, the benches and the tests take these paths from. No side
 * effects and nothing heavy imported, so the CLI can name a file without loading a build step.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Language } from '../core/tokenizer/languages';

/** The repository root. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Generated artifacts. EMBEDDING_EDGE_GENERATED moves them (the portable-build test builds into a temp dir). */
export const GENERATED = process.env.EMBEDDING_EDGE_GENERATED
  ? path.resolve(process.env.EMBEDDING_EDGE_GENERATED)
  : path.join(ROOT, 'build', 'generated');

/** The WASM kernels (build/build-wasm.ts); bundled with the code, not in R2. */
export const KERNELS_WASM = path.join(GENERATED, 'kernels.wasm');

/** Tokenizer language data, one file per language (build/lang-data.ts). */
export const LANGUAGE_DIR = path.join(GENERATED, 'lang');

export function languageFile(language: Language): string {
  return path.join(LANGUAGE_DIR, `${language}.bin`);
}

/** Model artifacts: ID.emb with its manifest ID.json (and build stamps, shard folders). */
export const MODELS_DIR = path.join(GENERATED, 'models');

export function modelFile(id: string): string {
  return path.join(MODELS_DIR, `${id}.emb`);
}

export function modelManifestFile(id: string): string {
  return path.join(MODELS_DIR, `${id}.json`);
}

/** Sub-word tables (build/subword-table.ts): SUBWORD_DIR/{modelId}.bin. */
export const SUBWORD_DIR = path.join(GENERATED, 'subword');

export function subwordTableFile(id: string): string {
  return path.join(SUBWORD_DIR, `${id}.bin`);
}

/** Mapper bundles: MAPPERS_DIR/{modelId}/{key}.bin + .json. */
export const MAPPERS_DIR = path.join(GENERATED, 'mappers');

/** The first rows of each model and mapper bundle (progressive cold start, build/model-heads.ts). */
export const MODEL_HEADS_DIR = path.join(GENERATED, 'model-heads');
export const MAPPER_HEADS_DIR = path.join(GENERATED, 'mapper-heads');

/** The browser bundle (build/build-browser.ts): the library and the web app. */
export const BROWSER_LIB_DIR = path.join(GENERATED, 'browser');
export const BROWSER_WEB_DIR = path.join(GENERATED, 'web');

/** Which model and language each deployed Worker serves, and their wrangler configs (build/placement.ts). */
export const PLACEMENT_FILE = path.join(GENERATED, 'placement.json');
export const DEPLOY_DIR = path.join(GENERATED, 'deploy');

/** Bundled Worker code of the local server (build/serve.ts), one folder per bundle. */
export const WORKER_BUNDLES_DIR = path.join(GENERATED, 'worker-bundle');

/** Lexicons extracted from Debian packages, kept between builds (build/mapper/lexicons.ts). */
export const LEXICONS_DIR = path.join(GENERATED, 'lexicons');

/** The default English model (build/default-model.ts: distilled from GloVe and a sentence encoder). */
export const DEFAULT_MODEL_ID = 'en-distilled-glove-use-100d';
export const DEFAULT_MODEL_FILE = modelFile(DEFAULT_MODEL_ID);
export const DEFAULT_MODEL_MANIFEST_FILE = modelManifestFile(DEFAULT_MODEL_ID);

/** GloVe 6B 100d (build/glove-model.ts): the default before the distilled model, kept unchanged in the catalog. */
export const GLOVE_MODEL_ID = 'en-glove-6b-100d';
export const GLOVE_MODEL_FILE = modelFile(GLOVE_MODEL_ID);
export const GLOVE_MODEL_MANIFEST_FILE = modelManifestFile(GLOVE_MODEL_ID);
