/**
 * CI check that the client's generated types match the served OpenAPI: regenerates the document
 * from the Worker's app and its openapi-typescript types (client/scripts/generate.ts --check)
 * and fails on any difference from the committed client/openapi.json and
 * client/src/openapi.generated.ts. (test/worker/client.test.ts checks that workerd serves the
 * same document.)
 */
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../build/wrangler';

describe('client types', () => {
  it('client/src/openapi.generated.ts is what the served OpenAPI generates', () => {
    const res = spawnSync(
      process.execPath,
      [path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'client/scripts/generate.ts', '--check'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    expect(res.stderr).toContain('generated types match the served OpenAPI');
    expect(res.status, res.stderr).toBe(0);
  });
});
