/**
 * The baseline scorer of `npm run bench:browser`, built by the bench alone: the production Web
 * Worker (browser/src/scorer-worker.ts, minified and split into its entry and engine chunk like
 * the playground's copy) with three modules swapped for the behaviour of releases before the
 * parsed cache: raw-model-store.ts (the raw artifact, parsed and verified on every load, no
 * head), no-head-copy.ts (no OPFS head copy) and crc-engine-source.ts (mapper bundle CRCs checked
 * on every load). The production bundle has no such option; this build is never deployed.
 *
 * Built in memory: the bench hands both chunks to the page, which runs them from blob URLs.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build, type Plugin, type Rollup } from 'vite';
import { asciiOnly } from '../../build/ascii-only';
import { wasmBytes } from '../../browser/vite.config';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');

/** Production module -> its stand-in here. */
const SWAPS = new Map(
  Object.entries({
    'browser/src/model-store.ts': 'raw-model-store.ts',
    'browser/src/head-file.ts': 'no-head-copy.ts',
    'browser/src/engine-source.ts': 'crc-engine-source.ts',
  }).map(([from, to]) => [path.join(root, from), path.join(here, to)]),
);

/** Resolves the production modules to their stand-ins, except for the stand-ins' own imports of them. */
function swapModules(): Plugin {
  return {
    name: 'raw-cache-baseline',
    enforce: 'pre',
    async resolveId(source, importer, options) {
      if (!importer || !source.startsWith('.') || importer.startsWith(here + path.sep)) return null;
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      return (resolved && SWAPS.get(resolved.id)) ?? null;
    },
  };
}

/** The chunk name the entry imports its engine by (the page swaps it for the engine's blob URL). */
export const ENGINE_CHUNK = './baseline-engine.js';

export interface BaselineWorker {
  /** The worker's entry; imports ENGINE_CHUNK. */
  entry: string;
  engine: string;
}

export async function buildBaselineWorker(): Promise<BaselineWorker> {
  const out = (await build({
    configFile: false,
    root,
    publicDir: false,
    logLevel: 'warn',
    plugins: [swapModules(), wasmBytes(), asciiOnly()],
    esbuild: { charset: 'ascii' },
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      modulePreload: false,
      sourcemap: false,
      reportCompressedSize: false,
      rollupOptions: {
        input: path.join(root, 'browser', 'src', 'scorer-worker.ts'),
        // zod's comments that Rollup drops (the production build's warnings too): not this bench's news.
        onwarn: (warning, warn) => warning.code === 'INVALID_ANNOTATION' || warn(warning),
        output: {
          format: 'es',
          entryFileNames: 'baseline-worker.js',
          chunkFileNames: ENGINE_CHUNK.slice(2),
        },
      },
    },
  })) as Rollup.RollupOutput;
  const chunks = out.output.filter((o): o is Rollup.OutputChunk => o.type === 'chunk');
  const entry = chunks.find((c) => c.isEntry);
  const engine = chunks.find((c) => c.fileName === ENGINE_CHUNK.slice(2));
  const swapped = [...SWAPS.values()].every((f) => chunks.some((c) => f in c.modules));
  if (chunks.length !== 2 || !entry || !engine || !swapped || entry.code.split(ENGINE_CHUNK).length !== 2)
    throw new Error(`the baseline worker build is not an entry importing its engine: ${chunks.map((c) => c.fileName)}`);
  return { entry: entry.code, engine: engine.code };
}
