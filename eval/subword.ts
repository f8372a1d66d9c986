/**
 * `npm run bench:subword`: what the sub-word fallback (request option subwordFallback,
 * core/subword.ts, build/subword-table.ts) gives, on the default English model.
 *
 *   1. Dev pairs with one word's row removed: English multilingual WS-353 and SimLex-999
 *      (../shared/data/wordsim-de/). A table is trained by the shipped recipe on the model with
 *      every word of these pairs left out of its training, so a composed vector cannot recall
 *      the row. Each pair is scored with both rows present (the baseline of the same run), with
 *      its first word composed against the second's row, and with its second word composed; the
 *      Spearman rho of each over the pairs whose words the model has.
 *   2. Words outside the vocabulary (typos, new product names, rare coinages, a list kept here,
 *      not a held-out set): the fraction that gets a vector through the engine with
 *      subwordFallback (the CLI's local service: the shipped table, the Worker's code path), which
 *      must be all of them, and each one's nearest vocabulary words.
 *
 * Last line: one JSON object.
 */
import fs from 'node:fs';
import { ensureKernels } from '../build/build-wasm';
import { ensureDefaultModel } from '../build/default-model';
import { loadDefaultModel, loadKernels, readArrayBuffer } from '../build/load-model';
import { DEFAULT_MODEL_FILE, DEFAULT_MODEL_ID, subwordTableFile } from '../build/paths';
import { buildSubwordTable, ensureSubwordTable } from '../build/subword-table';
import { LocalService } from '../cli/local';
import { SubwordTable } from '../core/subword';
import type { EmbeddingModel } from '../core/model';
import { readPairs as readWordPairs, spearman } from './multilingual';

const SETS = [
  ['ws353', 'ms_wordsim353-english.txt'],
  ['simlex999', 'ms_simlex-english.txt'],
] as const;

/** Words the model lacks: typos of common words, product and brand names, recent coinages. */
export const UNKNOWN_WORDS = [
  'beautifull',
  'definatly',
  'wierdest',
  'neccessarily',
  'unbeleivable',
  'happines',
  'embarasing',
  'seperatly',
  'instagrammable',
  'tiktoker',
  'chatgpt',
  'doomscrolling',
  'cryptocurrencies',
  'unfollowed',
  'vaxxed',
  'covidiot',
  'photobombed',
  'hangry',
  'staycationers',
  'ecofriendliness',
  'microplastics',
  'overpromisers',
  'decarbonising',
];

/** The pairs of a file, lower-cased (the model is). */
function readPairs(file: string): Array<[string, string, number]> {
  return readWordPairs(file).map(([a, b, score]) => [a.toLowerCase(), b.toLowerCase(), score]);
}

function dot(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let d = 0; d < a.length; d++) s += a[d]! * b[d]!;
  return s;
}

function pairFigures(model: EmbeddingModel, table: SubwordTable, file: string) {
  const gold: number[] = [];
  const present: number[] = [];
  const firstComposed: number[] = [];
  const secondComposed: number[] = [];
  const pairs = readPairs(file);
  for (const [a, b, score] of pairs) {
    const ra = model.rowOf(a);
    const rb = model.rowOf(b);
    if (ra < 0 || rb < 0) continue;
    const va = model.vector(ra);
    const vb = model.vector(rb);
    const ca = table.compose(a);
    const cb = table.compose(b);
    gold.push(score);
    present.push(dot(va, vb));
    firstComposed.push(ca ? dot(ca, vb) : 0);
    secondComposed.push(cb ? dot(va, cb) : 0);
  }
  const r = (x: number[]) => Number(spearman(gold, x).toFixed(4));
  return {
    pairs: gold.length,
    of: pairs.length,
    present: r(present),
    firstComposed: r(firstComposed),
    secondComposed: r(secondComposed),
  };
}

async function main(): Promise<void> {
  await ensureKernels();
  await ensureDefaultModel();
  await ensureSubwordTable();
  const figures: Record<string, number | string> = { model: DEFAULT_MODEL_ID };
  const model = loadDefaultModel({ kernels: loadKernels() });

  // 1. A table that never saw the dev words' rows.
  const devWords = new Set<string>();
  for (const [, file] of SETS) for (const [a, b] of readPairs(file)) devWords.add(a).add(b);
  const started = Date.now();
  const { bytes } = buildSubwordTable(new Uint8Array(fs.readFileSync(DEFAULT_MODEL_FILE)), { exclude: devWords });
  console.log(
    `table without the ${devWords.size} dev words' rows: ${((Date.now() - started) / 1000).toFixed(1)} s, ${(bytes.length / 1e6).toFixed(1)} MB`,
  );
  const table = SubwordTable.load(bytes.buffer as ArrayBuffer, model.kernels, {
    id: model.manifest.id,
    checksum: model.manifest.checksum,
    dims: model.dims,
  });
  console.log('\n| set | pairs scored | rows present | first word composed | second word composed |');
  console.log('|---|---|---|---|---|');
  for (const [name, file] of SETS) {
    const f = pairFigures(model, table, file);
    console.log(
      `| ${name}-en | ${f.pairs} of ${f.of} | ${f.present.toFixed(3)} | ${f.firstComposed.toFixed(3)} | ${f.secondComposed.toFixed(3)} |`,
    );
    figures[`${name}_present_rho`] = f.present;
    figures[`${name}_first_composed_rho`] = f.firstComposed;
    figures[`${name}_second_composed_rho`] = f.secondComposed;
    figures[`${name}_pairs`] = f.pairs;
  }
  table.release();

  // 2. Unknown words through the engine (the shipped table).
  const missing = UNKNOWN_WORDS.filter((w) => model.rowOf(w) < 0);
  if (missing.length !== UNKNOWN_WORDS.length)
    console.log(
      `in the vocabulary after all (left out): ${UNKNOWN_WORDS.filter((w) => !missing.includes(w)).join(', ')}`,
    );
  const service = new LocalService({ build: false });
  const res = await service.similarityMatrix(DEFAULT_MODEL_ID, { words: missing, subwordFallback: true });
  const composed = new Set(res.composedWords ?? []);
  const shipped = SubwordTable.load(readArrayBuffer(subwordTableFile(DEFAULT_MODEL_ID)), model.kernels, {
    id: model.manifest.id,
    checksum: model.manifest.checksum,
    dims: model.dims,
  });
  console.log('\n| unknown word | vector | nearest vocabulary words |');
  console.log('|---|---|---|');
  for (const w of missing) {
    const v = shipped.compose(w);
    const near = v ? Array.from(model.topK(v, 5).rows, (r) => model.word(r)).join(', ') : '-';
    console.log(`| ${w} | ${composed.has(w) ? 'composed' : 'none'} | ${near} |`);
  }
  figures.unknown_words = missing.length;
  figures.unknown_words_with_vector = Number((composed.size / missing.length).toFixed(4));
  console.log(JSON.stringify(figures));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
