/**
 * Vite builds of the browser bundle (`npm run build:browser` runs both, see build/build-browser.ts):
 *   --mode lib         the library: build/generated/browser/offline-scorer.js (ES module entry)
 *                      + offline-scorer.worker.js (the Web Worker's entry, kernels.wasm inlined)
 *                      + offline-scorer.engine-[hash].js (its engine, imported by the entry: deploy
 *                        both next to each other)
 *   --mode playground  the playground page served by the Worker at /: build/generated/web/
 * `*.wasm?bytes` imports inline the file as a Uint8Array (the same bytes as the Worker's).
 */
import { defineConfig, type Plugin, type Rollup } from 'vite';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { asciiOnly } from '../build/ascii-only';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');

export function wasmBytes(): Plugin {
  return {
    name: 'wasm-bytes',
    enforce: 'pre',
    async resolveId(source, importer) {
      if (!source.endsWith('.wasm?bytes')) return null;
      const file = path.resolve(importer ? path.dirname(importer) : root, source.slice(0, -'?bytes'.length));
      return `\0wasm-bytes:${file}`;
    },
    load(id) {
      if (!id.startsWith('\0wasm-bytes:')) return null;
      const file = id.slice('\0wasm-bytes:'.length);
      this.addWatchFile(file);
      const b64 = fs.readFileSync(file).toString('base64');
      return `const s = atob(${JSON.stringify(b64)}); const b = new Uint8Array(s.length); for (let i = 0; i < s.length; i++) b[i] = s.charCodeAt(i); export default b;`;
    },
  };
}

/**
 * ASCII output (non-ASCII characters escaped): Vite's default is UTF-8, and a single non-ASCII
 * character (the tokenizer's tables and regexes have many) makes the whole script a two-byte
 * string in V8, slower to decode and to parse before the worker's first line runs (the worker's
 * first code ~20 ms earlier on the test machine, docs/offline-browser.md). esbuild escapes strings
 * but not regular expression literals, hence asciiOnly() on the output.
 */
const esbuild = { charset: 'ascii' as const };

/**
 * zod 4's sources carry comments that mention `@__PURE__` in prose, where Rollup cannot read them
 * as annotations: it says so for each (INVALID_ANNOTATION, several lines apiece) and drops the
 * comment, which changes nothing in the bundle. Only that code from zod is dropped; every other
 * warning, and this one from any other source, is still printed.
 */
export function onwarn(warning: Rollup.RollupLog, warn: (w: Rollup.RollupLog) => void): void {
  if (warning.code === 'INVALID_ANNOTATION' && /[\\/]node_modules[\\/]zod[\\/]/.test(warning.id ?? '')) return;
  warn(warning);
}

const worker = {
  format: 'es' as const,
  plugins: () => [wasmBytes(), asciiOnly()],
  rollupOptions: {
    onwarn,
    output: {
      entryFileNames: 'assets/offline-scorer.worker-[hash].js',
      // The engine chunk the worker's entry imports (browser/src/scorer-worker.ts): parsed off the worker's thread.
      chunkFileNames: 'assets/offline-scorer.engine-[hash].js',
    },
  },
};

export default defineConfig(({ mode }) => {
  if (mode === 'playground') {
    return {
      root: path.join(here, 'playground'),
      base: '/',
      publicDir: false,
      logLevel: 'warn',
      plugins: [wasmBytes(), asciiOnly()],
      esbuild,
      worker,
      build: {
        outDir: path.join(root, 'build', 'generated', 'web'),
        emptyOutDir: true,
        assetsDir: 'assets',
        target: 'es2022',
        sourcemap: false,
        reportCompressedSize: false,
        rollupOptions: { onwarn },
      },
    };
  }
  return {
    root,
    base: './',
    publicDir: false,
    logLevel: 'warn',
    plugins: [wasmBytes(), asciiOnly()],
    esbuild,
    worker: {
      ...worker,
      rollupOptions: {
        onwarn,
        output: { entryFileNames: 'offline-scorer.worker.js', chunkFileNames: 'offline-scorer.engine.js' },
      },
    },
    build: {
      outDir: path.join(root, 'build', 'generated', 'browser'),
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      rollupOptions: { onwarn },
      lib: { entry: path.join(here, 'src', 'index.ts'), formats: ['es'], fileName: () => 'offline-scorer.js' },
    },
  };
});
