/**
 * `npm run deploy:check` (build/limits-check.ts): the real build passes every hard limit, a bundle
 * over the size cap fails it, and the subrequest table repeats the code's constants faithfully.
 * No timing is asserted (CPU and startup depend on the machine).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatReport, runLimitsCheck } from '../../build/limits-check';
import { bundleSizeRows, modulesOfFiles } from '../../build/limits/bundle';
import { WORKER_SIZE_GZIP } from '../../build/limits/figures';
import {
  METER_ATTEMPTS,
  PLAGIARISM_CANDIDATES,
  PLAGIARISM_HTTP_RETRIES,
  SEED_IDS_PER_STATEMENT,
} from '../../build/limits/subrequests';
import { failed } from '../../build/limits/table';
import { ROOT } from '../../build/paths';
import { placementOf } from '../../build/placement';
import { API_WORKER, hostWorkerName } from '../../build/topology';

/** A file of `bytes` random (incompressible) bytes in a fresh temp dir. */
function randomFile(bytes: number): { file: string; dir: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-test-'));
  const file = path.join(dir, 'index.js');
  fs.writeFileSync(file, crypto.randomBytes(bytes));
  return { file, dir };
}

describe('deploy:check', () => {
  it('passes on the real build, with a row for every script, host and endpoint family', async () => {
    const report = await runLimitsCheck({ runs: 1 });
    expect(failed(report.rows)).toEqual([]);
    expect(report.failed).toBe(0);
    expect(report.plan).toBe('paid');

    const placement = placementOf(undefined)!;
    const scripts = [API_WORKER, ...placement.hosts.map((h) => hostWorkerName(h.name))].sort();
    const subjects = (check: string) =>
      [...new Set(report.rows.filter((r) => r.check === check).map((r) => r.subject))].sort();
    expect(subjects('bundle size (paid)')).toEqual(scripts);
    expect(subjects('bundle size (free)')).toEqual(scripts);
    expect(subjects('startup')).toEqual(scripts);
    expect(subjects('memory')).toEqual(placement.hosts.map((h) => h.name).sort());
    for (const family of [
      'text-scores',
      'word-scores find-and-score',
      'word-scores whitelist',
      'tokenizations',
      'autocomplete-suggestions',
      'word-availabilities',
      'word-similarity-matrices',
      'plagiarism-checks (local)',
    ]) {
      expect(subjects('cpu per request')).toContain(family);
      expect(subjects('subrequests')).toContain(family);
    }
    expect(report.rows.some((r) => r.check.startsWith('r2 object'))).toBe(true);
    // Every row cites where its limit is published.
    for (const r of report.rows)
      expect(r.source).toMatch(/^(https:\/\/developers\.cloudflare\.com\/|node_modules\/wrangler)/);

    // The printed report ends with one JSON object of the figures (the bench convention).
    const last = formatReport(report).trimEnd().split('\n').at(-1)!;
    expect(JSON.parse(last)).toMatchObject({ limits_failed: 0 });
  });

  it('fails a bundle over the size cap of the plan checked', () => {
    const { file, dir } = randomFile(WORKER_SIZE_GZIP.paid + 1024 * 1024);
    try {
      const rows = bundleSizeRows('oversized', modulesOfFiles([file]), 'paid');
      expect(rows.map((r) => r.status)).toEqual(['warn', 'fail']); // free (informative), paid (the plan checked)
      expect(failed(rows)).toHaveLength(1);
      const free = bundleSizeRows('oversized', modulesOfFiles([file]), 'free');
      expect(free.map((r) => r.status)).toEqual(['fail', 'warn']); // free (the plan checked), paid (informative)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds a bundle between the free and the paid cap to the plan checked', () => {
    const { file, dir } = randomFile(WORKER_SIZE_GZIP.free + 1024 * 1024);
    try {
      expect(failed(bundleSizeRows('between', modulesOfFiles([file]), 'paid'))).toEqual([]);
      expect(failed(bundleSizeRows('between', modulesOfFiles([file]), 'free')).map((r) => r.check)).toEqual([
        'bundle size (free)',
      ]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('counts subrequests with the constants of the code it reasons from', () => {
    const source = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');
    expect(source('worker/quotas/meter-client.ts')).toContain(`const ATTEMPTS_WHEN_RETRYABLE = ${METER_ATTEMPTS};`);
    expect(source('worker/plagiarism/local.ts')).toContain(`export const MAX_CANDIDATES = ${PLAGIARISM_CANDIDATES};`);
    expect(source('worker/plagiarism/provider.ts')).toContain(`retries: ${PLAGIARISM_HTTP_RETRIES},`);
    expect(source('worker/dimensions/store.ts')).toContain(`i += ${SEED_IDS_PER_STATEMENT}`);
  });
});
