import fs from 'node:fs';
import { chromium } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS, devToken, startServer } from './test/e2e/support/server';
const MODEL = 'en-glove-6b-100d';
const REQUEST = {
  texts: ['The river winds through the quiet forest below the snowy mountain, and the morning is wonderful.'],
  embeddingModelId: MODEL,
  dimensions: [{ id: 1, type: 'manual', words: ['forest', 'river', 'mountain'] }],
  mapperKeys: ['sentiment_valence'],
  goalConfig: { modelRankScore: -0.3, dimensions: [{ id: 1, weight: 2 }], mappers: [{ id: 'sentiment_valence', weight: 1 }] },
};
const server = await startServer();
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
const context = await browser.newContext();
const page = await context.newPage();
try {
  const token = await devToken();
  await page.addInitScript('window.__name = (f) => f;');
  await page.goto(`${server.url}/`);
  await page.waitForFunction(() => !!(window as any).playground);
  const run = (pageHeadRead: boolean) => page.evaluate(async ({ req, tok, phr }) => {
    const pg = (window as any).playground;
    for (const s of (window as any).__s ?? []) s.terminate();
    const t0 = performance.now();
    const scorer = pg.createOfflineScorer({ baseUrl: location.origin, token: tok, pageHeadRead: phr });
    (window as any).__s = [scorer];
    await scorer.textScores(req);
    const first = performance.now() - t0;
    await scorer.loadModel(req.embeddingModelId, { revalidate: false });
    const st = await scorer.status();
    const shift = st.timeOrigin - performance.timeOrigin - t0;
    return { first, phases: st.phases.map((p: any) => `${p.name} ${Math.round(p.start + shift)}-${Math.round(p.end + shift)}`).join(', ') };
  }, { req: REQUEST, tok: token, phr: pageHeadRead });
  console.log('warm', (await run(true)).first);
  await context.setOffline(true);
  for (let i = 0; i < 2; i++) console.log('cached', (await run(true)).first);
  const mode = process.argv[2] ?? 'page';
  await browser.startTracing(page, { path: '/tmp/h17c-exp/trace.json', categories: ['devtools.timeline', 'v8', 'v8.execute', 'disabled-by-default-devtools.timeline', 'disabled-by-default-v8.cpu_profiler', 'toplevel', 'blink', 'disabled-by-default-v8.compile'] });
  const r = await run(mode === 'page');
  await browser.stopTracing();
  console.log('traced', mode, r.first, r.phases);
  for (let i = 0; i < 4; i++) console.log('cached', (await run(true)).first);
  const t = JSON.parse(fs.readFileSync('/tmp/h17c-exp/trace.json', 'utf8')); const ev = t.traceEvents ?? t;
  for (const e of ev) if (/compileModule|produceModuleCache|v8.compile$|produceCache/i.test(e.name) && e.ph === 'X' && e.args?.data) console.log(e.name, (e.dur/1000).toFixed(1), JSON.stringify(e.args.data).slice(0, 200));
} finally {
  await browser.close();
  await server.stop();
}
