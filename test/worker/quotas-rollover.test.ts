/**
 * Daily and monthly rollovers at the exact clock boundaries, spillover and bonus arithmetic,
 * and admin changes across boundaries, through the real routes and the real charge.
 */
import { env } from 'cloudflare:test';
import { afterEach, describe, expect, it } from 'vitest';
import { consume } from '../../worker/quotas/meter-client';
import type { UsageTypeKey } from '../../worker/quotas/charge';
import {
  addBonus,
  createWorkspace,
  quotaOf,
  readLedger,
  resetClock,
  setAnchorDay,
  setLimits,
  standOn,
  uniqueWorkspaceId,
} from './support/quotas';

afterEach(resetClock);

/** Charges through the atomic repository function at the injected clock's instant. */
async function use(
  workspaceId: string,
  amount: number,
  usageTypeKey: UsageTypeKey = 'tokens',
  atIso?: string,
): Promise<void> {
  const atMs = atIso ? standOn(atIso) : Date.now();
  await consume(
    env,
    { workspaceId, usageTypeKey, amount, requestId: crypto.randomUUID(), idempotencyKey: null, atMs },
    1,
  );
}

/** What the rule of decisions.md says the spillover of one cycle change is. */
const spillover = (q: {
  limitAmount: number;
  bonusAmount: number;
  spilloverAmount: number;
  usedAmount: number;
}): number => Math.min(q.limitAmount, Math.max(0, q.limitAmount + q.bonusAmount + q.spilloverAmount - q.usedAmount));

describe('daily counter', () => {
  it('resets at 00:00:00.000 UTC and not at 23:59:59.999; dailyRefreshed is the UTC date of the last reset', async () => {
    const ws = uniqueWorkspaceId('daily');
    standOn('2024-03-10T09:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 100 }]);
    await use(ws, 40, 'tokens', '2024-03-10T23:59:59.998Z');
    standOn('2024-03-10T23:59:59.999Z');
    let q = await quotaOf(ws, 'tokens');
    expect([q.usedAmountDaily, q.usedAmount, q.dailyRefreshed]).toEqual([40, 40, '2024-03-10']);
    standOn('2024-03-11T00:00:00.000Z');
    q = await quotaOf(ws, 'tokens');
    expect([q.usedAmountDaily, q.usedAmount, q.dailyRefreshed]).toEqual([0, 40, '2024-03-11']);
    // The full daily limit is usable again: 100 in one charge.
    await use(ws, 100, 'tokens', '2024-03-11T00:00:00.000Z');
    q = await quotaOf(ws, 'tokens');
    expect([q.usedAmountDaily, q.usedAmount, q.availableAmount]).toEqual([100, 140, 860]);
    // Days later, nothing used since: the counter reads 0.
    standOn('2024-03-20T12:00:00.000Z');
    q = await quotaOf(ws, 'tokens');
    expect([q.usedAmountDaily, q.dailyRefreshed]).toEqual([0, '2024-03-20']);
  });
});

describe('monthly cycle', () => {
  it('anchor 1: rolls over at 00:00:00.000 on the 1st; the unused part becomes spillover, used and bonus return to 0', async () => {
    const ws = uniqueWorkspaceId('m1');
    standOn('2024-01-05T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 1000, limitAmountDaily: 1000 }]);
    expect((await addBonus(ws, 'tokens', 150)).status).toBe(200);
    await use(ws, 700, 'tokens', '2024-01-20T10:00:00.000Z');
    standOn('2024-01-31T23:59:59.999Z');
    const before = await quotaOf(ws, 'tokens');
    expect([before.usedAmount, before.bonusAmount, before.spilloverAmount]).toEqual([700, 150, 0]);
    expect(before.availableAmount).toBe(
      before.limitAmount + before.bonusAmount + before.spilloverAmount - before.usedAmount,
    );
    standOn('2024-02-01T00:00:00.000Z');
    const after = await quotaOf(ws, 'tokens');
    expect(after.usedAmount).toBe(0);
    expect(after.bonusAmount).toBe(0);
    expect(after.spilloverAmount).toBe(spillover(before));
    expect(after.availableAmount).toBe(after.limitAmount + after.spilloverAmount);
    // A charge materializes the same numbers.
    await use(ws, 1, 'tokens', '2024-02-01T00:00:00.000Z');
    const charged = await quotaOf(ws, 'tokens');
    expect([charged.usedAmount, charged.spilloverAmount, charged.availableAmount]).toEqual([
      1,
      after.spilloverAmount,
      after.availableAmount - 1,
    ]);
    const ledger = await readLedger(ws);
    expect(ledger.map((e) => e.cycleStart)).toEqual(['2024-01-01', '2024-02-01']);
  });

  it('spillover is capped at limitAmount, and is 0 when the cycle was over-used (limit lowered below usage)', async () => {
    const ws = uniqueWorkspaceId('cap');
    standOn('2023-06-01T00:00:00.000Z');
    await createWorkspace(ws, 1, [
      { usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 },
      { usageTypeKey: 'images', limitAmount: 100, limitAmountDaily: 1000 },
    ]);
    expect((await addBonus(ws, 'tokens', 500)).status).toBe(200);
    await use(ws, 20, 'tokens', '2023-06-10T00:00:00.000Z');
    await use(ws, 90, 'images', '2023-06-10T00:00:00.000Z');
    standOn('2023-06-20T00:00:00.000Z');
    expect((await setLimits(ws, 'images', 50, 1000)).status).toBe(200);
    standOn('2023-06-30T23:59:59.999Z');
    const tokBefore = await quotaOf(ws, 'tokens');
    const imgBefore = await quotaOf(ws, 'images');
    expect(tokBefore.availableAmount).toBe(100 + 500 - 20);
    expect(imgBefore.availableAmount).toBe(0); // max(0, 50 - 90)
    standOn('2023-07-01T00:00:00.000Z');
    const tok = await quotaOf(ws, 'tokens');
    const img = await quotaOf(ws, 'images');
    expect(tok.spilloverAmount).toBe(tokBefore.limitAmount);
    expect(tok.spilloverAmount).toBe(spillover(tokBefore));
    expect(img.spilloverAmount).toBe(0);
    expect(img.spilloverAmount).toBe(spillover(imgBefore));
    expect([tok.availableAmount, img.availableAmount]).toEqual([200, 50]);
  });

  it('spillover carries one cycle only: the next change recomputes it from the new cycle', async () => {
    const ws = uniqueWorkspaceId('chain');
    standOn('2024-01-01T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 60, 'tokens', '2024-01-15T00:00:00.000Z'); // unused 40
    await use(ws, 130, 'tokens', '2024-02-15T00:00:00.000Z'); // Feb: 100 + 40 spill, 130 used -> unused 10
    standOn('2024-02-29T23:59:59.999Z');
    const feb = await quotaOf(ws, 'tokens');
    expect([feb.spilloverAmount, feb.usedAmount, feb.availableAmount]).toEqual([40, 130, 10]);
    standOn('2024-03-01T00:00:00.000Z');
    const mar = await quotaOf(ws, 'tokens');
    expect(mar.spilloverAmount).toBe(spillover(feb));
    expect(mar.spilloverAmount).toBe(10);
  });

  it('several idle cycles: the spillover is the full limit (each idle cycle left its limit unused)', async () => {
    const ws = uniqueWorkspaceId('idle');
    standOn('2024-01-10T00:00:00.000Z');
    await createWorkspace(ws, 10, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 95, 'tokens', '2024-01-11T00:00:00.000Z');
    standOn('2024-02-10T00:00:00.000Z');
    expect((await quotaOf(ws, 'tokens')).spilloverAmount).toBe(5); // one change
    standOn('2024-03-10T00:00:00.000Z');
    const q = await quotaOf(ws, 'tokens'); // two changes
    expect([q.spilloverAmount, q.usedAmount, q.availableAmount]).toEqual([100, 0, 200]);
    standOn('2025-07-10T00:00:00.000Z');
    expect((await quotaOf(ws, 'tokens')).spilloverAmount).toBe(100);
  });

  it('anchor 31 in a leap year: Jan 31 -> Feb 29 -> Mar 31, each at 00:00:00.000', async () => {
    const ws = uniqueWorkspaceId('a31');
    standOn('2024-01-31T00:00:00.000Z');
    await createWorkspace(ws, 31, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 10, 'tokens', '2024-01-31T00:00:00.000Z');
    standOn('2024-02-28T23:59:59.999Z');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(10);
    standOn('2024-02-29T00:00:00.000Z');
    let q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([0, 90]);
    await use(ws, 30, 'tokens', '2024-03-30T23:59:59.999Z');
    standOn('2024-03-30T23:59:59.999Z');
    const before = await quotaOf(ws, 'tokens');
    expect([before.usedAmount, before.spilloverAmount]).toEqual([30, 90]);
    standOn('2024-03-31T00:00:00.000Z');
    q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([0, spillover(before)]);
    expect(q.spilloverAmount).toBe(100); // min(100, 100 + 90 - 30): capped
    expect((await readLedger(ws)).map((e) => e.cycleStart)).toEqual(['2024-01-31', '2024-02-29']);
  });

  it('anchor 31 in a common year: the February cycle starts on Feb 28; anchor 30 -> Apr 30 and May 30', async () => {
    const ws = uniqueWorkspaceId('a31c');
    standOn('2023-02-01T00:00:00.000Z');
    await createWorkspace(ws, 31, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 25, 'tokens', '2023-02-27T23:59:59.999Z');
    standOn('2023-02-28T00:00:00.000Z');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(0);
    const ws30 = uniqueWorkspaceId('a30');
    standOn('2023-04-29T00:00:00.000Z');
    await createWorkspace(ws30, 30, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws30, 5, 'tokens', '2023-04-29T23:59:59.999Z');
    standOn('2023-04-30T00:00:00.000Z');
    expect((await quotaOf(ws30, 'tokens')).spilloverAmount).toBe(95);
    await use(ws30, 7, 'tokens', '2023-05-29T23:59:59.999Z');
    standOn('2023-05-30T00:00:00.000Z');
    const q = await quotaOf(ws30, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([0, 100]); // min(100, 100 + 95 - 7)
  });

  it('crosses the year: anchor 1, Dec 31 23:59:59.999 -> Jan 1 00:00:00.000', async () => {
    const ws = uniqueWorkspaceId('year');
    standOn('2023-12-01T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'plagiarismChecks', limitAmount: 10, limitAmountDaily: 10 }]);
    await use(ws, 4, 'plagiarismChecks', '2023-12-31T23:59:59.999Z');
    standOn('2023-12-31T23:59:59.999Z');
    let q = await quotaOf(ws, 'plagiarismChecks');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([4, 4]);
    standOn('2024-01-01T00:00:00.000Z');
    q = await quotaOf(ws, 'plagiarismChecks');
    expect([q.usedAmount, q.usedAmountDaily, q.spilloverAmount, q.dailyRefreshed]).toEqual([0, 0, 6, '2024-01-01']);
  });
});

describe('late statements', () => {
  it('a charge whose instant was taken before midnight but runs after a charge of the new day counts into the new day and cycle', async () => {
    const ws = uniqueWorkspaceId('late');
    standOn('2024-05-20T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 50 }]);
    await use(ws, 10, 'tokens', '2024-05-31T12:00:00.000Z');
    await use(ws, 5, 'tokens', '2024-06-01T00:00:00.001Z');
    await use(ws, 3, 'tokens', '2024-05-31T23:59:59.999Z'); // older instant, later statement
    standOn('2024-06-01T00:00:01.000Z');
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily, q.spilloverAmount]).toEqual([8, 8, 90]);
  });
});

describe('admin changes across boundaries', () => {
  it('a limit change after a passed boundary does not act retroactively on that rollover', async () => {
    const ws = uniqueWorkspaceId('retro');
    standOn('2024-04-01T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 30, 'tokens', '2024-04-02T00:00:00.000Z');
    // May 1 has passed with limit 100 in force: spillover min(100, 70) = 70, whatever the new limit.
    standOn('2024-05-03T00:00:00.000Z');
    expect((await setLimits(ws, 'tokens', 10, 5)).status).toBe(200);
    const q = await quotaOf(ws, 'tokens');
    expect([q.limitAmount, q.limitAmountDaily, q.spilloverAmount, q.usedAmount, q.availableAmount]).toEqual([
      10, 5, 70, 0, 80,
    ]);
    // At the next boundary the new limit caps the spillover.
    standOn('2024-06-01T00:00:00.000Z');
    expect((await quotaOf(ws, 'tokens')).spilloverAmount).toBe(10);
  });

  it('raising the daily limit lets a refused request through on the same day; usage is kept', async () => {
    const ws = uniqueWorkspaceId('raise');
    standOn('2024-04-10T10:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 10 }]);
    await use(ws, 10, 'tokens', '2024-04-10T10:00:00.000Z');
    await expect(use(ws, 1, 'tokens', '2024-04-10T10:00:00.000Z')).rejects.toMatchObject({
      code: 'DAILY_LIMIT_REACHED',
    });
    expect((await setLimits(ws, 'tokens', 100, 20)).status).toBe(200);
    await use(ws, 10, 'tokens', '2024-04-10T10:00:01.000Z');
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.usedAmountDaily]).toEqual([20, 20]);
  });

  it('changing the anchor day: the running cycle ends at the first anchor date of the new day after its start', async () => {
    const ws = uniqueWorkspaceId('anchor');
    standOn('2024-03-05T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 40, 'tokens', '2024-03-05T00:00:00.000Z');
    // Move the anchor to the 20th on Mar 10: the cycle that began Mar 1 now ends Mar 20.
    standOn('2024-03-10T00:00:00.000Z');
    const patched = await setAnchorDay(ws, 20);
    expect(patched.status).toBe(200);
    const body = (await patched.json()) as { anchorDay: number; cycleStart: string; nextCycleStart: string };
    expect(body.anchorDay).toBe(20);
    expect(body.nextCycleStart).toBe('2024-03-20');
    standOn('2024-03-19T23:59:59.999Z');
    expect((await quotaOf(ws, 'tokens')).usedAmount).toBe(40);
    standOn('2024-03-20T00:00:00.000Z');
    let q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([0, 60]);
    // Move it back to the 5th on Mar 25: Apr 5 is the next start; Mar 5 lies before the running cycle's start.
    await use(ws, 15, 'tokens', '2024-03-25T00:00:00.000Z');
    expect((await setAnchorDay(ws, 5)).status).toBe(200);
    standOn('2024-04-04T23:59:59.999Z');
    q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([15, 60]);
    standOn('2024-04-05T00:00:00.000Z');
    q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([0, 100]); // min(100, 100 + 60 - 15)
  });

  it('an anchor change whose new anchor date has already passed in the running cycle rolls over at once', async () => {
    const ws = uniqueWorkspaceId('anchor2');
    standOn('2024-03-01T00:00:00.000Z');
    await createWorkspace(ws, 1, [{ usageTypeKey: 'tokens', limitAmount: 100, limitAmountDaily: 1000 }]);
    await use(ws, 70, 'tokens', '2024-03-12T00:00:00.000Z');
    standOn('2024-03-15T00:00:00.000Z');
    expect((await setAnchorDay(ws, 10)).status).toBe(200);
    const q = await quotaOf(ws, 'tokens');
    expect([q.usedAmount, q.spilloverAmount]).toEqual([0, 30]);
  });
});
