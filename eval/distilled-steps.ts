/**
 * `npm run bench:distilled`: the measured effect of each step of the distilled English model's
 * recipe (build/distilled-model/recipe.ts, docs/models-and-kernels.md), on the English dev pairs
 * (multilingual WS-353 and SimLex-999, ../shared/data/wordsim-de/). Every variant is built the
 * same way on the 100,000 most frequent rows (all encoded; the encoder cache makes this quick
 * after the first `npm start`) and scored on float vectors, so the steps compare with each other
 * in one run; the last row is the recipe itself on that vocabulary.
 *
 * Last line: one JSON object.
 */
import { buildDistilledVectors, RECIPE, type RecipeOptions, type RecipeResult } from '../build/distilled-model/recipe';
import { readPairs, spearman } from './multilingual';
import { runIfMain } from '../bench/main';

const SETS = [
  ['ws353', 'ms_wordsim353-english.txt'],
  ['simlex999', 'ms_simlex-english.txt'],
] as const;

function rho(r: RecipeResult, file: string): { rho: number; coverage: number } {
  const row = new Map<string, number>();
  r.words.forEach((w, i) => {
    if (!row.has(w)) row.set(w, i);
  });
  const cos = (a: number, b: number): number => {
    let s = 0;
    let na = 0;
    let nb = 0;
    for (let d = 0; d < r.dims; d++) {
      const x = r.vectors[a * r.dims + d]!;
      const y = r.vectors[b * r.dims + d]!;
      s += x * y;
      na += x * x;
      nb += y * y;
    }
    return s / Math.sqrt(na * nb);
  };
  const gold: number[] = [];
  const pred: number[] = [];
  const all = readPairs(file);
  for (const [a, b, score] of all) {
    const i = row.get(a.toLowerCase());
    const j = row.get(b.toLowerCase());
    if (i === undefined || j === undefined) continue;
    gold.push(score);
    pred.push(cos(i, j));
  }
  return { rho: spearman(gold, pred), coverage: gold.length / all.length };
}

const FULL = 10_000;
const BASE: RecipeOptions = { ...RECIPE, rows: 100_000, encodeLimit: 100_000, progress: false, log: () => {} };
const STEPS: Array<[string, Partial<RecipeOptions>]> = [
  [
    'GloVe 6B 100d alone',
    { sources: 'glove', preRemove: { glove: -1, encoder: -1 }, retrofitIterations: 0, dims: FULL },
  ],
  ['GloVe + all-but-the-top', { sources: 'glove', retrofitIterations: 0, dims: FULL }],
  ['encoder alone', { sources: 'encoder', preRemove: { glove: -1, encoder: -1 }, retrofitIterations: 0, dims: FULL }],
  ['encoder + all-but-the-top', { sources: 'encoder', retrofitIterations: 0, dims: FULL }],
  ['joined, no all-but-the-top', { preRemove: { glove: -1, encoder: -1 }, retrofitIterations: 0, dims: FULL }],
  ['joined + all-but-the-top (612-d)', { retrofitIterations: 0, dims: FULL }],
  ['+ retrofitted to WordNet (612-d)', { dims: FULL }],
  [
    'joined, retrofitted, PCA 100 (no per-source ABTT; the issue recipe)',
    { preRemove: { glove: -1, encoder: -1 }, remove: 6 },
  ],
  ['the recipe: + PCA to 100-d', {}],
];

async function main(): Promise<Record<string, number>> {
  const figures: Record<string, number> = {};
  console.log('| step | WS-353 rho | SimLex-999 rho | dims | build s |');
  console.log('|---|---|---|---|---|');
  for (const [i, [name, o]] of STEPS.entries()) {
    const t0 = performance.now();
    const r = await buildDistilledVectors({ ...BASE, ...o });
    const s = performance.now() - t0;
    const [ws, sl] = SETS.map(([, f]) => rho(r, f));
    console.log(`| ${name} | ${ws!.rho.toFixed(3)} | ${sl!.rho.toFixed(3)} | ${r.dims} | ${(s / 1000).toFixed(1)} |`);
    figures[`step${i + 1}_ws353`] = +ws!.rho.toFixed(4);
    figures[`step${i + 1}_simlex999`] = +sl!.rho.toFixed(4);
  }
  return figures;
}

runIfMain(import.meta.url, main);
