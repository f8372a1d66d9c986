/**
 * The baseline scorer of `npm run bench:browser`, built by the bench alone: the production Web
 * Worker (browser/src/scorer-worker.ts, built by Vite's worker pipeline and minified like the
 * playground's copy, its engine a chunk of its own) with three modules swapped for the behaviour of releases before the
 * parsed cache: raw-model-store.ts (the raw artifact, parsed and verified on every load, no
 * head), no-head-copy.ts (no OPFS head copy) and crc-engine-source.ts (mapper bundle CRCs checked
 * on every load). The production bundle has no such option; this build is never deployed.
 *
 * Built in memory: the bench hands the chunks to the page, which runs them from blob URLs.
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

/** The worker's chunks are named `baseline-*.js` and import each other by `./baseline-*.js`. */
const CHUNK = /\.\/baseline-[a-z]+\.js/g;

/**
 * Everything the worker's entry imports statically goes into one chunk of its own (`shared`),
 * which imports nothing: the page can then run the chunks from blob URLs, each created with the
 * URLs of the chunks it imports (the engine imports the entry's modules, the entry the engine).
 */
function sharedChunk(): Rollup.ManualChunksOption {
  let shared: Set<string> | undefined;
  return (id, { getModuleIds, getModuleInfo }) => {
    if (!shared) {
      const entry = [...getModuleIds()].find((m) => getModuleInfo(m)?.isEntry);
      shared = new Set();
      const visit = (m: string): void => {
        if (shared!.has(m)) return;
        shared!.add(m);
        for (const next of getModuleInfo(m)?.importedIds ?? []) visit(next);
      };
      if (entry) visit(entry);
      // The entry module stays the entry chunk's own (a manual chunk holding it would be the entry).
      shared.delete(entry!);
    }
    return shared.has(id) ? 'shared' : undefined;
  };
}

/** One chunk of the baseline worker: its file name and code. */
export interface BaselineChunk {
  fileName: string;
  code: string;
}

/** The baseline worker's chunks, each after the chunks it imports; the last is the worker's entry. */
export async function buildBaselineWorker(): Promise<BaselineChunk[]> {
  const out = (await build({
    configFile: false,
    root,
    publicDir: false,
    // Its warnings are the production build's (zod's dropped annotations) or nothing to act on
    // (the empty chunk of worker-entry.ts, whose only use is naming the worker).
    logLevel: 'error',
    esbuild: { charset: 'ascii' },
    // The playground's worker options (browser/vite.config.ts), with the stand-ins swapped in.
    worker: {
      format: 'es',
      plugins: () => [swapModules(), wasmBytes(), asciiOnly()],
      rollupOptions: {
        output: {
          entryFileNames: 'baseline-worker.js',
          chunkFileNames: 'baseline-[name].js',
          manualChunks: sharedChunk(),
        },
      },
    },
    build: {
      write: false,
      target: 'es2022',
      minify: true,
      sourcemap: false,
      reportCompressedSize: false,
      rollupOptions: { input: path.join(here, 'worker-entry.ts') },
    },
  })) as Rollup.RollupOutput;
  const code = new Map(
    out.output
      .filter((o) => /^baseline-[a-z]+\.js$/.test(o.fileName))
      .map((o) => [o.fileName, o.type === 'asset' ? String(o.source) : o.code]),
  );
  const importsOf = (c: string): string[] => [...new Set([...c.matchAll(CHUNK)].map((m) => m[0].slice(2)))];
  // Dependency order: a chunk after every chunk it imports.
  const ordered: BaselineChunk[] = [];
  while (ordered.length < code.size) {
    const next = [...code].find(
      ([f, c]) =>
        !ordered.some((o) => o.fileName === f) && importsOf(c).every((i) => ordered.some((o) => o.fileName === i)),
    );
    if (!next) throw new Error(`the baseline worker's chunks import each other in a cycle: ${[...code.keys()]}`);
    ordered.push({ fileName: next[0], code: next[1] });
  }
  const names = ordered.map((c) => c.fileName).join(', ');
  if (ordered.length !== 3 || ordered.at(-1)!.fileName !== 'baseline-worker.js')
    throw new Error(`the baseline worker is not an entry, its shared modules and its engine: ${names}`);
  return ordered;
}
