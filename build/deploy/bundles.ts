/**
 * The Worker scripts of the deployment, bundled by wrangler exactly as `wrangler deploy` would
 * upload them (`--dry-run --outdir`), with the content hash that tells whether a script changed.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pMap from 'p-map';
import { BUNDLE_CONCURRENCY, wranglerAsync } from '../wrangler';
import type { Script } from './target';

/**
 * What a script's deploy uploads, hashed: its modules (sorted by name) and its configuration (vars,
 * bindings). The source map and wrangler's README are left out: they carry the build's time and
 * temporary paths, so the same sources would never hash the same. Bytes: the modules alone.
 */
function hashScript(dir: string, config: string): { sha256: string; bytes: number } {
  const h = crypto.createHash('sha256').update(fs.readFileSync(config));
  let bytes = 0;
  for (const name of fs.readdirSync(dir).sort()) {
    if (name.endsWith('.map') || name === 'README.md') continue;
    const data = fs.readFileSync(path.join(dir, name));
    h.update(`${name}\0${data.length}\0`).update(data);
    bytes += data.length;
  }
  return { sha256: h.digest('hex'), bytes };
}

/** Bundles each configuration (file name = script name) into a temporary directory, in the configurations' order. */
export function bundleScripts(configs: string[]): Promise<Script[]> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-bundles-'));
  return pMap(
    configs,
    async (config) => {
      const name = path.basename(config, '.json');
      const bundleDir = path.join(root, name);
      const upload = path.join(root, `${name}.upload`);
      await wranglerAsync(['deploy', '--dry-run', '--outdir', bundleDir, '--outfile', upload, '-c', config]);
      return { name, config, bundleDir, upload, ...hashScript(bundleDir, config) };
    },
    // Every bundling ends before an error is thrown: none writes into a folder being removed.
    { concurrency: BUNDLE_CONCURRENCY, stopOnError: false },
  );
}

/** SHA-256 of a file, streamed in chunks (artifacts are up to tens of MB). */
export function fileSha256(file: string): string {
  const h = crypto.createHash('sha256');
  const fd = fs.openSync(file, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let n; (n = fs.readSync(fd, buf, 0, buf.length, null)) > 0;) h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return h.digest('hex');
}
