/**
 * `npm run bench:plagiarism`: the local plagiarism provider through the real Worker.
 *
 * Starts `wrangler dev` on 127.0.0.1:8795 with its own fresh state directory, creates a
 * workspace, generates a reference corpus (Zipf-distributed pseudo-words, 400-600 words per
 * page), ingests it through the admin batch endpoint (pages/s), and times plagiarism checks of
 * 500-word inputs (three passages copied from corpus pages, the rest fresh words) against
 * 1,000 and then 10,000 pages: p50 and p99 latency, and the ratio 10k / 1k (target <= 2).
 *
 * Options (env): BENCH_PLAG_CHECKS (timed checks per corpus size, default 100),
 * BENCH_PLAG_SMALL / BENCH_PLAG_LARGE (corpus sizes, default 1000 / 10000).
 * The last line printed is a JSON object of the figures.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ensureDevVars } from '../build/dev-vars';
import { ensureBuilt } from '../build/ensure';
import { ROOT, wranglerSync } from '../build/wrangler';
import { prng } from '../core/prng';
import { devSecret, mint, startWranglerDev, stopWranglerDev } from '../test/e2e/support/dev-server';
import type { BenchFigures } from './index';

const PORT = 8795;
const BASE = `http://127.0.0.1:${PORT}`;
const WORKSPACE = 'ws_bench_plagiarism';
/** Batch bodies stay under the API's 2 MB body limit. */
const BATCH_BODY_BYTES = 1_800_000;
const MAX_BATCH_PAGES = 1000;

// ---------------------------------------------------------------------------------------------
// Deterministic corpus

const SYLLABLES = [
  'ka',
  'lo',
  'mi',
  'ne',
  'ru',
  'ta',
  'so',
  'vi',
  'de',
  'po',
  'an',
  'el',
  'ir',
  'ul',
  'ba',
  'ge',
  'fo',
  'hu',
  'ji',
  'ze',
];

class Corpus {
  readonly vocab: string[];
  private readonly cdf: Float64Array;
  private readonly rand: () => number;

  constructor(seed: number, vocabSize = 20_000) {
    this.rand = prng(seed);
    const seen = new Set<string>();
    this.vocab = [];
    while (this.vocab.length < vocabSize) {
      const n = 1 + Math.floor(this.rand() * 4);
      let w = '';
      for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(this.rand() * SYLLABLES.length)];
      if (!seen.has(w)) {
        seen.add(w);
        this.vocab.push(w);
      }
    }
    // Zipf (s = 1) over the vocabulary.
    this.cdf = new Float64Array(vocabSize);
    let sum = 0;
    for (let i = 0; i < vocabSize; i++) this.cdf[i] = sum += 1 / (i + 1);
    for (let i = 0; i < vocabSize; i++) this.cdf[i] /= sum;
  }

  word(): string {
    const x = this.rand();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return this.vocab[lo];
  }

  words(n: number): string[] {
    return Array.from({ length: n }, () => this.word());
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.rand() * (max - min + 1));
  }

  /** Page text: sentences of 8-20 words, capitalized, with punctuation. */
  pageText(words: string[]): string {
    const out: string[] = [];
    let i = 0;
    while (i < words.length) {
      const len = Math.min(words.length - i, this.int(8, 20));
      const s = words.slice(i, i + len);
      s[0] = s[0][0].toUpperCase() + s[0].slice(1);
      if (len > 10) s[4] += ',';
      out.push(`${s.join(' ')}.`);
      i += len;
    }
    return out.join(' ');
  }
}

interface BenchPage {
  url: string;
  title: string;
  words: string[];
}

function makePages(corpus: Corpus, from: number, to: number): BenchPage[] {
  const pages: BenchPage[] = [];
  for (let i = from; i < to; i++)
    pages.push({
      url: `https://bench.example/page/${i}`,
      title: `Bench page ${i}`,
      words: corpus.words(corpus.int(400, 600)),
    });
  return pages;
}

interface CheckCase {
  text: string;
  /** URLs the input copies from, with the number of copied words. */
  expected: Map<string, number>;
}

/** 500-word inputs: three passages of 30-80 words from pages of the first corpus, fresh words around. */
function makeChecks(corpus: Corpus, pages: BenchPage[], n: number): CheckCase[] {
  const cases: CheckCase[] = [];
  for (let k = 0; k < n; k++) {
    const expected = new Map<string, number>();
    const parts: string[][] = [];
    let used = 0;
    for (let j = 0; j < 3; j++) {
      const page = pages[corpus.int(0, pages.length - 1)];
      const len = corpus.int(30, 80);
      const start = corpus.int(0, page.words.length - len);
      parts.push(page.words.slice(start, start + len));
      expected.set(page.url, (expected.get(page.url) ?? 0) + len);
      used += len;
    }
    const filler = Array.from({ length: 500 - used }, (_, i) => `fresh${k}x${i}`);
    const chunk = Math.floor(filler.length / 4);
    const words = [
      ...filler.slice(0, chunk),
      ...parts[0],
      ...filler.slice(chunk, 2 * chunk),
      ...parts[1],
      ...filler.slice(2 * chunk, 3 * chunk),
      ...parts[2],
      ...filler.slice(3 * chunk),
    ];
    cases.push({ text: corpus.pageText(words), expected });
  }
  return cases;
}

// ---------------------------------------------------------------------------------------------
// The Worker

/**
 * Bundles the Worker once into the state directory and writes a wrangler config next to it, so
 * the dev server never reloads while other files of the working tree change.
 */
function bundleWorker(stateDir: string): string {
  const bundleDir = path.join(stateDir, 'bundle');
  wranglerSync(['deploy', '--dry-run', '--outdir', bundleDir]);
  const repoToml = fs.readFileSync(path.join(ROOT, 'wrangler.toml'), 'utf8');
  // Keep the top-level keys (but main) and every table except the module rules.
  const blocks = repoToml.split(/^(?=\[)/m);
  const top = blocks[0].replace(/^main\s*=.*$/m, 'main = "bundle/index.js"');
  const tables = blocks
    .slice(1)
    .filter((b) => !b.startsWith('[[rules]]'))
    .map((b) =>
      b.replace(
        /^migrations_dir\s*=.*$/m,
        `migrations_dir = ${JSON.stringify(path.join(ROOT, 'worker', 'migrations'))}`,
      ),
    );
  // One rule per module type (wrangler ignores later rules of a type already seen).
  const globsByType = new Map<string, string[]>();
  for (const f of fs.readdirSync(bundleDir)) {
    if (f === 'index.js' || f.endsWith('.map') || f.endsWith('.md')) continue;
    const type = f.endsWith('.wasm') ? 'CompiledWasm' : /\.(js|mjs|css|html|txt|json|svg)$/.test(f) ? 'Text' : 'Data';
    globsByType.set(type, [...(globsByType.get(type) ?? []), f, `**/${f}`]);
  }
  const rules = [...globsByType].map(
    ([type, globs]) => `[[rules]]\ntype = "${type}"\nglobs = ${JSON.stringify(globs)}\nfallthrough = false\n`,
  );
  const config = path.join(stateDir, 'wrangler.toml');
  fs.writeFileSync(config, `${top}\nno_bundle = true\n\n${rules.join('\n')}\n${tables.join('')}`);
  fs.copyFileSync(ensureDevVars(ROOT), path.join(stateDir, '.dev.vars'));
  return config;
}

async function startWorker(stateDir: string): Promise<ChildProcess> {
  const config = bundleWorker(stateDir);
  const persist = path.join(stateDir, 'state');
  wranglerSync(['d1', 'migrations', 'apply', 'DB', '--local', '--config', config, '--persist-to', persist]);
  return startWranglerDev(
    [
      '--config',
      config,
      '--ip',
      '127.0.0.1',
      '--port',
      String(PORT),
      '--local',
      '--persist-to',
      persist,
      '--show-interactive-dev-session=false',
    ],
    BASE,
    stateDir,
  );
}

async function request(
  method: string,
  p: string,
  token: string,
  body?: string,
  contentType = 'application/json',
): Promise<Response> {
  return fetch(`${BASE}${p}`, {
    method,
    signal: AbortSignal.timeout(300_000),
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
    body,
  });
}

async function ingest(corpus: Corpus, pages: BenchPage[], admin: string): Promise<{ pages: number; seconds: number }> {
  const started = performance.now();
  let batch: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    const res = await request(
      'POST',
      '/api/admin/v1/plagiarism/pages:batch',
      admin,
      batch.join('\n'),
      'application/x-ndjson',
    );
    if (res.status !== 200) throw new Error(`batch ingestion failed: ${res.status} ${await res.text()}`);
    const out = (await res.json()) as { count: number };
    if (out.count !== batch.length) throw new Error(`batch stored ${out.count} of ${batch.length} pages`);
    batch = [];
    bytes = 0;
  };
  for (const p of pages) {
    const line = JSON.stringify({ url: p.url, title: p.title, text: corpus.pageText(p.words) });
    if (batch.length >= MAX_BATCH_PAGES || bytes + line.length + 1 > BATCH_BODY_BYTES) await flush();
    batch.push(line);
    bytes += Buffer.byteLength(line) + 1;
  }
  await flush();
  return { pages: pages.length, seconds: (performance.now() - started) / 1000 };
}

function quantile(sorted: number[], q: number): number {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

async function timeChecks(
  cases: CheckCase[],
  ws: string,
  warmup: number,
): Promise<{ p50: number; p99: number; mean: number; recall: number }> {
  const times: number[] = [];
  let found = 0;
  let expected = 0;
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i];
    const t0 = performance.now();
    const res = await request(
      'POST',
      `/api/v1/workspaces/${WORKSPACE}/plagiarism-checks`,
      ws,
      JSON.stringify({ text: c.text }),
    );
    const body = (await res.json()) as { matches?: Array<{ url: string; wordsMatched: number }>; detail?: string };
    const ms = performance.now() - t0;
    if (res.status !== 200) throw new Error(`check failed: ${res.status} ${JSON.stringify(body)}`);
    if (i >= warmup) times.push(ms);
    for (const [url, words] of c.expected) {
      expected++;
      const m = body.matches?.find((x) => x.url === url);
      if (m && m.wordsMatched >= words) found++;
    }
  }
  times.sort((a, b) => a - b);
  return {
    p50: quantile(times, 0.5),
    p99: quantile(times, 0.99),
    mean: times.reduce((a, b) => a + b, 0) / times.length,
    recall: found / expected,
  };
}

export async function run(): Promise<BenchFigures> {
  const checks = Number(process.env.BENCH_PLAG_CHECKS ?? 100);
  const small = Number(process.env.BENCH_PLAG_SMALL ?? 1000);
  const large = Number(process.env.BENCH_PLAG_LARGE ?? 10_000);
  const warmup = 5;
  await ensureBuilt({ browserBundle: false });

  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-plagiarism-'));
  console.log(`[bench:plagiarism] wrangler dev on ${BASE}, state in ${stateDir}`);
  let child: ChildProcess | null = null;
  try {
    child = await startWorker(stateDir);
    const secret = devSecret();
    const admin = await mint(secret, { workspaceId: 'ops', scope: 'admin', sub: 'bench' }, 6 * 3600);
    const wsToken = await mint(secret, { workspaceId: WORKSPACE }, 6 * 3600);
    const created = await request(
      'POST',
      '/api/admin/v1/workspaces',
      admin,
      JSON.stringify({
        id: WORKSPACE,
        anchorDay: 1,
        quotas: [{ usageTypeKey: 'plagiarismChecks', limitAmount: 1_000_000, limitAmountDaily: 1_000_000 }],
      }),
    );
    if (created.status !== 201) throw new Error(`workspace: ${created.status} ${await created.text()}`);

    const corpus = new Corpus(42);
    const first = makePages(corpus, 0, small);
    const cases = makeChecks(corpus, first, checks + warmup);

    const in1 = await ingest(corpus, first, admin);
    console.log(
      `[bench:plagiarism] ingested ${in1.pages} pages in ${in1.seconds.toFixed(1)} s (${(in1.pages / in1.seconds).toFixed(0)} pages/s)`,
    );
    const c1 = await timeChecks(cases, wsToken, warmup);
    console.log(
      `[bench:plagiarism] ${small} pages: p50 ${c1.p50.toFixed(1)} ms, p99 ${c1.p99.toFixed(1)} ms (recall ${(100 * c1.recall).toFixed(1)}%)`,
    );

    const rest = makePages(corpus, small, large);
    const in2 = await ingest(corpus, rest, admin);
    console.log(
      `[bench:plagiarism] ingested ${in2.pages} more pages in ${in2.seconds.toFixed(1)} s (${(in2.pages / in2.seconds).toFixed(0)} pages/s)`,
    );
    const c2 = await timeChecks(cases, wsToken, warmup);
    console.log(
      `[bench:plagiarism] ${large} pages: p50 ${c2.p50.toFixed(1)} ms, p99 ${c2.p99.toFixed(1)} ms (recall ${(100 * c2.recall).toFixed(1)}%)`,
    );

    const ratioP50 = c2.p50 / c1.p50;
    const ratioP99 = c2.p99 / c1.p99;
    const totalPages = in1.pages + in2.pages;
    const figures: BenchFigures = {
      plagiarismIngestPagesPerSec: Math.round(totalPages / (in1.seconds + in2.seconds)),
      [`plagiarismCheckP50Ms_${small}`]: Number(c1.p50.toFixed(1)),
      [`plagiarismCheckP99Ms_${small}`]: Number(c1.p99.toFixed(1)),
      [`plagiarismCheckP50Ms_${large}`]: Number(c2.p50.toFixed(1)),
      [`plagiarismCheckP99Ms_${large}`]: Number(c2.p99.toFixed(1)),
      plagiarismCheckRatioP50: Number(ratioP50.toFixed(2)),
      plagiarismCheckRatioP99: Number(ratioP99.toFixed(2)),
      plagiarismRecall: Number(Math.min(c1.recall, c2.recall).toFixed(3)),
      plagiarismTarget: ratioP50 <= 2 ? 'met (10k <= 2x 1k at p50)' : 'MISSED (10k > 2x 1k at p50)',
    };
    console.log(
      `[bench:plagiarism] ratio ${large}/${small}: p50 ${ratioP50.toFixed(2)}x, p99 ${ratioP99.toFixed(2)}x (target <= 2x at p50: ${ratioP50 <= 2 ? 'met' : 'MISSED'})`,
    );
    return figures;
  } finally {
    await stopWranglerDev(child);
    fs.rmSync(stateDir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  run()
    .then((figures) => console.log(JSON.stringify(figures)))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
