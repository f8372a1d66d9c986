/**
 * The first `npm start` (build/start.ts, build/first-start.ts) for real: its startServer in a
 * fresh state directory against the built build/generated, with one model held back as if its
 * build were still running (test/support/first-start-entry.ts). The server answers the README's example once it says
 * ready, while its background seeds the rest; the held model is listed as loading and refused with
 * 503 MODEL_LOADING and Retry-After; once "built" (SIGUSR2: the background seeds it into the
 * running server's R2, as a finished build) it answers 200 without a restart and is no longer
 * loading.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readDevVars } from '../../build/dev-vars';
import { DEFAULT_MODEL_ID, modelFile, ROOT } from '../../build/paths';
import { QUIET_ENV } from '../../build/wrangler';

const state = fs.mkdtempSync(path.join(os.tmpdir(), 'first-start-'));
// The smallest aligned model when the Debian data was there, else the other English one.
const HELD = fs.existsSync(modelFile('fr-aligned-distilled-100d')) ? 'fr-aligned-distilled-100d' : 'en-glove-6b-100d';
const README_EXAMPLE = { seedWords: ['happy', 'joy'], embeddingModelId: DEFAULT_MODEL_ID, limit: 5, seedScore: 1 };

let child: ChildProcess;
let base = '';
let token = '';
let log = '';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves once the server's output has a line matching `re` (the output so far is in the error otherwise). */
async function waitForLine(re: RegExp, ms: number): Promise<string> {
  const deadline = Date.now() + ms;
  for (;;) {
    const m = log.split('\n').find((l) => re.test(l));
    if (m) return m;
    if (child.exitCode !== null) throw new Error(`npm start exited (${child.exitCode}):\n${log.slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`no ${re} within ${ms} ms:\n${log.slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const api = (p: string, body?: unknown): Promise<Response> =>
  fetch(`${base}${p}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const wordScores = (model: string, seedWords: string[]) =>
  api('/api/v1/workspaces/ws_demo/word-scores', { ...README_EXAMPLE, embeddingModelId: model, seedWords });

const SEEDS: Record<string, string[]> = { 'fr-aligned-distilled-100d': ['bonheur', 'joie'] };

async function statusOf(id: string): Promise<string | undefined> {
  const list = (await (await api('/api/v1/embedding-models?size=100')).json()) as {
    data: Array<{ id: string; loadingStatus: string }>;
  };
  return list.data.find((m) => m.id === id)?.loadingStatus;
}

beforeAll(async () => {
  const secret = readDevVars(ROOT).JWT_SECRET!;
  token = await new SignJWT({ workspaceId: 'ws_demo', sub: 'first-start-test' })
    .setProtectedHeader({ alg: 'HS256' })
    .setExpirationTime(Math.floor(Date.now() / 1000) + 3600)
    .sign(new TextEncoder().encode(secret));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      'test/support/first-start-entry.ts',
      '--persist-to',
      state,
      '--no-browser',
      '--hold-model',
      HELD,
    ],
    { cwd: ROOT, env: { ...QUIET_ENV, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'], detached: true },
  );
  const onData = (d: Buffer) => {
    log += String(d);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  await waitForLine(/^\[start\] ready in \d+ s: /, 240_000);
}, 300_000);

afterAll(async () => {
  if (child?.pid !== undefined && child.exitCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(-child.pid, 'SIGTERM');
    await exited;
  }
  fs.rmSync(state, { recursive: true, force: true });
});

describe('first npm start: serving while the rest is built', () => {
  it('answers the README example as soon as it says ready, and says how to try and stop it', async () => {
    const ready = log.slice(log.indexOf('[start] ready in'));
    expect(ready).toContain('/api/v1/workspaces/ws_demo/word-scores');
    expect(ready).toContain('Ctrl-C stops the server');
    const r = await wordScores(DEFAULT_MODEL_ID, README_EXAMPLE.seedWords);
    expect(r.status).toBe(200);
    expect(((await r.json()) as { data: unknown[] }).data).toHaveLength(5);
  });

  it('lists the held model as loading and refuses it with 503 MODEL_LOADING and Retry-After', async () => {
    await waitForLine(/^\[start\] background builds done in \d+ s/, 240_000);
    expect(await statusOf(HELD)).toBe('loading');
    const one = await api(`/api/v1/embedding-models/${HELD}`);
    expect(one.status).toBe(200);
    expect(((await one.json()) as { loadingStatus: string }).loadingStatus).toBe('loading');
    const refused = await wordScores(HELD, SEEDS[HELD] ?? ['happy', 'joy']);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { code: string }).code).toBe('MODEL_LOADING');
    const artifact = await api(`/api/v1/artifacts/models/${HELD}`);
    expect(artifact.status).toBe(503);
    // The rest was seeded while the server ran, and answers.
    expect(await statusOf('en-glove-6b-100d' === HELD ? 'fr-aligned-distilled-100d' : 'en-glove-6b-100d')).not.toBe(
      'loading',
    );
  }, 300_000);

  it('serves the held model once its build is done, without a restart', async () => {
    process.kill(child.pid!, 'SIGUSR2');
    await waitForLine(/^\[start\] released held models/, 120_000);
    // Other isolates see the new catalog generation within their memory TTL (5 s).
    const deadline = Date.now() + 30_000;
    let r = await wordScores(HELD, SEEDS[HELD] ?? ['happy', 'joy']);
    while (r.status !== 200 && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 500));
      r = await wordScores(HELD, SEEDS[HELD] ?? ['happy', 'joy']);
    }
    expect(r.status, await r.clone().text()).toBe(200);
    expect(((await r.json()) as { data: unknown[] }).data.length).toBeGreaterThan(0);
    expect(await statusOf(HELD)).not.toBe('loading');
    expect(log).toContain(`[start] now served: model ${HELD}`);
  }, 120_000);
});
