/**
 * The deploy rehearsed end to end: `npm run deploy -- --local DIR` (build/deploy.ts) into an empty
 * folder, then the folder served as the deploy's closing line says (build/serve.ts --persist-to
 * DIR --bundle DIR/scripts/embedding-edge --placement DIR/placement.json: nothing built or seeded
 * by the server), and each endpoint family called once against what the deploy put there: health,
 * docs, the playground page, the catalogs, artifacts, admin workspaces and dimensions, text-scores,
 * word-scores, tokenizations, autocomplete, word availabilities, similarity matrices, word
 * translations, plagiarism checks and the usage service. Port 8813.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deploy } from '../../build/deploy';
import { DEFAULT_MODEL_ID } from '../../build/paths';
import { devSecret, mint, serveDeployed, stopWranglerDev } from './support/dev-server';

const PORT = 8813;
const BASE = `http://127.0.0.1:${PORT}`;
const WS = `ws_deploy_${Date.now()}`;

let child: ChildProcess | null = null;
let admin = '';
let token = '';

beforeAll(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'deploy-e2e-'));
  await deploy({ local: dir });
  child = await serveDeployed(PORT, dir);
  admin = await mint(devSecret(), { scope: 'admin', sub: 'e2e-deploy' }, 3600);
  token = await mint(devSecret(), { workspaceId: WS, sub: 'e2e-deploy' }, 3600);
  const created = await call(
    'POST',
    '/api/admin/v1/workspaces',
    {
      id: WS,
      quotas: [
        { usageTypeKey: 'tokens', limitAmount: 1_000_000, limitAmountDaily: 1_000_000 },
        { usageTypeKey: 'plagiarismChecks', limitAmount: 10, limitAmountDaily: 10 },
      ],
    },
    admin,
  );
  expect(created.status, await created.text()).toBe(201);
}, 900_000);

afterAll(async () => {
  await stopWranglerDev(child);
});

async function call(method: string, p: string, body?: unknown, auth = token): Promise<Response> {
  return fetch(`${BASE}${p}`, {
    method,
    headers: { authorization: `Bearer ${auth}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
}

async function json(method: string, p: string, body?: unknown, auth = token): Promise<Record<string, any>> {
  const res = await call(method, p, body, auth);
  expect(res.status, `${method} ${p}: ${await res.clone().text()}`).toBeLessThan(300);
  return res.json() as Promise<Record<string, any>>;
}

const ws = (p: string): string => `/api/v1/workspaces/${WS}${p}`;

describe('a local deploy, served from its folder', () => {
  it('health, docs and the playground page', async () => {
    expect(await json('GET', '/api/health')).toEqual({ status: 'ok' });
    expect((await fetch(`${BASE}/api/docs`)).status).toBe(200);
    const page = await fetch(`${BASE}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  it('the catalogs list the deployed models and mappers; the artifacts download', async () => {
    const models = await json('GET', '/api/v1/embedding-models');
    expect(models.data.map((m: { id: string }) => m.id)).toContain(DEFAULT_MODEL_ID);
    const mappers = await json('GET', '/api/v1/mappers');
    expect(mappers.data.map((m: { key: string }) => m.key)).toContain('sentiment_valence');
    const artifact = await call('GET', `/api/v1/artifacts/languages/en`);
    expect(artifact.status).toBe(200);
    expect((await artifact.arrayBuffer()).byteLength).toBeGreaterThan(1000);
  });

  it('admin: the workspace exists with its quota; a stored dimension is created and listed', async () => {
    expect((await json('GET', `/api/admin/v1/workspaces/${WS}`, undefined, admin)).id).toBe(WS);
    const created = await call('POST', '/api/admin/v1/dimensions', { name: 'weather', words: ['rain', 'snow'] }, admin);
    expect(created.status).toBe(201);
    const list = await json('GET', '/api/admin/v1/dimensions', undefined, admin);
    expect(list.data.some((d: { name: string }) => d.name === 'weather')).toBe(true);
  });

  it('scoring: text-scores and word-scores', async () => {
    const text = await json('POST', ws('/text-scores'), {
      embeddingModelId: DEFAULT_MODEL_ID,
      texts: ['What a wonderful day', 'A terrible, awful mess'],
      mapperKeys: ['sentiment_valence'],
    });
    const [good, bad] = text.data.map(
      (d: { mapperScores: Record<string, number> }) => d.mapperScores.sentiment_valence,
    );
    expect(good).toBeGreaterThan(bad);
    const words = await json('POST', ws('/word-scores'), {
      embeddingModelId: DEFAULT_MODEL_ID,
      seedWords: ['rain', 'snow'],
      limit: 5,
    });
    expect(words.data).toHaveLength(5);
  });

  it('tokenization and vocabulary: tokenize, autocomplete, availabilities, a similarity matrix, translations', async () => {
    const tokens = await json('POST', ws('/tokenizations'), { text: 'Die Häuser waren groß.', language: 'de' });
    expect(tokens.tokens.map((t: { token: string }) => t.token)).toContain('Haus');
    const suggestions = await json('POST', ws('/autocomplete-suggestions'), {
      embeddingModelId: DEFAULT_MODEL_ID,
      word: 'compu',
    });
    expect(suggestions.suggestions.length).toBeGreaterThan(0);
    const model = `/api/v1/embedding-models/${DEFAULT_MODEL_ID}`;
    const avail = await json('POST', `${model}/word-availabilities`, { words: ['house', 'qqqxz'] });
    expect(avail.availabilities.map((a: { isAvailable: boolean }) => a.isAvailable)).toEqual([true, false]);
    const matrix = await json('POST', `${model}/word-similarity-matrices`, { words: ['cat', 'dog'] });
    expect(matrix.matrix[0][0]).toBe(1);
    const models = await json('GET', '/api/v1/embedding-models');
    const aligned = models.data.find((m: { features: string[] }) => m.features.includes('aligned-en'));
    if (aligned) {
      const translated = await json('POST', `/api/v1/embedding-models/${aligned.id}/word-translations`, {
        words: [aligned.language === 'ja' ? '犬' : aligned.language === 'de' ? 'Hund' : 'chien'],
      });
      expect(translated.data[0].isAvailable).toBe(true);
    }
  });

  it('plagiarism: a page ingested, a copied text found; the usage service counts the tokens', async () => {
    const page = 'the quick brown fox jumps over the lazy dog near the quiet river bank today';
    const ingested = await call(
      'POST',
      '/api/admin/v1/plagiarism/pages',
      { url: 'https://e2e.example/fox', text: page },
      admin,
    );
    expect(ingested.status).toBe(201);
    const check = await json('POST', ws('/plagiarism-checks'), { text: `He said ${page}.` });
    expect(check.matches.length).toBeGreaterThan(0);
    const quotas = await json('GET', `/api/usage-service/v1/workspaces/${WS}/quotas`);
    const tokensQuota = quotas.data.find((q: { usageTypeKey: string }) => q.usageTypeKey === 'tokens');
    expect(tokensQuota.usedAmount).toBeGreaterThan(0);
  });
});
