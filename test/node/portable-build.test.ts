/**
 * A machine without apt-get (macOS, or a user who cannot use apt): the build still succeeds,
 * skipping only the Debian-sourced data (de/fr synonyms, the pattern lexicon, the aligned de/fr/ja
 * models), said in one clear line per ensure run. Runs the real build steps in a child process whose PATH holds nothing but `node`, writing
 * into a temp dir (EMBEDDING_EDGE_GENERATED) so the real build/generated is untouched.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseLanguageData } from '../../core/tokenizer';
import { ROOT } from '../../build/wrangler';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'portable-build-'));
const binDir = path.join(tmp, 'bin');
fs.mkdirSync(binDir);
fs.symlinkSync(process.execPath, path.join(binDir, 'node'));
const generated = path.join(tmp, 'generated');

function runWithoutApt(script: string): { status: number | null; out: string } {
  const res = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, PATH: binDir, EMBEDDING_EDGE_GENERATED: generated },
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('build without apt-get on PATH', () => {
  it('builds all four language files, skipping de/fr synonyms with one line', () => {
    const r = runWithoutApt("import('./build/lang-data.ts').then((m) => m.ensureLanguageData())");
    expect(r.status, r.out).toBe(0);
    const skipped = r.out.split('\n').filter((l) => l.startsWith('[debian]'));
    expect(skipped).toEqual([
      '[debian] skipped German synonyms (openthesaurus-de-text), French synonyms (mythes-fr): ' +
        'apt-get/dpkg-deb not found on PATH; added by a build where apt-get and dpkg-deb are on PATH (Debian/Ubuntu)',
    ]);
    // Each file's stamp says what it went without and why (a build with apt-get adds it).
    const stamp = (l: string) => JSON.parse(fs.readFileSync(path.join(generated, 'lang', `${l}.stamp.json`), 'utf8'));
    expect(stamp('de').debian).toEqual({
      'openthesaurus-de-text': { version: '20160424-4', missing: 'apt-get/dpkg-deb not found on PATH' },
    });
    expect(stamp('fr').debian).toEqual({
      'mythes-fr': { version: '1:7.5.0-1', missing: 'apt-get/dpkg-deb not found on PATH' },
    });
    for (const l of ['en', 'de', 'fr', 'ja']) {
      const data = parseLanguageData(fs.readFileSync(path.join(generated, 'lang', `${l}.bin`)));
      const names = data.meta.sources.map((s) => s.name);
      expect(
        names.some((n) => n.startsWith('debian:')),
        `${l}: ${names.join(', ')}`,
      ).toBe(false);
    }
    // A second build on the same machine: nothing rebuilt, and the skip said again (every build that skips says so).
    const again = runWithoutApt("import('./build/lang-data.ts').then((m) => m.ensureLanguageData())");
    expect(again.status, again.out).toBe(0);
    expect(again.out).not.toMatch(/\[lang-data\] building/);
    expect(again.out.split('\n').filter((l) => l.startsWith('[debian]'))).toEqual(skipped);
    // The record keeps the cause: the first build with the tools on PATH tries at once.
    const record = JSON.parse(fs.readFileSync(path.join(generated, 'debian-skipped.json'), 'utf8')) as Record<
      string,
      { cause: string }
    >;
    expect(record['openthesaurus-de-text=20160424-4']?.cause).toBe('tool missing');
  }, 600_000);

  it('refuses the pattern lexicon with a clear reason (the mapper step then skips that bundle)', () => {
    const r = runWithoutApt(
      "import('./build/mapper/lexicons.ts').then((m) => m.loadLexicon('pattern')).then(() => process.exit(3), (e) => { console.log('REFUSED ' + e.message); })",
    );
    expect(r.status, r.out).toBe(0);
    expect(r.out).toMatch(/REFUSED needs the Debian package python3-pattern=.*apt-get\/dpkg-deb not found on PATH/);
  });

  it('skips the aligned de/fr/ja models with one line per process and seeds none of them', () => {
    const r = runWithoutApt(
      "import('./build/aligned-models.ts').then(async (m) => { const a = await m.ensureAlignedModels(); const b = await m.ensureAlignedModels(); console.log('SEEDED ' + JSON.stringify([...a, ...b].map((x) => x.key))); })",
    );
    expect(r.status, r.out).toBe(0);
    expect(r.out.split('\n').filter((l) => l.startsWith('[debian]'))).toEqual([
      '[debian] skipped the de aligned model (trans-de-en), ' +
        'the fr aligned model (dict-freedict-fra-eng, dict-freedict-eng-fra, dict-freedict-fra-deu, dict-freedict-deu-fra), ' +
        'the ja aligned model (edict): apt-get/dpkg-deb not found on PATH; ' +
        'added by a build where apt-get and dpkg-deb are on PATH (Debian/Ubuntu)',
    ]);
    expect(r.out).toContain('SEEDED []');
    expect(fs.existsSync(path.join(generated, 'models'))).toBe(false);
  });
});
