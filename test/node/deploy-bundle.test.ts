/**
 * `wrangler deploy --dry-run` must build the Worker, and the bundle must fit the Workers size
 * limit (3 MB compressed on the free plan, 10 MB on paid): the model and language data live in
 * R2, never in the script. Nor do bench or test hooks: those live in bench-only entries
 * (bench/workers/) and in the tests, never in the production bundle.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { wranglerSync } from '../../build/wrangler';

const FREE_PLAN_COMPRESSED_LIMIT = 3 * 1024 * 1024;

/** Names of bench and test hooks (matched without regard to case): none may reach a deployment. */
const HOOK_STRINGS = [
  'x-bench-unmetered',
  'x-bench-meter-probe',
  'benchProbe',
  'bench_probe',
  '__BENCH',
  'rawModelCache',
  'pageHeadRead',
  'denseTraversal',
];

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
      const hooks = new Set<string>();
      for (const f of files) {
        const bytes = fs.readFileSync(path.join(f.parentPath, f.name));
        raw += bytes.length;
        gz += zlib.gzipSync(bytes).length;
        const text = bytes.toString('latin1').toLowerCase();
        for (const s of HOOK_STRINGS) if (text.includes(s.toLowerCase())) hooks.add(`${s} in ${f.name}`);
      }
      expect([...hooks]).toEqual([]);
      console.log(`[deploy] bundle ${(raw / 1024).toFixed(0)} KiB, gzip ${(gz / 1024).toFixed(0)} KiB`);
      expect(gz).toBeLessThan(FREE_PLAN_COMPRESSED_LIMIT);
      // The large data never ends up in the script.
      expect(raw).toBeLessThan(10 * 1024 * 1024);
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
});
