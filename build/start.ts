/**
 * `npm start`: build what is missing, migrate local D1, seed local R2, then serve the whole
 * API on http://127.0.0.1:8787 (build/serve.ts: the bundled API Worker and its model hosts in
 * Miniflare's workerd; build/placement.ts places the models on the hosts).
 *
 * A first start (something left to build or seed: build/first-start.ts) serves as soon as the
 * README's example can be answered (ensure.ts FIRST_STEPS: kernels, English language data, the
 * default model) and builds the rest in this process while it serves, seeding each part into the
 * running server's R2. A later start builds what is stale, seeds, then serves, as before.
 *
 * `npm run dev`: the same, served by wrangler dev instead, which rebuilds and reloads the Worker
 * when a source changes (for editing; its proxy loses requests under bursts, see serve.ts).
 *
 *   tsx build/start.ts [--dev] [--persist-to DIR] [--no-browser]
 *
 * --persist-to: another state directory (its own placement.json too; tests). --no-browser: no
 * playground build. Tests that hold a model back as if still being built call startServer with
 * `hold` from their own entry (test/support/first-start-entry.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import type { BuildingState } from '../core/building';
import { DEFAULT_MODEL_ID, PLACEMENT_FILE, ROOT } from './paths';
import { ensureDevVars } from './dev-vars';
import { reportDebianSkips } from './debian';
import { ensureBuilt, ensureHeads, ensureSteps, FIRST_STEPS, REST_STEPS, type R2Artifact } from './ensure';
import { nothingToBuild, planFirstStart, runBackground, type Background } from './first-start';
import { bundleWorker, disposeOnSignals, serveWorker } from './serve';
import { writePlacement } from './placement';
import { ensureShardArtifacts } from './model-shards';
import { withLocalStorage } from './local-storage';
import { liveTarget, SeedStamp, seedArtifacts } from './seeding';
import { wranglerSpawn } from './wrangler';

const stampFile = (persistTo?: string): string =>
  path.join(persistTo ?? path.join(ROOT, '.wrangler'), 'seeded-artifacts.json');

/**
 * Migrates local D1 and seeds local R2 in one Miniflare instance (build/local-storage.ts); each
 * artifact is put unless the same file was seeded before (persistTo: another state dir).
 * `building`: what is still being built (building.json; null removes it, undefined leaves it).
 */
export async function prepareLocalState(
  artifacts: R2Artifact[],
  persistTo?: string,
  building?: BuildingState | null,
): Promise<void> {
  const stamp = new SeedStamp(stampFile(persistTo));
  await withLocalStorage(persistTo, async (storage) => {
    const applied = await storage.migrateD1();
    if (applied.length > 0) console.log(`[start] applied D1 migrations: ${applied.join(', ')}`);
    // One line for the whole seeding (a fresh state holds about 40 objects).
    const todo = [...new Map(artifacts.map((a) => [a.key, a])).values()].filter((a) => !stamp.has(a.key, a.file));
    if (todo.length > 0) {
      const mb = todo.reduce((n, a) => n + fs.statSync(a.file).size, 0) / 1e6;
      const folders = [...new Set(todo.map((a) => a.key.split('/')[0]))].join(', ');
      console.log(`[start] seeding local R2: ${todo.length} objects, ${mb.toFixed(1)} MB (${folders})`);
    }
    await seedArtifacts(storage, stamp, artifacts, building === undefined ? undefined : () => building);
  });
}

/** What to try once the server answers: the README's example. */
function tryLines(base: string): string[] {
  const body = JSON.stringify({
    seedWords: ['happy', 'joy'],
    embeddingModelId: DEFAULT_MODEL_ID,
    limit: 5,
    seedScore: 1,
  });
  return [
    '  try (a second terminal):',
    '    TOKEN=$(npm run -s token -- --workspace ws_demo)',
    `    curl -s ${base}/api/v1/workspaces/ws_demo/word-scores -H "Authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '${body}'`,
    `  playground ${base}/ (paste the token), API docs ${base}/api/docs — Ctrl-C stops the server`,
  ];
}

const seconds = (): string => process.uptime().toFixed(0);

async function serveDev(): Promise<void> {
  const artifacts = await ensureBuilt();
  const placement = writePlacement();
  console.log('[start] applying D1 migrations and seeding R2 (local)');
  await prepareLocalState([...artifacts, ...ensureShardArtifacts(placement)], undefined, null);
  const port = process.env.PORT ?? '8787';
  console.log(`[start] serving on http://127.0.0.1:${port} (wrangler dev, reloads on change)`);
  const child = wranglerSpawn([
    'dev',
    '--ip',
    '127.0.0.1',
    '--port',
    port,
    '--local',
    '--show-interactive-dev-session=false',
  ]);
  const stop = (): void => {
    child.kill('SIGINT');
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  child.on('exit', (code) => process.exit(code ?? 0));
}

export interface StartOptions {
  /** Another state directory (its own placement.json too). */
  persistTo?: string;
  /** Build the playground's browser bundle (default true). */
  browserBundle?: boolean;
  /** Models held back as if still being built, until the background's release() (tests). */
  hold?: readonly string[];
  /** Called with the background builds once the server answers (tests release held models through it). */
  onBackground?: (background: Background) => void;
}

/** `npm start` without --dev: build, seed and serve (a first start serves early: see above). */
export async function startServer(options: StartOptions = {}): Promise<void> {
  ensureDevVars(ROOT);
  const persistTo = options.persistTo ? path.resolve(options.persistTo) : undefined;
  const hold = [...(options.hold ?? [])];
  if (hold.includes(DEFAULT_MODEL_ID)) throw new Error(`hold: ${DEFAULT_MODEL_ID} is served first`);
  const browserBundle = options.browserBundle ?? true;
  const port = Number(process.env.PORT ?? '8787');
  const base = `http://127.0.0.1:${port}`;

  const first = await reportDebianSkips(async () => {
    const [kernels, ...rest] = FIRST_STEPS;
    const built = await ensureSteps([kernels!], { browserBundle });
    // The Worker bundle needs only the kernels: bundled meanwhile (one core is often idle then).
    const bundled = bundleWorker().catch(() => undefined);
    built.push(...(await ensureSteps(rest, { browserBundle })));
    await bundled; // a failure is bundled again (and said) by serveWorker
    return built;
  });
  const stamp = new SeedStamp(stampFile(persistTo));
  const plan = planFirstStart(stamp, hold);
  const early = !nothingToBuild(plan);
  // A later start builds what is stale before it serves, as always.
  const artifacts = early
    ? first
    : await reportDebianSkips(async () => {
        const all = [...first, ...(await ensureSteps(REST_STEPS, { browserBundle }))];
        return [...all, ...(await ensureHeads(all))];
      });
  // Models are placed on hosts anew each start: a model added with model:import gets a host, and
  // one over the budget is row-sharded (its parts and word map are cut and seeded with the rest).
  // Models built after the server started are scored in-process until the next start.
  const placementFile = persistTo ? path.join(persistTo, 'placement.json') : PLACEMENT_FILE;
  const placement = writePlacement({ out: placementFile, exclude: hold });
  for (const h of placement.hosts)
    console.log(`[start] ${h.name}: ${[...h.models, ...h.shards].join(', ')} (${(h.bytes / 1e6).toFixed(1)} MB)`);
  console.log('[start] applying D1 migrations and seeding R2 (local)');
  await prepareLocalState([...artifacts, ...ensureShardArtifacts(placement)], persistTo, early ? plan.state : null);
  const mf = await serveWorker({ port, persistTo, placement: placementFile });
  disposeOnSignals(mf);
  if (!early) {
    console.log([`[start] ready in ${seconds()} s: ${base}`, ...tryLines(base)].join('\n'));
    return;
  }
  const s = plan.state;
  const pending = [
    ...(s.models.length ? [`${s.models.length} more model${s.models.length > 1 ? 's' : ''}`] : []),
    ...(s.languages.length ? [`language data ${s.languages.join(', ')}`] : []),
    'mapper bundles',
    ...(browserBundle ? ['the playground'] : []),
  ].join(', ');
  console.log(
    [
      `[start] ready in ${seconds()} s: ${base} (${DEFAULT_MODEL_ID})`,
      ...tryLines(base),
      `[start] still building in the background: ${pending}; listed as loading, requests for them get 503 MODEL_LOADING until then`,
    ].join('\n'),
  );
  // The builds yield the CPU to the server (workerd, started before at normal priority): on two
  // cores an answer waits behind them otherwise. Threads and processes they start inherit it.
  try {
    os.setPriority(10);
  } catch {
    // not permitted here: builds at normal priority
  }
  const background = runBackground({
    target: await liveTarget(mf),
    // Read again: prepareLocalState stamped what it seeded.
    stamp: new SeedStamp(stampFile(persistTo)),
    plan,
    first,
    hold,
    browserBundle,
    log: (line) => console.log(line),
  });
  options.onBackground?.(background);
  // Every Debian skip of the background builds is said once, at their end.
  const { failed } = await reportDebianSkips(() => background.run());
  console.log(
    failed.length === 0
      ? `[start] background builds done in ${seconds()} s: everything is served (${base})`
      : `[start] background builds finished in ${seconds()} s with failures (${failed.join(', ')}): the rest is served`,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      dev: { type: 'boolean', default: false },
      'persist-to': { type: 'string' },
      'no-browser': { type: 'boolean', default: false },
    },
  });
  if (values.dev) {
    ensureDevVars(ROOT);
    return serveDev();
  }
  await startServer({ persistTo: values['persist-to'], browserBundle: !values['no-browser'] });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
