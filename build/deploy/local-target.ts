/**
 * The deploy's rehearsal (`npm run deploy -- --local DIR`): the same steps into a local
 * persistence folder. D1, R2 and KV go into DIR/v3 through one Miniflare (build/local-storage.ts,
 * the layout `wrangler dev --persist-to DIR` reads); each script's bundle and configuration go
 * into DIR/scripts/<name>/ (the previous one kept for --rollback). Serve what it put there with
 *   npx tsx build/serve.ts --persist-to DIR --bundle DIR/scripts/embedding-edge --placement DIR/placement.json
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseDevVars } from '../dev-vars';
import type { LocalStorage } from '../local-storage';
import { ROOT } from '../paths';
import type { R2Artifact } from '../ensure';
import { STATE_KEY, type DeployState, type DeployTarget, type Resource, type Script } from './target';

export class LocalTarget implements DeployTarget {
  readonly where: string;

  constructor(
    private readonly dir: string,
    private readonly storage: LocalStorage,
  ) {
    this.where = `the local folder ${dir}`;
  }

  async resources(): Promise<Resource[]> {
    // Miniflare creates the local database, bucket and namespace on first use.
    return [
      { kind: 'D1 database', name: 'DB (local)', action: 'use' },
      { kind: 'R2 bucket', name: 'ARTIFACTS (local)', action: 'use' },
      { kind: 'KV namespace', name: 'CACHE (local)', action: 'use' },
    ];
  }

  pendingMigrations(): Promise<string[]> {
    return this.storage.pendingMigrations();
  }

  applyMigrations(): Promise<string[]> {
    return this.storage.migrateD1();
  }

  async readState(): Promise<DeployState> {
    const text = await this.storage.getText(STATE_KEY);
    return text ? (JSON.parse(text) as DeployState) : { objects: {}, scripts: {} };
  }

  writeState(state: DeployState): Promise<void> {
    return this.storage.putText(STATE_KEY, JSON.stringify(state), 'application/json');
  }

  put(a: R2Artifact): Promise<void> {
    return this.storage.putObject(a.key, a.file, a.contentType);
  }

  bumpCatalogGeneration(): Promise<void> {
    return this.storage.bumpCatalogGeneration();
  }

  async deployScript(script: Script): Promise<string | null> {
    const dest = path.join(this.dir, 'scripts', script.name);
    const previous = `${dest}.previous`;
    fs.rmSync(previous, { recursive: true, force: true });
    if (fs.existsSync(dest)) fs.renameSync(dest, previous);
    fs.cpSync(script.bundleDir, dest, { recursive: true });
    fs.copyFileSync(script.config, path.join(dest, 'wrangler.json'));
    return null;
  }

  async jwt(): Promise<{ set: boolean; what: string }> {
    // The local server reads the project's .dev.vars, as wrangler dev does.
    const file = path.join(ROOT, '.dev.vars');
    const vars = fs.existsSync(file) ? parseDevVars(fs.readFileSync(file, 'utf8')) : {};
    if (vars.JWT_JWKS_URL) return { set: true, what: 'JWT_JWKS_URL in .dev.vars' };
    if (vars.JWT_SECRET) return { set: true, what: 'JWT_SECRET (HS256) in .dev.vars' };
    return { set: false, what: 'put JWT_SECRET or JWT_JWKS_URL into .dev.vars' };
  }

  async configureJwt(): Promise<void> {
    throw new Error('[deploy] the local rehearsal reads .dev.vars: put JWT_SECRET or JWT_JWKS_URL there');
  }

  async rollback(order: string[]): Promise<void> {
    for (const name of order) {
      const dest = path.join(this.dir, 'scripts', name);
      const previous = `${dest}.previous`;
      if (!fs.existsSync(previous)) throw new Error(`[deploy] no previous version of ${name} in ${this.dir}`);
      const swap = `${dest}.swap`;
      fs.renameSync(dest, swap);
      fs.renameSync(previous, dest);
      fs.renameSync(swap, previous);
      console.log(`[deploy] rolled back ${name}`);
    }
  }
}
