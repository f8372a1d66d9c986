/**
 * What the benches and the e2e server (test/e2e/support/server.ts) that go through the real Worker
 * share: the local server (build/serve.ts: the bundled Worker in Miniflare's workerd, no dev
 * proxy) or `wrangler dev`, each in its own process group (stopped together with its workerd),
 * waiting for /api/health, a local service with its own state directory, and development tokens
 * signed with the .dev.vars secret.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { ensureBuilt } from '../../../build/ensure';
import { seedState } from './seeded-state';
import { placementOf } from '../../../build/placement';
import { ensureShardArtifacts } from '../../../build/model-shards';
import { ensureDevVars, readDevVars } from '../../../build/dev-vars';
import { QUIET_ENV, ROOT, wranglerSpawn } from '../../../build/wrangler';
import { writeStamp } from '../../../build/stamp';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Runs `wrangler dev <args>` (from `cwd`) and resolves once `${base}/api/health` answers (at most 120 s).
 * BENCH_WRANGLER_LOG=<file> appends wrangler's whole output to that file.
 */
export function startWranglerDev(args: string[], base: string, cwd = ROOT): Promise<ChildProcess> {
  const child = wranglerSpawn(['dev', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  return waitForHealth(child, base, 'wrangler dev');
}

/** Resolves with `child` once `${base}/api/health` answers (at most 120 s); stops it and throws otherwise. */
async function waitForHealth(child: ChildProcess, base: string, what: string): Promise<ChildProcess> {
  let log = '';
  const logFile = process.env.BENCH_WRANGLER_LOG;
  const onData = (d: Buffer | string): void => {
    const text = String(d);
    if (log.length < 1_000_000) log += text;
    if (logFile) fs.appendFileSync(logFile, `[${new Date().toISOString()}] ${text}`);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  // A deadline rather than a count of tries: a server that takes connections but never answers
  // costs each try its 5 s timeout.
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${what} exited (${child.exitCode}):\n${log}`);
    try {
      const res = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(5000) });
      if (res.ok) return child;
    } catch {
      // not up yet
    }
    await sleep(500);
  }
  await stopWranglerDev(child);
  throw new Error(`${what} did not answer on ${base} within 120 s:\n${log.slice(-4000)}`);
}

/**
 * The whole local service as `npm start` runs it, but in the state directory `persistTo`: builds
 * what is missing, migrates D1, seeds R2 (support/seeded-state.ts), then the local server (build/serve.ts) on
 * 127.0.0.1:`port`. `extraArgs`: serve's options (`--define KEY:VALUE`, `--log-level warn`).
 */
export async function startLocalWorker(
  port: number,
  persistTo: string,
  extraArgs: string[] = [],
  /** Where the placement's sharded models are cut from (default build/generated/models). */
  options: { modelsDir?: string } = {},
): Promise<ChildProcess> {
  ensureDevVars(ROOT);
  const artifacts = await ensureBuilt();
  fs.mkdirSync(persistTo, { recursive: true });
  // The placement served (--placement FILE|none, else the default) and its sharded models' parts.
  const at = extraArgs.indexOf('--placement');
  const placement = placementOf(at >= 0 ? extraArgs[at + 1] : undefined);
  await seedState(persistTo, artifacts, placement ? ensureShardArtifacts(placement, options.modelsDir) : []);
  return serve(port, persistTo, extraArgs, 'the local server (build/serve.ts)');
}

/** build/serve.ts on 127.0.0.1:`port` with the state of `persistTo` and these options; resolves once it answers. */
function serve(port: number, persistTo: string, args: string[], what: string): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      path.join(ROOT, 'build', 'serve.ts'),
      '--port',
      String(port),
      '--persist-to',
      persistTo,
      ...args,
    ],
    { cwd: ROOT, env: QUIET_ENV, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  return waitForHealth(child, `http://127.0.0.1:${port}`, what);
}

/**
 * Serves what `npm run deploy -- --local dir` put into `dir` (its D1, R2 and KV state, its bundle
 * and its placement) on 127.0.0.1:`port`, as the deploy's closing line says: nothing is built or
 * seeded here.
 */
export function serveDeployed(port: number, dir: string): Promise<ChildProcess> {
  const args = [
    '--bundle',
    path.join(dir, 'scripts', 'embedding-edge'),
    '--placement',
    path.join(dir, 'placement.json'),
  ];
  return serve(port, dir, [...args, '--log-level', 'warn'], 'the deployed folder (build/serve.ts --bundle)');
}

/**
 * SIGTERM to the process group of a startWranglerDev or startLocalWorker child (with its workerd), SIGKILL
 * when it is still running 5 s later; resolves once it has exited.
 */
export function stopWranglerDev(child: ChildProcess | null): Promise<void> {
  if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null)
    return Promise.resolve();
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s); // its own process group: wrangler and its workerd
    } catch {
      child.kill(s);
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), 5000);
  timer.unref();
  return exited.finally(() => clearTimeout(timer));
}

export function devSecret(): string {
  const secret = readDevVars(ROOT).JWT_SECRET;
  if (!secret) throw new Error('JWT_SECRET not found in .dev.vars');
  return secret;
}

/** An HS256 token with these claims, valid for `ttlSeconds`. */
export async function mint(secret: string, claims: Record<string, unknown>, ttlSeconds: number): Promise<string> {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}

/**
 * A workspace on the local server at `base` with a tokens quota of `limit`, an admin token and
 * the workspace's token (both for `sub`, valid 2 h).
 */
export async function createWorkspace(
  base: string,
  workspace: string,
  sub: string,
  limit: number,
): Promise<{ admin: string; token: string }> {
  const secret = devSecret();
  const admin = await mint(secret, { scope: 'admin', sub }, 7200);
  const created = await fetch(`${base}/api/admin/v1/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      id: workspace,
      quotas: [{ usageTypeKey: 'tokens', limitAmount: limit, limitAmountDaily: limit }],
    }),
  });
  if (created.status !== 201) throw new Error(`workspace ${workspace}: ${created.status} ${await created.text()}`);
  return { admin, token: await mint(secret, { workspaceId: workspace, sub }, 7200) };
}

/** Forgets that `key` was seeded into the state directory `state`, so the next start puts it again. */
export function forgetSeeded(state: string, key: string): void {
  const stamp = path.join(state, 'seeded-artifacts.json');
  const seeded = JSON.parse(fs.readFileSync(stamp, 'utf8')) as Record<string, string>;
  delete seeded[key];
  writeStamp(stamp, seeded);
}
