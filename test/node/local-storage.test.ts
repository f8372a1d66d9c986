/**
 * build/local-storage.ts writes the local state that `npm start`, build/serve.ts and wrangler dev
 * read: the same D1 `d1_migrations` table and the same R2/KV layout as wrangler's own --local
 * commands, checked here with wrangler itself.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withLocalStorage } from '../../build/local-storage';
import { ROOT, wranglerSync } from '../../build/wrangler';
import { CATALOG_GENERATION_KEY } from '../../core/storage-keys';

const state = fs.mkdtempSync(path.join(os.tmpdir(), 'local-storage-'));
afterAll(() => fs.rmSync(state, { recursive: true, force: true }));

describe('local storage through one Miniflare', () => {
  it('applies every migration once, in the table wrangler reads', async () => {
    const migrations = fs.readdirSync(path.join(ROOT, 'worker', 'migrations')).filter((n) => n.endsWith('.sql'));
    const first = await withLocalStorage(state, (s) => s.migrateD1());
    expect(first).toEqual([...migrations].sort());
    expect(await withLocalStorage(state, (s) => s.migrateD1())).toEqual([]);
    expect(wranglerSync(['d1', 'migrations', 'apply', 'DB', '--local', '--persist-to', state])).toContain(
      'No migrations to apply',
    );
    const tables = wranglerSync([
      'd1',
      'execute',
      'DB',
      '--local',
      '--persist-to',
      state,
      '--json',
      '--command',
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'workspaces'",
    ]);
    expect(tables).toContain('"workspaces"');
  }, 60_000);

  it('puts objects wrangler reads back byte for byte and bumps the catalog generation', async () => {
    const file = path.join(state, 'object.json');
    fs.writeFileSync(file, JSON.stringify({ hello: 'wörld', at: Date.now() }));
    await withLocalStorage(state, async (s) => {
      await s.putObject('test/object.json', file, 'application/json');
      await s.bumpCatalogGeneration();
    });
    const out = path.join(state, 'back.json');
    wranglerSync([
      'r2',
      'object',
      'get',
      'embedding-edge-artifacts/test/object.json',
      '--local',
      '--persist-to',
      state,
      '--file',
      out,
    ]);
    expect(fs.readFileSync(out)).toEqual(fs.readFileSync(file));
    const generation = wranglerSync([
      'kv',
      'key',
      'get',
      '--binding',
      'CACHE',
      CATALOG_GENERATION_KEY,
      '--local',
      '--persist-to',
      state,
    ]);
    expect(generation.trim()).toMatch(/^\d{13}-[0-9a-f-]{36}$/);
  }, 60_000);
});
