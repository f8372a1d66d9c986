/**
 * CPU time per request of each endpoint family at the limits: the engine the Worker and its model
 * hosts run (core/engine.ts, here with the CLI's FileSource reading build/generated/) on the default
 * model, with the largest request of each family that the cost cap admits (./requests.ts; a larger
 * one is refused with 413 before any work). Each request's CPU includes what
 * the Worker does around the engine: parsing the JSON body, validating it (the engine's zod
 * schemas), scoring and serializing the answer. Plagiarism checks run the local provider's core
 * functions against the most candidate texts a check reads, each as long as an ingested page can be.
 *
 * Node's timing stands in for workerd's: the same V8 and the same WASM kernels, but process CPU
 * (process.cpuUsage) counts Node's helper threads (GC, compilation) too, so it errs high. The model
 * is loaded before timing (a warm isolate); the first of the runs has cold caches, the median is
 * reported and the slowest run is in the note. Not a hard limit: the figure stands in for the
 * platform's, and paid plans configure the limit ([limits] cpu_ms).
 */
import fs from 'node:fs';
import path from 'node:path';
import { createEngine } from '../../core/engine';
import { compareMatches, fingerprints, matchInput, matchSource, splitWords } from '../../core/plagiarism';
import { LIMITS } from '../../core/limits';
import { FileSource } from '../../cli/local';
import { DEFAULT_MODEL_ID, MAPPERS_DIR } from '../paths';
import { CPU_CHANGELOG_URL, CPU_MS, PAID_CPU_MS_MAX, WORKERS_LIMITS_URL, type Plan } from './figures';
import { largestAdmittedRequests, prose } from './requests';
import { PLAGIARISM_SOURCE_CHARS, REQUEST_COST_CAP_UNITS_DEFAULT } from '../../core/cost';
import { PLAGIARISM_CANDIDATES } from './subrequests';
import { formatValue, median, row, type LimitRow } from './table';

/** Mapper variable ids of a model's bundles (`<bundle key>_<variable>`), from their sidecars. */
export function mapperIdsOf(modelId: string): string[] {
  const dir = path.join(MAPPERS_DIR, modelId);
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json') && !f.endsWith('.stamp.json'))
    .sort()
    .flatMap((f) => {
      const info = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as { key: string; variables: string[] };
      return info.variables.map((v) => `${info.key}_${v}`);
    });
}

/** CPU ms of one call (process user + system). */
async function cpuMs(call: () => Promise<unknown>): Promise<number> {
  const start = process.cpuUsage();
  await call();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export interface CpuFigure {
  family: string;
  medianMs: number;
  maxMs: number;
  runs: number;
  bodyBytes: number;
}

/**
 * A stored source for the plagiarism check: prose as long as one ingested page can be (its body is
 * at most 2 MiB), sharing runs of the checked text every 20,000 characters.
 */
function plagiarismSource(text: string, filler: string): string {
  const input = splitWords(text);
  const out: string[] = [];
  for (let at = 0, i = 0; at < filler.length; at += 20_000, i++) {
    out.push(filler.slice(at, at + 20_000));
    const from = (i * 200) % Math.max(1, input.length - 200);
    const run = input.slice(from, from + 40);
    if (run.length > 0) out.push(text.slice(run[0]!.start, run[run.length - 1]!.end));
  }
  return out.join(' ');
}

/** Times each family `runs` times on the default model. */
export async function measureCpu(
  runs: number,
  modelId = DEFAULT_MODEL_ID,
  capUnits = REQUEST_COST_CAP_UNITS_DEFAULT,
): Promise<CpuFigure[]> {
  const engine = createEngine(new FileSource({ build: false }));
  const model = await engine.model(modelId);
  // The largest admitted request of each family: a larger one is refused (413) before any work.
  const req = largestAdmittedRequests(modelId, model.index, mapperIdsOf(modelId), capUnits);
  // Sources as long as the check's budget verifies (several shorter ones cost the same).
  const filler = prose(model.index, Math.min(LIMITS.bodyBytes - 65_536, Math.floor(0.9 * PLAGIARISM_SOURCE_CHARS)), 13);
  const source = plagiarismSource(req.plagiarismText, filler);
  const families: Array<[string, unknown, (parsed: unknown) => Promise<unknown>]> = [
    ['text-scores', req.textScores, (b) => engine.textScores(b)],
    ['word-scores find-and-score', req.wordScoresFind, (b) => engine.wordScores(b)],
    ['word-scores whitelist', req.wordScoresWhitelist, (b) => engine.wordScores(b)],
    ['tokenizations', req.tokenization, (b) => engine.tokenize(b)],
    ['autocomplete-suggestions', req.autocomplete, (b) => engine.autocomplete(b)],
    ['word-availabilities', req.availabilities, (b) => engine.wordAvailabilities(modelId, b)],
    ['word-similarity-matrices', req.similarityMatrix, (b) => engine.similarityMatrix(modelId, b)],
    [
      'plagiarism-checks (local)',
      { text: req.plagiarismText },
      async (b) => {
        // worker/plagiarism/local.ts check (the fingerprints are its D1 query's parameter), the candidates' texts already read.
        const prepared = matchInput(splitWords((b as { text: string }).text));
        JSON.stringify(fingerprints(prepared.norms));
        // Candidates are verified within the check's budget of source characters.
        const verified = Math.min(PLAGIARISM_CANDIDATES, Math.floor(PLAGIARISM_SOURCE_CHARS / source.length));
        const matches = Array.from({ length: verified }, (_, i) => {
          const m = matchSource(prepared, source);
          return m && { url: `https://example.com/${i}`, wordsMatched: m.wordsMatched };
        });
        return matches.filter((m) => m !== null).sort(compareMatches);
      },
    ],
  ];
  const out: CpuFigure[] = [];
  for (const [family, body, call] of families) {
    const text = JSON.stringify(body);
    const times: number[] = [];
    // The Worker's work around the engine counts too: the body parsed from its text, the answer serialized.
    for (let i = 0; i < runs; i++) times.push(await cpuMs(async () => JSON.stringify(await call(JSON.parse(text)))));
    out.push({ family, medianMs: median(times), maxMs: Math.max(...times), runs, bodyBytes: Buffer.byteLength(text) });
  }
  return out;
}

/**
 * The plan's CPU limit per request: free 10 ms; paid the config's [limits] cpu_ms, else 30 s
 * (capped at the 5-minute maximum).
 */
export function cpuLimitMs(plan: Plan, configuredMs: number | undefined): number {
  if (plan === 'free') return CPU_MS.free;
  return configuredMs && configuredMs > 0 ? Math.min(configuredMs, PAID_CPU_MS_MAX) : CPU_MS.paid;
}

export function cpuRows(figures: readonly CpuFigure[], plan: Plan, configuredMs: number | undefined): LimitRow[] {
  const limit = cpuLimitMs(plan, configuredMs);
  const limitNote =
    plan === 'free'
      ? 'free plan'
      : configuredMs
        ? `[limits] cpu_ms = ${configuredMs}`
        : 'paid default (no [limits] cpu_ms)';
  return figures.map((f) =>
    row({
      check: 'cpu per request',
      subject: f.family,
      value: f.medianMs,
      unit: 'ms',
      measured: true,
      limit,
      source: plan === 'free' ? `${WORKERS_LIMITS_URL}#cpu-time` : CPU_CHANGELOG_URL,
      hard: false,
      note: `median of ${f.runs} runs in Node (stands in for workerd), slowest ${f.maxMs.toFixed(1)} ms; body ${formatValue(f.bodyBytes, 'bytes')}; ${limitNote}`,
    }),
  );
}
