/**
 * The local service for the browser tests and the browser bench: builds what is missing (as
 * `npm start`), migrates D1 and seeds R2 in its own state directory, then runs wrangler dev on
 * port 8798 (8787 belongs to `npm start`). Also mints development tokens with the .dev.vars secret
 * and launches the Debian Chromium (never a downloaded browser).
 */
import path from 'node:path';
import { ROOT } from '../../../build/wrangler';
import { devSecret, mint, startLocalWorker, stopWranglerDev } from './dev-server';

export const PORT = Number(process.env.E2E_PORT ?? 8798);
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Server {
  url: string;
  stop(): Promise<void>;
}

export async function startServer(persistTo = path.join(ROOT, '.wrangler', 'e2e-state')): Promise<Server> {
  const child = await startLocalWorker(PORT, persistTo, ['--log-level', 'warn']);
  return { url: `http://127.0.0.1:${PORT}`, stop: () => stopWranglerDev(child) };
}

/** A development token (HS256 with the .dev.vars secret), as `npm run token` mints. */
export async function devToken(workspaceId = 'ws_demo', ttlSeconds = 3600): Promise<string> {
  return mint(devSecret(), { workspaceId, sub: 'e2e', iat: Math.floor(Date.now() / 1000) }, ttlSeconds);
}

/** Chromium flags (the profile directory goes to launchPersistentContext, not here). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
