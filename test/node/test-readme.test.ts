/**
 * test/README.md lists every test file (and only those), each with what it proves. That every
 * listed file holds tests is checked against `vitest list` by `npm run test:readme`
 * (test/check-readme.ts), which needs every project collected.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readReadmeTable, testFilesOnDisk } from '../support/readme-table';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('test/README.md', () => {
  it('lists exactly the test files present, each with what it proves', () => {
    const rows = readReadmeTable(root);
    const files = testFilesOnDisk(root);
    expect(files.length).toBeGreaterThan(30);
    expect(rows.map((r) => r.file).sort()).toEqual(files);
    for (const r of rows) expect(r.proves.length, r.file).toBeGreaterThan(20);
  });
});
