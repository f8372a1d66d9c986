/**
 * The deploy into the Cloudflare account, through the project's pinned wrangler (its login or
 * CLOUDFLARE_API_TOKEN). Resources missing from wrangler.toml (the placeholder ids it ships with)
 * are created and their ids written back into wrangler.toml, where wrangler and the deploy
 * configurations read them.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { experimental_readRawConfig } from 'wrangler';
import { ROOT } from '../paths';
import { writeAtomic } from '../stamp';
import {
  bumpCatalogGeneration,
  R2_BUCKET,
  r2Put,
  wranglerFailure,
  wranglerReason,
  wranglerRun,
  wranglerSync,
} from '../wrangler';
import type { R2Artifact } from '../ensure';
import { askJwt } from './jwt-prompt';
import { STATE_KEY, type DeployState, type DeployTarget, type Resource, type Script } from './target';

const CONFIG = path.join(ROOT, 'wrangler.toml');
/** The ids wrangler.toml ships with: not resources of any account. */
const PLACEHOLDER = /^0+(-0+-4000-8000-0+)?$/;

interface RawConfig {
  name: string;
  d1_databases?: Array<{ binding: string; database_name: string; database_id: string }>;
  kv_namespaces?: Array<{ binding: string; id: string }>;
  r2_buckets?: Array<{ binding: string; bucket_name: string }>;
}

function rawConfig(): RawConfig {
  return (experimental_readRawConfig({ config: CONFIG } as never) as { rawConfig: RawConfig }).rawConfig;
}

/** Replaces an id in wrangler.toml (the file keeps its comments and layout). */
function writeId(old: string, id: string): void {
  const text = fs.readFileSync(CONFIG, 'utf8');
  if (!text.includes(`"${old}"`)) throw new Error(`[deploy] wrangler.toml has no id "${old}" to replace`);
  writeAtomic(CONFIG, text.replace(`"${old}"`, `"${id}"`));
}

/** wrangler's failures that mean no account could be reached: no login or token, a bad token, no network. */
const NO_ACCOUNT =
  /CLOUDFLARE_API_TOKEN|not (been )?(logged|authenticated)|wrangler login|authenticat|Unable to resolve Cloudflare's API|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|fetch failed/i;

/** The first id-like value wrangler printed after creating a resource. */
function idIn(output: string, pattern: RegExp): string {
  const m = pattern.exec(output);
  if (!m) throw new Error(`[deploy] could not read the new id from wrangler's output:\n${output}`);
  return m[1];
}

export class CloudflareTarget implements DeployTarget {
  readonly where = 'Cloudflare (the account wrangler is logged in to)';
  /** Why a dry run planned without the account (then no further wrangler call asks it). */
  private noAccount: string | null = null;

  async resources(dryRun: boolean): Promise<Resource[]> {
    const raw = rawConfig();
    const out: Resource[] = [];
    for (const d of raw.d1_databases ?? []) {
      const create = PLACEHOLDER.test(d.database_id);
      if (create && !dryRun)
        writeId(
          d.database_id,
          idIn(wranglerSync(['d1', 'create', d.database_name]), /"?database_id"?\s*[:=]\s*"([^"]+)"/),
        );
      out.push({
        kind: 'D1 database',
        name: d.database_name,
        id: create ? undefined : d.database_id,
        action: create ? 'create' : 'use',
      });
    }
    for (const b of raw.r2_buckets ?? []) {
      const exists =
        !dryRun &&
        [...wranglerSync(['r2', 'bucket', 'list']).matchAll(/^name:\s*(\S+)/gm)].some((m) => m[1] === b.bucket_name);
      if (!exists && !dryRun) wranglerSync(['r2', 'bucket', 'create', b.bucket_name]);
      // A dry run does not ask the account: the bucket is created when missing.
      out.push({ kind: 'R2 bucket', name: b.bucket_name, action: exists ? 'use' : 'create' });
    }
    for (const k of raw.kv_namespaces ?? []) {
      const create = PLACEHOLDER.test(k.id);
      if (create && !dryRun)
        writeId(k.id, idIn(wranglerSync(['kv', 'namespace', 'create', k.binding]), /"?id"?\s*[:=]\s*"([0-9a-f]{32})"/));
      out.push({
        kind: 'KV namespace',
        name: k.binding,
        id: create ? undefined : k.id,
        action: create ? 'create' : 'use',
      });
    }
    return out;
  }

  async pendingMigrations(): Promise<null> {
    return null;
  }

  async applyMigrations(): Promise<string[]> {
    const out = wranglerSync(['d1', 'migrations', 'apply', 'DB', '--remote']);
    return [...new Set([...out.matchAll(/(\d{4}_[\w-]+\.sql)/g)].map((m) => m[1]!))];
  }

  async readState(options: { dryRun?: boolean } = {}): Promise<DeployState> {
    const args = ['r2', 'object', 'get', `${R2_BUCKET}/${STATE_KEY}`, '--remote', '--pipe'];
    const res = wranglerRun(args);
    if (res.status !== 0) {
      // No record yet (a first deploy): everything is uploaded.
      if (/does not exist|not found|NoSuchKey/i.test(`${res.stdout}${res.stderr}`)) return { objects: {}, scripts: {} };
      // A dry run changes nothing, so it plans without the account (as a first deploy) and says why.
      if (options.dryRun) {
        // wrangler's first sentence: the rest is where to read more.
        const reason = wranglerReason(res).split(/(?<=\.)\s/)[0]!;
        this.noAccount = reason;
        const what = NO_ACCOUNT.test(`${res.stdout}${res.stderr}`)
          ? 'no Cloudflare account reachable'
          : `could not read ${STATE_KEY}`;
        console.log(`[deploy] ${what} (${reason}): planning as a first deploy`);
        return { objects: {}, scripts: {} };
      }
      // Any other failure stops a real run rather than uploading and deploying everything again.
      throw new Error(`[deploy] could not read ${STATE_KEY}: ${wranglerFailure(args, res)}`);
    }
    return JSON.parse(res.stdout) as DeployState;
  }

  async writeState(state: DeployState): Promise<void> {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-state-')), 'state.json');
    fs.writeFileSync(file, JSON.stringify(state));
    r2Put(STATE_KEY, file, 'application/json', ['--remote']);
  }

  async put(a: R2Artifact): Promise<void> {
    r2Put(a.key, a.file, a.contentType, ['--remote']);
  }

  async bumpCatalogGeneration(): Promise<void> {
    bumpCatalogGeneration(['--remote']);
  }

  async deployScript(script: Script): Promise<string | null> {
    const out = wranglerSync(['deploy', '-c', script.config]);
    return /(https:\/\/\S+\.workers\.dev)/.exec(out)?.[1] ?? null;
  }

  async jwt(): Promise<{ set: boolean; what: string }> {
    if (this.noAccount)
      return { set: false, what: 'unknown without the account; asked for before the scripts are deployed' };
    let names: string[] = [];
    try {
      names = (JSON.parse(wranglerSync(['secret', 'list', '--name', rawConfig().name])) as Array<{ name: string }>).map(
        (s) => s.name,
      );
    } catch {
      // No script yet (a first deploy) or no access: treated as not set.
    }
    if (names.includes('JWT_JWKS_URL')) return { set: true, what: 'secret JWT_JWKS_URL' };
    if (names.includes('JWT_SECRET')) return { set: true, what: 'secret JWT_SECRET (HS256)' };
    return { set: false, what: 'asked for before the scripts are deployed' };
  }

  async configureJwt(): Promise<void> {
    const { name, value } = await askJwt();
    // The value goes to wrangler on stdin, never on a command line or into a log.
    const args = ['secret', 'put', name, '--name', rawConfig().name];
    const res = wranglerRun(args, value);
    if (res.status !== 0) throw new Error(`[deploy] ${wranglerFailure(args, res)}`);
    console.log(`[deploy] set the secret ${name} (its value is not printed)`);
  }

  async rollback(order: string[]): Promise<void> {
    for (const name of order) {
      wranglerSync(['rollback', '--name', name, '--message', 'npm run deploy -- --rollback', '-y']);
      console.log(`[deploy] rolled back ${name}`);
    }
  }
}
