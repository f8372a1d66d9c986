/**
 * The CLI against the served API (the local server, build/serve.ts, on port 8797, its own state directory, the
 * default model and mappers seeded as `npm start` does):
 *   - `score` run locally writes, for a sample, exactly the lines built from the API's
 *     text-scores answers (the typed client, batches of 100) for the same request;
 *   - `score --api` (batches of 40, 3 in flight, checkpoint) writes the identical file;
 *   - with --dimension-keys name, both write those lines keyed by the dimensions' names;
 *   - find, similar and tokenize print the same locally and with --api.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type EmbeddingEdgeClient } from '../../client/src/index';
import { DEFAULT_MODEL_ID } from '../../build/default-model';
import { ROOT } from '../../build/wrangler';
import { devSecret, mint, startLocalWorker, stopWranglerDev } from './support/dev-server';

const PORT = 8797;
const BASE = `http://127.0.0.1:${PORT}`;
const BIN = path.join(ROOT, 'bin', 'embedding-edge.js');
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), 'cli-parity-'));

let child: ChildProcess | null = null;
let token: string;
let client: EmbeddingEdgeClient;

function cli(args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 28 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(async () => {
  child = await startLocalWorker(PORT, path.join(ROOT, '.wrangler', 'e2e-cli-state'), ['--log-level', 'warn']);
  const secret = devSecret();
  const workspace = `ws_cli_${Date.now()}`;
  const admin = createClient({ baseUrl: BASE, token: await mint(secret, { scope: 'admin', sub: 'e2e-cli' }, 600) });
  await admin.call(
    (raw, init) =>
      raw.POST('/api/admin/v1/workspaces', {
        ...init,
        body: {
          id: workspace,
          quotas: [{ usageTypeKey: 'tokens', limitAmount: 100_000_000, limitAmountDaily: 100_000_000 }],
        },
      }),
    'POST',
  );
  token = await mint(secret, { workspaceId: workspace, sub: 'e2e-cli' }, 3600);
  client = createClient({ baseUrl: BASE, token, workspaceId: workspace });
}, 900_000);

afterAll(async () => {
  await stopWranglerDev(child);
  fs.rmSync(TMP, { recursive: true, force: true });
});

const DIMS = [
  { id: 1, type: 'manual' as const, name: 'food', words: ['pizza', 'pasta', 'bread'] },
  { id: 2, type: 'axis' as const, name: 'mood', words: ['good', 'great'], oppositeWords: ['bad', 'awful'] },
];
const ARGS = [
  '--mapper',
  'sentiment_valence',
  '--mapper',
  'afinn_valence',
  '-d',
  'food=pizza,pasta,bread',
  '-d',
  'mood=good,great|bad,awful',
  '--goal',
  '{"dimensions":[{"id":2,"weight":3}],"mappers":[{"id":"sentiment_valence","weight":1}],"modelRankScore":-0.5}',
  '--no-progress',
];

function sample(): Array<Record<string, unknown>> {
  const gold = fs
    .readFileSync(path.join(ROOT, 'test', 'gold', 'cli', 'reviews.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const more = Array.from({ length: 230 }, (_, i) => ({
    n: i,
    text: `${['Honestly', 'Sadly', 'Wow'][i % 3]}, the ${['pizza', 'staff', 'bread', 'music', 'room'][i % 5]} was ${['not good', 'great', 'awful', 'fine', 'NOT bad at all!'][i % 5]} and we ${['loved', 'hated', 'forgot'][i % 3]} it.`,
  }));
  // Two texts in other languages than the model's: their languageMismatch comes back the same both ways.
  const foreign = [
    { n: 'fr', text: 'Le repas était très bon et le service est rapide.' },
    { n: 'ja', text: '料理はとても美味しくて、サービスも早かったです。' },
  ];
  return [...gold, ...foreign, ...more];
}

describe('CLI parity with the API', () => {
  it('local score = the API text-scores answers; score --api (concurrent batches, checkpoint) = the same file', async () => {
    const rows = sample();
    const input = path.join(TMP, 'in.jsonl');
    fs.writeFileSync(input, rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

    const local = cli(['score', ...ARGS, input]);
    expect(local.status, local.stderr).toBe(0);

    const expected: string[] = [];
    for (let i = 0; i < rows.length; i += 100) {
      const chunk = rows.slice(i, i + 100);
      const res = await client.textScores({
        texts: chunk.map((r) => r.text as string),
        embeddingModelId: DEFAULT_MODEL_ID,
        dimensions: DIMS,
        mapperKeys: ['sentiment_valence', 'afinn_valence'],
        goalConfig: {
          dimensions: [{ id: 2, weight: 3 }],
          mappers: [{ id: 'sentiment_valence', weight: 1 }],
          modelRankScore: -0.5,
        },
      });
      chunk.forEach((r, j) => expected.push(JSON.stringify({ ...r, ...res.data[j] })));
    }
    expect(local.stdout).toBe(expected.join('\n') + '\n');
    expect(local.stdout).toContain('"goalScoreFactors":[{');
    const mismatch = "2 texts look like another language than the model's (en): lines 7 (fr), 8 (ja)\n";
    expect(local.stderr.endsWith(mismatch), local.stderr).toBe(true);

    const out = path.join(TMP, 'remote.jsonl');
    const remote = cli([
      'score',
      ...ARGS,
      '--api',
      BASE,
      '--token',
      token,
      '--batch-size',
      '40',
      '--concurrency',
      '3',
      '--checkpoint',
      path.join(TMP, 'remote.ckpt'),
      '-o',
      out,
      input,
    ]);
    expect(remote.status, remote.stderr).toBe(0);
    expect(remote.stderr).toMatch(/scored 238 texts/);
    expect(remote.stderr.endsWith(mismatch), remote.stderr).toBe(true);
    expect(fs.readFileSync(out, 'utf8')).toBe(local.stdout);

    // --dimension-keys name: the same lines keyed by the names, locally and with --api alike.
    const named = cli(['score', ...ARGS, '--dimension-keys', 'name', input]);
    expect(named.status, named.stderr).toBe(0);
    const namedRemote = cli(['score', ...ARGS, '--dimension-keys', 'name', '--api', BASE, '--token', token, input]);
    expect(namedRemote.status, namedRemote.stderr).toBe(0);
    expect(namedRemote.stdout).toBe(named.stdout);
    const rename = ({ 1: food, 2: mood }: Record<string, number>) => ({ food, mood });
    expect(
      named.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>),
    ).toEqual(
      expected.map((l) => {
        const line = JSON.parse(l) as Record<string, unknown>;
        return { ...line, dimensionScores: rename(line.dimensionScores as Record<string, number>) };
      }),
    );
  });

  it('find, similar and tokenize print the same locally and with --api', () => {
    const api = ['--api', BASE, '--token', token];
    for (const args of [
      ['find', '--limit', '12', '--mapper', 'sentiment_valence', 'rain', 'storm'],
      ['find', '--limit', '5', '-d', 'wet=rain,water', '--dimension-keys', 'name', '--averages', 'storm'],
      ['similar', 'king', 'queen', 'man', 'woman', 'nonwordxyz'],
      ['tokenize', '-l', 'en', "The children don't like rainy days."],
      // Offsets after an emoji (code points by default, and UTF-8), words written another way.
      ['tokenize', '-l', 'en', '😀 so ｈａｐｐｙ at the cafe\u0301, hap\u00ADpy'],
      ['tokenize', '--offset-unit', 'utf8', '😀 so happy at the café'],
      ['similar', 'café', 'cafe\u0301', 'ｈａｐｐｙ', 'hap\u00ADpy', 'naïve'],
    ]) {
      const a = cli(args);
      const b = cli([...args, ...api]);
      expect(a.status, a.stderr).toBe(0);
      expect(b.status, b.stderr).toBe(0);
      expect(b.stdout, args[0]).toBe(a.stdout);
      expect(a.stdout.length).toBeGreaterThan(20);
    }
    const list = cli(['models', 'list', ...api]);
    expect(list.status, list.stderr).toBe(0);
    // The catalog lists every model (aligned de/fr/ja too, sorted by id); the default is among them.
    const ids = list.stdout
      .split('\n')
      .filter((l) => l.trim())
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toContain(DEFAULT_MODEL_ID);
  });
});
