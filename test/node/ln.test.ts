/**
 * core/scoring/ln.ts: the engine-independent logarithm behind f(rank). It must agree with
 * Math.log to within one ulp everywhere, be exact where the logarithm is, and handle the IEEE
 * special cases like Math.log.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ln } from '../../core/scoring/ln';
import { frequencyScore } from '../../core/scoring';

const ulp = (x: number): number => {
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, Math.abs(x));
  b.setBigUint64(0, b.getBigUint64(0) + 1n);
  return b.getFloat64(0) - Math.abs(x);
};

describe('ln', () => {
  it('is within one ulp of Math.log for every rank of the default vocabulary size', () => {
    for (let r = 1; r <= 400_000; r++) {
      const a = ln(r);
      const b = Math.log(r);
      if (a !== b) expect(Math.abs(a - b), `ln(${r})`).toBeLessThanOrEqual(ulp(b));
    }
  });

  it('is within one ulp of Math.log for arbitrary positive doubles (normal and subnormal)', () => {
    fc.assert(
      fc.property(fc.double({ min: Number.MIN_VALUE, max: Number.MAX_VALUE, noNaN: true }), (x) => {
        const a = ln(x);
        const b = Math.log(x);
        return a === b || Math.abs(a - b) <= ulp(b);
      }),
      { numRuns: 20_000 },
    );
  });

  it('handles the special cases like Math.log', () => {
    for (const x of [0, -0, -1, -Infinity, Infinity, NaN, 1])
      expect(Object.is(ln(x), Math.log(x)), String(x)).toBe(true);
    // Powers of two: k * ln 2 exactly as the reduction computes it.
    for (let k = -1074; k <= 1023; k += 7)
      expect(Math.abs(ln(2 ** k) - k * Math.LN2)).toBeLessThanOrEqual(ulp(k * Math.LN2) * 2 + 1e-300);
  });

  it('f(rank) stays in [0, 1], 1 at rank 1, 0 at the last rank, decreasing', () => {
    const V = 341_479;
    expect(frequencyScore(1, V)).toBe(1);
    expect(frequencyScore(V, V)).toBe(0);
    let prev = 2;
    for (let r = 1; r <= V; r += 97) {
      const f = frequencyScore(r, V);
      expect(f).toBeLessThan(prev);
      prev = f;
    }
  });
});
