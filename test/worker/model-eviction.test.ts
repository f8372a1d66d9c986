/**
 * The isolate's memory budget (worker/sources/models.ts, docs/reliability.md "Memory budget"):
 * - an idle least-recently-used model is evicted for a new one, its WASM memory reused, and it
 *   is loaded again on demand with identical answers;
 * - a model in use is drained, not exceeded: the new load waits until the requests holding it
 *   have answered, a request for the draining model waits for it too, and every answer is right;
 * - a wait that cannot end in time, a model that cannot fit, and a load whose R2 read never
 *   answers give 503 with Retry-After (never a hung request, never a charge);
 * - the per-model caches (normalization statistics) are bounded in bytes, counted in the
 *   diagnostics' totalBytes, and kept only while the budget has room.
 * The interleavings are forced with gated R2 (support/storage-gate.ts) and observed through the
 * diagnostics route (a model shown `draining`); the budget and the wait are the Worker's vars
 * MODEL_MEMORY_BUDGET_BYTES and MODEL_WAIT_MS, set on the shared env for one test.
 */
import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { STATS_CACHE_BYTES } from '../../core/engine';
import { EXPANSION_CACHE_BYTES } from '../../core/scoring';
import {
  adminToken,
  call,
  expectProblem,
  makeModel,
  uploadEnglish,
  uploadMapper,
  uploadModel,
  WS,
} from './support/api';
import { quotaOf } from './support/quotas';
import { installGatedArtifacts } from './support/storage-gate';

interface Memory {
  wasmMemoryBytes: number;
  models: Array<{ id: string; retainedBytes: number; cacheBytes: number; draining: boolean }>;
  languages: Array<{ language: string; bytes: number }>;
  cacheBytes: number;
  totalBytes: number;
  evictions: number;
  budgetBytes: number;
}

async function memory(): Promise<Memory> {
  const r = await call('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
  expect(r.status).toBe(200);
  return r.body;
}

/** Polls the diagnostics until `ok` holds (event order, bounded only by the test's own timeout). */
async function until(ok: (m: Memory) => boolean): Promise<Memory> {
  for (;;) {
    const m = await memory();
    if (ok(m)) return m;
  }
}

const vars = env as unknown as { MODEL_MEMORY_BUDGET_BYTES?: string; MODEL_WAIT_MS?: string };
function configure(budget: number, waitMs?: number): void {
  vars.MODEL_MEMORY_BUDGET_BYTES = String(budget);
  if (waitMs !== undefined) vars.MODEL_WAIT_MS = String(waitMs);
}

let gated: ReturnType<typeof installGatedArtifacts> | null = null;
afterEach(async () => {
  await gated?.openAll();
  gated?.restore();
  gated = null;
  delete vars.MODEL_MEMORY_BUDGET_BYTES;
  delete vars.MODEL_WAIT_MS;
});

/**
 * Evicts every idle model and returns the bytes left (WASM memory never shrinks): a budget of 1
 * byte makes the next load evict all it can, then refuse.
 */
async function flush(): Promise<number> {
  configure(1);
  expectProblem(await matrix(z.id), 503, 'EMBEDDING_MODEL_UNAVAILABLE');
  const m = await memory();
  expect(m.models).toEqual([]);
  return m.totalBytes;
}

/**
 * A budget with room for one of the test models, not two: what one placed model takes (its own
 * WASM memory with 2 MB of scratch room, ~420 KB outside it) plus 500 KB, where a load reserves
 * about 4 MB (matrix, scratch room, 30 bytes a word).
 */
async function roomForOne(): Promise<number> {
  await flush();
  delete vars.MODEL_MEMORY_BUDGET_BYTES;
  expect((await matrix(c.id)).status).toBe(200);
  const one = (await memory()).totalBytes;
  await flush();
  return one + 500_000;
}

// Models in a language without data in R2: the budget reserves nothing for their language.
const model = (id: string, seed: number) => makeModel(id, { extra: 20_000, dims: 64, seed, language: 'zz' });
const [a, b, c, d, z] = [
  model('evict-a', 11),
  model('evict-b', 12),
  model('evict-c', 13),
  model('evict-d', 14),
  model('evict-z', 15),
];
let uploaded = false;
async function upload(): Promise<void> {
  if (uploaded) return;
  for (const m of [a, b, c, d, z]) await uploadModel(m);
  await uploadMapper(a, 'alpha', { valence: Float64Array.from(a.words, (_, i) => (i % 7) / 7) });
  uploaded = true;
}

const matrix = (id: string) =>
  call('POST', `/api/v1/embedding-models/${id}/word-similarity-matrices`, { words: ['cat', 'dog', 'river', 'w5x'] });
/** Metered, and holds model a until its mapper bundle has been read. */
const scoresOfA = () =>
  call('POST', `/api/v1/workspaces/${WS}/word-scores`, {
    seedWords: ['cat'],
    embeddingModelId: a.id,
    whitelistWords: ['cat', 'dog', 'river'],
    mapperKeys: ['alpha_valence'],
  });
const scoresOfB = () =>
  call('POST', `/api/v1/workspaces/${WS}/word-scores`, {
    seedWords: ['cat'],
    embeddingModelId: b.id,
    whitelistWords: ['cat', 'dog', 'river'],
  });
const ids = (m: Memory) => m.models.map((x) => x.id);

describe('model eviction and the memory budget', () => {
  it('evicts the least recently used idle model, reuses its memory, and reloads it on demand', async () => {
    await upload();
    await flush();
    delete vars.MODEL_MEMORY_BUDGET_BYTES;
    const a0 = await matrix(a.id);
    expect(a0.status).toBe(200);
    expect((await matrix(b.id)).status).toBe(200);
    const before = await memory();
    expect(ids(before)).toEqual(expect.arrayContaining([a.id, b.id]));
    // Room for what is loaded plus a little: a third model must push one out.
    configure(before.totalBytes + 300_000);
    await matrix(b.id); // b is now the most recently used
    expect((await matrix(c.id)).status).toBe(200);
    const after = await memory();
    expect(ids(after)).toEqual(expect.arrayContaining([b.id, c.id]));
    expect(ids(after)).not.toContain(a.id);
    expect(after.evictions).toBe(before.evictions + 1);
    expect(after.totalBytes).toBeLessThanOrEqual(after.budgetBytes);
    // c took a's freed region: WASM memory did not grow.
    expect(after.wasmMemoryBytes).toBe(before.wasmMemoryBytes);
    expect((await call('GET', `/api/v1/embedding-models/${a.id}`)).body.loadingStatus).toBe('not loaded');
    // a comes back on demand (evicting b, now the least recently used) with the same answers.
    const a1 = await matrix(a.id);
    expect(a1.body).toEqual(a0.body);
    expect(ids(await memory())).not.toContain(b.id);
  });

  it('drains a model in use instead of exceeding the budget: every request is answered right', async () => {
    await upload();
    const refA = await scoresOfA();
    const refB = await scoresOfB();
    expect([refA.status, refB.status]).toEqual([200, 200]);
    configure(await roomForOne());
    gated = installGatedArtifacts();
    const bundle = gated.hold('get', `mappers/${a.id}/alpha.bin`);
    const holder = scoresOfA(); // loads a, then waits at its mapper bundle, holding a
    await bundle.reached();
    const waiterB = scoresOfB(); // no room for b while a is in use
    const drained = await until((m) => m.models.some((x) => x.id === a.id && x.draining));
    expect(drained.totalBytes).toBeLessThanOrEqual(drained.budgetBytes);
    expect(ids(drained)).toEqual([a.id]);
    const waiterA = scoresOfA(); // a is draining: this request waits for it to go and come back
    await bundle.open();
    const [h, wb, wa] = await Promise.all([holder, waiterB, waiterA]);
    expect(h.status, JSON.stringify(h.body)).toBe(200);
    expect(wb.status, JSON.stringify(wb.body)).toBe(200);
    expect(wa.status, JSON.stringify(wa.body)).toBe(200);
    expect(h.body).toEqual(refA.body);
    expect(wa.body).toEqual(refA.body);
    expect(wb.body).toEqual(refB.body);
    const end = await memory();
    expect(end.totalBytes).toBeLessThanOrEqual(end.budgetBytes);
    expect(end.models.every((x) => !x.draining)).toBe(true);
  });

  it('a wait that cannot end in time is 503 with Retry-After and charges nothing', async () => {
    await upload();
    configure(await roomForOne(), 50);
    gated = installGatedArtifacts();
    const bundle = gated.hold('get', `mappers/${a.id}/alpha.bin`);
    const holder = scoresOfA();
    await bundle.reached();
    const used = (await quotaOf(WS, 'tokens')).usedAmount;
    const refused = await scoresOfB();
    expectProblem(refused, 503, 'EMBEDDING_MODEL_UNAVAILABLE');
    expect(refused.headers.get('retry-after')).toBe('1');
    expect((await quotaOf(WS, 'tokens')).usedAmount).toBe(used);
    // The refused load gives a back (at its own deadline, the same as the request's).
    const during = await until((m) => m.models.every((x) => !x.draining));
    expect(during.totalBytes).toBeLessThanOrEqual(during.budgetBytes);
    expect(ids(during)).toEqual([a.id]);
    await bundle.open();
    expect((await holder).status).toBe(200);
  });

  it('a model that cannot fit beside nothing is refused at once, and nothing is kept', async () => {
    await upload();
    configure((await flush()) + 100_000);
    const r = await matrix(d.id);
    expectProblem(r, 503, 'EMBEDDING_MODEL_UNAVAILABLE');
    expect(r.body.detail).toMatch(/larger than this isolate's memory budget/);
    const m = await memory();
    expect(ids(m)).not.toContain(d.id);
    expect((await call('GET', `/api/v1/embedding-models/${d.id}`)).body.loadingStatus).toBe('not loaded');
  });

  it('a load whose R2 read never answers ends each waiting request at its deadline; the load is used once it lands', async () => {
    await upload();
    configure(10_000_000_000, 100);
    gated = installGatedArtifacts();
    const read = gated.hold('get', `models/${d.id}.emb`);
    const first = matrix(d.id);
    await read.reached();
    const second = await matrix(d.id);
    expectProblem(second, 503, 'EMBEDDING_MODEL_UNAVAILABLE');
    expect(second.headers.get('retry-after')).toBe('1');
    expectProblem(await first, 503, 'EMBEDDING_MODEL_UNAVAILABLE');
    await read.open();
    await until((m) => ids(m).includes(d.id));
    expect((await matrix(d.id)).status).toBe(200);
    expect(gated.log.filter((l) => l === `get models/${d.id}.emb`)).toHaveLength(1);
  });

  it('normalization statistics are bounded in bytes, counted, and kept only while the budget has room', async () => {
    await uploadEnglish();
    const t = makeModel('evict-stats', { extra: 25_000, dims: 32, seed: 16 });
    await uploadModel(t);
    const score = (i: number) =>
      call('POST', `/api/v1/workspaces/${WS}/text-scores`, {
        texts: ['the cat and the dog'],
        embeddingModelId: t.id,
        dimensions: [{ id: 1, type: 'manual', words: [`w${i}x`] }],
        goalConfig: { dimensions: [{ id: 1, weight: 1 }], normalization: 'zscore' },
      });
    const first = await score(0);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    for (let i = 1; i < 70; i++) expect((await score(i)).status).toBe(200);
    const m = await memory();
    const entry = m.models.find((x) => x.id === t.id)!;
    // 70 seed sets of 160 KB would be 11 MB: the cache keeps what fits its bound.
    expect(entry.cacheBytes).toBeGreaterThan(STATS_CACHE_BYTES / 2);
    expect(entry.cacheBytes).toBeLessThanOrEqual(STATS_CACHE_BYTES + EXPANSION_CACHE_BYTES);
    expect(m.cacheBytes).toBe(m.models.reduce((s, x) => s + x.cacheBytes, 0));
    const languages = m.languages.reduce((s, l) => s + l.bytes, 0);
    const models = m.models.reduce((s, x) => s + x.retainedBytes + x.cacheBytes, 0);
    expect(m.totalBytes).toBe(m.wasmMemoryBytes + models + languages);
    // With the budget full, new statistics are computed but not kept, and the answers stay right.
    configure(m.totalBytes);
    const again = await score(0);
    expect(again.body).toEqual(first.body);
    for (let i = 100; i < 110; i++) expect((await score(i)).status).toBe(200);
    const full = await memory();
    expect(full.totalBytes).toBeLessThanOrEqual(full.budgetBytes);
    expect(full.models.find((x) => x.id === t.id)!.cacheBytes).toBeLessThanOrEqual(entry.cacheBytes);
  });
});
