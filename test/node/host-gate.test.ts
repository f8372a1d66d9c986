/**
 * The hosts' gate (worker/hosts/gate.ts) on its own, in Node: heavy requests take the lock one
 * after another; a request the runtime cancelled never calls done(), and once its deadline has
 * passed neither its units nor the lock are kept for it; shedding at half the deadline.
 */
import { describe, expect, it } from 'vitest';
import { HostGate } from '../../worker/hosts/gate';

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('HostGate', () => {
  it('a heavy request abandoned while holding the lock releases it and its units after its deadline', async () => {
    const gate = new HostGate();
    const abandoned = gate.admit(100, 300);
    await abandoned.pace(0); // holds the lock, and never calls done()
    const waiting = gate.admit(100, 5_000);
    let ran = false;
    const run = Promise.resolve(waiting.pace(0)).then(() => (ran = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(ran).toBe(false);
    expect(gate.queuedUnits).toBe(200);
    await run; // within the abandoned request's 300 ms deadline + 1 s grace, checked every 250 ms
    expect(ran).toBe(true);
    expect(gate.queuedUnits).toBe(100);
    waiting.done();
    expect(gate.queuedUnits).toBe(0);
  });

  it('heavy requests hold the lock in turn, first admitted first served; small ones never wait', async () => {
    const gate = new HostGate();
    const order: string[] = [];
    const a = gate.admit(100, 20_000);
    const b = gate.admit(100, 20_000);
    await a.pace(0);
    const bRuns = Promise.resolve(b.pace(0)).then(() => order.push('b'));
    const small = gate.admit(5, 20_000);
    expect(small.pace(0)).toBeUndefined();
    order.push('small');
    await tick();
    expect(order).toEqual(['small']);
    order.push('a done');
    a.done();
    await bRuns;
    expect(order).toEqual(['small', 'a done', 'b']);
    b.done();
    small.done();
    expect(gate.queuedUnits).toBe(0);
  });

  it('refuses at once what it cannot finish within half of the deadline', () => {
    const gate = new HostGate();
    gate.admit(400, 1_000);
    expect(() => gate.admit(200, 1_000)).toThrow(/cannot finish/);
    expect(gate.refused).toBe(1);
  });
});
