/**
 * `npm run bench:cost`: the cost estimate (core/cost.ts) beside the time the engine takes, in
 * this process, for requests of every shape family at a few sizes each: the data the coefficients
 * of core/cost.ts were fitted to (docs/api.md "Cost and admission"). Caches are cold for every
 * request (seed words drawn anew), as the estimate assumes. The time includes serializing the
 * answer to JSON. Prints per request: family, size, estimated units, measured ms (median of
 * BENCH_COST_REPEATS, default 3) and their ratio; the last line is one JSON object.
 *
 * Needs the generated default model, its language data and mapper bundles (npm start builds them).
 */
import { createEngine } from '../core/engine';
import { estimateUnits, type CostedRoute } from '../core/cost';
import { FileSource } from '../cli/local';
import { DEFAULT_MODEL_ID } from '../build/default-model';
import { localBundleKeys } from '../cli/local';

const REPEATS = Number(process.env.BENCH_COST_REPEATS ?? 3);
const MODEL = DEFAULT_MODEL_ID;

const engine = createEngine(new FileSource({ build: false }));
const model = await engine.model(MODEL);
await engine.languageData('en');
const vocab: string[] = [];
for (let r = 100; r < 30_000; r++) {
  const w = model.index.word(r);
  if (/^[a-z]+$/.test(w)) vocab.push(w);
}
let seed = 1;
const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
const pick = () => vocab[Math.floor(rand() * vocab.length)];
const words = (n: number) => Array.from({ length: n }, pick);
const text = (chars: number) => {
  let s = '';
  while (s.length < chars) s += (s ? ' ' : '') + pick();
  return s.slice(0, chars);
};
/** Words no model has: the sub-word fallback composes each. */
const unknownText = (chars: number) => {
  let s = '';
  while (s.length < chars) s += (s ? ' ' : '') + pick() + 'qx' + pick().slice(0, 3);
  return s.slice(0, chars);
};
const mapperKeys = localBundleKeys(MODEL).flatMap((k) => (k === 'pattern' ? [`${k}_polarity`] : [`${k}_valence`]));
const dims = (n: number, expand = 0) =>
  Array.from({ length: n }, (_, i) => ({
    id: i + 1,
    type: 'manual' as const,
    words: words(3),
    ...(expand ? { expand } : {}),
  }));

interface Case {
  family: string;
  size: string;
  route: CostedRoute;
  body: () => Record<string, unknown>;
  run: (body: Record<string, unknown>) => Promise<unknown>;
}

const ts = (body: Record<string, unknown>) => engine.textScores(body).then((r) => r.response);
const cases: Case[] = [];
for (const chars of [200_000, 1_000_000, 2_000_000])
  cases.push({
    family: 'text: characters',
    size: `${chars} chars, 1 dim`,
    route: 'textScores',
    body: () => ({
      texts: Array.from({ length: 100 }, () => text(chars / 100)),
      embeddingModelId: MODEL,
      dimensions: dims(1),
    }),
    run: ts,
  });
for (const d of [20, 100])
  cases.push({
    family: 'text: factors',
    size: `200000 chars, ${d} dims + ${mapperKeys.length} mappers`,
    route: 'textScores',
    body: () => ({
      texts: Array.from({ length: 100 }, () => text(2000)),
      embeddingModelId: MODEL,
      dimensions: dims(d),
      mapperKeys,
    }),
    run: ts,
  });
for (const d of [10, 50])
  cases.push({
    family: 'text: explain',
    size: `100000 chars, ${d} dims, explain`,
    route: 'textScores',
    body: () => ({
      texts: Array.from({ length: 50 }, () => text(2000)),
      embeddingModelId: MODEL,
      dimensions: dims(d),
      explain: true,
    }),
    run: ts,
  });
cases.push({
  family: 'text: subword',
  size: '200000 unknown-word chars',
  route: 'textScores',
  body: () => ({
    texts: Array.from({ length: 100 }, () => unknownText(2000)),
    embeddingModelId: MODEL,
    dimensions: dims(1),
    subwordFallback: true,
  }),
  run: ts,
});
for (const [d, mode] of [
  [20, 'nearest'],
  [100, 'nearest'],
  [20, 'contrastive'],
  [100, 'contrastive'],
] as const)
  cases.push({
    family: `expansion: ${mode}`,
    size: `${d} dims expand 50`,
    route: 'textScores',
    body: () => ({ texts: ['happy'], embeddingModelId: MODEL, dimensions: dims(d, 50), expansion: mode }),
    run: ts,
  });
cases.push({
  family: 'stats: zscore',
  size: '50 dims, goal zscore',
  route: 'textScores',
  body: () => {
    const ds = dims(50);
    return {
      texts: ['happy'],
      embeddingModelId: MODEL,
      dimensions: ds,
      goalConfig: { dimensions: ds.map((d) => ({ id: d.id, weight: 1 })), normalization: 'zscore' },
    };
  },
  run: ts,
});
for (const limit of [100, 1000])
  cases.push({
    family: 'find',
    size: `limit ${limit}, 10 dims + mappers`,
    route: 'wordScores',
    body: () => ({ seedWords: words(3), embeddingModelId: MODEL, limit, dimensions: dims(10), mapperKeys }),
    run: (b) => engine.wordScores(b),
  });
for (const n of [2000, 10_000])
  cases.push({
    family: 'whitelist',
    size: `${n} words, 10 dims + mappers`,
    route: 'wordScores',
    body: () => ({
      seedWords: words(3),
      whitelistWords: words(n),
      embeddingModelId: MODEL,
      dimensions: dims(10),
      mapperKeys,
    }),
    run: (b) => engine.wordScores(b),
  });
for (const n of [200, 500])
  cases.push({
    family: 'matrix',
    size: `${n} words`,
    route: 'similarityMatrix',
    body: () => ({ words: words(n) }),
    run: (b) => engine.similarityMatrix(MODEL, b),
  });
cases.push({
  family: 'availabilities',
  size: '10000 words',
  route: 'wordAvailabilities',
  body: () => ({ words: words(10_000) }),
  run: (b) => engine.wordAvailabilities(MODEL, b),
});
for (const chars of [20_000, 100_000])
  cases.push({
    family: 'tokenize',
    size: `${chars} chars`,
    route: 'tokenize',
    body: () => ({ language: 'en', text: text(chars) }),
    run: (b) => engine.tokenize(b),
  });
for (const n of [10, 50])
  cases.push({
    family: 'translations',
    size: `${n} words, en -> de`,
    route: 'wordTranslations',
    body: () => ({ words: words(n), limit: 5, targetModelId: 'de-aligned-distilled-100d' }),
    run: (b) => engine.wordTranslations(MODEL, b as { words: string[] }),
  });

const rows: Array<{ family: string; size: string; units: number; ms: number; ratio: number }> = [];
for (const c of cases) {
  const times: number[] = [];
  let units = 0;
  try {
    await c.run(c.body()); // loads (model parts, bundles, tables) are not the request's cost
    for (let i = 0; i < REPEATS; i++) {
      const body = c.body();
      units = estimateUnits(c.route, body as never);
      const t0 = performance.now();
      const out = await c.run(body);
      JSON.stringify(out);
      times.push(performance.now() - t0);
    }
  } catch (err) {
    console.log(`${c.family.padEnd(22)} ${c.size.padEnd(40)} skipped: ${(err as Error).message.slice(0, 80)}`);
    continue;
  }
  times.sort((a, b) => a - b);
  const ms = times[Math.floor(times.length / 2)];
  rows.push({
    family: c.family,
    size: c.size,
    units,
    ms: Math.round(ms * 10) / 10,
    ratio: Math.round((ms / units) * 100) / 100,
  });
  console.log(
    `${c.family.padEnd(22)} ${c.size.padEnd(40)} ${String(units).padStart(6)} units ${ms.toFixed(1).padStart(8)} ms  ms/unit ${(ms / units).toFixed(2)}`,
  );
}
console.log(JSON.stringify({ model: MODEL, repeats: REPEATS, rows }));
