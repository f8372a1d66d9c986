/**
 * What the CLI's commands share: option parsing (cli/args.ts) with --help, the service
 * they talk to (local: this process, core + WASM; remote: the typed client against --api), and
 * error reporting (a problem's code, detail and field errors; exit 1; usage errors exit 2).
 */
import fs from 'node:fs';
import { ApiProblem, createClient, type EmbeddingEdgeClient, type RetryInfo } from '../client/src/index';
import { DEFAULT_MODEL_ID } from '../build/paths';
import { asApiError, problemBody } from '../core/problem';
import { helpHint, parseOptions, UsageError, type Options } from './args';
import { LocalService } from './local';
import { count } from '../core/plural';

export { UsageError, type Options } from './args';

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

/**
 * Parses argv of `command` ('score', 'models list') against `options` (plus --help); prints `help`
 * and exits on --help.
 */
export function parse(command: string, argv: string[], options: Options, help: string, allowPositionals = true) {
  const parsed = parseOptions(command, argv, { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals);
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
    throw new UsageError(`--${name} must be a whole number of at least ${min}, not '${String(v)}'`);
  return n;
}

/** A JSON option: inline JSON, @FILE or a file name. */
export function jsonOption(v: string, name: string): unknown {
  const inline = v.trimStart().startsWith('{') || v.trimStart().startsWith('[');
  const file = v.replace(/^@/, '');
  if (!inline && !fs.existsSync(file))
    throw new UsageError(
      `--${name} takes JSON (starting with '{' or '[') or a file name, and there is no file '${file}'`,
    );
  const text = inline ? v : fs.readFileSync(file, 'utf8');
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(
      `--${name}: ${inline ? 'this' : `the file '${file}'`} is not valid JSON (${(err as Error).message})`,
    );
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
  if (!token) throw new UsageError('--api needs a token: add --token T or set $EMBEDDING_EDGE_TOKEN');
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
  if (!client.workspaceId)
    throw new UsageError('the token names no workspace (it has no workspaceId claim): add --workspace ID');
}

export const defaultModel = (values: Record<string, unknown>): string => str(values.model) ?? DEFAULT_MODEL_ID;

/** The innermost cause's message: Node's fetch says only "fetch failed", its cause says why. */
function rootCause(err: unknown): string | undefined {
  let cause: unknown = err instanceof Error ? err.cause : undefined;
  let message: string | undefined;
  for (let depth = 0; cause instanceof Error && depth < 5; depth++, cause = cause.cause) message = cause.message;
  return message;
}

/** What to do after a problem that no answer of the service carried (status 0). */
const CLIENT_SIDE_HINTS = new Map([
  ['NETWORK_ERROR', 'Could not reach the service: check the --api URL and the network connection.'],
  ['TIMEOUT', 'The service did not answer in time: try again later, or allow more time with --timeout MS.'],
]);

/** A file the CLI could not open, in words (Node's message reads "ENOENT: no such file or directory, open 'x'"). */
function fileProblem(err: unknown): string | undefined {
  const e = err as NodeJS.ErrnoException;
  if (!(err instanceof Error) || typeof e.path !== 'string') return undefined;
  if (e.code === 'ENOENT') return `file not found: '${e.path}'`;
  if (e.code === 'EACCES' || e.code === 'EPERM') return `no permission to open '${e.path}'`;
  if (e.code === 'EISDIR') return `'${e.path}' is a folder, not a file`;
  if (e.code === 'ENOTDIR') return `'${e.path}': a part of this path is not a folder`;
  return undefined;
}

/** One line (plus field errors or what to do) for an error; the exit code. */
export function report(err: unknown): number {
  if (err instanceof UsageError) {
    process.stderr.write(`error: ${err.message}\n${err.command === undefined ? '' : `${helpHint(err.command)}\n`}`);
    return 2;
  }
  const api = asApiError(err);
  const p = err instanceof ApiProblem ? err : api ? problemBody(api) : null;
  if (p) {
    const status = p.status ? `${p.status} ` : '';
    const cause = p.status ? undefined : rootCause(err);
    const attempts = err instanceof ApiProblem && err.attempts > 1 ? `; ${count(err.attempts, 'attempt')}` : '';
    process.stderr.write(`error: ${status}${p.code}: ${p.detail}${cause ? ` (${cause})` : ''}${attempts}\n`);
    for (const e of p.errors ?? []) process.stderr.write(`  ${e.path}: ${e.message}\n`);
    const hint = p.status ? undefined : CLIENT_SIDE_HINTS.get(p.code);
    if (hint) process.stderr.write(`${hint}\n`);
    return 1;
  }
  process.stderr.write(`error: ${fileProblem(err) ?? (err instanceof Error ? err.message : String(err))}\n`);
  return 1;
}

/** Writes to stdout, waiting when the pipe is full (flat memory on large outputs). */
export function writeOut(text: string): Promise<void> | void {
  if (!process.stdout.write(text)) return new Promise((resolve) => process.stdout.once('drain', resolve));
}
