/**
 * Bundle size of each Worker script of the deployment: `wrangler deploy --dry-run` builds it from
 * its wrangler config (as the deploy would) and writes the upload it would send (--outfile, a
 * multipart form: the metadata and every module with its type). Sizes are taken from that upload,
 * gzip as wrangler reports it (one gzip of the modules joined, the main module last).
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { wranglerAsync } from '../wrangler';
import { WORKER_SIZE_GZIP, WORKERS_LIMITS_URL, type Plan } from './figures';
import { formatValue, row, type LimitRow } from './table';

export type ModuleType = 'ESModule' | 'CompiledWasm' | 'Text' | 'Data';

export interface BundleModule {
  /** Module name as the main module imports it (no leading ./). */
  name: string;
  type: ModuleType;
  bytes: Uint8Array;
}

export interface Bundle {
  script: string;
  mainModule: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
  /** The main module first. */
  modules: BundleModule[];
}

const TYPES: Record<string, ModuleType> = {
  'application/javascript+module': 'ESModule',
  'application/wasm': 'CompiledWasm',
  'text/plain': 'Text',
  'application/octet-stream': 'Data',
};

/** The upload wrangler would send (its --outfile), read back into modules. */
export async function readUpload(script: string, file: string): Promise<Bundle> {
  const buf = fs.readFileSync(file);
  const boundary = buf.subarray(2, buf.indexOf('\r\n')).toString();
  const form = await new Response(buf, {
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
  }).formData();
  const meta = JSON.parse(String(form.get('metadata'))) as {
    main_module: string;
    compatibility_date: string;
    compatibility_flags?: string[];
  };
  const parts: Array<[string, Blob]> = [];
  form.forEach((part, name) => {
    if (name !== 'metadata' && typeof part !== 'string') parts.push([name, part]);
  });
  const modules: BundleModule[] = [];
  for (const [name, part] of parts) {
    const type = TYPES[part.type.split(';')[0]!];
    if (!type) throw new Error(`${script}: module ${name} has an unknown type ${part.type}`);
    modules.push({ name: name.replace(/^\.\//, ''), type, bytes: new Uint8Array(await part.arrayBuffer()) });
  }
  modules.sort((a, b) => Number(b.name === meta.main_module) - Number(a.name === meta.main_module));
  return {
    script,
    mainModule: meta.main_module,
    compatibilityDate: meta.compatibility_date,
    compatibilityFlags: meta.compatibility_flags ?? [],
    modules,
  };
}

/** Builds one script from its wrangler config with `wrangler deploy --dry-run`, in `workDir`. */
export async function buildBundle(script: string, config: string, workDir: string): Promise<Bundle> {
  const outdir = path.join(workDir, script);
  const outfile = path.join(workDir, `${script}.upload`);
  await wranglerAsync(['deploy', '--dry-run', '--outdir', outdir, '--outfile', outfile, '-c', config]);
  return readUpload(script, outfile);
}

/** Raw bytes and gzip bytes of modules, as wrangler's "Total Upload" line counts them. */
export function bundleSize(modules: readonly BundleModule[]): { raw: number; gzip: number } {
  // wrangler gzips the other modules then the main one, joined; the main module is first here.
  const ordered = [...modules.slice(1), ...modules.slice(0, 1)];
  const joined = Buffer.concat(ordered.map((m) => m.bytes));
  return { raw: joined.length, gzip: zlib.gzipSync(joined).length };
}

/** Files as modules (the first one the main module), for checking a bundle wrangler did not build. */
export function modulesOfFiles(files: readonly string[]): BundleModule[] {
  return files.map((f) => ({ name: path.basename(f), type: 'Data' as const, bytes: fs.readFileSync(f) }));
}

/**
 * The size rows of one script: its gzip against the free and the paid cap. The cap of the plan
 * checked is hard (the upload is refused over it); the other plan's row only informs.
 */
export function bundleSizeRows(script: string, modules: readonly BundleModule[], plan: Plan): LimitRow[] {
  const { raw, gzip } = bundleSize(modules);
  return (['free', 'paid'] as const).map((p) =>
    row({
      check: `bundle size (${p})`,
      subject: script,
      value: gzip,
      unit: 'bytes',
      measured: true,
      limit: WORKER_SIZE_GZIP[p],
      source: `${WORKERS_LIMITS_URL}#worker-size`,
      hard: p === plan,
      note: `gzip of ${modules.length} modules; raw ${formatValue(raw, 'bytes')}${p === plan ? '' : ` (informative: the plan checked is ${plan})`}`,
    }),
  );
}
