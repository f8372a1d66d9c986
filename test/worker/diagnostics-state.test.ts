/**
 * Issue 12 (soak): the diagnostics route counts per-isolate state that stays, not loads in flight.
 * A lookup of an unknown model id holds a registry entry only while its manifest is being read;
 * the soak benchmark sampled such moments and saw the entries "grow" (8 -> 9). Settled entries
 * and loads in flight are now reported apart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { R2_KEYS } from '../../core/storage-keys';
import { adminToken, call } from './support/api';
import { installGatedArtifacts } from './support/storage-gate';

interface Diagnostics {
  isolateId: string;
  stateEntries: Record<string, number>;
  loadsInFlight: number;
}

const diagnostics = async (): Promise<Diagnostics> => {
  const r = await call<Diagnostics>('GET', '/api/admin/v1/diagnostics/memory', undefined, {
    token: await adminToken(),
  });
  expect(r.status).toBe(200);
  return r.body;
};

let restore: (() => void) | null = null;
afterEach(() => {
  restore?.();
  restore = null;
});

describe('diagnostics: settled state apart from loads in flight', () => {
  it('an unknown model id is looked up in the catalog before any load: no load, no state entry, nothing left', async () => {
    const before = await diagnostics();
    const gated = installGatedArtifacts();
    restore = gated.restore;
    const id = `unknown-${crypto.randomUUID().slice(0, 8)}`;
    const hold = gated.hold('get', R2_KEYS.modelManifest(id));
    const pending = call('POST', `/api/v1/embedding-models/${id}/word-availabilities`, { words: ['cat'] });
    await hold.reached();
    const during = await diagnostics();
    expect(during.stateEntries).toEqual(before.stateEntries);
    expect(during.loadsInFlight).toBe(before.loadsInFlight);
    await hold.open();
    expect((await pending).status).toBe(404);
    const after = await diagnostics();
    expect(after.stateEntries).toEqual(before.stateEntries);
    expect(after.loadsInFlight).toBe(before.loadsInFlight);
  });

  it('names the isolate that answered: a random id, the same on every answer of one isolate', async () => {
    const a = await diagnostics();
    const b = await diagnostics();
    expect(a.isolateId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(b.isolateId).toBe(a.isolateId);
  });
});
