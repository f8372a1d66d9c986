// Node module hooks that let plain Node import the Worker's Hono app (worker/app.ts) to produce
// its OpenAPI document without a server: the two kinds of modules that wrangler's bundler
// provides (wrangler.toml [[rules]]) are given the same shape here.
//   *.wasm                          -> CompiledWasm: default export = WebAssembly.Module
//   swagger-ui-dist/*.js, *.css     -> Text: default export = the file's text
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const TEXT = /[\\/]swagger-ui-dist[\\/]swagger-ui(-bundle\.js|\.css)$/;

export async function load(url, context, nextLoad) {
  if (url.startsWith('file:')) {
    const file = fileURLToPath(url);
    if (file.endsWith('.wasm')) {
      const source = `import fs from 'node:fs';\nexport default new WebAssembly.Module(fs.readFileSync(${JSON.stringify(file)}));\n`;
      return { format: 'module', source, shortCircuit: true };
    }
    if (TEXT.test(file)) {
      return {
        format: 'module',
        source: `export default ${JSON.stringify(fs.readFileSync(file, 'utf8'))};\n`,
        shortCircuit: true,
      };
    }
  }
  return nextLoad(url, context);
}
