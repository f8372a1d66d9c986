/**
 * What the meter costs (docs/quotas.md "What the meter costs"): the flush delay setting, and that
 * the production Worker has no bench path. bench:api's unmetered twin and meter probes live in a
 * bench-only entry (bench/workers/metering-entry.ts); in the production app the headers that ask
 * for them change nothing: the real `charge` charges as always.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app';
import { charge } from '../../worker/quotas/charge';
import { METER_FLUSH_DELAY_MS, meterFlushDelayMs } from '../../worker/quotas/meter-do';
import {
  createWorkspace,
  problemOf,
  quotaOf,
  readLedger,
  resetClock,
  uniqueWorkspaceId,
  workspaceToken,
} from './support/quotas';

const harness = createApp();
harness.post('/api/v1/workspaces/:workspaceId/harness-twin', async (c) => {
  await charge(c, { usageTypeKey: 'tokens', amount: 1 });
  return c.json({ ok: true });
});

describe('bench headers: no bench path in the production app', () => {
  beforeAll(() => resetClock());

  const sendWith = async (ws: string, headers: Record<string, string>) =>
    harness.fetch(
      new Request(`http://x/api/v1/workspaces/${ws}/harness-twin`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await workspaceToken(ws)}`,
          'content-type': 'application/json',
          ...headers,
        },
        body: '{}',
      }),
      env,
    );

  it('X-Bench-Unmetered: 1 is still charged, and refused once the allowance is gone', async () => {
    const ws = uniqueWorkspaceId('twin');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 2, limitAmountDaily: 100 }]);
    const send = () => sendWith(ws, { 'x-bench-unmetered': '1' });
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(403);
    expect((await problemOf(refused)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
    expect(await readLedger(ws)).toHaveLength(2);
  });

  it('X-Bench-Meter-Probe: rpc / write is still charged, and refused once the allowance is gone', async () => {
    const ws = uniqueWorkspaceId('probe');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 2, limitAmountDaily: 100 }]);
    expect((await sendWith(ws, { 'x-bench-meter-probe': 'rpc' })).status).toBe(200);
    expect((await sendWith(ws, { 'x-bench-meter-probe': 'write' })).status).toBe(200);
    const refused = await sendWith(ws, { 'x-bench-meter-probe': 'write' });
    expect(refused.status).toBe(403);
    expect((await problemOf(refused)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
    expect(await readLedger(ws)).toHaveLength(2);
  });
});

describe('flush delay', () => {
  it('METER_FLUSH_DELAY_MS overrides the default; a missing, non-numeric or non-positive value keeps it', () => {
    expect(meterFlushDelayMs({ METER_FLUSH_DELAY_MS: '750' })).toBe(750);
    for (const v of [undefined, '', 'soon', '0', '-5'])
      expect(meterFlushDelayMs({ METER_FLUSH_DELAY_MS: v })).toBe(METER_FLUSH_DELAY_MS);
    expect(METER_FLUSH_DELAY_MS).toBe(2_000);
  });
});
