/**
 * `npm run bench`: builds what is missing (build/ensure.ts), runs the bench modules in order and
 * prints, as its last line, one JSON object merging every module's figures.
 * To add a module: one line in `modules` below; it exports `run(): Promise<BenchFigures>`.
 */
import { ensureBuilt } from '../build/ensure';

export type BenchFigures = Record<string, number | string>;

const modules: Array<{ name: string; load: () => Promise<{ run(): Promise<BenchFigures> }> }> = [
  { name: 'engine', load: () => import('./kernels-scan') },
  { name: 'tokenizer', load: () => import('./tokenizer') },
  { name: 'hostile-text', load: () => import('./hostile-text') },
  { name: 'text-scoring', load: () => import('./text-scoring') },
  { name: 'text-throughput', load: () => import('./text-throughput') },
];

async function main(): Promise<void> {
  await ensureBuilt();
  const merged: BenchFigures = {};
  for (const m of modules) {
    console.log(`\n[bench] ${m.name}`);
    const figures = await (await m.load()).run();
    Object.assign(merged, figures);
  }
  console.log(JSON.stringify(merged));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
