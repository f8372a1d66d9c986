/**
 * `npm run placement`: packs the models of build/generated/models/ (the shipped ones and any added
 * with `npm run model:import`) into model hosts under the per-isolate memory budget, from each
 * model's manifest, artifact size and language data size (core/placement.ts), and writes
 * build/generated/placement.json. `npm start`, the tests and the benches build their topology
 * from it (build/topology.ts); the API Worker routes by it (its PLACEMENT var).
 *
 *   tsx build/placement.ts [--budget BYTES] [--models DIR] [--out FILE] [--deploy]
 *
 * --deploy also writes the wrangler configuration of every Worker of the deployment (the API
 * Worker and one per host) into build/generated/deploy/ (docs/deployment.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_MEMORY_BUDGET_BYTES } from '../core/footprint';
import { planPlacement, type Placement, type PlacementModel } from '../core/placement';
import { experimental_readRawConfig } from 'wrangler';
import { ensureShardArtifacts } from './model-shards';
import { writeAtomic } from './stamp';
import { deployConfigs } from './topology';
import { DEPLOY_DIR, LANGUAGE_DIR, MODELS_DIR, PLACEMENT_FILE, ROOT } from './paths';

// Also exported here: the tests and benches import it from this module.
export { PLACEMENT_FILE } from './paths';

/** The models of `dir`: every `<id>.json` manifest beside its `<id>.emb` artifact. */
export function modelsIn(dir: string): PlacementModel[] {
  if (!fs.existsSync(dir)) return [];
  const out: PlacementModel[] = [];
  for (const name of fs.readdirSync(dir).sort()) {
    if (!name.endsWith('.json') || name.endsWith('.stamp.json')) continue;
    const emb = path.join(dir, name.replace(/\.json$/, '.emb'));
    if (!fs.existsSync(emb)) continue;
    const m = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as {
      id: string;
      language: string;
      vocabularySize: number;
      dimensions: number;
      features?: string[];
      englishModelId?: string;
    };
    out.push({
      id: m.id,
      language: m.language,
      vocabularySize: m.vocabularySize,
      dimensions: m.dimensions,
      features: m.features,
      ...(m.englishModelId ? { englishModelId: m.englishModelId } : {}),
      artifactBytes: fs.statSync(emb).size,
      mapperBytes: mapperBytesOf(path.join(dir, '..', 'mappers', m.id)),
      subwordTableBytes: fileBytes(path.join(dir, '..', 'subword', `${m.id}.bin`)),
    });
  }
  return out;
}

/** Size of a file, 0 when it does not exist. */
function fileBytes(file: string): number {
  return fs.existsSync(file) ? fs.statSync(file).size : 0;
}

/** Bytes of the mapper bundles in `dir` (`<key>.bin`). */
function mapperBytesOf(dir: string): number {
  if (!fs.existsSync(dir)) return 0;
  return fs
    .readdirSync(dir)
    .filter((n) => n.endsWith('.bin'))
    .reduce((sum, n) => sum + fs.statSync(path.join(dir, n)).size, 0);
}

/** Bytes of each language's data in `dir` (`<language>.bin`). */
export function languageSizesIn(dir: string): Map<string, number> {
  const out = new Map<string, number>();
  if (!fs.existsSync(dir)) return out;
  for (const name of fs.readdirSync(dir))
    if (name.endsWith('.bin')) out.set(name.slice(0, -4), fs.statSync(path.join(dir, name)).size);
  return out;
}

/**
 * Plans the placement of the generated models and writes it to `out`. `exclude`: models left out
 * (a first `npm start` serves the ones it seeds later in-process: build/start.ts).
 */
export function writePlacement(
  options: { budgetBytes?: number; modelsDir?: string; out?: string; exclude?: readonly string[] } = {},
): Placement {
  const placement = planPlacement(
    modelsIn(options.modelsDir ?? MODELS_DIR).filter((m) => !options.exclude?.includes(m.id)),
    languageSizesIn(LANGUAGE_DIR),
    options.budgetBytes ?? DEFAULT_MEMORY_BUDGET_BYTES,
  );
  const out = options.out ?? PLACEMENT_FILE;
  fs.mkdirSync(path.dirname(out), { recursive: true });
  // Atomic: servers and tests read it while a deploy or another start writes it.
  writeAtomic(out, `${JSON.stringify(placement, null, 2)}\n`);
  return placement;
}

/** The placement to serve: the file's (the default one written first when missing); null for 'none'. */
export function placementOf(file: string | undefined): Placement | null {
  if (file === 'none') return null;
  const at = file ? path.resolve(file) : PLACEMENT_FILE;
  if (!file && !fs.existsSync(at)) writePlacement();
  return JSON.parse(fs.readFileSync(at, 'utf8')) as Placement;
}

/**
 * Writes the wrangler configuration of each Worker of the deployment (build/topology.ts
 * deployConfigs) into `dir` as <worker name>.json, main and rules pointing at the sources.
 */
export function writeDeployConfigs(placement: Placement, dir = DEPLOY_DIR): string[] {
  const { rawConfig } = experimental_readRawConfig({ config: path.join(ROOT, 'wrangler.toml') } as never) as {
    rawConfig: Record<string, unknown>;
  };
  fs.mkdirSync(dir, { recursive: true });
  // Only this placement's Workers: a host dropped since must not be bundled, checked or rolled back.
  for (const f of fs.readdirSync(dir)) if (f.endsWith('.json')) fs.rmSync(path.join(dir, f));
  const rel = path.relative(dir, ROOT);
  const files: string[] = [];
  for (const [name, config] of Object.entries(deployConfigs(rawConfig, placement))) {
    const d1 = (config.d1_databases as Array<Record<string, unknown>> | undefined)?.map((d) => ({
      ...d,
      ...(d.migrations_dir ? { migrations_dir: path.join(rel, String(d.migrations_dir)) } : {}),
    }));
    const file = path.join(dir, `${name}.json`);
    writeAtomic(
      file,
      `${JSON.stringify({ ...config, main: path.join(rel, String(config.main)), ...(d1 ? { d1_databases: d1 } : {}) }, null, 2)}\n`,
    );
    files.push(file);
  }
  return files;
}

function main(): void {
  const { values } = parseArgs({
    options: {
      budget: { type: 'string' },
      models: { type: 'string' },
      out: { type: 'string' },
      deploy: { type: 'boolean' },
    },
  });
  const placement = writePlacement({
    budgetBytes: values.budget ? Number(values.budget) : undefined,
    modelsDir: values.models,
    out: values.out,
  });
  for (const h of placement.hosts)
    console.log(
      `[placement] ${h.name}: ${[...h.models, ...h.shards].join(', ')} (${(h.bytes / 1e6).toFixed(1)} of ${(placement.budgetBytes / 1e6).toFixed(0)} MB)`,
    );
  // The sharded models' parts and word maps, cut from their artifacts (npm start seeds them).
  ensureShardArtifacts(placement, values.models);
  console.log(`[placement] wrote ${path.relative(process.cwd(), values.out ?? PLACEMENT_FILE)}`);
  if (values.deploy)
    for (const f of writeDeployConfigs(placement)) console.log(`[placement] wrote ${path.relative(process.cwd(), f)}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
