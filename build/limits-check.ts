/**
 * `npm run deploy:check`: the deployment (the API Worker and one Worker per model host of the
 * placement, build/topology.ts deployConfigs) beside Cloudflare's published limits, one row per
 * figure with the page that publishes the limit (build/limits/figures.ts):
 *   bundle size      each script's upload, gzip against the free and paid caps (build/limits/bundle.ts)
 *   startup          the bundle's global scope, measured in workerd (build/limits/startup.ts)
 *   memory           each host's placed bytes, computed from the placement (build/limits/memory.ts)
 *   cpu per request  the largest admitted request of each endpoint family, timed in Node (build/limits/cpu.ts)
 *   subrequests      per endpoint family, counted from the code path (build/limits/subrequests.ts)
 *   r2 object        the largest artifact against the upload limits (build/limits/r2.ts)
 * It exits 1 when a hard limit is exceeded (sizes, startup, memory, subrequests, uploads), so the
 * deploy can refuse; CPU and worst cases only warn. The last line is one JSON object of the figures.
 *
 *   tsx build/limits-check.ts [--plan free|paid] [--json] [--runs N] [--configs DIR]
 *
 * --json prints the report (plan, rows, figures) as one JSON object instead (logs go to stderr).
 * --configs checks the wrangler configs in DIR (build/placement.ts --deploy writes them) instead
 * of writing them afresh from the placement.
 */
import pMap from 'p-map';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { REQUEST_COST_CAP_UNITS_DEFAULT } from '../core/cost';
import { ensureBuilt } from './ensure';
import { ensureShardArtifacts } from './model-shards';
import { MODELS_DIR } from './paths';
import { modelsIn, placementOf, writeDeployConfigs, writePlacement } from './placement';
import { API_WORKER } from './topology';
import { BUNDLE_CONCURRENCY } from './wrangler';
import { buildBundle, bundleSizeRows, readUpload, type Bundle } from './limits/bundle';
import { cpuRows, measureCpu } from './limits/cpu';
import { DEFAULT_PLAN_REASON, STARTUP_CHANGELOG_URL, STARTUP_MS, type Plan } from './limits/figures';
import { memoryRows } from './limits/memory';
import { r2Rows } from './limits/r2';
import { measureStartup, type StartupFigure } from './limits/startup';
import { subrequestContext, subrequestRows } from './limits/subrequests';
import { failed, figuresOf, formatTable, row, type LimitRow } from './limits/table';

export interface LimitsOptions {
  plan?: Plan;
  /** Runs of each timing (startup pairs, CPU per family); default 3. */
  runs?: number;
  /** Wrangler configs to check (one <script>.json each); default: written afresh from the placement. */
  configsDir?: string;
  /** The uploads wrangler built from those configs (script -> --outfile), when the caller has them: not built again. */
  uploads?: ReadonlyMap<string, string>;
  /** Placement file; default build/generated/placement.json (written when missing). */
  placementFile?: string;
  /**
   * Measure the CPU time per endpoint family (default true). Those rows only warn, so the deploy,
   * which needs the hard limits, leaves them to `npm run deploy:check`.
   */
  cpu?: boolean;
}

export interface LimitsReport {
  plan: Plan;
  planReason: string;
  rows: LimitRow[];
  /** Rows over a hard limit: the deploy refuses when there is one. */
  failed: number;
  figures: Record<string, number>;
}

/** The scripts of the deployment: <script name> -> its wrangler config file. */
function scriptConfigs(dir: string): Map<string, string> {
  return new Map(
    fs
      .readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort()
      .map((f) => [f.slice(0, -'.json'.length), path.join(dir, f)]),
  );
}

/** [limits] cpu_ms of a wrangler config (JSON), when set. */
function configuredCpuMs(file: string | undefined): number | undefined {
  if (!file) return undefined;
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { limits?: { cpu_ms?: number } };
  return config.limits?.cpu_ms;
}

/** The API Worker's cost cap: its config's REQUEST_COST_CAP_UNITS var, else the default (worker/admission/admit.ts). */
function configuredCapUnits(file: string | undefined): number {
  if (!file) return REQUEST_COST_CAP_UNITS_DEFAULT;
  const config = JSON.parse(fs.readFileSync(file, 'utf8')) as { vars?: { REQUEST_COST_CAP_UNITS?: string } };
  const n = Number(config.vars?.REQUEST_COST_CAP_UNITS);
  return n > 0 ? Math.floor(n) : REQUEST_COST_CAP_UNITS_DEFAULT;
}

/** Startup rows: one measurement per distinct bundle (the hosts run the API Worker's code), a row per script. */
async function startupRows(bundles: readonly Bundle[], runs: number): Promise<LimitRow[]> {
  const byContent = new Map<string, Promise<StartupFigure>>();
  const rows: LimitRow[] = [];
  for (const b of bundles) {
    const hash = crypto.createHash('sha256');
    for (const m of b.modules) hash.update(m.name).update(m.bytes);
    const key = hash.digest('hex');
    if (!byContent.has(key)) byContent.set(key, measureStartup(b, runs));
    const f = await byContent.get(key)!;
    rows.push(
      row({
        check: 'startup',
        subject: b.script,
        value: f.ms,
        unit: 'ms',
        measured: true,
        limit: STARTUP_MS,
        source: STARTUP_CHANGELOG_URL,
        hard: true,
        note: `workerd via Miniflare: median first request importing the bundle ${f.withImportMs.toFixed(1)} ms less one importing nothing ${f.emptyMs.toFixed(1)} ms (${f.runs} runs each; wall time, errs high on a busy machine)`,
      }),
    );
  }
  return rows;
}

export async function runLimitsCheck(options: LimitsOptions = {}): Promise<LimitsReport> {
  const plan = options.plan ?? 'paid';
  const runs = Math.max(1, options.runs ?? 3);
  // What R2 will hold: the engine's artifacts (rebuilt when stale) and the placement's shard parts.
  const artifacts = await ensureBuilt({ browserBundle: false });
  // What a deploy would place now (as npm run deploy does), unless a placement file is named.
  const placement = options.placementFile ? placementOf(options.placementFile)! : writePlacement();
  artifacts.push(...ensureShardArtifacts(placement));
  const models = modelsIn(MODELS_DIR);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-check-'));
  try {
    const configsDir = options.configsDir ?? path.join(work, 'configs');
    if (!options.configsDir) writeDeployConfigs(placement, configsDir);
    const configs = scriptConfigs(configsDir);
    if (configs.size === 0) throw new Error(`no wrangler configs in ${configsDir}`);
    const bundles: Bundle[] = await pMap(
      configs,
      ([script, config]) => {
        const upload = options.uploads?.get(script);
        return upload ? readUpload(script, upload) : buildBundle(script, config, work);
      },
      // Every bundling ends before an error is thrown: none writes into a folder being removed.
      { concurrency: BUNDLE_CONCURRENCY, stopOnError: false },
    );

    const rows: LimitRow[] = [
      ...bundles.flatMap((b) => bundleSizeRows(b.script, b.modules, plan)),
      ...(await startupRows(bundles, runs)),
      ...memoryRows(placement, models),
      ...(options.cpu === false
        ? []
        : cpuRows(
            await measureCpu(runs, undefined, configuredCapUnits(configs.get(API_WORKER))),
            plan,
            configuredCpuMs(configs.get(API_WORKER)),
          )),
      ...subrequestRows(
        subrequestContext(
          artifacts.map((a) => a.key),
          placement,
          models,
        ),
        plan,
      ),
      ...r2Rows(artifacts),
    ];
    return {
      plan,
      planReason: options.plan ? `--plan ${plan}` : DEFAULT_PLAN_REASON,
      rows,
      failed: failed(rows).length,
      figures: figuresOf(rows),
    };
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** The report as the check prints it: the plan, the table, the verdict, then the figures' JSON line. */
export function formatReport(report: LimitsReport): string {
  const over = failed(report.rows);
  const warned = report.rows.filter((r) => r.status === 'warn');
  return [
    `[deploy:check] plan: ${report.plan} (${report.planReason})`,
    '',
    formatTable(report.rows),
    '',
    over.length > 0
      ? `[deploy:check] FAIL: ${over.length} hard limit(s) exceeded: ${over.map((r) => `${r.check} ${r.subject}`).join(', ')}`
      : `[deploy:check] ok: every hard limit holds${warned.length > 0 ? ` (${warned.length} warning(s))` : ''}`,
    JSON.stringify(report.figures),
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      plan: { type: 'string' },
      json: { type: 'boolean' },
      runs: { type: 'string' },
      configs: { type: 'string' },
    },
  });
  if (values.plan !== undefined && values.plan !== 'free' && values.plan !== 'paid')
    throw new Error(`--plan is free or paid, not '${values.plan}'`);
  // With --json stdout carries only the report: the build steps' logs go to stderr.
  if (values.json) console.log = console.error;
  const report = await runLimitsCheck({
    plan: values.plan as Plan | undefined,
    runs: values.runs ? Number(values.runs) : undefined,
    configsDir: values.configs,
  });
  if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
  else process.stdout.write(`${formatReport(report)}\n`);
  process.exitCode = report.failed > 0 ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
