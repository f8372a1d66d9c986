/**
 * test/README.md's table of test files (shared by the node test test/node/test-readme.test.ts
 * and the script test/check-readme.ts): one row per test file, `| \`path\` | what it proves |`.
 * No per-file test counts: a new test in an existing file needs no edit of the table.
 */
import fs from 'node:fs';
import path from 'node:path';

export interface ReadmeRow {
  file: string;
  proves: string;
}

export const TEST_DIRS = ['test/node', 'test/worker', 'test/e2e'];

export function readReadmeTable(root: string): ReadmeRow[] {
  const text = fs.readFileSync(path.join(root, 'test', 'README.md'), 'utf8');
  const rows: ReadmeRow[] = [];
  for (const line of text.split('\n')) {
    const row = /^\|\s*`(test\/[^`]+\.test\.ts)`\s*\|\s*(.*?)\s*\|\s*$/.exec(line);
    if (row) rows.push({ file: row[1]!, proves: row[2]! });
  }
  return rows;
}

/** Every *.test.ts file under the test project folders, as repository paths, sorted. */
export function testFilesOnDisk(root: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.test.ts')) out.push(rel);
    }
  };
  for (const d of TEST_DIRS) walk(d);
  return out.sort();
}
