/**
 * Regenerates what git does not hold, when missing or stale: the WASM kernels, the default
 * model and its sub-word table (build/subword-table.ts), the aligned de/fr/ja models
 * (build/aligned-models.ts), language data, mapper bundles and the browser bundle. Used by `npm start`, `npm test` (vitest global setup), `npm run bench` and
 * the CLI (build/cli-steps.ts). Each step returns the R2 objects it produced, which `npm start`
 * seeds into local R2.
 *
 * The steps come in two parts: FIRST_STEPS, what the README's example request needs (the kernels,
 * the English language data and the default model), and REST_STEPS. ensureBuilt runs both;
 * `npm start` serves after the first and runs the rest while the server answers (build/start.ts).
 */
import { reportDebianSkips } from './debian';
import type { Language } from '../core/tokenizer/languages';

export interface R2Artifact {
  /** Object key in the ARTIFACTS bucket. */
  key: string;
  /** Local file holding the bytes. */
  file: string;
  contentType?: string;
}

export interface EnsureOptions {
  /**
   * Build the browser bundle (build/generated/browser and web/: two Vite builds) too; default
   * true. `npm start` and the e2e server serve it; the CLI and the node and worker tests need only
   * what the engine reads (kernels, language data, models, mappers) and pass false.
   */
  browserBundle?: boolean;
  /**
   * Called with a part of a step's output as soon as it is built, before the step ends (the
   * language files one by one, the aligned models one by one), so `npm start` serves it while the
   * step goes on; the step's result lists it again.
   */
  onArtifacts?: (artifacts: R2Artifact[]) => Promise<void>;
}

type Step = (options: EnsureOptions) => Promise<R2Artifact[]>;

export interface EnsureStep {
  name: string;
  load: () => Promise<Step>;
}

/** The tokenizer data of `languages`, one file after the other, each announced when built. */
async function languageStep(languages: readonly Language[], options: EnsureOptions): Promise<R2Artifact[]> {
  const { ensureLanguageFiles, languageFile } = await import('./lang-data');
  const { R2_KEYS } = await import('../core/storage-keys');
  const out: R2Artifact[] = [];
  for (const l of languages) {
    await ensureLanguageFiles([l]);
    const a = { key: R2_KEYS.languageData(l), file: languageFile(l), contentType: 'application/octet-stream' };
    await options.onArtifacts?.([a]);
    out.push(a);
  }
  return out;
}

/** What the README's word-scores example needs: the first `npm start` serves once these are built. */
export const FIRST_STEPS: EnsureStep[] = [
  { name: 'kernels', load: async () => (await import('./build-wasm')).ensureKernels },
  // English first: the model importer computes the vocabulary flags from it.
  { name: 'english-language-data', load: async () => (options) => languageStep(['en'], options) },
  { name: 'default-model', load: async () => (await import('./default-model')).ensureDefaultModel },
];

/** Everything else, in order; later steps may use earlier outputs (mappers need the models). */
export const REST_STEPS: EnsureStep[] = [
  { name: 'glove-model', load: async () => (await import('./glove-model')).ensureGloveModel },
  // Before the aligned models, whose importer reads their language's data.
  { name: 'language-data', load: async () => (options) => languageStep(['de', 'fr', 'ja'], options) },
  { name: 'subword-table', load: async () => (await import('./subword-table')).ensureSubwordTable },
  { name: 'aligned-models', load: async () => (await import('./aligned-models')).ensureAlignedModels },
  { name: 'default-mappers', load: async () => (await import('./mapper/defaults')).ensureDefaultMappers },
  { name: 'multilingual-mappers', load: async () => (await import('./mapper/multilingual')).ensureMultilingualMappers },
  { name: 'browser', load: async () => (await import('./build-browser')).ensureBrowser },
];

/** Runs `steps` in order; their artifacts, all together. */
export async function ensureSteps(steps: readonly EnsureStep[], options: EnsureOptions = {}): Promise<R2Artifact[]> {
  const artifacts: R2Artifact[] = [];
  for (const step of steps) {
    const run = await step.load();
    artifacts.push(...(await run(options)));
  }
  return artifacts;
}

/** The models' heads and their mapper bundles' heads (progressive cold start of the offline scorer) of `artifacts`. */
export async function ensureHeads(artifacts: readonly R2Artifact[]): Promise<R2Artifact[]> {
  const heads = await import('./model-heads');
  return [...heads.ensureModelHeads(artifacts), ...heads.ensureMapperHeads(artifacts)];
}

export async function ensureBuilt(options: EnsureOptions = {}): Promise<R2Artifact[]> {
  // Every Debian skip of the run (language data, aligned models) is said once, at its end.
  return reportDebianSkips(async () => {
    const artifacts = await ensureSteps([...FIRST_STEPS, ...REST_STEPS], options);
    artifacts.push(...(await ensureHeads(artifacts)));
    return artifacts;
  });
}
