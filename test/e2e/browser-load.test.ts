/**
 * End to end in real Chromium against the local server (build/serve.ts, port 8794, its own state directory): how the
 * offline scorer loads a model (docs/offline-browser.md, Load path):
 *  1. progressive cold start: scores from the model's head (status partial) while the full
 *     artifact is held back, then delivers the complete model's answer (onFinal) equal to the
 *     API's; language data and mapper bundles arrive gzipped and are decoded and verified (the
 *     first answer with the bundle's head, the complete model with the full bundle);
 *  2. the parsed IndexedDB cache: a cached model loads as stored typed arrays, no re-hash;
 *  3. the page's head download (browser/src/head-offer.ts): a progressive scorer's first call
 *     downloads the head on the page while the worker starts; the worker takes it only when its
 *     SHA-256 checks out.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page, Response } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../client/src/index';
import { decodeWord, parseArtifact } from '../../core/artifact';
import { ROOT } from '../../build/wrangler';
import { devToken, openBrowser, startServer, type Browser, type Server } from './support/server';

const MODEL = process.env.DEFAULT_MODEL_ID ?? 'en-glove-6b-100d';
const PORT = 8794;

let server: Server | null = null;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let token: string;

beforeAll(async () => {
  server = await startServer(path.join(ROOT, '.wrangler', 'e2e-load-state'), PORT);
  token = await devToken();
  browser = await openBrowser(`${server.url}/`);
  ({ context, page } = browser);
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** The word at a row of the built default model (the head holds rows 0..49,999). */
function wordAtRow(row: number): string {
  const parsed = parseArtifact(
    new Uint8Array(fs.readFileSync(path.join(ROOT, 'build', 'generated', 'models', `${MODEL}.emb`))),
  );
  return decodeWord(parsed.vocab, parsed.wordOffsets, row);
}

describe('progressive cold start and the parsed IndexedDB cache (Chromium)', () => {
  const modelPath = `/api/v1/artifacts/models/${MODEL}`;
  const fullArtifact = (url: URL) => url.pathname === modelPath;

  it('scores from the head (status partial), then answers again from the complete model with the API JSON', async () => {
    // The full artifact is held back until the test lets it through: the head is all there is.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let heldBack = 0;
    await context.route(fullArtifact, async (r) => {
      heldBack++;
      await released;
      await r.continue();
    });
    // The small artifacts' answers as Chromium received them (the scorer runs in a Web Worker of the page).
    const small: Response[] = [];
    const onResponse = (res: Response) => {
      if (/\/api\/v1\/artifacts\/(languages|mappers)\//.test(res.url()) && res.status() === 200) small.push(res);
    };
    context.on('response', onResponse);
    const rare = wordAtRow(120_000);
    const inHead = {
      texts: ['The river winds through the quiet forest below the mountain.'],
      embeddingModelId: MODEL,
      dimensions: [{ id: 1, type: 'manual', words: ['forest', 'river'] }],
      mapperKeys: ['sentiment_valence'],
    };
    const pastHead = {
      texts: [`A ${rare} near the river.`],
      embeddingModelId: MODEL,
      dimensions: [{ id: 1, type: 'manual', words: ['forest', rare] }],
      goalConfig: { dimensions: [{ id: 1, weight: 1 }] },
    };
    const partial = await page.evaluate(
      async ({ tok, m, a, b }) => {
        const pg = (window as any).playground;
        const s = pg.createOfflineScorer({ baseUrl: location.origin, token: tok, progressive: true });
        (window as any).__progressive = s;
        await s.evictModel(m);
        (window as any).__finals = [];
        const first = await s.textScores(a, {
          onFinal: (f: unknown) => (window as any).__finals.push({ which: 'inHead', f }),
        });
        const second = await s.textScores(b, {
          onFinal: (f: unknown) => (window as any).__finals.push({ which: 'pastHead', f }),
        });
        return { first: JSON.stringify(first), second: JSON.stringify(second), status: await s.status() };
      },
      { tok: token, m: MODEL, a: inHead, b: pastHead },
    );
    const model = partial.status.models.find((x: { id: string }) => x.id === MODEL);
    expect(model).toMatchObject({ state: 'partial', rows: 50_000 });
    expect(model.vocabularySize).toBeGreaterThan(50_000);
    const api = createClient({ baseUrl: server!.url, token });
    const viaApi = async (body: unknown) =>
      JSON.stringify(await api.textScores(body as never, { workspaceId: 'ws_demo' }));
    // Only head rows were read: the partial answer is already the API's.
    expect(partial.first).toBe(await viaApi(inHead));
    // The rare word is not in the head: a different, partial answer...
    const apiPast = await viaApi(pastHead);
    expect(partial.second).not.toBe(apiPast);

    release();
    await page.waitForFunction(
      () => (window as any).__finals.some((f: { which: string }) => f.which === 'pastHead'),
      null,
      { timeout: 300_000 },
    );
    const after = await page.evaluate(async () => ({
      finals: (window as any).__finals,
      status: await (window as any).__progressive.status(),
    }));
    // ...followed by the complete model's, equal to the API's (an in-head answer is final already).
    const past = after.finals.find((f: { which: string }) => f.which === 'pastHead');
    expect(past.f.changed).toBe(true);
    expect(JSON.stringify(past.f.response)).toBe(apiPast);
    for (const f of after.finals.filter((x: { which: string }) => x.which === 'inHead'))
      expect(f.f.changed).toBe(false);
    expect(heldBack).toBe(1);
    // workerd sent the language data and the bundles gzipped; Chromium decoded them
    // (the scorer verified the decoded bodies' SHA-256 and answered with the API's JSON above).
    context.off('response', onResponse);
    const lang = small.find((res) => res.url().endsWith('/artifacts/languages/en'));
    expect(lang, 'language data downloaded by the scorer').toBeDefined();
    // The first answer used the bundle's head (the values of the head's rows); the complete model
    // downloaded the full bundle.
    const bundleHead = small.find((res) => res.url().endsWith(`/artifacts/mappers/${MODEL}/sentiment/head`));
    expect(bundleHead, "the mapper bundle's head").toBeDefined();
    expect((await bundleHead!.body()).byteLength).toBe(
      fs.statSync(path.join(ROOT, 'build', 'generated', 'mapper-heads', MODEL, 'sentiment.bin')).size,
    );
    expect(small.some((res) => res.url().endsWith(`/artifacts/mappers/${MODEL}/sentiment`))).toBe(true);
    for (const res of small) {
      const headers = await res.allHeaders();
      expect(headers['content-encoding'], res.url()).toBe('gzip');
      const sizes = await res.request().sizes();
      const decoded = (await res.body()).byteLength;
      expect(sizes.responseBodySize, res.url()).toBeLessThan(decoded);
    }
    expect((await lang!.body()).byteLength).toBe(
      fs.statSync(path.join(ROOT, 'build', 'generated', 'lang', 'en.bin')).size,
    );
    expect(after.status.models.find((x: { id: string }) => x.id === MODEL)).toMatchObject({
      state: 'complete',
      rows: model.vocabularySize,
    });
    await context.unroute(fullArtifact);
  }, 600_000);

  it('a cached model loads as stored typed arrays without re-hashing: no parse/verify phase, the verified digest kept', async () => {
    // After the test above, the complete model is in IndexedDB. A new worker; the service answers 304.
    const r = await page.evaluate(
      async ({ tok, m }) => {
        const pg = (window as any).playground;
        (window as any).__progressive?.terminate();
        const s = pg.createOfflineScorer({ baseUrl: location.origin, token: tok });
        const info = await s.loadModel(m);
        const st = await s.status();
        const cached = await s.listCachedModels();
        s.terminate();
        const stored = await new Promise<{ kind: string; rows: string; keys: string[] }>((resolve, reject) => {
          const open = indexedDB.open('embedding-edge-offline');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const store = open.result.transaction('artifacts').objectStore('artifacts');
            const keysReq = store.getAllKeys();
            keysReq.onsuccess = () => {
              const keys = keysReq.result.map((k) => JSON.stringify(k));
              const partsKey = keysReq.result.find((k) => Array.isArray(k) && k[0] === 'model-parts' && k[1] === m);
              if (!partsKey) {
                resolve({ kind: 'none', rows: '', keys });
                return;
              }
              const get = store.get(partsKey);
              get.onsuccess = () => {
                resolve({ kind: typeof get.result, rows: Object.prototype.toString.call(get.result.rows), keys });
                open.result.close();
              };
            };
          };
        });
        // The head's copy in the Origin Private File System (browser/src/head-file.ts).
        const files: string[] = [];
        for await (const name of ((await navigator.storage.getDirectory()) as any).keys()) files.push(name);
        return { info, phases: st.phases.map((p: { name: string }) => p.name), cached, stored, files };
      },
      { tok: token, m: MODEL },
    );
    expect(r.info).toMatchObject({ id: MODEL, fromCache: true, online: true });
    // Head first (the 50,000 most frequent rows kept beside the full model), the full model after it.
    expect(r.phases).toEqual(
      expect.arrayContaining(['idb-head', 'build-head', 'idb-model', 'build-model', 'revalidate-model']),
    );
    expect(r.phases.indexOf('idb-head')).toBeLessThan(r.phases.indexOf('idb-model'));
    expect(r.stored.keys).toContain(JSON.stringify(['model-head', MODEL, r.info.version]));
    // One copy per model (its sha256 is checked against the cached version when it is read).
    expect(r.files).toContain(`${encodeURIComponent(MODEL)}.head`);
    expect(r.files.filter((f: string) => f.endsWith('.head'))).toHaveLength(1);
    // The language data's copy there too (browser/src/opfs.ts), read before IndexedDB.
    expect(r.files).toContain('lang-en.bin');
    expect(r.phases.filter((p: string) => p.startsWith('parse-verify') || p.startsWith('download'))).toEqual([]);
    expect(r.stored.rows).toBe('[object Int8Array]');
    expect(r.stored.keys.filter((k: string) => k.startsWith('["model-bytes"'))).toEqual([]);
    // The digest verified at download is the service's.
    const res = await fetch(`${server!.url}${modelPath}`, { headers: { authorization: `Bearer ${token}` } });
    await res.body?.cancel();
    expect(r.cached.find((c: { id: string }) => c.id === MODEL)?.sha256).toBe(res.headers.get('x-content-sha256'));
  }, 300_000);

  const onPage = {
    texts: ['The river winds through the quiet forest below the mountain.'],
    embeddingModelId: MODEL,
    dimensions: [{ id: 1, type: 'manual', words: ['forest', 'river'] }],
    mapperKeys: ['sentiment_valence'],
  };
  const viaApi = async (body: unknown) =>
    JSON.stringify(
      await createClient({ baseUrl: server!.url, token }).textScores(body as never, { workspaceId: 'ws_demo' }),
    );
  /** A fresh scorer (new Web Worker) answering `onPage`: its JSON and the names of its load phases. */
  const freshScorer = (progressive: boolean) =>
    page.evaluate(
      async ({ tok, b, p }) => {
        const pg = (window as any).playground;
        const s = pg.createOfflineScorer({ baseUrl: location.origin, token: tok, progressive: p });
        const res = await s.textScores(b);
        const st = await s.status();
        s.terminate();
        return { json: JSON.stringify(res), phases: st.phases.map((x: { name: string }) => x.name) as string[] };
      },
      { tok: token, b: onPage, p: progressive },
    );

  it('a cached head reads the rows a request uses from its copy: a text, the normalization sample, a scan; each answer is the API JSON', async () => {
    // The full model's parsed entry is dropped from IndexedDB (pointer, head and its copy stay), and
    // its download held back: the head read from the cache is all this scorer has.
    await page.evaluate(
      async ({ m }) =>
        new Promise<void>((resolve, reject) => {
          const open = indexedDB.open('embedding-edge-offline');
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const store = open.result.transaction('artifacts', 'readwrite').objectStore('artifacts');
            const keys = store.getAllKeys();
            keys.onsuccess = () => {
              for (const k of keys.result)
                if (Array.isArray(k) && k[0] === 'model-parts' && k[1] === m) store.delete(k);
              store.transaction.oncomplete = () => {
                open.result.close();
                resolve();
              };
            };
          };
        }),
      { m: MODEL },
    );
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let heldBack = 0;
    await context.route(fullArtifact, async (r) => {
      // The revalidation (If-None-Match: 304) goes through, the download waits.
      if (r.request().headers()['if-none-match']) return r.continue();
      heldBack++;
      await released;
      await r.continue();
    });
    const zscore = { ...onPage, goalConfig: { normalization: 'zscore', dimensions: [{ id: 1, weight: 1 }] } };
    const matrix = { words: ['river', 'forest', 'mountain', 'lake'] };
    const find = { seedWords: ['ocean', 'river', 'lake'], embeddingModelId: MODEL, limit: 10 };
    const r = await page.evaluate(
      async ({ tok, m, a, z, mx, f }) => {
        const pg = (window as any).playground;
        const s = pg.createOfflineScorer({ baseUrl: location.origin, token: tok, progressive: true });
        (window as any).__lazy = s;
        (window as any).__lazyFinal = null;
        const rows = async () => (await s.status()).models.find((x: { id: string }) => x.id === m);
        const text = JSON.stringify(await s.textScores(a));
        const afterText = await rows();
        const normalized = JSON.stringify(await s.textScores(z));
        const afterSample = await rows();
        const sims = JSON.stringify(await s.similarityMatrix(m, mx));
        const found = JSON.stringify(
          await s.wordScores(f, { onFinal: (x: unknown) => ((window as any).__lazyFinal = x) }),
        );
        const afterScan = await rows();
        return { text, normalized, sims, found, afterText, afterSample, afterScan };
      },
      { tok: token, m: MODEL, a: onPage, z: zscore, mx: matrix, f: find },
    );
    const api = createClient({ baseUrl: server!.url, token });
    // A text: only the rows of its words and seeds were read, and the answer is final.
    expect(r.afterText).toMatchObject({ state: 'partial', rows: 50_000, fromCache: true });
    expect(r.afterText.rowsRead).toBeGreaterThan(0);
    expect(r.afterText.rowsRead).toBeLessThan(5_000);
    expect(r.text).toBe(await viaApi(onPage));
    // z-scores: the normalization sample (the 20,000 most frequent rows) was read for them.
    expect(r.afterSample.rowsRead).toBeGreaterThanOrEqual(20_000);
    expect(r.afterSample.rowsRead).toBeLessThan(50_000);
    expect(r.normalized).toBe(await viaApi(zscore));
    expect(r.sims).toBe(JSON.stringify(await api.similarityMatrix(MODEL, matrix)));
    // Nearest words scan the whole vocabulary: every head row was read; the complete answer follows.
    expect(r.afterScan.rowsRead).toBe(50_000);
    const apiFind = JSON.stringify(await api.wordScores(find as never, { workspaceId: 'ws_demo' }));
    release();
    await page.waitForFunction(() => (window as any).__lazyFinal !== null, null, { timeout: 300_000 });
    const final = await page.evaluate(async () => {
      const s = (window as any).__lazy;
      const out = { final: (window as any).__lazyFinal, status: await s.status() };
      s.terminate();
      return out;
    });
    expect(JSON.stringify(final.final.response)).toBe(apiFind);
    expect(final.status.models[0]).toMatchObject({ state: 'complete' });
    expect(final.status.models[0].rowsRead).toBeUndefined();
    expect(heldBack).toBeGreaterThanOrEqual(1);
    await context.unroute(fullArtifact);
  }, 600_000);

  it('a progressive cold start downloads the head on the page while the worker starts; a head damaged on the way is downloaded again by the worker', async () => {
    const headPath = `${modelPath}/head`;
    const evict = () =>
      page.evaluate(
        async ({ tok, m }) => {
          const s = (window as any).playground.createOfflineScorer({ baseUrl: location.origin, token: tok });
          await s.evictModel(m);
          s.terminate();
        },
        { tok: token, m: MODEL },
      );
    // The first head request (the page's) gets one byte flipped; later ones go through.
    let heads = 0;
    const isHead = (url: URL) => url.pathname === headPath;
    await context.route(isHead, async (route) => {
      if (heads++ > 0) return route.continue();
      const res = await route.fetch();
      const body = await res.body();
      body[body.length >> 1] ^= 0xff;
      const headers = { ...res.headers() };
      delete headers['content-encoding'];
      delete headers['content-length'];
      await route.fulfill({ response: res, body, headers });
    });
    await evict();
    const damaged = await freshScorer(true);
    expect(heads).toBe(2);
    expect(damaged.phases).toContain('page-head-http');
    expect(damaged.phases).not.toContain('head-from-page');
    // Only head rows read: the head's answer is the API's.
    expect(damaged.json).toBe(await viaApi(onPage));

    await evict();
    const cold = await freshScorer(true);
    expect(heads).toBe(3);
    expect(cold.phases).toEqual(expect.arrayContaining(['page-head-http', 'head-from-page', 'build-head']));
    expect(cold.json).toBe(damaged.json);
    await context.unroute(isHead);
  }, 300_000);

  it('an invalid call naming a model that is not cached gets its 422 and downloads nothing', async () => {
    const requested: string[] = [];
    const onRequest = (req: { url(): string }) => {
      if (req.url().includes('/api/v1/artifacts/')) requested.push(req.url());
    };
    context.on('request', onRequest);
    const r = await page.evaluate(
      async ({ tok, m }) => {
        const s = (window as any).playground.createOfflineScorer({ baseUrl: location.origin, token: tok });
        await s.evictModel(m);
        let problem: { status: number; code: string } | null = null;
        try {
          await s.textScores({ texts: 'not an array', embeddingModelId: m });
        } catch (err) {
          problem = (err as { problem: { status: number; code: string } }).problem;
        }
        const cached = (await s.listCachedModels()).map((x: { id: string }) => x.id);
        s.terminate();
        return { problem, cached };
      },
      { tok: token, m: MODEL },
    );
    context.off('request', onRequest);
    expect(r.problem).toMatchObject({ status: 422, code: 'VALIDATION_FAILED' });
    expect(r.cached).not.toContain(MODEL);
    expect(requested).toEqual([]);
  }, 120_000);
});
