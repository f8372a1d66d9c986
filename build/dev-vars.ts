/**
 * `.dev.vars` holds the development HS256 secret that `wrangler dev`, the workerd tests and
 * `npm run token` share. It is never committed: the first `npm start`, `npm test` or
 * `npm run token` writes it from `.dev.vars.example` with a fresh random secret.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** KEY=value lines of a .dev.vars / .env file (quotes stripped, comments ignored). */
export function parseDevVars(text: string): Record<string, string> {
  const out: Record<string, string> = Object.create(null) as Record<string, string>;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const m = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/.exec(line);
    if (!m) continue;
    let value = m[2].trim();
    if ((value.startsWith('"') && value.endsWith('"')) || (value.startsWith("'") && value.endsWith("'")))
      value = value.slice(1, -1);
    else value = value.replace(/\s+#.*$/, '');
    out[m[1]] = value;
  }
  return out;
}

/** Creates `<root>/.dev.vars` with a random JWT_SECRET when it is missing; returns its path. */
export function ensureDevVars(root: string): string {
  const file = path.join(root, '.dev.vars');
  if (fs.existsSync(file)) return file;
  const example = path.join(root, '.dev.vars.example');
  const template = fs.existsSync(example) ? fs.readFileSync(example, 'utf8') : 'JWT_SECRET=""\n';
  const secret = crypto.randomBytes(32).toString('base64url');
  const text = template.replace(/^JWT_SECRET=.*$/m, `JWT_SECRET="${secret}"`);
  // 'wx': two processes starting at once must not overwrite each other's secret.
  try {
    fs.writeFileSync(file, text, { flag: 'wx', mode: 0o600 });
    console.log(`[dev-vars] wrote ${file} with a new random development JWT_SECRET`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return file;
}

/** The variables of `<root>/.dev.vars`, creating the file first when missing. */
export function readDevVars(root: string): Record<string, string> {
  return parseDevVars(fs.readFileSync(ensureDevVars(root), 'utf8'));
}
