/**
 * `npm run deploy`: the whole deployment in one command (docs/deployment.md).
 *
 *   npm run deploy                        to Cloudflare (wrangler's login or CLOUDFLARE_API_TOKEN)
 *   npm run deploy -- --dry-run           print the plan, change nothing (no account reachable:
 *                                         planned as a first deploy, said in one line)
 *   npm run deploy -- --local DIR         rehearse into a local persistence folder (then serve it:
 *                                         build/deploy/local-target.ts says how)
 *   npm run deploy -- --rollback          every script of the topology back to its previous version
 *
 * Steps, in order: build what is missing (build/ensure.ts); create the D1 database, R2 bucket and
 * KV namespace wrangler.toml lacks (ids written back); place the models on hosts and write a
 * wrangler configuration per Worker (build/placement.ts); bundle each script; check the platform
 * limits (build/limits-check.ts; a hard limit exceeded refuses the deploy); ask for the JWT configuration when none is set; apply D1 migrations; upload every
 * artifact whose content hash changed (catalog sidecars last, then a new catalog generation);
 * deploy the hosts, then the API Worker. What was uploaded and deployed is recorded in the bucket
 * (deploy/state.json), so a second run uploads nothing and deploys nothing, and a run that stopped
 * goes on where it was. The last line is one JSON object.
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { isCatalogKey } from '../core/storage-keys';
import { ensureBuilt, type R2Artifact } from './ensure';
import { withLocalStorage } from './local-storage';
import { ensureShardArtifacts } from './model-shards';
import { writeDeployConfigs, writePlacement } from './placement';
import { API_WORKER } from './topology';
import { DEPLOY_DIR, PLACEMENT_FILE } from './paths';
import { bundleScripts } from './deploy/bundles';
import { formatReport, runLimitsCheck } from './limits-check';
import { CloudflareTarget } from './deploy/cloudflare-target';
import { LocalTarget } from './deploy/local-target';
import { deployOrder, makePlan, planLines, planSummary, type DeployPlan } from './deploy/plan';
import type { DeployState, DeployTarget } from './deploy/target';

export interface DeployOptions {
  dryRun?: boolean;
  /** A local persistence folder instead of Cloudflare. */
  local?: string;
  rollback?: boolean;
}

/** Objects uploaded between two writes of the record (a stopped run repeats at most these). */
const STATE_EVERY = 10;

async function upload(target: DeployTarget, plan: DeployPlan, state: DeployState): Promise<number> {
  // Catalog sidecars last: a catalog never lists a model or mapper whose bytes are not there yet.
  const todo = plan.uploads.filter((u) => u.action === 'upload');
  const ordered = [...todo.filter((u) => !isCatalogKey(u.key)), ...todo.filter((u) => isCatalogKey(u.key))];
  let sinceWrite = 0;
  for (const u of ordered) {
    await target.put(u);
    // A catalog sidecar is recorded only once the new generation is written (below): a run that
    // stops in between puts it (and writes the generation) again, so no cached catalog stays stale.
    if (isCatalogKey(u.key)) continue;
    state.objects[u.key] = u.sha256;
    if (++sinceWrite >= STATE_EVERY) {
      await target.writeState(state);
      sinceWrite = 0;
    }
  }
  if (plan.catalogGeneration) await target.bumpCatalogGeneration();
  for (const u of ordered) if (isCatalogKey(u.key)) state.objects[u.key] = u.sha256;
  if (ordered.length > 0) await target.writeState(state);
  return ordered.length;
}

async function run(
  target: DeployTarget,
  artifacts: R2Artifact[],
  options: DeployOptions,
): Promise<Record<string, unknown>> {
  const dryRun = options.dryRun === true;
  if (options.rollback) {
    // The reverse of the deploy order: the API Worker first, then the hosts it calls.
    const order = [
      API_WORKER,
      ...fs
        .readdirSync(DEPLOY_DIR)
        .filter((f) => f.endsWith('.json'))
        .map((f) => path.basename(f, '.json'))
        .filter((n) => n !== API_WORKER),
    ];
    if (dryRun) return { rollback: order };
    await target.rollback(order);
    const state = await target.readState();
    for (const name of order) delete state.scripts[name];
    await target.writeState(state);
    return { rolledBack: order };
  }
  // Resources first: the ids they get go into wrangler.toml, which the configurations are made from.
  const resources = await target.resources(dryRun);
  const placement = writePlacement();
  const shards = ensureShardArtifacts(placement);
  const configs = writeDeployConfigs(placement, DEPLOY_DIR);
  const scripts = await bundleScripts(configs);
  // The platform's hard limits on what is about to be deployed (the CPU rows only warn: npm run deploy:check).
  const limits = await runLimitsCheck({
    configsDir: DEPLOY_DIR,
    uploads: new Map(scripts.map((s) => [s.name, s.upload])),
    runs: 1,
    cpu: false,
  });
  console.log(formatReport(limits));
  if (limits.failed > 0 && !dryRun)
    throw new Error(`[deploy] refused: ${limits.failed} hard limit(s) exceeded (the table above)`);
  const state = await target.readState({ dryRun });
  const plan = await makePlan(target, resources, [...artifacts, ...shards], scripts, state);
  for (const line of planLines(plan)) console.log(line);
  if (dryRun) return { dryRun: true, ...planSummary(plan) };
  if (!plan.jwt.set) await target.configureJwt();
  const migrations = await target.applyMigrations();
  const uploaded = await upload(target, plan, state);
  const deployed: string[] = [];
  let url: string | null = null;
  for (const s of deployOrder(plan.scripts, API_WORKER)) {
    if (s.action !== 'deploy') continue;
    url = (await target.deployScript(s)) ?? url;
    state.scripts[s.name] = s.sha256;
    await target.writeState(state);
    deployed.push(s.name);
  }
  if (options.local) {
    fs.copyFileSync(PLACEMENT_FILE, path.join(options.local, 'placement.json'));
    console.log(
      `[deploy] serve it: npx tsx build/serve.ts --persist-to ${options.local} --bundle ${path.join(options.local, 'scripts', API_WORKER)} --placement ${path.join(options.local, 'placement.json')}`,
    );
  } else if (url) console.log(`[deploy] ${url}`);
  return { migrations, uploaded, deployed, url };
}

export async function deploy(options: DeployOptions): Promise<Record<string, unknown>> {
  const artifacts = await ensureBuilt();
  if (options.local) {
    const dir = path.resolve(options.local);
    fs.mkdirSync(dir, { recursive: true });
    return withLocalStorage(dir, (storage) =>
      run(new LocalTarget(dir, storage), artifacts, { ...options, local: dir }),
    );
  }
  return run(new CloudflareTarget(), artifacts, options);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: { 'dry-run': { type: 'boolean' }, local: { type: 'string' }, rollback: { type: 'boolean' } },
  });
  deploy({ dryRun: values['dry-run'], local: values.local, rollback: values.rollback }).then(
    (summary) => console.log(JSON.stringify(summary)),
    (err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    },
  );
}
