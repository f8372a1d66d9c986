/**
 * `npm run bench:cli`: throughput of `embedding-edge score` run locally on 100,000 texts (a
 * JSONL file, 2 dimensions + 1 mapper, its own process: reading, parsing, scoring, writing),
 * beside the core text-scoring figure of `npm run bench` (bench/text-scoring.ts) measured
 * in this run on the same texts. Target: the CLI within 20% of the core figure.
 * BENCH_CLI_TEXTS overrides the number of texts. The last line is one JSON object.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ensureBuilt } from '../build/ensure';
import { loadDefaultModel } from '../build/load-model';
import { ROOT } from '../build/wrangler';
import { benchTexts, coreTextScoring } from './text-scoring';

const N = Number(process.env.BENCH_CLI_TEXTS ?? 100_000);

async function main(): Promise<void> {
  await ensureBuilt({ browserBundle: false });
  const model = loadDefaultModel();
  const texts = benchTexts(model, N);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-cli-'));
  const input = path.join(dir, 'texts.jsonl');
  fs.writeFileSync(input, texts.map((text, i) => `${JSON.stringify({ id: i, text })}\n`).join(''));
  const inputMb = fs.statSync(input).size / 1e6;

  const core = coreTextScoring(model, texts);
  console.log(`[bench:cli] core scoreTexts: ${core.tokensPerS} tokens/s (${core.textsPerS} texts/s) over ${N} texts`);

  const out = path.join(dir, 'out.jsonl');
  const runCli = (file: string): { stderr: string; wallMs: number } => {
    const t0 = performance.now();
    const res = spawnSync(
      process.execPath,
      [
        path.join(ROOT, 'bin', 'embedding-edge.js'),
        'score',
        '--mapper',
        'sentiment_valence',
        '-d',
        'food=pizza,burger,pasta',
        '-d',
        'service=waiter,staff,service',
        '--no-progress',
        '-o',
        out,
        file,
      ],
      { encoding: 'utf8', cwd: ROOT },
    );
    if (res.status !== 0) throw new Error(`embedding-edge score failed (${res.status}): ${res.stderr}`);
    return { stderr: res.stderr, wallMs: performance.now() - t0 };
  };
  const summary =
    /scored (\d+) texts? in ([\d.]+) s \((\d+) texts\/s, (\d+) tokens?, (\d+) tokens\/s\); \d+ bad rows?; peak memory (\d+) MB/;
  // Memory stays flat: the same run on a tenth of the file peaks at about the same RSS.
  const small = path.join(dir, 'small.jsonl');
  fs.writeFileSync(
    small,
    texts
      .slice(0, Math.ceil(N / 10))
      .map((text, i) => `${JSON.stringify({ id: i, text })}\n`)
      .join(''),
  );
  const smallRun = summary.exec(runCli(small).stderr);
  const { stderr, wallMs } = runCli(input);
  const m = summary.exec(stderr);
  if (!m || !smallRun) throw new Error(`no summary line in: ${stderr}`);
  const [, scored, , textsPerS, tokens, tokensPerS, rssMb] = m.map(Number);
  const smallRssMb = Number(smallRun[6]);
  const lines = fs.readFileSync(out, 'utf8').split('\n').length - 1;
  if (scored !== N || lines !== N) throw new Error(`scored ${scored}, wrote ${lines} lines, expected ${N}`);
  if (tokens !== core.tokens) throw new Error(`the CLI counted ${tokens} tokens, core ${core.tokens}`);
  const ratio = tokensPerS / core.tokensPerS;
  console.log(
    `[bench:cli] embedding-edge score: ${tokensPerS} tokens/s (${textsPerS} texts/s; ${inputMb.toFixed(1)} MB JSONL; process wall time ${(wallMs / 1000).toFixed(1)} s with loading)`,
  );
  console.log(`[bench:cli] CLI / core = ${ratio.toFixed(3)} (target >= 0.8)`);
  console.log(`[bench:cli] peak RSS: ${rssMb} MB for ${N} texts, ${smallRssMb} MB for ${Math.ceil(N / 10)} texts`);
  fs.rmSync(dir, { recursive: true, force: true });
  console.log(
    JSON.stringify({
      texts: N,
      core_tokens_per_s: core.tokensPerS,
      cli_tokens_per_s: tokensPerS,
      cli_texts_per_s: textsPerS,
      cli_vs_core: Number(ratio.toFixed(3)),
      cli_wall_s: Number((wallMs / 1000).toFixed(1)),
      cli_peak_rss_mb: rssMb,
      cli_peak_rss_mb_tenth: smallRssMb,
    }),
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
