/**
 * The local service for the browser tests and the browser bench: builds what is missing (as
 * `npm start`), migrates D1 and seeds R2 in its own state directory, then runs the local server on
 * port 8798 (8787 belongs to `npm start`). Also mints development tokens with the .dev.vars secret
 * and launches the Debian Chromium (never a downloaded browser).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ROOT } from '../../../build/wrangler';
import { devSecret, mint, startLocalWorker, stopWranglerDev } from './dev-server';

export const PORT = Number(process.env.E2E_PORT ?? 8798);
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export interface Server {
  url: string;
  stop(): Promise<void>;
}

/** `port`, `persistTo`: a test file of its own runs beside the others (vitest runs files in parallel). */
export async function startServer(persistTo = path.join(ROOT, '.wrangler', 'e2e-state'), port = PORT): Promise<Server> {
  const child = await startLocalWorker(port, persistTo, ['--log-level', 'warn']);
  return { url: `http://127.0.0.1:${port}`, stop: () => stopWranglerDev(child) };
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

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Uncaught errors of the page. */
  pageErrors: string[];
  /**
   * Content-Security-Policy violations in any page of the context, on every load (the
   * documents' securitypolicyviolation events, and the CSP reports of the pages' consoles):
   * directive, blocked URI and where.
   */
  cspViolations: string[];
  close(): Promise<void>;
}

/**
 * Collects the CSP violations of every page of `context` into `into`: a listener registered
 * before each document's own scripts run (an init script), reporting through a binding.
 */
export async function watchCspViolations(context: BrowserContext, into: string[]): Promise<void> {
  await context.exposeBinding('__reportCspViolation', (_source, report: string) => {
    into.push(report);
  });
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      const report = (window as unknown as { __reportCspViolation(r: string): void }).__reportCspViolation;
      report(
        `${e.effectiveDirective} blocked ${e.blockedURI || '(inline)'} at ${e.sourceFile}:${e.lineNumber} on ${e.documentURI}`,
      );
    });
  });
  const onConsole = (msg: { text(): string }): void => {
    if (/Content Security Policy/i.test(msg.text())) into.push(`console: ${msg.text()}`);
  };
  context.on('console', onConsole);
}

/** The Debian Chromium with a fresh profile (its own IndexedDB), one page opened at `url`. */
export async function openBrowser(url: string): Promise<Browser> {
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'e2e-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 1400 },
  });
  const cspViolations: string[] = [];
  await watchCspViolations(context, cspViolations);
  const page = context.pages()[0] ?? (await context.newPage());
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(url);
  return {
    context,
    page,
    pageErrors,
    cspViolations,
    close: async () => {
      await context.close().catch(() => {});
      fs.rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
