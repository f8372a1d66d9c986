/**
 * The Worker's binding types (`Env` of worker/env.ts) are generated from wrangler.toml by
 * `wrangler types` into worker-configuration.d.ts, which is committed.
 *   npm run types          regenerate it after changing wrangler.toml
 *   npm run types:check    fail when it no longer matches wrangler.toml (part of `npm run typecheck`)
 * Runtime types stay with @cloudflare/workers-types (--include-runtime=false); variables are
 * typed `string` (--strict-vars=false: tests and deployments set other values); secrets come from
 * .dev.vars.example, so the output does not depend on a developer's .dev.vars.
 * (`wrangler types --check` is not used: in wrangler 4.86 it ignores --env-file and reports a
 * freshly generated file as out of date when .dev.vars is missing.)
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths';
import { wranglerSync } from './wrangler';

export const TYPES_FILE = 'worker-configuration.d.ts';
const ARGS = ['--include-runtime=false', '--strict-vars=false', '--env-file', '.dev.vars.example'];

/** The file without its header comment (which names the output path and a hash of the command). */
const body = (text: string) => text.replace(/^(\/\*.*\*\/|\/\/.*)\r?\n/gm, '');

function generate(file: string): void {
  wranglerSync(['types', file, ...ARGS]);
}

if (process.argv.includes('--check')) {
  const scratch = `.worker-configuration.check.${process.pid}.d.ts`;
  try {
    generate(scratch);
    const fresh = body(fs.readFileSync(path.join(ROOT, scratch), 'utf8'));
    const committed = fs.existsSync(path.join(ROOT, TYPES_FILE))
      ? body(fs.readFileSync(path.join(ROOT, TYPES_FILE), 'utf8'))
      : '';
    if (fresh !== committed) {
      console.error(`${TYPES_FILE} does not match wrangler.toml: run \`npm run types\` and commit the result.`);
      process.exitCode = 1;
    } else console.log(`${TYPES_FILE} matches wrangler.toml.`);
  } finally {
    fs.rmSync(path.join(ROOT, scratch), { force: true });
  }
} else {
  generate(TYPES_FILE);
  console.log(`${TYPES_FILE} written.`);
}
