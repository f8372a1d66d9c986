/**
 * End to end in real Chromium (the Debian package, driven by playwright-core) against the Worker
 * under the local server (build/serve.ts, port 8798, its own state directory):
 *  1. parity: for a fixed request set covering every scoring feature, the offline scorer's JSON
 *     (Web Worker, IndexedDB model) equals the API's response text byte for byte; refusals carry
 *     the same problem code;
 *  2. the playground: score through the API, download and cache the model, score offline with
 *     identical results; then stop the service, go offline, reload (service worker + IndexedDB)
 *     and score again with identical results; a screenshot goes to test-results/; a text in
 *     another language than the model's gets its note.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiProblem, createClient } from '../../client/src/index';
import { ROOT } from '../../build/wrangler';
import { devSecret, mint } from './support/dev-server';
import { devToken, openBrowser, startServer, type Browser, type Server } from './support/server';
import { needs } from '../support/optional-data';
import { ALIGNED } from '../../build/aligned-specs';
import { DEFAULT_MODEL_ID } from '../../build/paths';

const MODEL = process.env.DEFAULT_MODEL_ID ?? DEFAULT_MODEL_ID;
const RESULTS = path.join(ROOT, 'test-results');

let server: Server | null = null;
let browser: Browser | undefined;
let context: BrowserContext;
let page: Page;
let token: string;

/** An admin token (for seeding the stored dimension), minted like the workspace tokens. */
function adminToken(): Promise<string> {
  return mint(devSecret(), { workspaceId: 'ops', scope: 'admin', sub: 'e2e-admin' }, 600);
}

beforeAll(async () => {
  server = await startServer();
  token = await devToken();
  // A stored dimension for dimensions of type `dimension` (the state directory persists: 409 = already there).
  const admin = createClient({ baseUrl: server.url, token: await adminToken() });
  const created = await admin
    .call(
      (raw, init) =>
        raw.POST('/api/admin/v1/dimensions', {
          ...init,
          body: { id: 4242, name: 'weather', language: 'en', words: ['rain', 'storm', 'snow', 'wind'] },
        }),
      'POST',
    )
    .then(
      () => 201,
      (err: unknown) => (err instanceof ApiProblem ? err.status : Promise.reject(err)),
    );
  expect([201, 409]).toContain(created);

  browser = await openBrowser(`${server.url}/`);
  ({ context, page } = browser);
  await page.fill('#token', token);
  await page.dispatchEvent('#token', 'change');
  await page.waitForFunction(() => (document.querySelector('#model') as HTMLSelectElement).options.length > 0, null, {
    timeout: 60_000,
  });
}, 600_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

type Call =
  | { kind: 'textScores' | 'wordScores' | 'autocomplete' | 'tokenize'; body: unknown }
  | { kind: 'similarityMatrix' | 'wordAvailabilities'; model: string; body: unknown };

/** The fixed request set: every scoring feature of the API. */
function requests(): Array<{ name: string; call: Call }> {
  const texts = [
    'The river winds through the quiet forest below the snowy mountain, and the morning is wonderful.',
    "Quarterly revenue fell sharply; investors fear the market won't recover soon.",
    'We had a terrible, sad day: the flight was cancelled and the hotel was awful.',
    '!!! ... 123',
    '',
  ];
  const dims = [
    { id: 1, type: 'manual', name: 'nature', words: ['forest', 'river', 'mountain', 'ocean'] },
    {
      id: 2,
      type: 'axis',
      name: 'mood',
      words: ['good', 'happy', 'excellent'],
      oppositeWords: ['bad', 'sad', 'terrible'],
    },
    { id: 4242, type: 'dimension', words: ['hail'] },
    { id: 5, type: 'manual', words: ['qqqzzzx', 'xxyyzzq'] },
  ];
  // pattern_subjectivity is built from a Debian package: without apt-get the set runs without it.
  const withPattern = needs('pattern_subjectivity in the parity set', 'pattern-mapper');
  const mapperKeys = ['sentiment_valence', 'afinn_valence', ...(withPattern ? ['pattern_subjectivity'] : [])];
  const goal = (normalization?: string) => ({
    modelRankScore: -0.4,
    dimensions: [
      { id: 1, weight: 3 },
      { id: 2, weight: -2 },
      { id: 4242, weight: 1 },
      { id: 5, weight: 4 },
    ],
    mappers: [
      { id: 'sentiment_valence', weight: 5 },
      withPattern ? { id: 'pattern_subjectivity', weight: -1 } : { id: 'afinn_valence', weight: -1 },
    ],
    ...(normalization ? { normalization } : {}),
  });
  const out: Array<{ name: string; call: Call }> = [
    {
      name: 'text-scores without goal',
      call: { kind: 'textScores', body: { texts, embeddingModelId: MODEL, dimensions: dims, mapperKeys } },
    },
    {
      name: 'text-scores goal (default normalization)',
      call: {
        kind: 'textScores',
        body: { texts, embeddingModelId: MODEL, dimensions: dims, mapperKeys, goalConfig: goal() },
      },
    },
  ];
  for (const n of ['none', 'zscore', 'percentile']) {
    out.push({
      name: `text-scores goal ${n}`,
      call: {
        kind: 'textScores',
        body: { texts, embeddingModelId: MODEL, dimensions: dims, mapperKeys, goalConfig: goal(n) },
      },
    });
  }
  for (const [normalization, representation] of [
    ['zscore', 'sif'],
    ['batchZscore', 'contentMean'],
  ]) {
    out.push({
      name: `text-scores topic extensions: ${normalization}, ${representation}, expand, explain`,
      call: {
        kind: 'textScores',
        body: {
          texts,
          embeddingModelId: MODEL,
          dimensions: [{ id: 1, type: 'manual', words: ['river', 'lake'], expand: 5 }, ...dims.slice(1, 3)],
          mapperKeys,
          normalization,
          representation,
          ...(normalization === 'batchZscore' ? { expansion: 'contrastive' } : {}),
          explain: true,
        },
      },
    });
  }
  out.push(
    {
      name: 'word-scores whitelist, seedScore null',
      call: {
        kind: 'wordScores',
        body: {
          seedWords: ['happy', 'joy'],
          whitelistWords: [
            'delight',
            'misery',
            'table',
            'Cheerful',
            'notaword123x',
            'sad',
            'cafe\u0301',
            'café',
            'ｈａｐｐｙ',
          ],
          embeddingModelId: MODEL,
          seedScore: null,
          dimensions: dims.slice(0, 3),
          mapperKeys,
        },
      },
    },
    {
      name: 'word-scores whitelist, no seeds in vocabulary',
      call: {
        kind: 'wordScores',
        body: {
          seedWords: ['qqqzzzx'],
          whitelistWords: ['delight', 'misery'],
          embeddingModelId: MODEL,
          seedScore: 0.7,
        },
      },
    },
    {
      name: 'word-scores find mode, seedScore 0.5, rank cutoff',
      call: {
        kind: 'wordScores',
        body: {
          seedWords: ['ocean', 'river', 'lake'],
          embeddingModelId: MODEL,
          limit: 25,
          wordrankLimit: 20000,
          seedScore: 0.5,
          dimensions: dims.slice(0, 2),
          mapperKeys: ['afinn_valence'],
        },
      },
    },
    {
      name: 'word-scores find mode, seedScore -1, defaults',
      call: {
        kind: 'wordScores',
        body: { seedWords: ['computer', 'software'], embeddingModelId: MODEL, seedScore: -1 },
      },
    },
    {
      name: 'similarity matrix',
      call: {
        kind: 'similarityMatrix',
        model: MODEL,
        body: { words: ['king', 'queen', 'notaword123x', 'apple', 'king', 'Banana', 'naïve', 'hap\u00ADpy'] },
      },
    },
    {
      name: 'word availabilities',
      call: {
        kind: 'wordAvailabilities',
        model: MODEL,
        body: { words: ['apple', 'notaword123x', 'Banana', ' river ', 'cafe\u0301', 'ｈａｐｐｙ', 'hap\u00ADpy'] },
      },
    },
    {
      name: 'word availabilities with whitelist',
      call: {
        kind: 'wordAvailabilities',
        model: MODEL,
        body: { words: ['apple', 'banana', 'river'], whitelistWords: ['apple', 'RIVER'] },
      },
    },
    { name: 'autocomplete', call: { kind: 'autocomplete', body: { word: 'comp', embeddingModelId: MODEL } } },
    {
      name: 'autocomplete with whitelist',
      call: {
        kind: 'autocomplete',
        body: { word: 'Ap', embeddingModelId: MODEL, whitelistWords: ['apple', 'apply', 'banana', 'April'] },
      },
    },
    {
      name: 'tokenize en',
      call: {
        kind: 'tokenize',
        body: { language: 'en', text: "The children don't like rainy days; they're running to the U.S. embassy." },
      },
    },
    {
      name: 'tokenize en: offsets after an emoji, in code points and in UTF-8',
      call: { kind: 'tokenize', body: { language: 'en', text: '😀🎉 so ｈａｐｐｙ at the cafe\u0301' } },
    },
    {
      name: 'tokenize en, offsetUnit utf8',
      call: { kind: 'tokenize', body: { language: 'en', text: '😀🎉 so happy at the café', offsetUnit: 'utf8' } },
    },
    {
      name: 'tokenize ja',
      call: { kind: 'tokenize', body: { language: 'JA', text: '東京都に住んでいる猫はとても可愛いです。' } },
    },
  );
  // Composition rules with explanations, and the plain mean with explanations (issue 13).
  const ruleTexts = [
    ...texts,
    "It isn't bad at all, but the staff were not FRIENDLY!!! :( 😍",
    'Der Film war nicht gut, aber sehr schön.',
    // Words written another way (NFD café, full-width, a soft hyphen) and offsets after an emoji.
    '😀 a ｈａｐｐｙ visit to the cafe\u0301, so hap\u00ADpy and naïve',
  ];
  out.push(
    {
      name: 'text-scores explain (rules)',
      call: {
        kind: 'textScores',
        body: { texts: ruleTexts, embeddingModelId: MODEL, dimensions: dims, mapperKeys, explain: true },
      },
    },
    {
      name: 'text-scores explain (mean)',
      call: {
        kind: 'textScores',
        body: {
          texts: ruleTexts,
          embeddingModelId: MODEL,
          dimensions: dims,
          mapperKeys,
          composition: 'mean',
          explain: true,
          goalConfig: goal('zscore'),
        },
      },
    },
  );
  return out;
}

/** Runs a call through the API (the playground's typed client: the response JSON re-serialized, which for the API's JSON.stringify output is its text) and through the offline scorer (its JSON). */
async function both(call: Call): Promise<{ api: { ok: boolean; raw: string }; offline: { ok: boolean; raw: string } }> {
  return page.evaluate(async (c) => {
    const pg = (window as any).playground;
    const s = pg.offline();
    const viaApi = async (): Promise<{ ok: boolean; raw: string }> => {
      try {
        const r = 'model' in c ? await pg.api[c.kind](c.model, c.body) : await pg.api[c.kind](c.body);
        return { ok: true, raw: r.raw };
      } catch (err) {
        return { ok: false, raw: String((err as Error).message) };
      }
    };
    const viaOffline = async (): Promise<{ ok: boolean; raw: string }> => {
      try {
        const r = 'model' in c ? await s[c.kind](c.model, c.body) : await s[c.kind](c.body);
        return { ok: true, raw: JSON.stringify(r) };
      } catch (err) {
        const e = err as { code?: string; status?: number; problem?: unknown; message: string };
        return { ok: false, raw: JSON.stringify({ status: e.status, code: e.code, problem: e.problem }) };
      }
    };
    return { api: await viaApi(), offline: await viaOffline() };
  }, call as any);
}

describe('offline scorer parity with the API (Chromium)', () => {
  it('the Web Worker runs the same kernels.wasm bytes as the Worker build', async () => {
    const sha = await page.evaluate(() => (window as any).playground.offline().kernelsSha256());
    const expected = fs
      .readFileSync(path.join(ROOT, 'build', 'generated', 'kernels.wasm.sha256'), 'utf8')
      .trim()
      .split(/\s+/)[0];
    expect(sha).toBe(expected);
  });

  it('answers every request of the fixed set with the identical JSON', async () => {
    const reqs = requests();
    for (const { name, call } of reqs) {
      const r = await both(call);
      expect(r.api.ok, `${name}: API failed: ${r.api.raw}`).toBe(true);
      expect(r.offline.ok, `${name}: offline failed: ${r.offline.raw}`).toBe(true);
      expect(r.offline.raw, name).toBe(r.api.raw);
    }
    // The set exercised what it claims to: goal factors of each kind, mapper scores, stored seeds, nulls.
    const goal = JSON.parse((await both(reqs[2].call)).api.raw);
    const types = new Set(goal.data[0].goalScoreFactors.map((f: { type: string }) => f.type));
    expect([...types].sort()).toEqual(['dimension', 'intrinsic', 'mapper']);
    expect(Object.keys(goal.data[0].dimensionScores)).toContain('4242');
    expect(goal.data[3].dimensionScores).toEqual({});
    const zs = JSON.parse((await both(reqs[3].call)).api.raw);
    const pc = JSON.parse((await both(reqs[4].call)).api.raw);
    expect(zs.data[0].goalScore).not.toBe(pc.data[0].goalScore);
    const named = (name: string) => reqs.find((r) => r.name === name)!.call;
    const wl = JSON.parse((await both(named('word-scores whitelist, seedScore null'))).api.raw);
    expect(wl.data.every((w: { goalScore: unknown }) => w.goalScore === null)).toBe(true);
    const topic = (n: string) =>
      both(named(`text-scores topic extensions: ${n}, expand, explain`)).then((r) => JSON.parse(r.api.raw));
    const [wordStats, batchStats] = [await topic('zscore, sif'), await topic('batchZscore, contentMean')];
    expect(batchStats.data[0].explanation.dimensions['1'].expandedWords).toHaveLength(5);
    expect(batchStats.data[0].dimensionScores['1']).not.toBe(wordStats.data[0].dimensionScores['1']);
    const explained = JSON.parse(
      (await both(reqs.find((r) => r.name === 'text-scores explain (rules)')!.call)).api.raw,
    );
    const rules = explained.data[5].explanation.mappers.sentiment_valence.tokens.flatMap(
      (t: { rules: string[] }) => t.rules,
    );
    expect(rules).toEqual(expect.arrayContaining(['negated', 'contrast', 'caps', 'exclamation', 'emoticon', 'emoji']));
    const find = JSON.parse((await both(named('word-scores find mode, seedScore 0.5, rank cutoff'))).api.raw);
    expect(find.data.length).toBe(25);
    expect(find.data.every((w: { modelRank: number }) => w.modelRank <= 20000)).toBe(true);
    // Offline scoring (the Web Worker, its WebAssembly, IndexedDB) runs under the page's CSP.
    expect(browser!.cspViolations).toEqual([]);
  }, 600_000);

  it('refuses invalid requests with the API problem codes', async () => {
    const bad: Call[] = [
      { kind: 'textScores', body: { texts: 'not an array', embeddingModelId: MODEL } },
      { kind: 'textScores', body: { texts: ['a'], embeddingModelId: MODEL, mapperKeys: ['nope_x'] } },
      {
        kind: 'textScores',
        body: { texts: ['a'], embeddingModelId: MODEL, dimensions: [{ id: 999_999, type: 'dimension' }] },
      },
      {
        kind: 'textScores',
        body: {
          texts: ['a'],
          embeddingModelId: MODEL,
          dimensions: [{ id: 1, type: 'manual', words: ['a'] }],
          goalConfig: { dimensions: [{ id: 2, weight: 1 }] },
        },
      },
      { kind: 'wordScores', body: { seedWords: ['a'], embeddingModelId: MODEL, limit: 5000 } },
      { kind: 'tokenize', body: { language: 'xx', text: 'hello' } },
    ];
    for (const call of bad) {
      const r = await both(call);
      expect(r.api.ok).toBe(false);
      expect(r.offline.ok).toBe(false);
      const apiCode = /^\d+ ([A-Z_]+):/.exec(r.api.raw)?.[1];
      const apiStatus = Number(/^(\d+)/.exec(r.api.raw)?.[1]);
      const off = JSON.parse(r.offline.raw) as { status: number; code: string };
      expect(off.code, JSON.stringify(call)).toBe(apiCode);
      expect(off.status).toBe(apiStatus);
    }
  }, 120_000);
});

describe('downloads are verified before they are cached', () => {
  it('a body that does not match X-Content-SHA256 is refused and not cached; the genuine one is', async () => {
    const route = '**/api/v1/artifacts/languages/fr';
    let tampered = 0;
    await context.route(route, async (r) => {
      const res = await r.fetch();
      const body = Buffer.from(await res.body());
      body[body.length >> 1] ^= 0xff;
      tampered++;
      // The body is the decoded one (the service gzips language data): send it without the encoding.
      const headers = Object.fromEntries(
        Object.entries(res.headers()).filter(([k]) => k !== 'content-encoding' && k !== 'content-length'),
      );
      await r.fulfill({ status: res.status(), headers, body });
    });
    const text = "L'homme et les enfants aiment l'été.";
    const bad = await page.evaluate(async (t) => {
      const s = (window as any).playground.offline();
      try {
        await s.tokenize({ language: 'fr', text: t });
        return null;
      } catch (err) {
        return { code: (err as { code: string }).code, detail: (err as Error).message };
      }
    }, text);
    await context.unroute(route);
    expect(tampered).toBe(1);
    expect(bad?.code).toBe('LANGUAGE_DATA_UNAVAILABLE');
    expect(bad?.detail).toContain('SHA-256');
    const cachedKeys = () =>
      page.evaluate(
        () =>
          new Promise<string[]>((resolve, reject) => {
            const open = indexedDB.open('embedding-edge-offline');
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
              const req = open.result.transaction('artifacts').objectStore('artifacts').getAllKeys();
              req.onsuccess = () => {
                resolve(req.result.map((k) => JSON.stringify(k)));
                open.result.close();
              };
            };
          }),
      );
    expect(await cachedKeys()).not.toContain(JSON.stringify(['lang', 'fr']));
    // Untampered: accepted, cached, and the same tokens as the API.
    const r = await both({ kind: 'tokenize', body: { language: 'fr', text } });
    expect(r.offline.ok).toBe(true);
    expect(r.offline.raw).toBe(r.api.raw);
    expect(await cachedKeys()).toContain(JSON.stringify(['lang', 'fr']));
  }, 300_000);
});

// The default German model: its English companion is the default English model.
const DE_MODEL = ALIGNED.de.id;
const deBuilt = fs.existsSync(path.join(ROOT, 'build', 'generated', 'models', `${DE_MODEL}.emb`));
if (!deBuilt)
  console.warn(
    `[e2e] German parity skipped: ${DE_MODEL} is not built (the aligned models need apt-get: Debian/Ubuntu as root)`,
  );

describe.skipIf(!deBuilt)('German request parity (aligned model, Chromium)', () => {
  it('the offline scorer answers German requests with the API’s JSON, cross-lingual seeds included', async () => {
    const calls: Call[] = [
      {
        kind: 'textScores',
        body: {
          embeddingModelId: DE_MODEL,
          texts: [
            'Die Kinder spielen fröhlich auf dem Kinderspielplatz im Wald.',
            'Ein trauriger, verregneter Tag: der Zug fiel aus.',
          ],
          mapperKeys: ['sentiment_valence'],
          // German seeds and English seeds the German model lacks (looked up in the English companion).
          dimensions: [
            { id: 1, type: 'manual', words: ['Wald', 'Fluss', 'Berg'] },
            { id: 2, type: 'axis', words: ['joyful', 'cheerful'], oppositeWords: ['gloomy', 'miserable'] },
          ],
          goalConfig: {
            dimensions: [{ id: 1, weight: 1 }],
            mappers: [{ id: 'sentiment_valence', weight: 2 }],
            normalization: 'zscore',
          },
        },
      },
      {
        kind: 'wordScores',
        body: {
          embeddingModelId: DE_MODEL,
          seedWords: ['Hund'],
          whitelistWords: ['Katze', 'Steuer', 'Hundehütte'],
          mapperKeys: ['sentiment_valence'],
        },
      },
      { kind: 'autocomplete', body: { embeddingModelId: DE_MODEL, word: 'spiel' } },
    ];
    for (const call of calls) {
      const r = await both(call);
      expect(r.api.ok, `API failed: ${r.api.raw}`).toBe(true);
      expect(r.offline.ok, `offline failed: ${r.offline.raw}`).toBe(true);
      expect(r.offline.raw).toBe(r.api.raw);
    }
    const texts = JSON.parse((await both(calls[0]!)).api.raw);
    expect(texts.data[0].dimensionScores['2']).not.toBeNull();
  }, 600_000);

  it('the playground offers a language picker that picks the language’s default model', async () => {
    const langs = await page.$$eval('#language option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(langs).toEqual(expect.arrayContaining(['de', 'en']));
    await page.selectOption('#language', 'de');
    const models = await page.$$eval('#model option', (os) => os.map((o) => (o as HTMLOptionElement).value));
    expect(models).toEqual(expect.arrayContaining([DE_MODEL]));
    expect(models.every((id) => id.startsWith('de-'))).toBe(true);
    expect(await page.inputValue('#model')).toBe(DE_MODEL);
    // Back to English for the playground test below.
    await page.selectOption('#language', 'en');
    expect(await page.inputValue('#model')).toBe(MODEL);
  });
});

const JA_MODEL = 'ja-aligned-glove-6b-100d';
const jaBuilt = fs.existsSync(path.join(ROOT, 'build', 'generated', 'models', `${JA_MODEL}.emb`));
if (!jaBuilt)
  console.warn(
    `[e2e] Japanese explain parity skipped: ${JA_MODEL} is not built (the aligned models need apt-get: Debian/Ubuntu as root)`,
  );

describe.skipIf(!jaBuilt)('Japanese explain parity (aligned model, Chromium)', () => {
  it('the offline scorer explains conjugated and negated Japanese words exactly as the API does', async () => {
    const call: Call = {
      kind: 'textScores',
      body: {
        embeddingModelId: JA_MODEL,
        texts: ['料理はまずかった。', 'とても美味しかった。', '映画は楽しくなかった。', '好きじゃない。'],
        mapperKeys: ['sentiment_valence'],
        explain: true,
      },
    };
    const r = await both(call);
    expect(r.api.ok, `API failed: ${r.api.raw}`).toBe(true);
    expect(r.offline.ok, `offline failed: ${r.offline.raw}`).toBe(true);
    expect(r.offline.raw).toBe(r.api.raw);
    // What the explanation shows: the conjugated words scored, the negated ones named so.
    type Explained = { string: string; rules: string[] };
    const data = JSON.parse(r.api.raw).data as Array<{
      explanation: { mappers: Record<string, { tokens: Explained[] }> };
    }>;
    const tokens = (i: number) => data[i]!.explanation.mappers.sentiment_valence!.tokens;
    expect(tokens(0).map((t) => t.string)).toContain('まずかっ');
    expect(tokens(1).map((t) => t.string)).toContain('美味しかっ');
    expect(tokens(2).find((t) => t.string === '楽しく')?.rules).toContain('negated');
    expect(tokens(3).find((t) => t.string === '好き')?.rules).toContain('negated');
  }, 600_000);
});

/** Every text of the page's charts that overlaps another, reaches past its chart, or a chart wider than the window. */
function chartLabelProblems(): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const tol = 0.5;
    const windowWidth = document.documentElement.clientWidth;
    for (const svg of Array.from(document.querySelectorAll<SVGSVGElement>('.chart svg'))) {
      const chart = svg.closest('.chart')!.id;
      const box = svg.getBoundingClientRect();
      if (box.right > windowWidth + tol)
        out.push(`${chart}: reaches ${Math.round(box.right)} px in a ${windowWidth} px window`);
      const labels = Array.from(svg.querySelectorAll('text')).map((t) => ({
        text: t.textContent,
        r: t.getBoundingClientRect(),
      }));
      for (const { text, r } of labels)
        if (
          r.left < box.left - tol ||
          r.right > box.right + tol ||
          r.top < box.top - tol ||
          r.bottom > box.bottom + tol
        )
          out.push(`${chart}: "${text}" reaches past the chart`);
      for (let i = 0; i < labels.length; i++)
        for (let j = i + 1; j < labels.length; j++) {
          const [a, b] = [labels[i]!.r, labels[j]!.r];
          if (a.left < b.right - tol && b.left < a.right - tol && a.top < b.bottom - tol && b.top < a.bottom - tol)
            out.push(`${chart}: "${labels[i]!.text}" overlaps "${labels[j]!.text}"`);
        }
    }
    return out;
  });
}

/** axe-core's serious and critical violations on the page as it is (rule, impact, first target). */
async function seriousA11yViolations(): Promise<string[]> {
  // Evaluated through the DevTools protocol, not added as an inline <script>: the page's CSP refuses those.
  if (!(await page.evaluate(() => 'axe' in window)))
    await page.evaluate(fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8'));
  return page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ['violations'] });
    return (r.violations as Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }>)
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.length} nodes, first ${v.nodes[0]?.target.join(' ')}`);
  });
}

const statusText = () => page.textContent('#status').then((t) => t ?? '');
/** The visible text of an element (as a person reads it: no tooltips, no JSON views). */
const visibleText = (selector: string) => page.locator(selector).innerText();

/** Clicks a button and waits for the status line to change from what it said before. */
async function clickAndWaitForStatus(selector: string, done: RegExp, timeout = 300_000): Promise<string> {
  await page.evaluate(() => (document.getElementById('status')!.textContent = ''));
  await page.click(selector);
  await page.waitForFunction(
    (src) => {
      const t = document.getElementById('status')!;
      return new RegExp(src).test(t.textContent ?? '') || t.className === 'error';
    },
    done.source,
    { timeout },
  );
  return statusText();
}

/** The charts at 1280 and 390 px: no label overlaps another or leaves its chart; a screenshot of each width. */
async function checkChartsAtBothWidths(name: string): Promise<void> {
  fs.mkdirSync(RESULTS, { recursive: true });
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 1400 });
    // The charts redraw to the new width (a resize listener).
    await page.waitForFunction(
      (w) =>
        Array.from(document.querySelectorAll('.chart svg')).every((s) => s.getBoundingClientRect().right <= w) &&
        document.querySelectorAll('.chart svg').length === 2,
      width,
      { timeout: 10_000 },
    );
    expect(await chartLabelProblems(), `${name} at ${width} px`).toEqual([]);
    // Nothing else is wider than the window either (no sideways scrolling on a phone).
    expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at ${width} px`).toBe(width);
    await page.screenshot({ path: path.join(RESULTS, `playground-${name}-${width}.png`), fullPage: true });
  }
  await page.setViewportSize({ width: 1280, height: 1400 });
}

describe('the playground as a person uses it (issue 37)', () => {
  it('API: the default model, sample reviews scored with sentiment as the goal, a legend, plain labels, charts that fit, no serious accessibility violation', async () => {
    // A first visit: nothing kept from the tests above but the token the person pastes.
    await page.evaluate(() => localStorage.clear());
    await page.reload();
    await page.fill('#token', token);
    await page.press('#token', 'Tab');
    await page.waitForFunction(() => /^Ready/.test(document.getElementById('status')!.textContent ?? ''), null, {
      timeout: 60_000,
    });
    expect(await page.inputValue('#model')).toBe(MODEL);
    expect(await page.inputValue('#language')).toBe('en');
    expect(await statusText()).toBe('Ready: scoring through the API with the English model.');

    // The panel that explains the page, the legend of the results.
    const help = await visibleText('#help');
    for (const term of ['How to read this', 'Dimension (topic)', 'Mapper (word ratings)', 'Goal', 'Highlights'])
      expect(help).toContain(term);
    expect(await visibleText('#texts-legend')).toMatch(/Score .*Weight .*Share of goal/s);

    // Keyboard: Tab reaches the Score button, Enter presses it.
    await page.focus('#composition');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.id)).toBe('score-texts');
    await page.evaluate(() => (document.getElementById('status')!.textContent = ''));
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => /^Scored/.test(document.getElementById('status')!.textContent ?? ''), null, {
      timeout: 120_000,
    });
    expect(await statusText()).toBe('Scored 3 texts through the API.');
    const cards = page.locator('#text-results .text-card');
    expect(await cards.count()).toBe(3);
    // Sentiment alone is the goal: the negative review scores below 0, the positive one above.
    const goal = (i: number) =>
      cards
        .nth(i)
        .locator('tr.goal .share .num')
        .textContent()
        .then((t) => Number((t ?? '').replace('−', '-')));
    expect(await goal(0)).toBeLessThan(0);
    expect(await goal(1)).toBeGreaterThan(0);
    const first = await cards.nth(0).innerText();
    for (const shown of ['Goal score', 'Sentiment (VADER)', 'food', 'service', 'not in goal', 'Share of goal'])
      expect(first).toContain(shown);
    // The bars are drawn (the goal's and the sentiment's), in the colour of their kind.
    for (const row of ['tr.goal', 'tr.mapper']) {
      const fill = cards.nth(1).locator(`${row} .fill`);
      expect((await fill.boundingBox())?.width, row).toBeGreaterThan(2);
    }
    // Each highlighted word shows its own score without hovering.
    expect(await cards.nth(0).locator('.explain mark sup').count()).toBeGreaterThan(0);

    await clickAndWaitForStatus('#score-words', /^Found/);
    await clickAndWaitForStatus('#score-matrix', /^Compared/);
    // No API key or version string on screen (they stay in the JSON views and tooltips).
    const pageText = await page.locator('body').innerText();
    for (const jargon of ['modelRank', 'afinn_valence', 'sentiment_valence', 'NETWORK_ERROR', 'int8'])
      expect(pageText).not.toContain(jargon);
    expect(await seriousA11yViolations()).toEqual([]);
    await checkChartsAtBothWidths('en-api');
    expect(browser!.pageErrors).toEqual([]);
    expect(browser!.cspViolations).toEqual([]);
  }, 600_000);

  it.skipIf(!deBuilt)(
    'switch language: samples and seeds follow; offline German downloads with progress and only the German model, scores, and the status says so',
    async () => {
      const samples = {
        de: 'Das Essen war überhaupt nicht gut.',
        fr: "La nourriture n'était pas bonne du tout.",
        ja: '料理は全然おいしくなかった。',
      } as const;
      const langs = await page.$$eval('#language option', (os) => os.map((o) => (o as HTMLOptionElement).value));
      for (const lang of ['fr', 'ja', 'de'] as const) {
        if (!langs.includes(lang)) continue;
        await page.selectOption('#language', lang);
        expect((await page.inputValue('#texts')).split('\n')[0]).toBe(samples[lang]);
        expect(await page.inputValue('#model')).toBe(ALIGNED[lang].id);
      }
      expect(await page.inputValue('#seed-words')).toBe('Nudeln, Pizza, Brot');
      expect(await page.$$eval('#dimensions .name', (is) => is.map((i) => (i as HTMLInputElement).value))).toEqual([
        'Essen',
        'Service',
      ]);

      // Go offline from a clean slate: no model kept, a new worker (reload), a slow link so that the download shows.
      await page.evaluate(
        async (ids) => {
          for (const id of ids) await (window as any).playground.offline().evictModel(id);
        },
        [MODEL, DE_MODEL],
      );
      await page.reload();
      await page.waitForFunction(() => /^Ready/.test(document.getElementById('status')!.textContent ?? ''), null, {
        timeout: 60_000,
      });
      expect(await page.inputValue('#model')).toBe(DE_MODEL);
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 20,
        downloadThroughput: (20 * 1e6) / 8,
        uploadThroughput: (20 * 1e6) / 8,
      });
      // Keyboard: the switch is a radio group, the arrow key sets Offline; that starts the download (no other button).
      expect(await page.locator('header button').count()).toBe(0);
      await page.focus('input[name=mode][value=api]');
      await page.keyboard.press('ArrowRight');
      expect(await page.isChecked('input[name=mode][value=offline]')).toBe(true);
      // The progress shows while the model downloads (bar and words together).
      const during = await page.waitForFunction(
        () => {
          const bar = document.getElementById('progress') as HTMLProgressElement;
          const said = document.getElementById('status')!.textContent ?? '';
          return !bar.hidden && bar.value > 0 && bar.value < 1 && /^Downloading the German model: /.test(said) && said;
        },
        null,
        { timeout: 120_000 },
      );
      expect(await during.jsonValue()).toMatch(/^Downloading the German model: [\d.]+ of [\d.]+ MB$/);
      await page.screenshot({ path: path.join(RESULTS, 'playground-de-downloading.png') });
      await page.waitForFunction(() => /ready/.test(document.getElementById('status')!.textContent ?? ''), null, {
        timeout: 300_000,
      });
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      expect(await statusText()).toMatch(/^Offline: the German model is ready in this tab \(downloaded, \d+ MB\)\.$/);
      expect(await page.isHidden('#progress')).toBe(true);

      expect(await clickAndWaitForStatus('#score-texts', /^Scored/)).toBe('Scored 3 texts offline in this tab.');
      expect(await clickAndWaitForStatus('#score-words', /^Found/)).toMatch(
        /^Found \d+ words near Nudeln, Pizza, Brot\.$/,
      );
      expect(await clickAndWaitForStatus('#score-matrix', /^Compared/)).toMatch(/^Compared 8 words\.$/);
      // Only the German model was fetched: German seeds need no English companion.
      const models = await page.evaluate(() =>
        ((window as any).playground.progressLog as Array<{ artifact: string; name: string }>)
          .filter((p) => p.artifact === 'model')
          .map((p) => p.name),
      );
      expect([...new Set(models)]).toEqual([DE_MODEL]);
      const english = () =>
        page.evaluate(async () =>
          ((await (window as any).playground.offline().listCachedModels()) as Array<{ id: string; language: string }>)
            .filter((c) => c.language === 'en')
            .map((c) => c.id),
        );
      expect(await english()).toEqual([]);
      expect(await visibleText('#cached')).toMatch(/^Kept in this browser: .*German model \(\d+ MB\)/);
      // German nouns in their display casing (the API's words are lower-cased).
      const words = await page.$$eval('#words-chart svg text.word', (ts) => ts.map((t) => t.textContent ?? ''));
      expect(words.length).toBeGreaterThan(0);
      expect(words.filter((w) => /^\p{Lu}/u.test(w)).length).toBeGreaterThan(words.length / 2);
      expect(await page.$$eval('#heatmap svg text.lbl', (ts) => ts.map((t) => t.textContent))).toContain('schlecht');
      expect(await seriousA11yViolations()).toEqual([]);
      await checkChartsAtBothWidths('de-offline');

      // An English seed word the German model lacks: asked before the English model downloads; "without" downloads nothing.
      const avail = await page.evaluate(
        (m) => (window as any).playground.offline().wordAvailabilities(m, { words: ['waitress'] }),
        DE_MODEL,
      );
      expect(avail.availabilities[0].isAvailable).toBe(false);
      await page.fill('#dimensions .dim:nth-child(2) .words', 'Service, Kellner, waitress');
      await page.dispatchEvent('#dimensions .dim:nth-child(2) .words', 'input');
      await clickAndWaitForStatus('#score-texts', /waits for your answer/);
      expect(await visibleText('#companion-prompt')).toContain('does not know these seed words: waitress');
      await clickAndWaitForStatus('#companion-prompt button:has-text("Score without these words")', /^Scored/);
      expect(await english()).toEqual([]);
      // Asked again; this time the person agrees: the English model downloads (its progress says why) and the seed counts.
      await clickAndWaitForStatus('#score-texts', /waits for your answer/);
      const withoutWaitress = await page.textContent('#texts-json');
      await clickAndWaitForStatus('#companion-prompt button:has-text("Download the English model")', /^Scored/);
      expect(await english()).toEqual([MODEL]);
      const companion = await page.evaluate(
        (m) =>
          ((window as any).playground.progressLog as Array<{ artifact: string; name: string; phase: string }>).filter(
            (p) => p.artifact === 'model' && p.name === m && p.phase === 'download',
          ).length,
        MODEL,
      );
      expect(companion).toBeGreaterThan(0);
      expect(await page.textContent('#texts-json')).not.toBe(withoutWaitress);
      expect(browser!.pageErrors).toEqual([]);
      expect(browser!.cspViolations).toEqual([]);
    },
    900_000,
  );

  it('network off in API mode: a plain message, and the earlier results marked as out of date', async () => {
    await page.click('.switch label:has(input[value=api])');
    await context.setOffline(true);
    try {
      const said = await clickAndWaitForStatus('#score-texts', /^Cannot reach/, 120_000);
      expect(said).toBe(
        'Cannot reach the service: check the network connection, or switch to Offline to score in this tab.',
      );
      expect(await page.getAttribute('#status', 'class')).toBe('error');
      expect(await page.getAttribute('#text-results', 'class')).toContain('stale');
      // The note is text in the page (read by screen readers), before the faded results.
      expect(await page.textContent('#text-results > .stale-note:first-child')).toMatch(/from an earlier run/);
      await page.screenshot({ path: path.join(RESULTS, 'playground-network-off.png') });
    } finally {
      await context.setOffline(false);
    }
    // Back to English, with the English samples (the German topic edited above stays on a language switch), for the playground test below.
    await page.selectOption('#language', 'en');
    await page.reload();
    await page.waitForFunction(() => /^Ready/.test(document.getElementById('status')!.textContent ?? ''), null, {
      timeout: 60_000,
    });
    expect(await page.inputValue('#model')).toBe(MODEL);
    expect(await page.$$eval('#dimensions .name', (is) => is.map((i) => (i as HTMLInputElement).value))).toEqual([
      'food',
      'service',
    ]);
  }, 300_000);
});

describe('the API docs page (Chromium)', () => {
  it("Swagger UI renders and runs under the page's CSP: operations, one opened and executed, the schemas; no violation", async () => {
    const docs = await context.newPage();
    const errors: string[] = [];
    docs.on('pageerror', (e) => errors.push(e.message));
    try {
      const res = await docs.goto(`${server!.url}/api/docs`);
      expect(res!.headers()['content-security-policy']).toContain("frame-ancestors 'none'");
      await docs.waitForSelector('.opblock-summary', { timeout: 60_000 });
      expect(await docs.locator('.opblock').count()).toBeGreaterThan(20);
      // An operation opened (parameters, responses, examples) and executed (try-it-out is on):
      // Swagger UI's own fetch to the API, whose answer it shows.
      await docs.locator('.opblock-summary').first().click();
      await docs.waitForSelector('.opblock-body .responses-wrapper', { timeout: 30_000 });
      await docs.locator('.opblock-body .execute').first().click();
      await docs.waitForSelector('.opblock-body .live-responses-table', { timeout: 30_000 });
      expect(await docs.locator('.opblock-body .live-responses-table').first().innerText()).toMatch(/\b200\b/);
      // The schemas at the foot of the page (JSON Schema 2020-12 view), one of them expanded in full.
      const models = docs.locator('section.models');
      if (!/\bis-open\b/.test((await models.getAttribute('class')) ?? ''))
        await models.locator('.models-control').click();
      await models.locator('.json-schema-2020-12-expand-deep-button').first().click();
      await docs.waitForSelector('section.models .json-schema-2020-12-body:not(.json-schema-2020-12-body--collapsed)', {
        timeout: 30_000,
      });
      await docs.waitForTimeout(500);
      fs.mkdirSync(RESULTS, { recursive: true });
      await docs.screenshot({ path: path.join(RESULTS, 'api-docs.png') });
      expect(errors).toEqual([]);
      expect(browser!.cspViolations).toEqual([]);

      // The watcher reports what the policy refuses: an inline script added to the page does not run.
      await docs.evaluate(() => {
        const inline = document.createElement('script');
        inline.textContent = 'window.inlineRan = true';
        document.body.append(inline);
      });
      await expect.poll(() => browser!.cspViolations.some((v) => v.startsWith('script-src'))).toBe(true);
      expect(await docs.evaluate(() => (window as any).inlineRan)).toBeUndefined();
      // Its console report may follow the event: let it arrive before the list is cleared.
      await docs.waitForTimeout(1000);
      browser!.cspViolations.length = 0;
    } finally {
      await docs.close();
    }
  }, 180_000);
});

describe('playground page', () => {
  const jsonOf = (id: string) => page.textContent(`#${id}`).then((t) => t ?? '');
  async function clickAndWait(button: string, pre: string): Promise<string> {
    await page.evaluate((id) => (document.getElementById(id)!.textContent = ''), pre);
    await page.click(`#${button}`);
    await page.waitForFunction((id) => (document.getElementById(id)!.textContent ?? '').length > 0, pre, {
      timeout: 120_000,
    });
    return jsonOf(pre);
  }

  it('scores through the API, caches the model, scores offline, then reloads without network', async () => {
    // API mode.
    await page.click('.switch label:has(input[value=api])');
    const apiTexts = await clickAndWait('score-texts', 'texts-json');
    const apiWords = await clickAndWait('score-words', 'words-json');
    const apiMatrix = await clickAndWait('score-matrix', 'matrix-json');
    expect(JSON.parse(apiTexts).data.length).toBe(3);
    expect(await page.locator('#text-results table.factors').count()).toBe(3);

    // Download for offline use (evict first so this run really downloads), with progress.
    await page.evaluate((m) => (window as any).playground.offline().evictModel(m), MODEL);
    await page.evaluate(() => ((window as any).playground.progressLog.length = 0));
    await page.click('.switch label:has(input[value=offline])');
    await page.waitForFunction(() => /ready/.test(document.getElementById('status')!.textContent ?? ''), null, {
      timeout: 300_000,
    });
    expect(await page.textContent('#status')).toContain('downloaded');
    const progress = await page.evaluate(
      () =>
        (window as any).playground.progressLog as Array<{
          artifact: string;
          phase: string;
          loadedBytes: number;
          totalBytes: number;
        }>,
    );
    const modelDownload = progress.filter((p) => p.artifact === 'model' && p.phase === 'download');
    expect(modelDownload.length).toBeGreaterThan(2);
    const size = fs.statSync(path.join(ROOT, 'build', 'generated', 'models', `${MODEL}.emb`)).size;
    expect(modelDownload.at(-1)).toMatchObject({ loadedBytes: size, totalBytes: size });
    const cached = await page.evaluate(() => (window as any).playground.offline().listCachedModels());
    expect(cached.map((c: { id: string }) => c.id)).toContain(MODEL);

    const offTexts = await clickAndWait('score-texts', 'texts-json');
    expect(offTexts).toBe(apiTexts);
    expect(await clickAndWait('score-words', 'words-json')).toBe(apiWords);
    expect(await clickAndWait('score-matrix', 'matrix-json')).toBe(apiMatrix);

    // The service worker controls the page (it serves the shell on the offline reload).
    await page.waitForFunction(() => !!navigator.serviceWorker.controller, null, { timeout: 30_000 });

    // No network at all: the service stops and the browser goes offline.
    await server!.stop();
    server = null;
    await context.setOffline(true);
    await page.reload();
    await page.waitForFunction(() => /ready/.test(document.getElementById('status')!.textContent ?? ''), null, {
      timeout: 120_000,
    });
    expect(await page.textContent('#status')).toContain("from this browser's storage");
    expect(await clickAndWait('score-texts', 'texts-json')).toBe(apiTexts);
    expect(await clickAndWait('score-words', 'words-json')).toBe(apiWords);
    expect(await clickAndWait('score-matrix', 'matrix-json')).toBe(apiMatrix);
    expect(await page.locator('#text-results table.factors').count()).toBe(3);
    expect(await page.locator('#words-chart svg circle').count()).toBe(JSON.parse(apiWords).data.length);

    // Autocomplete in the seed-word input (offline): the suggestions the scorer gives, picked by Enter.
    await page.fill('#seed-words', 'lake, ');
    await page.locator('#seed-words').pressSequentially('ocea');
    await page.waitForSelector('#words-section .ac-list li', { timeout: 30_000 });
    const shown = await page.locator('#words-section .ac-list li').allTextContents();
    const expected = await page.evaluate(
      (m) => (window as any).playground.offline().autocomplete({ word: 'ocea', embeddingModelId: m }),
      MODEL,
    );
    expect(shown).toEqual(expected.suggestions);
    expect(shown.length).toBeGreaterThan(0);
    // Proper nouns come capitalized ("Oceania"): the prefix matches case-insensitively.
    expect(shown.every((w) => w.toLowerCase().startsWith('ocea'))).toBe(true);
    fs.mkdirSync(RESULTS, { recursive: true });
    await page.screenshot({
      path: path.join(RESULTS, 'playground-autocomplete.png'),
      clip: { x: 0, y: 0, width: 1280, height: 1300 },
      fullPage: true,
    });
    await page.press('#seed-words', 'Enter');
    expect(await page.inputValue('#seed-words')).toBe(`lake, ${shown[0]}, `);
    await page.screenshot({ path: path.join(RESULTS, 'playground-offline.png'), fullPage: true });
    expect(browser!.pageErrors).toEqual([]);
    expect(browser!.cspViolations).toEqual([]);
  }, 900_000);

  it('notes a text that looks like another language than the model (offline, as left by the case above)', async () => {
    await page.fill(
      '#texts',
      'The river was calm and the forest was quiet.\n\nLe repas était très bon et le service est rapide.',
    );
    const json = JSON.parse(await clickAndWait('score-texts', 'texts-json'));
    expect(json.data.map((t: { languageMismatch?: unknown }) => t.languageMismatch ?? null)).toEqual([
      null,
      { modelLanguage: 'en', detectedLanguage: 'fr', evidence: 'stop-words' },
    ]);
    const cards = page.locator('#text-results .text-card');
    expect(await cards.nth(0).locator('.mismatch').count()).toBe(0);
    expect(await cards.nth(1).locator('.mismatch').textContent()).toBe('This text looks French; the model is English.');
    await page.screenshot({ path: path.join(RESULTS, 'playground-language-mismatch.png'), fullPage: true });
    expect(browser!.pageErrors).toEqual([]);
    expect(browser!.cspViolations).toEqual([]);
  }, 120_000);
});
