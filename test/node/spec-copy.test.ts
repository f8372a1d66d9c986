/**
 * docs/spec/ is the project's copy of the shared contract (../shared/spec/: the service interface
 * and the decisions that fill its gaps). The copy must match it byte for byte, so a change of the
 * contract shows up here until docs/spec/ is brought up to date. Where no shared spec sits beside
 * the checkout (a clone elsewhere), the test says so in one line and is skipped.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../build/wrangler';

const COPY = path.join(ROOT, 'docs', 'spec');
/** Beside the checkout, or beside the main working copy on the team's machines. */
const SHARED = [path.resolve(ROOT, '..', 'shared', 'spec'), '/work/shared/spec'].find((d) =>
  fs.existsSync(path.join(d, 'service-interface.md')),
);
if (!SHARED) console.log('[spec-copy] no ../shared/spec beside this checkout: docs/spec/ is not compared');

describe.skipIf(!SHARED)('docs/spec/ is the shared contract', () => {
  it('holds the same files with the same bytes', () => {
    const files = (d: string) =>
      fs
        .readdirSync(d)
        .filter((f) => f.endsWith('.md'))
        .sort();
    expect(files(COPY)).toEqual(files(SHARED!));
    for (const f of files(SHARED!))
      expect(fs.readFileSync(path.join(COPY, f), 'utf8'), `docs/spec/${f}`).toBe(
        fs.readFileSync(path.join(SHARED!, f), 'utf8'),
      );
  });
});
