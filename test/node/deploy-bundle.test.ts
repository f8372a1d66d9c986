/**
 * `wrangler deploy --dry-run` must build the Worker, and the bundle must fit the Workers size
 * limit (3 MB compressed on the free plan, 10 MB on paid): the model and language data live in
 * R2, never in the script.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { wranglerSync } from '../../build/wrangler';

const FREE_PLAN_COMPRESSED_LIMIT = 3 * 1024 * 1024;

describe('deployable bundle', () => {
  it('builds with wrangler deploy --dry-run and stays under the free-plan size limit', () => {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-dry-run-'));
    try {
      wranglerSync(['deploy', '--dry-run', '--outdir', out]);
      const files = fs
        .readdirSync(out, { recursive: true, withFileTypes: true })
        .filter((f) => f.isFile() && !f.name.endsWith('.map'));
      expect(files.some((f) => f.name === 'index.js')).toBe(true);
      let raw = 0;
      let gz = 0;
      for (const f of files) {
        const bytes = fs.readFileSync(path.join(f.parentPath, f.name));
        raw += bytes.length;
        gz += zlib.gzipSync(bytes).length;
      }
      console.log(`[deploy] bundle ${(raw / 1024).toFixed(0)} KiB, gzip ${(gz / 1024).toFixed(0)} KiB`);
      expect(gz).toBeLessThan(FREE_PLAN_COMPRESSED_LIMIT);
      // The large data never ends up in the script.
      expect(raw).toBeLessThan(10 * 1024 * 1024);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
