/**
 * What the benches and the e2e server (test/e2e/support/server.ts) that go through the real Worker
 * share: `wrangler dev` in its own process group (wrangler and its workerd stop together),
 * waiting for /api/health, a local service with its own state directory, and development
 * tokens signed with the .dev.vars secret.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { SignJWT } from 'jose';
import { ensureBuilt } from '../../../build/ensure';
import { migrateLocal, seedR2 } from '../../../build/start';
import { ensureDevVars, readDevVars } from '../../../build/dev-vars';
import { ROOT, wranglerSpawn } from '../../../build/wrangler';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Times wrangler dev reloaded the Worker ("Reloading local server", e.g. after a watched file changed) per child. */
const reloads = new WeakMap<ChildProcess, number>();
export function wranglerReloads(child: ChildProcess): number {
  return reloads.get(child) ?? 0;
}

/**
 * Runs `wrangler dev <args>` (from `cwd`) and resolves once `${base}/api/health` answers (at most 120 s).
 * BENCH_WRANGLER_LOG=<file> appends wrangler's whole output to that file.
 */
export async function startWranglerDev(args: string[], base: string, cwd = ROOT): Promise<ChildProcess> {
  const child = wranglerSpawn(['dev', ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let log = '';
  const logFile = process.env.BENCH_WRANGLER_LOG;
  const onData = (d: Buffer | string): void => {
    const text = String(d);
    if (log.length < 1_000_000) log += text;
    if (logFile) fs.appendFileSync(logFile, `[${new Date().toISOString()}] ${text}`);
    const n = text.split('Reloading local server').length - 1;
    if (n > 0) reloads.set(child, wranglerReloads(child) + n);
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log}`);
    try {
      const res = await fetch(`${base}/api/health`, { signal: AbortSignal.timeout(5000) });
      if (res.ok) return child;
    } catch {
      // not up yet
    }
    await sleep(500);
  }
  await stopWranglerDev(child);
  throw new Error(`wrangler dev did not answer on ${base} within 120 s:\n${log.slice(-4000)}`);
}

/**
 * The whole local service as `npm start` runs it, but in the state directory `persistTo`: builds
 * what is missing, migrates D1, seeds R2, then wrangler dev on 127.0.0.1:`port` (startWranglerDev).
 */
export async function startLocalWorker(
  port: number,
  persistTo: string,
  extraArgs: string[] = [],
): Promise<ChildProcess> {
  ensureDevVars(ROOT);
  const artifacts = await ensureBuilt();
  fs.mkdirSync(persistTo, { recursive: true });
  migrateLocal(persistTo);
  seedR2(artifacts, persistTo);
  return startWranglerDev(
    [
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--local',
      '--persist-to',
      persistTo,
      '--show-interactive-dev-session=false',
      ...extraArgs,
    ],
    `http://127.0.0.1:${port}`,
  );
}

/**
 * SIGTERM to the process group of a startWranglerDev child (wrangler and its workerd), SIGKILL
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
