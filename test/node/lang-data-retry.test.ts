/**
 * Language data that rebuilds what it missed: a skip is recorded with its cause. Without apt-get
 * the cause is "tool missing", and the first build with an apt-get on PATH tries at once. A
 * failed download ("network") is not tried again within the hour while the network does not
 * answer, yet every build says what it skipped and how to retry now; it is tried at once when
 * asked (EMBEDDING_EDGE_RETRY_DEBIAN=1) or when the network answers again. The default model
 * stays fresh throughout (its stamp depends on the English data only).
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
import { debianToolsAvailable, RETRY_COMMAND } from '../../build/debian';
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

function build(
  withFailingAptGet: boolean,
  options: { dir?: string; path?: string; env?: NodeJS.ProcessEnv } = {},
): { status: number | null; out: string } {
  const env: NodeJS.ProcessEnv = { ...process.env, EMBEDDING_EDGE_GENERATED: options.dir ?? generated, ...options.env };
  if (options.path !== undefined) env.PATH = options.path;
  else if (withFailingAptGet) env.PATH = `${failingBin}${path.delimiter}${process.env.PATH ?? ''}`;
  const res = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', ENSURE_DE], {
    cwd: ROOT,
    encoding: 'utf8',
    env,
  });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

/** apt-get's calls that download or update (not the `--print-uris` probe, which reads the local lists). */
const aptCallLines = (): string[] =>
  fs.existsSync(calls) ? fs.readFileSync(calls, 'utf8').split('\n').filter(Boolean) : [];
const aptCalls = (): number => aptCallLines().filter((c) => !c.includes('--print-uris')).length;
const stamp = (dir = generated) =>
  JSON.parse(fs.readFileSync(path.join(dir, 'lang', 'de.stamp.json'), 'utf8')) as {
    debian: Record<string, { version: string; built?: true; missing?: string }>;
  };
const sources = () => parseLanguageData(fs.readFileSync(deFile)).meta.sources.map((s) => s.name);
const skipLines = (out: string) => out.split('\n').filter((l) => l.startsWith('[debian] skipped'));
const skipRecord = (dir = generated) =>
  JSON.parse(fs.readFileSync(path.join(dir, 'debian-skipped.json'), 'utf8')) as Record<
    string,
    { cause: string; reason: string; at: number }
  >;
/** As if an hour had passed since the recorded failure. */
function anHourLater(): void {
  const failed = JSON.parse(fs.readFileSync(failedFile, 'utf8')) as Record<string, { at: number }>;
  failed[SPEC]!.at -= 60 * 60 * 1000;
  fs.writeFileSync(failedFile, JSON.stringify(failed));
}

/** A generated dir with this machine's default model (built by the test setup) and the English data it was built from. */
function seedGenerated(dir: string): void {
  fs.mkdirSync(path.join(dir, 'lang'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'models'));
  fs.copyFileSync(languageFile('en'), path.join(dir, 'lang', 'en.bin'));
  for (const f of [
    DEFAULT_MODEL_FILE,
    DEFAULT_MODEL_MANIFEST_FILE,
    path.join(path.dirname(DEFAULT_MODEL_FILE), `${DEFAULT_MODEL_ID}.stamp.json`),
  ])
    fs.copyFileSync(f, path.join(dir, 'models', path.basename(f)));
}

const failingAptGet = `#!/bin/sh\necho "$*" >> '${calls}'\necho "W: an apt warning first" >&2\necho "${FETCH_ERROR}" >&2\necho "E: Some files failed to download" >&2\nexit 100\n`;

beforeAll(() => {
  fs.mkdirSync(failingBin);
  fs.writeFileSync(path.join(failingBin, 'apt-get'), failingAptGet, { mode: 0o755 });
  seedGenerated(generated);
});

afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe('a Debian skip records its cause; a build retries at once when the cause has changed', () => {
  // Needs no apt-get and no network of this machine: the PATHs are temp dirs of their own.
  const dir = path.join(tmp, 'causes');
  const noTools = path.join(tmp, 'no-tools');
  const fakeTools = path.join(tmp, 'fake-tools');
  beforeAll(() => {
    seedGenerated(dir);
    fs.mkdirSync(noTools);
    fs.mkdirSync(fakeTools);
    fs.writeFileSync(path.join(fakeTools, 'apt-get'), failingAptGet, { mode: 0o755 });
    // Never reached (the download fails first): dpkg-deb only has to be on PATH.
    fs.writeFileSync(path.join(fakeTools, 'dpkg-deb'), '#!/bin/sh\nexit 2\n', { mode: 0o755 });
  });

  it('without apt-get: "tool missing", said on every build; with an apt-get on PATH: tried at once, then held an hour unless asked', () => {
    // 1. No apt-get on PATH: built without the synonyms, the skip recorded as "tool missing".
    const none = build(false, { dir, path: noTools });
    expect(none.status, none.out).toBe(0);
    expect(skipLines(none.out), none.out).toEqual([
      '[debian] skipped German synonyms (openthesaurus-de-text): apt-get/dpkg-deb not found on PATH; added by a build where apt-get and dpkg-deb are on PATH (Debian/Ubuntu)',
    ]);
    expect(skipRecord(dir)[SPEC]).toMatchObject({ cause: 'tool missing' });
    expect(stamp(dir).debian['openthesaurus-de-text']).toMatchObject({ missing: 'apt-get/dpkg-deb not found on PATH' });

    // 2. Again without it: nothing built, the skip said again.
    const again = build(false, { dir, path: noTools });
    expect(again.out).not.toContain('[lang-data]');
    expect(skipLines(again.out)).toEqual(skipLines(none.out));

    // 3. An apt-get on PATH (its download fails): tried at once, not an hour later.
    const before = aptCalls();
    const tried = build(false, { dir, path: fakeTools });
    expect(tried.status, tried.out).toBe(0);
    expect(tried.out).toContain('[lang-data] de.bin: trying again openthesaurus-de-text');
    expect(aptCallLines().slice(before)).toContain(`download ${SPEC}`);
    const network = skipRecord(dir)[SPEC]!;
    expect(network).toMatchObject({ cause: 'network', reason: `apt-get download failed: ${FETCH_ERROR}` });
    expect(Date.now() - network.at).toBeLessThan(60_000);
    expect(skipLines(tried.out)).toEqual([expect.stringContaining(`; retry now: ${RETRY_COMMAND}`)]);

    // 4. The same cause within the hour (the network still does not answer): not tried, but said, with how to retry now.
    const held = aptCalls();
    const soon = build(false, { dir, path: fakeTools });
    expect(soon.status, soon.out).toBe(0);
    expect(aptCalls()).toBe(held);
    expect(soon.out).not.toContain('[lang-data]');
    expect(skipLines(soon.out)).toEqual([
      expect.stringContaining(
        `[debian] skipped German synonyms (openthesaurus-de-text): apt-get download failed: ${FETCH_ERROR}; the first build after `,
      ),
    ]);
    expect(soon.out).toContain(`retry now: ${RETRY_COMMAND}`);

    // 5. The retry command: tried at once.
    const asked = build(false, { dir, path: fakeTools, env: { EMBEDDING_EDGE_RETRY_DEBIAN: '1' } });
    expect(asked.status, asked.out).toBe(0);
    expect(asked.out).toContain('[lang-data] de.bin: trying again openthesaurus-de-text');
    expect(aptCalls()).toBeGreaterThan(held);
    expect(asked.out).toContain('DEFAULT_MODEL_FRESH true');
  }, 120_000);

  it('an old record without a cause whose apt-get could not be started gives way to an apt-get on PATH', () => {
    // What a build of before the cause was kept left behind.
    fs.writeFileSync(
      path.join(dir, 'debian-skipped.json'),
      JSON.stringify({ [SPEC]: { reason: 'apt-get download failed: apt-get: command not found', at: Date.now() } }),
    );
    const before = aptCalls();
    const r = build(false, { dir, path: fakeTools });
    expect(r.status, r.out).toBe(0);
    expect(r.out).toContain('[lang-data] de.bin: trying again openthesaurus-de-text');
    expect(aptCalls()).toBeGreaterThan(before);
    expect(skipRecord(dir)[SPEC]).toMatchObject({ cause: 'network' });
  }, 60_000);

  it('npm run model:build, an explicit request, retries a download that failed a minute ago', () => {
    const trans = 'trans-de-en=1.9-6';
    const record = skipRecord(dir);
    fs.writeFileSync(
      path.join(dir, 'debian-skipped.json'),
      JSON.stringify({
        ...record,
        [trans]: { reason: `apt-get download failed: ${FETCH_ERROR}`, at: Date.now() - 60_000, cause: 'network' },
      }),
    );
    const before = aptCallLines().length;
    // The model on the default English model (seeded here, so nothing else is built first).
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'build/aligned-models.ts', 'de-aligned-distilled-100d'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, EMBEDDING_EDGE_GENERATED: dir, PATH: fakeTools },
    });
    const out = `${r.stdout}${r.stderr}`;
    // Tried at once (and failed again, with apt's error), not refused with the minute-old reason.
    expect(aptCallLines().slice(before), out).toContain(`download ${trans}`);
    expect(r.status, out).toBe(1);
    expect(out).toContain(FETCH_ERROR);
  }, 60_000);
});

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

    // 2. Within the hour: nothing tried, nothing built, the skip said again with how to retry now.
    const soon = build(true);
    expect(soon.status, soon.out).toBe(0);
    expect(aptCalls()).toBe(callsAfterFailure);
    expect(soon.out).not.toContain('[lang-data]');
    expect(skipLines(soon.out)).toEqual([expect.stringContaining(`retry now: ${RETRY_COMMAND}`)]);

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

    // 4. Within the hour, but with a working apt-get whose mirror answers: tried at once,
    // rebuilt with the synonyms, the stamp says so.
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
    const tried = aptCallLines()
      .filter((c) => !c.includes('--print-uris'))
      .slice(before);
    expect(tried.filter((c) => c.startsWith('download')).sort()).toEqual([
      'download edict=2021.02.03-1',
      'download edict=2021.02.03-1',
      'download trans-de-en=1.9-6',
      'download trans-de-en=1.9-6',
    ]);
    // Within the hour: nothing downloaded, the skip said again.
    const soon = run();
    const soonOut = `${soon.stdout}${soon.stderr}`;
    expect(soon.status).toBe(0);
    expect(soonOut).not.toMatch(/\[build\] aligned/);
    expect(skipLines(soonOut), soonOut).toHaveLength(1);
    expect(soonOut).toContain(`retry now: ${RETRY_COMMAND}`);
    expect(aptCalls()).toBe(before + tried.length);
  });
});
