/**
 * Language data that rebuilds what it missed: a German build whose Debian download fails records
 * the thesaurus as missing (with apt-get's own error), does not try again within the hour, and
 * the first build after that with a working apt-get adds the synonyms; the default model stays
 * fresh throughout (its stamp depends on the English data only).
 *
 * Real build code in child processes writing into a temp dir (EMBEDDING_EDGE_GENERATED). The
 * failing download is a real failure: an `apt-get` first on PATH that exits 100 with apt's
 * error; the working one is the machine's apt-get. The hour is passed by dating the recorded
 * failure back.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLanguageData } from '../../core/tokenizer';
import { ROOT } from '../../build/paths';
import { DEFAULT_MODEL_FILE, DEFAULT_MODEL_MANIFEST_FILE, DEFAULT_MODEL_ID } from '../../build/default-model';
import { languageFile } from '../../build/lang-data';
import { debianToolsAvailable } from '../../build/debian';
import { needs } from '../support/optional-data';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lang-data-retry-'));
const generated = path.join(tmp, 'generated');
const failingBin = path.join(tmp, 'bin');
const calls = path.join(tmp, 'apt-get-calls');
const FETCH_ERROR =
  "E: Failed to fetch http://deb.debian.org/debian/pool/main/o/openthesaurus/x.deb  Temporary failure resolving 'deb.debian.org'";

const deFile = path.join(generated, 'lang', 'de.bin');
const deStamp = path.join(generated, 'lang', 'de.stamp.json');
const failedFile = path.join(generated, 'debian-skipped.json');
const SPEC = 'openthesaurus-de-text=20160424-4';

/** Builds de.bin (when it needs it) and says whether the default model is still fresh. */
const ENSURE_DE = `
  const l = await import('./build/lang-data.ts');
  await l.ensureLanguageFiles(['de']);
  const d = await import('./build/default-model.ts');
  console.log('DEFAULT_MODEL_FRESH ' + d.defaultModelIsFresh());
`;

function build(withFailingAptGet: boolean): { status: number | null; out: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, EMBEDDING_EDGE_GENERATED: generated };
  if (withFailingAptGet) env.PATH = `${failingBin}${path.delimiter}${process.env.PATH ?? ''}`;
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', ENSURE_DE], {
    cwd: ROOT,
    encoding: 'utf8',
    env,
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

const aptCalls = (): number =>
  fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).length : 0;
const stamp = () =>
  JSON.parse(fs.readFileSync(deStamp, 'utf8')) as {
    debian: Record<string, { version: string; built?: true; missing?: string }>;
  };
const sources = () => parseLanguageData(fs.readFileSync(deFile)).meta.sources.map((s) => s.name);
const skipLines = (out: string) => out.split('\n').filter((l) => l.startsWith('[debian] skipped'));
/** As if an hour had passed since the recorded failure. */
function anHourLater(): void {
  const failed = JSON.parse(fs.readFileSync(failedFile, 'utf8')) as Record<string, { at: number }>;
  failed[SPEC]!.at -= 60 * 60 * 1000;
  fs.writeFileSync(failedFile, JSON.stringify(failed));
}

beforeAll(() => {
  fs.mkdirSync(failingBin);
  fs.writeFileSync(
    path.join(failingBin, 'apt-get'),
    `#!/bin/sh\necho "$*" >> '${calls}'\necho "W: an apt warning first" >&2\necho "${FETCH_ERROR}" >&2\necho "E: Some files failed to download" >&2\nexit 100\n`,
    { mode: 0o755 },
  );
  // The default model of this machine (built by the test setup) with the English data it was built from.
  fs.mkdirSync(path.join(generated, 'lang'), { recursive: true });
  fs.mkdirSync(path.join(generated, 'models'));
  fs.copyFileSync(languageFile('en'), path.join(generated, 'lang', 'en.bin'));
  for (const f of [
    DEFAULT_MODEL_FILE,
    DEFAULT_MODEL_MANIFEST_FILE,
    path.join(path.dirname(DEFAULT_MODEL_FILE), `${DEFAULT_MODEL_ID}.stamp.json`),
  ])
    fs.copyFileSync(f, path.join(generated, 'models', path.basename(f)));
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

// The last step downloads for real: it needs a machine whose own build could fetch the thesaurus.
const canDownload =
  debianToolsAvailable() && needs('a failed Debian download is retried by a later build', 'de-synonyms');

describe.runIf(canDownload)('a failed Debian download is retried by a later build', () => {
  it('records the missing thesaurus, waits the hour, keeps the file on a second failure, then adds the synonyms', () => {
    // 1. The download fails: de.bin without OpenThesaurus, the stamp says why (apt's own error).
    const failed = build(true);
    expect(failed.status, failed.out).toBe(0);
    expect(skipLines(failed.out), failed.out).toEqual([
      expect.stringContaining(
        `[debian] skipped German synonyms (openthesaurus-de-text): apt-get download failed: ${FETCH_ERROR}; the first build after `,
      ),
    ]);
    if (process.getuid?.() === 0) expect(failed.out).not.toMatch(/root|sudo/);
    expect(stamp().debian['openthesaurus-de-text']).toEqual({
      version: '20160424-4',
      missing: `apt-get download failed: ${FETCH_ERROR}`,
    });
    expect(sources()).not.toContain('debian:openthesaurus-de-text');
    expect(failed.out).toContain('DEFAULT_MODEL_FRESH true');
    const callsAfterFailure = aptCalls();
    expect(callsAfterFailure).toBeGreaterThan(0);
    const withoutSynonyms = fs.readFileSync(deFile);

    // 2. Within the hour: nothing tried, nothing built, nothing said.
    const soon = build(true);
    expect(soon.status, soon.out).toBe(0);
    expect(aptCalls()).toBe(callsAfterFailure);
    expect(soon.out).not.toMatch(/\[lang-data\]|\[debian\]/);

    // 3. An hour later it fails again: tried once, the file and its stamp stay as they are.
    anHourLater();
    const stampBefore = fs.readFileSync(deStamp, 'utf8');
    const again = build(true);
    expect(again.status, again.out).toBe(0);
    expect(aptCalls()).toBeGreaterThan(callsAfterFailure);
    expect(skipLines(again.out)).toHaveLength(1);
    expect(again.out).not.toMatch(/de\.bin [\d.]+ MB/);
    expect(fs.readFileSync(deFile).equals(withoutSynonyms)).toBe(true);
    expect(fs.readFileSync(deStamp, 'utf8')).toBe(stampBefore);

    // 4. An hour later with a working apt-get: rebuilt with the synonyms, the stamp says so.
    anHourLater();
    const fixed = build(false);
    expect(fixed.status, fixed.out).toBe(0);
    expect(fixed.out).toContain('[lang-data] de.bin: trying again openthesaurus-de-text');
    expect(skipLines(fixed.out)).toEqual([]);
    expect(stamp().debian['openthesaurus-de-text']).toEqual({ version: '20160424-4', built: true });
    expect(sources()).toContain('debian:openthesaurus-de-text');
    expect(fs.readFileSync(deFile).equals(fs.readFileSync(languageFile('de')))).toBe(true);
    expect(JSON.parse(fs.readFileSync(failedFile, 'utf8'))).not.toHaveProperty([SPEC]);
    // What the German data was built from never touches the default model.
    expect(fixed.out).toContain('DEFAULT_MODEL_FRESH true');

    // 5. And then it is fresh.
    const after = build(false);
    expect(after.status, after.out).toBe(0);
    expect(after.out).not.toMatch(/\[lang-data\]|\[debian\]/);
  }, 300_000);

  it('an aligned build whose downloads fail says so in one line, the French model as French, and tries each package once', () => {
    const before = aptCalls();
    const script = "import('./build/aligned-models.ts').then((m) => m.ensureAlignedModels())";
    const env = {
      ...process.env,
      EMBEDDING_EDGE_GENERATED: generated,
      PATH: `${failingBin}${path.delimiter}${process.env.PATH ?? ''}`,
    };
    const run = () =>
      spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { cwd: ROOT, encoding: 'utf8', env });
    const r = run();
    const out = `${r.stdout}${r.stderr}`;
    expect(r.status, out).toBe(0);
    const lines = skipLines(out);
    expect(lines, out).toHaveLength(1);
    expect(lines[0]).toContain(
      '[debian] skipped the de aligned model (trans-de-en), ' +
        'the fr aligned model (trans-de-en, through the de aligned model), ' +
        `the ja aligned model (edict): apt-get download failed: ${FETCH_ERROR}; the first build after `,
    );
    // The French model is not built through a German model that just failed (no second German try).
    expect(out).not.toMatch(/\[build\] aligned model/);
    const tried = fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean).slice(before);
    expect(tried.filter((c) => c.startsWith('download')).sort()).toEqual([
      'download edict=2021.02.03-1',
      'download edict=2021.02.03-1',
      'download trans-de-en=1.9-6',
      'download trans-de-en=1.9-6',
    ]);
    // Within the hour: nothing tried, nothing said.
    const soon = run();
    expect(soon.status).toBe(0);
    expect(`${soon.stdout}${soon.stderr}`).not.toMatch(/\[debian\]|\[build\] aligned/);
    expect(aptCalls()).toBe(before + tried.length);
  });
});
