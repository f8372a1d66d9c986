/**
 * What the meter costs (docs/quotas.md "What the meter costs"): the flush delay setting, and the
 * bench's unmetered twin and meter probes (worker/quotas/bench-twin.ts) exist only in a build made
 * with `--define __BENCH_UNMETERED_TWIN__:true`. In any other build, such as this test build and a
 * deployment, the headers that ask for them change nothing: the real `charge` charges as always,
 * and the meter refuses a probe call.
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

describe('bench twin: off outside the bench build', () => {
  beforeAll(() => resetClock());

  it('X-Bench-Unmetered: 1 is still charged, and refused once the allowance is gone', async () => {
    const ws = uniqueWorkspaceId('twin');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 2, limitAmountDaily: 100 }]);
    const token = await workspaceToken(ws);
    const send = () =>
      harness.fetch(
        new Request(`http://x/api/v1/workspaces/${ws}/harness-twin`, {
          method: 'POST',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'x-bench-unmetered': '1' },
          body: '{}',
        }),
        env,
      );
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(403);
    expect((await problemOf(refused)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
    expect(await readLedger(ws)).toHaveLength(2);
  });
});

describe('meter probes: off outside the bench build', () => {
  beforeAll(() => resetClock());

  it('X-Bench-Meter-Probe: rpc / write is still charged, and the meter refuses the probe call itself (writes nothing)', async () => {
    const ws = uniqueWorkspaceId('probe');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 2, limitAmountDaily: 100 }]);
    const token = await workspaceToken(ws);
    const send = (probe: string) =>
      harness.fetch(
        new Request(`http://x/api/v1/workspaces/${ws}/harness-twin`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/json',
            'x-bench-meter-probe': probe,
          },
          body: '{}',
        }),
        env,
      );
    expect((await send('rpc')).status).toBe(200);
    expect((await send('write')).status).toBe(200);
    const refused = await send('write');
    expect(refused.status).toBe(403);
    expect((await problemOf(refused)).code).toBe('ERROR_NO_REMAINING_QUOTA');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(2);
    const meter = env.METER.get(env.METER.idFromName(ws));
    expect(await meter.benchProbe('write', ws, Date.now())).toBe('not-bench-build');
    expect(await meter.benchProbe('rpc', ws, Date.now())).toBe('not-bench-build');
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
