/**
 * test/README.md lists every test file (and only those) with what it proves and its number of
 * tests, and the total is their sum. The counts themselves are compared with `vitest list` by
 * `npm run test:readme` (test/check-readme.ts), which needs every project collected.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { readReadmeTable, testFilesOnDisk } from '../support/readme-table';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

describe('test/README.md', () => {
  it('lists exactly the test files present, each with what it proves and a test count; the total is their sum', () => {
    const { rows, total } = readReadmeTable(root);
    const files = testFilesOnDisk(root);
    expect(files.length).toBeGreaterThan(30);
    expect(rows.map((r) => r.file).sort()).toEqual(files);
    for (const r of rows) {
      expect(r.tests, r.file).toBeGreaterThan(0);
      expect(r.proves.length, r.file).toBeGreaterThan(20);
    }
    expect(total).toBe(rows.reduce((s, r) => s + r.tests, 0));
  });
});
