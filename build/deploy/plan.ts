/**
 * The deploy's plan: what exists, what is created, which migrations run, which objects are
 * uploaded (with their sizes) and which scripts deployed. `--dry-run` prints it and stops; a real
 * run prints it and carries it out, so what is printed is what happens.
 */
import type { R2Artifact } from '../ensure';
import { isCatalogKey } from '../../core/storage-keys';
import { fileSha256 } from './bundles';
import type { DeployState, DeployTarget, Resource, Script } from './target';
import fs from 'node:fs';

export interface PlannedUpload extends R2Artifact {
  bytes: number;
  sha256: string;
  action: 'upload' | 'unchanged';
}

export interface PlannedScript extends Script {
  action: 'deploy' | 'unchanged';
}

export interface DeployPlan {
  where: string;
  resources: Resource[];
  /** null: the target applies what is pending without listing it first. */
  migrations: string[] | null;
  uploads: PlannedUpload[];
  /** A catalog sidecar changes: the cached catalogs are told with a new generation. */
  catalogGeneration: boolean;
  scripts: PlannedScript[];
  jwt: { set: boolean; what: string };
}

/** Hosts first, then the API Worker: the API Worker's bindings name scripts that exist by then. */
export function deployOrder<S extends Script>(scripts: readonly S[], apiWorker: string): S[] {
  return [...scripts.filter((s) => s.name !== apiWorker), ...scripts.filter((s) => s.name === apiWorker)];
}

export async function makePlan(
  target: DeployTarget,
  resources: Resource[],
  artifacts: readonly R2Artifact[],
  scripts: readonly Script[],
  state: DeployState,
): Promise<DeployPlan> {
  // One upload per key (a sharded model's sidecar comes from its build step and its shards).
  const unique = [...new Map(artifacts.map((a) => [a.key, a])).values()].sort((a, b) => (a.key < b.key ? -1 : 1));
  const uploads = unique.map((a): PlannedUpload => {
    const sha256 = fileSha256(a.file);
    return {
      ...a,
      bytes: fs.statSync(a.file).size,
      sha256,
      action: state.objects[a.key] === sha256 ? 'unchanged' : 'upload',
    };
  });
  return {
    where: target.where,
    resources,
    migrations: await target.pendingMigrations(),
    uploads,
    catalogGeneration: uploads.some((u) => u.action === 'upload' && isCatalogKey(u.key)),
    scripts: scripts.map((s) => ({ ...s, action: state.scripts[s.name] === s.sha256 ? 'unchanged' : 'deploy' })),
    jwt: await target.jwt(),
  };
}

const mb = (bytes: number): string => `${(bytes / 1e6).toFixed(1)} MB`;

/** The plan as lines of text (what --dry-run prints). */
export function planLines(plan: DeployPlan): string[] {
  const out = [`[deploy] to ${plan.where}`];
  for (const r of plan.resources)
    out.push(`[deploy] ${r.action === 'create' ? 'create' : 'use'} ${r.kind} ${r.name}${r.id ? ` (${r.id})` : ''}`);
  if (plan.migrations === null)
    out.push('[deploy] apply the pending D1 migrations (wrangler lists them as it applies)');
  else if (plan.migrations.length === 0) out.push('[deploy] D1 migrations: none pending');
  else out.push(`[deploy] apply D1 migrations: ${plan.migrations.join(', ')}`);
  const todo = plan.uploads.filter((u) => u.action === 'upload');
  out.push(
    `[deploy] upload ${todo.length} of ${plan.uploads.length} objects, ${mb(todo.reduce((n, u) => n + u.bytes, 0))} (${plan.uploads.length - todo.length} unchanged)`,
  );
  for (const u of todo) out.push(`[deploy]   ${u.key} ${mb(u.bytes)}`);
  if (plan.catalogGeneration) out.push('[deploy] write a new catalog generation (KV)');
  for (const s of plan.scripts)
    out.push(`[deploy] ${s.action === 'deploy' ? 'deploy' : 'unchanged:'} script ${s.name} (${mb(s.bytes)})`);
  out.push(`[deploy] JWT: ${plan.jwt.set ? plan.jwt.what : `not set (${plan.jwt.what})`}`);
  return out;
}

/** The plan as JSON without local paths or hashes (the golden test compares it). */
export function planSummary(plan: DeployPlan): Record<string, unknown> {
  return {
    resources: plan.resources.map(({ kind, name, action }) => ({ kind, name, action })),
    migrations: plan.migrations,
    uploads: plan.uploads.map(({ key, action }) => ({ key, action })),
    catalogGeneration: plan.catalogGeneration,
    scripts: plan.scripts.map(({ name, action }) => ({ name, action })),
    jwtSet: plan.jwt.set,
  };
}
