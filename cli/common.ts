/**
 * What the CLI's commands share: option parsing (node:util parseArgs) with --help, the service
 * they talk to (local: this process, core + WASM; remote: the typed client against --api), and
 * error reporting (a problem's code, detail and field errors; exit 1; usage errors exit 2).
 */
import fs from 'node:fs';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ApiProblem, createClient, type EmbeddingEdgeClient, type RetryInfo } from '../client/src/index';
import { DEFAULT_MODEL_ID } from '../build/paths';
import { asApiError, problemBody } from '../core/problem';
import { LocalService } from './local';

export class UsageError extends Error {}

export type Options = NonNullable<ParseArgsConfig['options']>;

export const REMOTE_OPTIONS: Options = {
  api: { type: 'string' },
  token: { type: 'string' },
  workspace: { type: 'string' },
  retries: { type: 'string' },
  timeout: { type: 'string' },
};

export const REMOTE_HELP = `
Remote (instead of this process):
  --api URL              the service's origin, e.g. http://127.0.0.1:8787
  --token T              bearer token (default: $EMBEDDING_EDGE_TOKEN)
  --workspace ID         workspace (default: the token's workspaceId claim)
  --retries N            retries per request for 429/502/503/504 and network errors (default 4)
  --timeout MS           timeout of one attempt (default 30000)`;

export const LOCAL_HELP = `
Local (default): runs in this process with the same core code and WASM as the service, on
the artifacts in build/generated/ (built when missing); no server, no quota.
  --stored-dimensions F  JSON file of stored dimension seeds ({"data":[{"id","name","words"}]})
                         for dimensions of type "dimension"`;

/** Parses argv against `options` (plus --help); prints `help` and exits on --help. */
export function parse(argv: string[], options: Options, help: string, allowPositionals = true) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message}\n\n${help.trim()}`);
  }
  if (parsed.values.help) {
    process.stdout.write(`${help.trim()}\n`);
    process.exit(0);
  }
  return parsed as { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const strs = (v: unknown): string[] => (Array.isArray(v) ? (v as string[]) : typeof v === 'string' ? [v] : []);

export function int(v: unknown, name: string, fallback: number, min = 1): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min)
    throw new UsageError(`--${name} must be an integer >= ${min}, not '${String(v)}'`);
  return n;
}

/** A JSON option: inline JSON, @FILE or a file name. */
export function jsonOption(v: string, name: string): unknown {
  const text =
    v.trimStart().startsWith('{') || v.trimStart().startsWith('[') ? v : fs.readFileSync(v.replace(/^@/, ''), 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--${name}: not valid JSON (${(err as Error).message})`);
  }
}

/** The workspaceId claim of a JWT (read, not verified: the service verifies it). */
function workspaceOfToken(token: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    return typeof payload.workspaceId === 'string' ? payload.workspaceId : undefined;
  } catch {
    return undefined;
  }
}

export interface Remote {
  kind: 'remote';
  client: EmbeddingEdgeClient;
}
export interface Local {
  kind: 'local';
  local: LocalService;
}

export function service(values: Record<string, unknown>, onRetry?: (info: RetryInfo) => void): Remote | Local {
  const api = str(values.api);
  if (!api) return { kind: 'local', local: new LocalService({ storedDimensions: str(values['stored-dimensions']) }) };
  const token = str(values.token) ?? process.env.EMBEDDING_EDGE_TOKEN;
  if (!token) throw new UsageError('--api needs --token (or $EMBEDDING_EDGE_TOKEN)');
  const workspaceId = str(values.workspace) ?? workspaceOfToken(token);
  const client = createClient({
    baseUrl: api,
    token,
    workspaceId,
    retries: int(values.retries, 'retries', 4, 0),
    timeoutMs: int(values.timeout, 'timeout', 30_000, 0),
    onRetry,
  });
  return { kind: 'remote', client };
}

export function needsWorkspace(client: EmbeddingEdgeClient): void {
  if (!client.workspaceId) throw new UsageError('--workspace is required (the token has no workspaceId claim)');
}

export const defaultModel = (values: Record<string, unknown>): string => str(values.model) ?? DEFAULT_MODEL_ID;

/** One line (plus field errors) for an error; the exit code. */
export function report(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${err.message}\n`);
    return 2;
  }
  const api = asApiError(err);
  const p = err instanceof ApiProblem ? err : api ? problemBody(api) : null;
  if (p) {
    process.stderr.write(`error: ${p.status ? `${p.status} ` : ''}${p.code}: ${p.detail}\n`);
    for (const e of p.errors ?? []) process.stderr.write(`  ${e.path}: ${e.message}\n`);
    return 1;
  }
  process.stderr.write(`error: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
}

/** Writes to stdout, waiting when the pipe is full (flat memory on large outputs). */
export function writeOut(text: string): Promise<void> | void {
  if (!process.stdout.write(text)) return new Promise((resolve) => process.stdout.once('drain', resolve));
}
