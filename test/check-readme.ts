/**
 * npm run test:readme: compares test/README.md's table with `vitest list` (every project): the
 * same files, each holding at least one test vitest collects. Exits 1 on any difference.
 * (test/node/test-readme.test.ts checks the file list on every `npm test`; this adds what only
 * collecting every project, workerd included, can tell: that each listed file has tests.)
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readReadmeTable } from './support/readme-table';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vitest-list-')), 'list.json');
execFileSync('npx', ['vitest', 'list', `--json=${out}`], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
const listed = JSON.parse(fs.readFileSync(out, 'utf8')) as Array<{ file: string }>;
const counts = new Map<string, number>();
for (const t of listed) {
  const f = path.relative(root, t.file).split(path.sep).join('/');
  counts.set(f, (counts.get(f) ?? 0) + 1);
}
const rows = readReadmeTable(root);
const problems: string[] = [];
for (const r of rows)
  if (!counts.has(r.file)) problems.push(`${r.file}: in test/README.md, but vitest lists no test of it`);
for (const f of counts.keys())
  if (!rows.some((r) => r.file === f)) problems.push(`${f}: vitest lists it, test/README.md does not`);
if (problems.length > 0) {
  console.error(`test/README.md is out of date:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(`test/README.md matches vitest list: ${rows.length} files, ${listed.length} tests`);
