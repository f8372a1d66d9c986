/**
 * Regenerates what git does not hold, when missing or stale: the WASM kernels, the default
 * model and its sub-word table (build/subword-table.ts), the aligned de/fr/ja models
 * (build/aligned-models.ts), language data, mapper bundles and the browser bundle. Used by `npm start`, `npm test` (vitest global setup), `npm run bench` and
 * the CLI (build/cli-steps.ts). Each step returns the R2 objects it produced, which `npm start`
 * seeds into local R2.
 */
import { reportDebianSkips } from './debian';

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
}

type Step = (options: EnsureOptions) => Promise<R2Artifact[]>;

/** Steps run in order; later steps may use earlier outputs (mappers need the model). */
const steps: Array<{ name: string; load: () => Promise<Step> }> = [
  { name: 'kernels', load: async () => (await import('./build-wasm')).ensureKernels },
  // Language data first: the model importer computes the vocabulary flags from it.
  { name: 'language-data', load: async () => (await import('./lang-data')).ensureLanguageData },
  { name: 'glove-model', load: async () => (await import('./glove-model')).ensureGloveModel },
  { name: 'default-model', load: async () => (await import('./default-model')).ensureDefaultModel },
  { name: 'subword-table', load: async () => (await import('./subword-table')).ensureSubwordTable },
  { name: 'aligned-models', load: async () => (await import('./aligned-models')).ensureAlignedModels },
  { name: 'default-mappers', load: async () => (await import('./mapper/defaults')).ensureDefaultMappers },
  { name: 'multilingual-mappers', load: async () => (await import('./mapper/multilingual')).ensureMultilingualMappers },
  { name: 'browser', load: async () => (await import('./build-browser')).ensureBrowser },
];

export async function ensureBuilt(options: EnsureOptions = {}): Promise<R2Artifact[]> {
  // Every Debian skip of the run (language data, aligned models) is said once, at its end.
  return reportDebianSkips(async () => {
    const artifacts: R2Artifact[] = [];
    for (const step of steps) {
      const run = await step.load();
      artifacts.push(...(await run(options)));
    }
    // The models' heads and their mapper bundles' heads (progressive cold start of the offline
    // scorer) from the artifacts above.
    const heads = await import('./model-heads');
    artifacts.push(...heads.ensureModelHeads(artifacts), ...heads.ensureMapperHeads(artifacts));
    return artifacts;
  });
}
