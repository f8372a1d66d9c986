/**
 * `npm run bench:browser`: time to first score of the offline scorer in Chromium (the Debian
 * package, driven by playwright-core), against the local server (build/serve.ts) on 127.0.0.1:8798 (test/e2e/support/server.ts).
 * "Time to first score" = from creating the scorer (a new Web Worker) to the text-scores JSON in
 * the page. Each round, in the playground page:
 *
 *   cached            IndexedDB holds the model as parsed typed arrays (browser/src/model-store.ts),
 *                     browser offline: one IndexedDB read, no re-hash          (target <= 150 ms)
 *     baseline        the same with the raw-artifact cache of earlier releases (parse + verify
 *                     40 MB of section checksums on every load): a worker built by this bench
 *                     alone (bench/browser-baseline/build.ts), run from blob URLs
 *   cached online     as cached, revalidated with If-None-Match (304s) on localhost
 *   cold 50 Mbit/s    IndexedDB deleted, the link emulated at 50 Mbit/s and 20 ms latency
 *                     (CDP Network.emulateNetworkConditions, also for the Web Worker's fetches):
 *     progressive     `progressive: true`: the model's head (50,000 rows) first, the first score
 *                     from it, the rest in the background; first score and complete (the full
 *                     model loaded and stored, the final answer in)          (target <= 2 s)
 *     baseline        the full-load path: the whole artifact before the first score
 *     worker download cold progressive again with the page's head download failing at once (its
 *                     fetch of .../head refused in the page): the worker downloads the head itself
 *                     once it has started, instead of taking the page's download
 *                     (browser/src/head-offer.ts); printed for comparison
 *
 * Checks that every path scores the same goal score (the complete answers are the Worker's), and
 * prints the load phases of the last cached and cold progressive runs (ms from creating the
 * scorer). Last line: one JSON object. Options: BENCH_BROWSER_ROUNDS (default 3),
 * BENCH_BROWSER_ONLY=cached (only the cached paths and their baseline, phases of every round).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type CDPSession, type Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, devToken, startServer } from '../test/e2e/support/server';
import { buildBaselineWorker, type BaselineChunk } from './browser-baseline/build';

const MODEL = process.env.DEFAULT_MODEL_ID ?? 'en-glove-6b-100d';
const ROUNDS = Number(process.env.BENCH_BROWSER_ROUNDS ?? 3);
/** `cached`: only the cached paths (cached, its raw-cache baseline, revalidated); for quick same-run comparisons. */
const ONLY_CACHED = process.env.BENCH_BROWSER_ONLY === 'cached';
const CACHED_TARGET_MS = 150;
const COLD_TARGET_MS = 2000;
const LINK = { mbit: 50, latencyMs: 20 };

const REQUEST = {
  texts: ['The river winds through the quiet forest below the snowy mountain, and the morning is wonderful.'],
  embeddingModelId: MODEL,
  dimensions: [{ id: 1, type: 'manual', words: ['forest', 'river', 'mountain'] }],
  mapperKeys: ['sentiment_valence'],
  goalConfig: {
    modelRankScore: -0.3,
    dimensions: [{ id: 1, weight: 2 }],
    mappers: [{ id: 'sentiment_valence', weight: 1 }],
  },
};

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

interface Run {
  firstMs: number;
  completeMs: number;
  downloaded: number;
  /** Bytes of the heads (model, mapper bundles) downloaded before the first score (decoded). */
  headBytes: number;
  partial: boolean;
  goalScore: number;
  finalGoalScore: number;
  phases: Array<{ name: string; start: number; end: number }>;
}

interface RunOptions {
  deleteCache: boolean;
  progressive?: boolean;
  /** The raw-cache baseline worker (loadBaselineWorker) instead of the production one. */
  baseline?: boolean;
  /** false: the page's head download fails at once, so the worker downloads the head itself (the comparison). */
  pageHeadRead?: boolean;
}

/** One timed run in the page: a fresh scorer (new Web Worker) until the first text-scores JSON, and until the model is complete. */
function timed(page: Page, token: string, opts: RunOptions): Promise<Run> {
  return page.evaluate(
    async ({ req, tok, o, model }) => {
      const pg = (window as any).playground;
      pg.state.offline?.terminate();
      pg.state.offline = null;
      for (const s of (window as any).__benchScorers ?? []) s.terminate();
      (window as any).__benchScorers = [];
      if (o.deleteCache) {
        await new Promise<void>((resolve, reject) => {
          const r = indexedDB.deleteDatabase('embedding-edge-offline');
          r.onsuccess = () => resolve();
          r.onerror = () => reject(r.error);
          r.onblocked = () => setTimeout(resolve, 500);
        });
      }
      let downloaded = 0;
      const heads: Record<string, number> = {};
      let readyAt = 0;
      let finalAt = 0;
      let finalGoal: number | null = null;
      // The page's head download (browser/src/head-offer.ts) refused: it hands the worker no head.
      const pageFetch = window.fetch;
      if (o.pageHeadRead === false)
        window.fetch = (input, init) =>
          /\/head$/.test(input instanceof Request ? input.url : String(input))
            ? Promise.reject(new TypeError('no head download on the page (bench comparison)'))
            : pageFetch(input, init);
      const t0 = performance.now();
      const scorer = pg.createOfflineScorer({
        baseUrl: location.origin,
        token: tok,
        progressive: !!o.progressive,
        ...(o.baseline
          ? { worker: new Worker((window as any).__baselineWorker, { type: 'module', name: 'offline-scorer' }) }
          : {}),
        onProgress: (p: { artifact: string; name: string; phase: string; loadedBytes: number }) => {
          if (p.phase === 'store') downloaded += p.loadedBytes;
          // The heads (model and mapper bundles) are not stored: their size from their own events.
          if (p.name.endsWith('#head') && (p.phase === 'download' || p.phase === 'partial'))
            heads[p.name] = Math.max(heads[p.name] ?? 0, p.loadedBytes);
          if (p.artifact === 'model' && p.name === model && p.phase === 'ready') readyAt = performance.now();
        },
      });
      (window as any).__benchScorers.push(scorer);
      const finalP = new Promise<void>((resolve) => {
        (window as any).__benchFinal = resolve;
      });
      const res = await scorer
        .textScores(req, {
          onFinal: (f: { response: { data: Array<{ goalScore: number }> } }) => {
            finalAt = performance.now();
            finalGoal = f.response.data[0]!.goalScore;
            (window as any).__benchFinal();
          },
        })
        .finally(() => (window.fetch = pageFetch));
      const firstMs = performance.now() - t0;
      let st = await scorer.status();
      const partial = st.models.some((m: { id: string; state: string }) => m.id === model && m.state === 'partial');
      // Until the complete model is in (the background download after a head), and its final answer when one follows.
      while (!readyAt) await new Promise((r) => setTimeout(r, 20));
      if (partial) await Promise.race([finalP, new Promise((r) => setTimeout(r, 200))]);
      st = await scorer.status();
      const shift = st.timeOrigin - performance.timeOrigin - t0;
      return {
        firstMs,
        completeMs: Math.max(readyAt, finalAt) - t0,
        downloaded,
        headBytes: Object.values(heads).reduce((a, b) => a + b, 0),
        partial,
        goalScore: res.data[0].goalScore as number,
        finalGoalScore: (finalGoal ?? res.data[0].goalScore) as number,
        phases: st.phases.map((p: { name: string; start: number; end: number }) => ({
          name: p.name,
          start: Math.round(p.start + shift),
          end: Math.round(p.end + shift),
        })),
      };
    },
    { req: REQUEST, tok: token, o: opts, model: MODEL },
  );
}

/**
 * Puts the baseline worker's chunks into the page as blob URLs, each chunk's imports of the ones
 * before it (`./name`) pointing to their URLs; created before any timing: a baseline run only
 * creates its Worker from window.__baselineWorker (the entry's URL), as a production run does from
 * the playground's worker file. Blob URLs keep working while the browser is offline.
 */
async function loadBaselineWorker(page: Page, chunks: BaselineChunk[]): Promise<void> {
  await page.evaluate((chunks) => {
    const urls: Array<[string, string]> = [];
    for (const c of chunks) {
      const code = urls.reduce((code, [name, url]) => code.split(`./${name}`).join(url), c.code);
      urls.push([c.fileName, URL.createObjectURL(new Blob([code], { type: 'text/javascript' }))]);
    }
    (window as any).__baselineWorker = urls.at(-1)![1];
  }, chunks);
}

async function throttle(cdp: CDPSession, on: boolean): Promise<void> {
  await cdp.send('Network.emulateNetworkConditions', {
    offline: false,
    latency: on ? LINK.latencyMs : 0,
    downloadThroughput: on ? (LINK.mbit * 1e6) / 8 : -1,
    uploadThroughput: on ? (LINK.mbit * 1e6) / 8 : -1,
  });
}

const phaseLine = (phases: Run['phases']): string =>
  phases
    .filter((p) => p.end >= 0)
    .sort((a, b) => a.start - b.start)
    .map((p) => `${p.name} ${Math.max(0, p.start)}-${p.end}`)
    .join(', ');

async function main(): Promise<void> {
  console.log('[bench:browser] building the raw-cache baseline worker (bench only)');
  const baseline = await buildBaselineWorker();
  console.log('[bench:browser] starting the local server on :8798 (build + seed when needed)');
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
    await loadBaselineWorker(page, baseline);
    console.log(`[bench:browser] ${await page.evaluate(() => navigator.userAgent)}`);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');

    const r: Record<string, Run[]> = {
      cached: [],
      cachedBase: [],
      cachedOnline: [],
      coldProg: [],
      coldBase: [],
      coldWorkerDownload: [],
    };
    const goal = new Set<number>();
    let headBytes = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      // Baseline cache: the raw artifact, parsed and verified on each load.
      await timed(page, token, { deleteCache: true, baseline: true });
      await context.setOffline(true);
      r.cachedBase.push(await timed(page, token, { deleteCache: false, baseline: true }));
      await context.setOffline(false);

      let prog: Run;
      if (ONLY_CACHED) {
        prog = await timed(page, token, { deleteCache: true });
      } else {
        await throttle(cdp, true);
        r.coldBase.push(await timed(page, token, { deleteCache: true }));
        prog = await timed(page, token, { deleteCache: true, progressive: true });
        r.coldWorkerDownload.push(
          await timed(page, token, { deleteCache: true, progressive: true, pageHeadRead: false }),
        );
        await throttle(cdp, false);
        r.coldProg.push(prog);
        headBytes = prog.headBytes;
      }

      r.cachedOnline.push(await timed(page, token, { deleteCache: false }));
      if (r.cachedOnline.at(-1)!.downloaded !== 0) throw new Error('the cached run downloaded again');
      await context.setOffline(true);
      r.cached.push(await timed(page, token, { deleteCache: false }));
      await context.setOffline(false);
      for (const k of Object.keys(r)) {
        const x = r[k]!.at(-1);
        if (x) goal.add(x.finalGoalScore);
      }
      const f = (x: Run[]) => x.at(-1)!.firstMs.toFixed(0);
      if (ONLY_CACHED) {
        console.log(
          `[bench:browser] round ${round}: cached ${f(r.cached)} ms (baseline raw cache ${f(r.cachedBase)}), cached+revalidated ${f(r.cachedOnline)} ms; ` +
            `phases: ${phaseLine(r.cached.at(-1)!.phases)}`,
        );
        continue;
      }
      console.log(
        `[bench:browser] round ${round}: cached ${f(r.cached)} ms${r.cached.at(-1)!.partial ? ' (from the head)' : ''}, complete ${r.cached.at(-1)!.completeMs.toFixed(0)} ms (baseline raw cache ${f(r.cachedBase)}), cached+revalidated ${f(r.cachedOnline)} ms; ` +
          `cold ${LINK.mbit} Mbit/s: progressive first ${f(r.coldProg)} ms${prog.partial ? ' (partial)' : ' (final)'}, complete ${prog.completeMs.toFixed(0)} ms; ` +
          `full-load baseline ${f(r.coldBase)} ms; ` +
          `the worker downloading the head itself ${f(r.coldWorkerDownload)} ms`,
      );
    }
    if (goal.size !== 1) throw new Error(`the paths scored differently: ${[...goal].join(', ')}`);
    const first = (k: string) => Math.round(median(r[k]!.map((x) => x.firstMs)));
    const complete = (k: string) => Math.round(median(r[k]!.map((x) => x.completeMs)));
    if (ONLY_CACHED) {
      console.log(
        JSON.stringify({
          model: MODEL,
          rounds: ROUNDS,
          only: 'cached',
          cached_first_score_ms: first('cached'),
          cached_first_score_baseline_ms: first('cachedBase'),
          cached_revalidated_first_score_ms: first('cachedOnline'),
          cached_rounds_ms: r.cached.map((x) => Math.round(x.firstMs)),
          targetCachedMs: CACHED_TARGET_MS,
        }),
      );
      return;
    }
    const figures = {
      model: MODEL,
      rounds: ROUNDS,
      link: `${LINK.mbit} Mbit/s, ${LINK.latencyMs} ms latency`,
      cached_first_score_ms: first('cached'),
      cached_first_score_baseline_ms: first('cachedBase'),
      cached_revalidated_first_score_ms: first('cachedOnline'),
      cold_50mbit_first_score_ms: first('coldProg'),
      cold_50mbit_first_score_baseline_ms: first('coldBase'),
      cold_50mbit_complete_ms: complete('coldProg'),
      cold_50mbit_complete_baseline_ms: complete('coldBase'),
      cold_50mbit_first_score_worker_download_ms: first('coldWorkerDownload'),
      cold_first_answer_partial: r.coldProg.at(-1)!.partial,
      downloadedMB: Number((r.coldBase.at(-1)!.downloaded / 1e6).toFixed(1)),
      headExtraMB: Number((headBytes / 1e6).toFixed(1)),
      targetCachedMs: CACHED_TARGET_MS,
      targetColdMs: COLD_TARGET_MS,
      targetsMet: first('cached') <= CACHED_TARGET_MS && first('coldProg') <= COLD_TARGET_MS ? 'yes' : 'no',
    };
    console.log(`[bench:browser] phases, cached (ms from creating the scorer): ${phaseLine(r.cached.at(-1)!.phases)}`);
    console.log(`[bench:browser] phases, cached baseline: ${phaseLine(r.cachedBase.at(-1)!.phases)}`);
    console.log(`[bench:browser] phases, cold progressive: ${phaseLine(r.coldProg.at(-1)!.phases)}`);
    console.log(
      `[bench:browser] phases, cold progressive, the worker downloading the head: ${phaseLine(r.coldWorkerDownload.at(-1)!.phases)}`,
    );
    console.log(`[bench:browser] phases, cold full-load baseline: ${phaseLine(r.coldBase.at(-1)!.phases)}`);
    console.log(
      `[bench:browser] time to first score (median of ${ROUNDS}): IndexedDB cache ${figures.cached_first_score_ms} ms (baseline ${figures.cached_first_score_baseline_ms} ms; ` +
        `revalidated ${figures.cached_revalidated_first_score_ms} ms); cold at ${figures.link}: ${figures.cold_50mbit_first_score_ms} ms ` +
        `(baseline full load ${figures.cold_50mbit_first_score_baseline_ms} ms), complete ${figures.cold_50mbit_complete_ms} ms (baseline ${figures.cold_50mbit_complete_baseline_ms} ms); ` +
        `targets <= ${CACHED_TARGET_MS} ms cached, <= ${COLD_TARGET_MS} ms cold: ${figures.targetsMet}`,
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
