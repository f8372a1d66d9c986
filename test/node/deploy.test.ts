/**
 * `npm run deploy` (build/deploy.ts) rehearsed into local folders (`--local`): the dry-run plan
 * against an empty state is the golden plan (test/gold/deploy-plan.json) and changes nothing;
 * a second deploy uploads no object and deploys no script; a rollback without a previous
 * version is refused; a deploy that must ask for the JWT configuration without a terminal fails
 * with what to do. The deployed folder serving every endpoint family: test/e2e/deploy-local.test.ts.
 * Without a Cloudflare account (no CLOUDFLARE_API_TOKEN, an empty HOME) the dry run plans as a
 * first deploy and says why, and a failing wrangler step prints wrangler's own error.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deploy } from '../../build/deploy';
import { askJwt, NO_TERMINAL } from '../../build/deploy/jwt-prompt';
import { withLocalStorage } from '../../build/local-storage';
import { STATE_KEY } from '../../build/deploy/target';
import { ROOT } from '../../build/paths';
import { hasOptionalData, type OptionalData } from '../support/optional-data';

const GOLDEN = path.join(__dirname, '..', 'gold', 'deploy-plan.json');
const tmp = (name: string): string => fs.mkdtempSync(path.join(os.tmpdir(), `deploy-${name}-`));

/** Keys of data a machine without Debian packages does not build (test/support/optional-data.ts). */
const OPTIONAL_KEYS: Array<[RegExp, OptionalData]> = [
  [/de-aligned-/, 'de-model'],
  [/fr-aligned-/, 'fr-model'],
  [/ja-aligned-/, 'ja-model'],
  [/\/pattern\./, 'pattern-mapper'],
];
const builtHere = (key: string): boolean => OPTIONAL_KEYS.every(([re, what]) => !re.test(key) || hasOptionalData(what));

/**
 * The plan without what changes with every build: the content hashes in the web page's asset
 * names (sorted again once masked: the plan orders keys with their hashes).
 */
function normalized(summary: Record<string, unknown>): Record<string, unknown> {
  const uploads = (summary.uploads as Array<{ key: string; action: string }>)
    .map((u) => ({ ...u, key: u.key.replace(/^(web\/assets\/.+-)[A-Za-z0-9_-]{8}(\.\w+)$/, '$1*$2') }))
    .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { ...summary, uploads };
}

describe('npm run deploy -- --local', () => {
  // One folder through the whole sequence, as a user's deployments go: the dry run against the empty
  // state, the first deploy, a second one, a rollback. Each full upload puts every artifact (about
  // 700 MB) through Miniflare, so the steps share one.
  const dir = tmp('sequence');
  // The first deploy, made by whichever test needs it first (a test run alone makes it itself).
  let first: Promise<Record<string, unknown>> | undefined;
  const firstDeploy = (): Promise<Record<string, unknown>> => (first ??= deploy({ local: dir }));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('the dry-run plan against an empty state is the golden plan, and it changes nothing', async () => {
    const summary = normalized(await deploy({ dryRun: true, local: dir }));
    const golden = JSON.parse(fs.readFileSync(GOLDEN, 'utf8')) as {
      uploads: Array<{ key: string }>;
      migrations: string[];
    };
    // Data this machine could not build is not in its plan (said once by the build).
    expect(summary).toEqual({ ...golden, uploads: golden.uploads.filter((u) => builtHere(u.key)) });
    await withLocalStorage(dir, async (storage) => {
      expect(await storage.getText(STATE_KEY)).toBeNull();
      expect(await storage.pendingMigrations()).toEqual(golden.migrations);
    });
    expect(fs.existsSync(path.join(dir, 'scripts'))).toBe(false);
  });

  it('a second deploy uploads no object, applies no migration and deploys no script', async () => {
    const one = await firstDeploy();
    expect(one.uploaded).toBeGreaterThan(0);
    expect((one.deployed as string[]).at(-1)).toBe('embedding-edge');
    const second = await deploy({ local: dir });
    expect(second).toMatchObject({ migrations: [], uploaded: 0, deployed: [] });
  });

  it('a rollback without a previous version is refused; with one, every script goes back and the next deploy redeploys', async () => {
    await firstDeploy();
    await expect(deploy({ local: dir, rollback: true })).rejects.toThrow(/no previous version/);
    // A deploy of other scripts: the record says something else was deployed, so all are deployed again.
    await withLocalStorage(dir, async (storage) => {
      const state = JSON.parse((await storage.getText(STATE_KEY))!) as { scripts: Record<string, string> };
      for (const name of Object.keys(state.scripts)) state.scripts[name] = 'an-older-build';
      await storage.putText(STATE_KEY, JSON.stringify(state));
    });
    const second = await deploy({ local: dir });
    const scripts = second.deployed as string[];
    expect(scripts.length).toBeGreaterThan(1);
    expect(second.uploaded).toBe(0);
    const rolled = await deploy({ local: dir, rollback: true });
    expect([...(rolled.rolledBack as string[])].sort()).toEqual([...scripts].sort());
    expect((rolled.rolledBack as string[])[0]).toBe('embedding-edge');
    for (const name of scripts) expect(fs.existsSync(path.join(dir, 'scripts', `${name}.previous`))).toBe(true);
    expect((await deploy({ local: dir })).deployed).toEqual(scripts);
  });
});

describe('the JWT configuration', () => {
  it('without a terminal the deploy fails at once with what to do, instead of waiting', async () => {
    expect(process.stdin.isTTY).toBeFalsy();
    await expect(askJwt()).rejects.toThrow(NO_TERMINAL);
  });
});

/** A machine where wrangler was never logged in: no Cloudflare variables, an empty HOME (no wrangler config). */
function noAccountEnv(home: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !/^(CLOUDFLARE_|CF_)/.test(k) && k !== 'XDG_CONFIG_HOME'),
  );
  return {
    ...env,
    HOME: home,
    WRANGLER_SEND_METRICS: 'false',
    WRANGLER_HIDE_BANNER: 'true',
    CLOUDFLARE_CF_FETCH_ENABLED: 'false',
    npm_config_update_notifier: 'false',
  };
}

describe('without a Cloudflare account (no CLOUDFLARE_API_TOKEN, an empty HOME)', () => {
  const home = tmp('home');
  afterAll(() => fs.rmSync(home, { recursive: true, force: true }));

  it('npm run deploy -- --dry-run plans as a first deploy and says why in one line', () => {
    const res = spawnSync('npm', ['run', 'deploy', '--', '--dry-run'], {
      cwd: ROOT,
      env: noAccountEnv(home),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const out = `${res.stdout}${res.stderr}`;
    expect(res.status, out).toBe(0);
    expect(out.split('\n').filter((l) => l.includes('planning as a first deploy'))).toEqual([
      expect.stringMatching(
        /^\[deploy\] no Cloudflare account reachable \(.*CLOUDFLARE_API_TOKEN.*\): planning as a first deploy$/,
      ),
    ]);
    expect(out).toContain('[deploy] to Cloudflare');
    expect(out).not.toContain('could not read');
    // The plan of a first deploy: every object uploaded, every script deployed.
    const summary = JSON.parse(res.stdout.trim().split('\n').at(-1)!) as {
      dryRun: boolean;
      uploads: Array<{ action: string }>;
      scripts: Array<{ action: string }>;
    };
    expect(summary.dryRun).toBe(true);
    expect(summary.uploads.length).toBeGreaterThan(0);
    expect(summary.uploads.every((u) => u.action === 'upload')).toBe(true);
    expect(summary.scripts.every((s) => s.action === 'deploy')).toBe(true);
    expect(out).toMatch(/\[deploy\] upload (\d+) of \1 objects/);
  }, 300_000);

  it("a failing wrangler step prints wrangler's own error lines, not only its log's path", () => {
    // The deploy's wrangler runner on a real wrangler command that fails here (read-only).
    const script = `import('./build/wrangler.ts').then((m) => {
      try { m.wranglerSync(['r2', 'bucket', 'list']); } catch (err) { console.error(err.message); process.exit(1); }
    })`;
    const res = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], {
      cwd: ROOT,
      env: noAccountEnv(home),
      encoding: 'utf8',
    });
    const out = `${res.stdout}${res.stderr}`;
    expect(res.status, out).toBe(1);
    expect(out).toContain('wrangler r2 bucket list failed (exit 1):');
    expect(out).toMatch(/^ {2}✘ \[ERROR\] .*CLOUDFLARE_API_TOKEN/m);
    expect(out).toContain(`(wrangler's log: ${home}`);
    // Colours stripped: the message reads the same in a log file.
    expect(out).not.toContain('\u001b[');
  }, 60_000);
});
