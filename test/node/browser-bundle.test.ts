/**
 * The production browser bundle (build/build-browser.ts: the library in build/generated/browser/
 * and the playground's copy in build/generated/web/) carries no bench hook: the raw-cache baseline
 * of `npm run bench:browser` is a worker that bench builds itself (bench/browser-baseline/), and
 * its worker-download comparison fails the page's head download instead of switching it off.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBrowser } from '../../build/build-browser';
import { GENERATED } from '../../build/wrangler';

const scripts = (dir: string): string[] =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((f) => f.isFile() && f.name.endsWith('.js'))
    .map((f) => path.join(f.parentPath, f.name));

describe('the production browser bundle', () => {
  // Rebuilt here when an input changed (the node tests' global setup skips the browser build).
  beforeAll(() => ensureBrowser(), 300_000);

  it('has no raw-cache baseline or page-head-read option', () => {
    const files = [...scripts(path.join(GENERATED, 'browser')), ...scripts(path.join(GENERATED, 'web'))];
    expect(files.map((f) => path.basename(f))).toEqual(
      expect.arrayContaining(['offline-scorer.js', 'offline-scorer.worker.js', 'offline-scorer.engine.js']),
    );
    for (const f of files) {
      const code = fs.readFileSync(f, 'utf8');
      expect(code, f).not.toContain('rawModelCache');
      expect(code, f).not.toContain('pageHeadRead');
    }
  });
});
