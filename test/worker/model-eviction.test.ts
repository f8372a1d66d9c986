/**
 * Least-recently-used eviction of models (worker/sources/models.ts, docs/multilingual.md "Memory"): with a
 * memory budget that holds two synthetic models, loading a third evicts the least recently used
 * one, reuses its WASM memory (no growth) and a later request loads the evicted model again with
 * identical answers.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { LANGUAGE_RESERVE_BYTES, MEMORY_BUDGET_BYTES, setMemoryBudget } from '../../worker/sources/models';
import { adminToken, call, makeModel, uploadModel } from './support/api';

const models = ['evict-a', 'evict-b', 'evict-c'].map((id, i) =>
  makeModel(id, { extra: 20_000, dims: 64, seed: 11 + i }),
);

async function memory(): Promise<{
  wasmMemoryBytes: number;
  models: Array<{ id: string }>;
  totalBytes: number;
  evictions: number;
}> {
  const r = await call('GET', '/api/admin/v1/diagnostics/memory', undefined, { token: await adminToken() });
  expect(r.status).toBe(200);
  return r.body;
}

const matrix = (id: string) =>
  call('POST', `/api/v1/embedding-models/${id}/word-similarity-matrices`, { words: ['cat', 'dog', 'river', 'w5x'] });

afterAll(() => setMemoryBudget(MEMORY_BUDGET_BYTES));

describe('model eviction', () => {
  it('evicts the least recently used model, reuses its memory, and reloads it on demand', async () => {
    for (const m of models) await uploadModel(m);
    const a0 = await matrix('evict-a');
    expect(a0.status).toBe(200);
    expect((await matrix('evict-b')).status).toBe(200);
    const before = await memory();
    expect(before.models.map((m) => m.id)).toEqual(expect.arrayContaining(['evict-a', 'evict-b']));
    // Room for what is loaded plus a little (and the reserve for language data not loaded yet):
    // a third model must push one out.
    setMemoryBudget(before.totalBytes + LANGUAGE_RESERVE_BYTES + 700_000);
    await matrix('evict-b'); // b is now the most recently used
    const c = await matrix('evict-c');
    expect(c.status).toBe(200);
    const after = await memory();
    const ids = after.models.map((m) => m.id);
    expect(ids).toContain('evict-b');
    expect(ids).toContain('evict-c');
    expect(ids).not.toContain('evict-a');
    expect(after.evictions).toBe(before.evictions + 1);
    // c took a's freed region: WASM memory did not grow.
    expect(after.wasmMemoryBytes).toBe(before.wasmMemoryBytes);
    const catalog = await call('GET', '/api/v1/embedding-models/evict-a');
    expect(catalog.body.loadingStatus).toBe('not loaded');
    // a comes back on demand (evicting b, now the least recently used) with the same answers.
    const a1 = await matrix('evict-a');
    expect(a1.body).toEqual(a0.body);
    expect((await memory()).models.map((m) => m.id)).not.toContain('evict-b');
  });
});
