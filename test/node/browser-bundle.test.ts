/**
 * The production browser bundle (build/build-browser.ts: the library in build/generated/browser/
 * and the playground's copy in build/generated/web/) carries no bench hook: the raw-cache baseline
 * of `npm run bench:browser` is a worker that bench builds itself (bench/browser-baseline/), and
 * its worker-download comparison fails the page's head download instead of switching it off.
 * Its Vite build prints no warning about zod's comments (Rollup's INVALID_ANNOTATION), and only
 * that warning is filtered.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { build, createLogger, type Rollup } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBrowser } from '../../build/build-browser';
import { GENERATED, ROOT } from '../../build/wrangler';
import { onwarn } from '../../browser/vite.config';

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

describe("the browser bundle's Vite build", () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'browser-build-'));
  afterAll(() => fs.rmSync(out, { recursive: true, force: true }));

  it("prints no warning about zod's comments (the library build, into a temp dir)", async () => {
    const warnings: string[] = [];
    const logger = createLogger('warn');
    logger.warn = (msg) => void warnings.push(msg);
    logger.warnOnce = (msg) => void warnings.push(msg);
    await build({
      configFile: path.join(ROOT, 'browser', 'vite.config.ts'),
      mode: 'lib',
      logLevel: 'warn',
      customLogger: logger,
      build: { outDir: out, emptyOutDir: true },
    });
    expect(fs.existsSync(path.join(out, 'offline-scorer.js'))).toBe(true);
    expect(warnings.filter((w) => /annotation|zod/i.test(w))).toEqual([]);
  }, 120_000);

  it('filters only INVALID_ANNOTATION from zod: the same code elsewhere and every other warning are kept', () => {
    const kept: Rollup.RollupLog[] = [];
    const zodFile = path.join(ROOT, 'node_modules', 'zod', 'v4', 'core', 'util.js');
    const logs: Rollup.RollupLog[] = [
      { code: 'INVALID_ANNOTATION', id: zodFile, message: 'A comment ... in zod' },
      { code: 'INVALID_ANNOTATION', id: path.join(ROOT, 'core', 'engine.ts'), message: 'A comment ... in our code' },
      { code: 'CIRCULAR_DEPENDENCY', id: zodFile, message: 'a cycle in zod' },
      { code: 'EVAL', message: 'eval' },
    ];
    for (const log of logs) onwarn(log, (w) => kept.push(w));
    expect(kept.map((w) => w.message)).toEqual(['A comment ... in our code', 'a cycle in zod', 'eval']);
  });
});
