/**
 * `npm run bench:browser`: time to first score of the offline scorer in Chromium (the Debian
 * package, driven by playwright-core), against wrangler dev on 127.0.0.1:8798 (test/e2e/support/server.ts).
 *
 * Each round, in the playground page:
 *   cold     IndexedDB deleted, a new Web Worker: download model + language data + mapper
 *            bundles + stored seeds (SHA-256 verified), store them, load, score one request
 *   cached   a new Web Worker, everything in IndexedDB, revalidated with If-None-Match (304s)
 *   offline  a new Web Worker, the browser offline: IndexedDB only
 * "time to first score" = from creating the scorer to the text-scores JSON in the page.
 * Target: <= 0.5 s from the cache for the default model. Prints medians, the cold/cached ratio
 * and, last, a JSON line of the figures. Options: BENCH_BROWSER_ROUNDS (default 3).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, devToken, startServer } from '../test/e2e/support/server';

const MODEL = process.env.DEFAULT_MODEL_ID ?? 'en-glove-6b-100d';
const ROUNDS = Number(process.env.BENCH_BROWSER_ROUNDS ?? 3);
const TARGET_MS = 500;

const REQUEST = {
  texts: ['The river winds through the quiet forest below the snowy mountain, and the morning is wonderful.'],
  embeddingModelId: MODEL,
  dimensions: [{ id: 1, type: 'manual', words: ['forest', 'river', 'mountain'] }],
  mapperKeys: ['sentiment_valence'],
  goalConfig: { modelRankScore: -0.3, dimensions: [{ id: 1, weight: 2 }], mappers: [{ id: 'sentiment_valence', weight: 1 }] },
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

async function main(): Promise<void> {
  console.log('[bench:browser] starting wrangler dev on :8798 (build + seed when needed)');
  const server = await startServer();
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const token = await devToken();
    // tsx (esbuild keepNames) wraps functions in __name(); page.evaluate code needs it defined in the page.
    await page.addInitScript('window.__name = (f) => f;');
    await page.goto(`${server.url}/`);
    await page.waitForFunction(() => !!(window as any).playground);
    const version = await page.evaluate(() => navigator.userAgent);
    console.log(`[bench:browser] ${version}`);

    /** One timed run in the page: a fresh scorer (new Web Worker) until the first text-scores JSON. */
    const timed = (deleteCache: boolean) =>
      page.evaluate(
        async ({ req, tok, del }) => {
          const pg = (window as any).playground;
          pg.state.offline?.terminate();
          pg.state.offline = null;
          for (const s of (window as any).__benchScorers ?? []) s.terminate();
          (window as any).__benchScorers = [];
          if (del) {
            await new Promise<void>((resolve, reject) => {
              const r = indexedDB.deleteDatabase('embedding-edge-offline');
              r.onsuccess = () => resolve();
              r.onerror = () => reject(r.error);
              r.onblocked = () => setTimeout(resolve, 500);
            });
          }
          let downloaded = 0;
          const t0 = performance.now();
          const scorer = pg.createOfflineScorer({
            baseUrl: location.origin,
            token: tok,
            onProgress: (p: { phase: string; loadedBytes: number }) => {
              if (p.phase === 'store') downloaded += p.loadedBytes;
            },
          });
          (window as any).__benchScorers.push(scorer);
          const res = await scorer.textScores(req);
          const ms = performance.now() - t0;
          return { ms, downloaded, goalScore: res.data[0].goalScore as number };
        },
        { req: REQUEST, tok: token, del: deleteCache },
      );

    const cold: number[] = [];
    const cached: number[] = [];
    const offline: number[] = [];
    let downloadedBytes = 0;
    const goal = new Set<number>();
    for (let round = 1; round <= ROUNDS; round++) {
      const c = await timed(true);
      cold.push(c.ms);
      downloadedBytes = c.downloaded;
      const h = await timed(false);
      cached.push(h.ms);
      if (h.downloaded !== 0) throw new Error('the cached run downloaded again');
      await context.setOffline(true);
      const o = await timed(false);
      await context.setOffline(false);
      offline.push(o.ms);
      for (const r of [c, h, o]) goal.add(r.goalScore);
      console.log(`[bench:browser] round ${round}: cold ${c.ms.toFixed(0)} ms, cached ${h.ms.toFixed(0)} ms, cached+offline ${o.ms.toFixed(0)} ms`);
    }
    if (goal.size !== 1) throw new Error(`the three paths scored differently: ${[...goal].join(', ')}`);
    const figures = {
      model: MODEL,
      rounds: ROUNDS,
      downloadedMB: Number((downloadedBytes / 1e6).toFixed(1)),
      coldMs: Math.round(median(cold)),
      cachedMs: Math.round(median(cached)),
      cachedOfflineMs: Math.round(median(offline)),
      coldOverCached: Number((median(cold) / median(cached)).toFixed(1)),
      targetCachedMs: TARGET_MS,
      targetMet: median(cached) <= TARGET_MS && median(offline) <= TARGET_MS ? 'yes' : 'no',
    };
    console.log(
      `[bench:browser] time to first score (median of ${ROUNDS}): cold download ${figures.coldMs} ms (${figures.downloadedMB} MB), ` +
        `IndexedDB cache ${figures.cachedMs} ms (revalidated), ${figures.cachedOfflineMs} ms (offline); cold/cached = ${figures.coldOverCached}x; ` +
        `target <= ${TARGET_MS} ms from cache: ${figures.targetMet}`,
    );
    console.log(JSON.stringify(figures));
  } finally {
    await context.close().catch(() => {});
    await server.stop();
    fs.rmSync(userDataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
