/**
 * The local service for the browser tests and the browser bench: builds what is missing (as
 * `npm start`), migrates D1 and seeds R2 in its own state directory, then runs wrangler dev on
 * port 8798 (8787 belongs to `npm start`). Also mints development tokens with the .dev.vars secret
 * and launches the Debian Chromium (never a downloaded browser).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { ensureBuilt } from '../../build/ensure';
import { migrateLocal, seedR2 } from '../../build/start';
import { QUIET_ENV, ROOT } from '../../build/wrangler';

export const PORT = Number(process.env.E2E_PORT ?? 8798);
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Server {
  url: string;
  stop(): Promise<void>;
}

export async function startServer(persistTo = path.join(ROOT, '.wrangler', 'e2e-state')): Promise<Server> {
  const artifacts = await ensureBuilt();
  fs.mkdirSync(persistTo, { recursive: true });
  migrateLocal(persistTo);
  seedR2(artifacts, persistTo);
  const url = `http://127.0.0.1:${PORT}`;
  const wrangler = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
  const child: ChildProcess = spawn(
    process.execPath,
    [wrangler, 'dev', '--ip', '127.0.0.1', '--port', String(PORT), '--local', '--persist-to', persistTo, '--show-interactive-dev-session=false', '--log-level', 'warn'],
    { cwd: ROOT, env: QUIET_ENV, stdio: ['ignore', 'pipe', 'pipe'], detached: false },
  );
  let log = '';
  child.stdout?.on('data', (d) => (log += d));
  child.stderr?.on('data', (d) => (log += d));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${log}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`wrangler dev did not answer on ${url} within 120 s:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return {
    url,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGINT');
        setTimeout(() => child.exitCode === null && child.kill('SIGKILL'), 5000);
      }),
  };
}

function devSecret(): string {
  const text = fs.readFileSync(path.join(ROOT, '.dev.vars'), 'utf8');
  const m = /^JWT_SECRET\s*=\s*"?([^"\n]+)"?/m.exec(text);
  if (!m) throw new Error('JWT_SECRET missing from .dev.vars');
  return m[1];
}

/** A development token (HS256 with the .dev.vars secret), as `npm run token` mints. */
export async function devToken(workspaceId = 'ws_demo', ttlSeconds = 3600): Promise<string> {
  return new SignJWT({ workspaceId, sub: 'e2e' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(devSecret()));
}

export function chromiumArgs(userDataDir: string): string[] {
  return [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-quic',
    '--no-first-run',
    '--disable-component-update',
    '--disable-sync',
    `--user-data-dir=${userDataDir}`,
  ];
}
