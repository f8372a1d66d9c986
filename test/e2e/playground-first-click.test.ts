/**
 * The playground's first click in real Chromium against the local server (build/serve.ts, port
 * 8813, its own state directory): a person pastes a token and presses "Score texts" at once,
 * before the catalogs (models and mappers, which need the token) have arrived. The click waits
 * for them, so the request carries what the form then shows: the default mapper ticked, its goal
 * weight, and a goal score rather than "none". The same holds at page load with a stored token.
 */
import type { Page, Request, Route } from 'playwright-core';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../../build/wrangler';
import { devToken, openBrowser, startServer, type Browser, type Server } from './support/server';

const PORT = 8813;
/** How long the catalog listing is held back: the click surely lands before it arrives. */
const CATALOG_DELAY_MS = 1500;

let server: Server | undefined;
let browser: Browser | undefined;
let page: Page;
let token: string;

beforeAll(async () => {
  server = await startServer(path.join(ROOT, '.wrangler', 'e2e-first-click-state'), PORT);
  token = await devToken();
  browser = await openBrowser(`${server.url}/`);
  page = browser.page;
  await page.route(
    (url) => url.pathname === '/api/v1/embedding-models',
    async (route: Route) => {
      await new Promise((r) => setTimeout(r, CATALOG_DELAY_MS));
      await route.continue().catch(() => {});
    },
  );
}, 900_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

interface FormMappers {
  checked: string[];
  weights: Array<{ id: string; weight: number }>;
}

/** The mapper rows as the page shows them: the ticked keys, and the goal weight of each ticked one. */
function shownMappers(): Promise<FormMappers> {
  return page.$$eval('#mappers .mapper-row', (rows) => {
    const checked: string[] = [];
    const weights: Array<{ id: string; weight: number }> = [];
    for (const row of rows) {
      const cb = row.querySelector<HTMLInputElement>('input[type=checkbox]')!;
      if (!cb.checked) continue;
      const key = cb.dataset.key!;
      checked.push(key);
      const weight = Number(row.querySelector<HTMLInputElement>('input[data-weight]')!.value) || 0;
      if (weight !== 0) weights.push({ id: key, weight });
    }
    return { checked, weights };
  });
}

/** Presses "Score texts" (the caller has not waited for anything); the text-scores requests sent and the status. */
async function scoreAtOnce(press: () => Promise<void>): Promise<{ bodies: any[]; status: string }> {
  const bodies: any[] = [];
  const onRequest = (r: Request): void => {
    if (r.method() === 'POST' && r.url().endsWith('/text-scores')) bodies.push(r.postDataJSON());
  };
  page.on('request', onRequest);
  try {
    await press();
    await page.waitForFunction(
      () => {
        const s = document.getElementById('status')!;
        return /^Scored/.test(s.textContent ?? '') || s.className === 'error';
      },
      null,
      { timeout: 120_000 },
    );
  } finally {
    page.off('request', onRequest);
  }
  return { bodies, status: (await page.textContent('#status')) ?? '' };
}

/** The request agrees with the form as shown after the answer, and the goal is scored. */
async function expectRequestAsShown(bodies: any[], status: string): Promise<void> {
  expect(status).toMatch(/^Scored \d+ texts? through the API\.$/);
  expect(bodies).toHaveLength(1);
  const [body] = bodies;
  // Filled by now (the click waited for the catalogs); waiting here lets a late fill show up as a mismatch.
  await page.waitForSelector('#mappers input[type=checkbox]', { timeout: 30_000 });
  const form = await shownMappers();
  // The default mapper, whichever the page ticks, is in the form and in the request.
  expect(form.checked.length).toBeGreaterThan(0);
  expect(body.mapperKeys).toContain(form.checked[0]);
  expect(body.mapperKeys).toEqual(form.checked);
  expect(body.goalConfig.mappers).toEqual(form.weights);
  expect(body.goalConfig.mappers.length).toBeGreaterThan(0);
  expect(body.embeddingModelId).toBe(await page.inputValue('#model'));
  const results = await page.locator('#text-results').innerText();
  expect(results).toContain('Goal score');
  expect(results).not.toContain('Goal score: none');
  expect(browser!.pageErrors).toEqual([]);
  expect(browser!.cspViolations).toEqual([]);
}

describe('the playground scores what its form shows, also when clicked before the catalogs arrive', () => {
  it('a token pasted and "Score texts" pressed at once: the request carries the default mapper the form ticks', async () => {
    // A first visit: nothing stored.
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await page.waitForFunction(() => (window as any).playground !== undefined);
    expect(await page.locator('#mappers input[type=checkbox]').count()).toBe(0);

    const { bodies, status } = await scoreAtOnce(async () => {
      // A paste: one input event, no change event until the field loses focus.
      await page.focus('#token');
      await page.keyboard.insertText(token);
      await page.click('#score-texts');
    });
    await expectRequestAsShown(bodies, status);
  }, 300_000);

  it('the token stored, the page reloaded and "Score texts" pressed at once: the same', async () => {
    await page.reload();
    const { bodies, status } = await scoreAtOnce(() => page.click('#score-texts'));
    await expectRequestAsShown(bodies, status);
  }, 300_000);
});
