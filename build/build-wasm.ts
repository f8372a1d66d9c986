/**
 * Builds the WASM kernels: assembly/index.ts -> build/generated/kernels.wasm with
 * `asc -O3 --enable simd --runtime stub --use abort=` (no imports). Beside it:
 *   kernels.wasm.sha256     hex SHA-256 of the bytes (the workerd test checks the bytes it sees)
 *   kernels.selftest.json   core/kernels-selftest.ts computed in Node on these bytes
 * Rebuilds when the output is missing or any source is newer. Standalone: `npm run build:wasm`.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { EnsureOptions, R2Artifact } from './ensure';
import { writeAtomic } from './stamp';
import { GENERATED, KERNELS_WASM, ROOT } from './paths';

// Also exported here: the tests and benches import it from this module.
export { KERNELS_WASM } from './paths';

const SHA_FILE = `${KERNELS_WASM}.sha256`;
const SELFTEST_FILE = path.join(GENERATED, 'kernels.selftest.json');
const ASC = path.join(ROOT, 'node_modules', 'assemblyscript', 'bin', 'asc.js');

function sources(): string[] {
  const asm = path.join(ROOT, 'assembly');
  return [
    ...fs
      .readdirSync(asm)
      .filter((f) => f.endsWith('.ts') || f.endsWith('.json'))
      .map((f) => path.join(asm, f)),
    path.join(ROOT, 'core', 'kernels.ts'),
    path.join(ROOT, 'core', 'kernels-selftest.ts'),
    path.join(ROOT, 'core', 'quantize.ts'),
    fileURLToPath(import.meta.url),
  ];
}

function stale(): boolean {
  const outputs = [KERNELS_WASM, SHA_FILE, SELFTEST_FILE];
  if (!outputs.every((f) => fs.existsSync(f))) return true;
  const built = Math.min(...outputs.map((f) => fs.statSync(f).mtimeMs));
  return sources().some((f) => fs.existsSync(f) && fs.statSync(f).mtimeMs > built);
}

export async function buildKernels(): Promise<void> {
  fs.mkdirSync(GENERATED, { recursive: true });
  const tmp = path.join(GENERATED, `kernels.${process.pid}.tmp.wasm`);
  const args = [ASC, 'assembly/index.ts', '-O3', '--enable', 'simd', '--runtime', 'stub', '--use', 'abort=', '-o', tmp];
  const res = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  if (res.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`asc failed (${res.status}):\n${res.stdout}\n${res.stderr}`);
  }
  const bytes = fs.readFileSync(tmp);
  fs.rmSync(tmp, { force: true });
  const module = new WebAssembly.Module(bytes);
  const imports = WebAssembly.Module.imports(module);
  if (imports.length > 0) throw new Error(`kernels.wasm must have no imports, has ${JSON.stringify(imports)}`);
  // Import the wrapper after compiling so a broken wrapper still reports asc errors first.
  const { Kernels } = await import('../core/kernels');
  const { kernelSelfTest } = await import('../core/kernels-selftest');
  const selftest = kernelSelfTest(Kernels.fromModule(module));
  // Atomic writes: the node and worker test projects may build at once.
  writeAtomic(SELFTEST_FILE, JSON.stringify(selftest));
  writeAtomic(SHA_FILE, crypto.createHash('sha256').update(bytes).digest('hex'));
  writeAtomic(KERNELS_WASM, bytes);
  console.log(`[build] kernels.wasm: ${bytes.length} bytes, no imports`);
}

/** ensure step: rebuild when missing or stale. The kernels are bundled with the code, not in R2. */
export async function ensureKernels(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  if (stale()) await buildKernels();
  return [];
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildKernels().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
