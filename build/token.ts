/**
 * `npm run token -- --workspace ws_demo [--admin] [--ttl 3600] [--sub alice]`
 *
 * Prints a development bearer token (HS256) signed with JWT_SECRET from .dev.vars, the
 * secret `wrangler dev` and the workerd tests use. Claims: the workspace claim (name from
 * JWT_WORKSPACE_CLAIM, default workspaceId), `scope: "admin"` with --admin, `exp` = now + ttl,
 * and `iss` / `aud` when .dev.vars sets JWT_ISSUER / JWT_AUDIENCE. For development only.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SignJWT } from 'jose';
import { ROOT } from './paths';
import { readDevVars } from './dev-vars';

export { parseDevVars } from './dev-vars';

/** The workspace claim name of wrangler.toml [vars] (JWT_WORKSPACE_CLAIM), default workspaceId. */
function workspaceClaimName(vars: Record<string, string>): string {
  if (vars.JWT_WORKSPACE_CLAIM) return vars.JWT_WORKSPACE_CLAIM;
  const toml = path.join(ROOT, 'wrangler.toml');
  if (fs.existsSync(toml)) {
    const m = /^\s*JWT_WORKSPACE_CLAIM\s*=\s*"([^"]+)"/m.exec(fs.readFileSync(toml, 'utf8'));
    if (m) return m[1];
  }
  return 'workspaceId';
}

export async function mintDevToken(opts: {
  secret: string;
  workspace?: string;
  admin?: boolean;
  ttlSeconds: number;
  subject?: string;
  claimName?: string;
  issuer?: string;
  audience?: string;
}): Promise<string> {
  const claims: Record<string, unknown> = {};
  if (opts.workspace) claims[opts.claimName ?? 'workspaceId'] = opts.workspace;
  if (opts.admin) claims.scope = 'admin';
  let jwt = new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + opts.ttlSeconds);
  if (opts.subject) jwt = jwt.setSubject(opts.subject);
  if (opts.issuer) jwt = jwt.setIssuer(opts.issuer);
  if (opts.audience) jwt = jwt.setAudience(opts.audience);
  return jwt.sign(new TextEncoder().encode(opts.secret));
}

const USAGE = 'usage: npm run token -- --workspace <id> [--admin] [--ttl <seconds, default 3600>] [--sub <subject>]';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workspace: { type: 'string', short: 'w' },
      admin: { type: 'boolean', default: false },
      ttl: { type: 'string', default: '3600' },
      sub: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (!values.workspace && !values.admin) throw new Error(`Give --workspace and/or --admin.\n${USAGE}`);
  const ttl = Number(values.ttl);
  if (!Number.isInteger(ttl) || ttl < 1)
    throw new Error(`--ttl must be a positive integer number of seconds.\n${USAGE}`);
  const vars = readDevVars(ROOT);
  if (!vars.JWT_SECRET) throw new Error(`${path.join(ROOT, '.dev.vars')} has no JWT_SECRET`);
  const token = await mintDevToken({
    secret: vars.JWT_SECRET,
    workspace: values.workspace,
    admin: values.admin,
    ttlSeconds: ttl,
    subject: values.sub,
    claimName: workspaceClaimName(vars),
    issuer: vars.JWT_ISSUER || undefined,
    audience: vars.JWT_AUDIENCE || undefined,
  });
  process.stdout.write(`${token}\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
