/**
 * The shared EngineSource suite (test/support/engine-source-suite.ts) on the browser's source:
 * the offline scorer's public API (browser/src/index.ts) in real Chromium, its Web Worker
 * downloading from the local server (build/serve.ts, port 8812, its own state directory) into
 * IndexedDB. Every call goes through page.evaluate; a refusal comes back as its code and status.
 */
import path from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../build/wrangler';
import {
  describeEngineSource,
  SourceProblem,
  STORED_DIMENSION,
  type EngineCalls,
} from '../support/engine-source-suite';
import { nodeEngineAnswer } from '../support/node-engine';
import { devSecret, mint } from './support/dev-server';
import { devToken, openBrowser, startServer, type Browser, type Server } from './support/server';

const PORT = 8812;

let server: Server | undefined;
let browser: Browser | undefined;

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Stores the suite's dimension through the admin API (the state directory persists: 409 = stored by an earlier run). */
async function storeDimension(base: string): Promise<void> {
  const admin = await mint(devSecret(), { scope: 'admin', sub: 'e2e-engine-source' }, 600);
  const res = await fetch(`${base}/api/admin/v1/dimensions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify(STORED_DIMENSION),
  });
  if (res.status !== 201 && res.status !== 409) throw new Error(`stored dimension: ${res.status} ${await res.text()}`);
}

type Outcome = { ok: true; value: unknown } | { ok: false; code: string; status: number; message: string };

/** Method `method` of the page's offline scorer with these arguments. */
async function callScorer(page: Page, method: keyof EngineCalls, args: unknown[]): Promise<any> {
  const outcome: Outcome = await page.evaluate(
    async ({ method, args }) => {
      try {
        return { ok: true, value: await (window as any).engineSuiteScorer[method](...args) };
      } catch (err) {
        const e = err as { code?: string; status?: number; message: string };
        return { ok: false, code: String(e.code), status: Number(e.status), message: e.message };
      }
    },
    { method, args },
  );
  if (!outcome.ok) throw new SourceProblem(outcome.code, outcome.status, outcome.message);
  return outcome.value;
}

describeEngineSource(
  'browser (IndexedDB and HTTP in a Web Worker, Chromium)',
  async () => {
    server = await startServer(path.join(ROOT, '.wrangler', 'e2e-engine-source-state'), PORT);
    await storeDimension(server.url);
    browser = await openBrowser(`${server.url}/`);
    const { page } = browser;
    await page.waitForFunction(() => (window as any).playground !== undefined);
    await page.evaluate(
      (token) => {
        const pg = (window as any).playground;
        (window as any).engineSuiteScorer = pg.createOfflineScorer({ baseUrl: location.origin, token });
      },
      await devToken(),
    );
    const call =
      (method: keyof EngineCalls) =>
      (...args: unknown[]) =>
        callScorer(page, method, args);
    return {
      textScores: async (body) => ({ response: await call('textScores')(body) }),
      wordScores: call('wordScores'),
      autocomplete: call('autocomplete'),
      wordAvailabilities: call('wordAvailabilities'),
      similarityMatrix: call('similarityMatrix'),
      tokenize: call('tokenize'),
    };
  },
  {
    noTokenCount: "the offline scorer's textScores answers the response alone (browser/src/index.ts)",
    reference: nodeEngineAnswer,
  },
);

describe("the offline scorer under the playground page's Content-Security-Policy", () => {
  it('the suite above ran with no CSP violation (Web Worker, WebAssembly, downloads, IndexedDB)', () => {
    expect(browser, 'the suite opened the browser').toBeDefined();
    expect(browser!.cspViolations).toEqual([]);
  });
});
