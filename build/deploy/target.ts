/**
 * What `npm run deploy` deploys into (build/deploy.ts): the Cloudflare account through wrangler
 * (cloudflare-target.ts), or a local persistence folder through Miniflare (local-target.ts, the
 * rehearsal). Both run the same steps in the same order; only these operations differ.
 */
import type { R2Artifact } from '../ensure';

/** One binding of wrangler.toml and whether the deploy creates it. */
export interface Resource {
  kind: 'D1 database' | 'R2 bucket' | 'KV namespace';
  name: string;
  /** The id in the configuration (none for a bucket, or when it is still to be created). */
  id?: string;
  action: 'use' | 'create';
}

/** What was deployed, kept in the bucket itself (STATE_KEY): content hashes by object key and script name. */
export interface DeployState {
  objects: Record<string, string>;
  scripts: Record<string, string>;
}

/** The record's key: outside every prefix the Worker serves or lists. */
export const STATE_KEY = 'deploy/state.json';

/** A Worker script of the topology, bundled (bundles.ts). */
export interface Script {
  name: string;
  /** Its wrangler configuration (build/generated/deploy/<name>.json). */
  config: string;
  /** The bundle wrangler built from it (`deploy --dry-run --outdir`). */
  bundleDir: string;
  /** The upload wrangler would send for it (`--outfile`), which the limits check reads. */
  upload: string;
  bytes: number;
  sha256: string;
}

export interface DeployTarget {
  /** Where it deploys, for the plan's first line. */
  readonly where: string;
  /** The bindings, creating what is missing unless `dryRun` (then only said). */
  resources(dryRun: boolean): Promise<Resource[]>;
  /** Migrations not applied yet; null when the target cannot tell without applying (the plan says so). */
  pendingMigrations(): Promise<string[] | null>;
  applyMigrations(): Promise<string[]>;
  /** The deploy record; a dry run that cannot read it plans as a first deploy (and says why). */
  readState(options?: { dryRun?: boolean }): Promise<DeployState>;
  writeState(state: DeployState): Promise<void>;
  put(artifact: R2Artifact): Promise<void>;
  bumpCatalogGeneration(): Promise<void>;
  /** Deploys one script; returns its URL when it has one (the API Worker's workers.dev). */
  deployScript(script: Script): Promise<string | null>;
  /** The JWT configuration: whether it is set, and what to call it (never its value). */
  jwt(): Promise<{ set: boolean; what: string }>;
  /** Asks for and stores the JWT configuration (a terminal only). */
  configureJwt(): Promise<void>;
  /** Rolls every script back to its previous version, in `order`. */
  rollback(order: string[]): Promise<void>;
}
