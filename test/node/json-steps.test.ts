/**
 * jsonSteps (core/scoring/steps.ts), the sliced serializer of the hosts' answers: its text is
 * JSON.stringify's for any answer (members in order, undefined members left out, undefined
 * elements as null), and it yields between slices of a long `data` array.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { drain, jsonSteps } from '../../core/scoring/steps';

describe('jsonSteps', () => {
  it('writes what JSON.stringify writes', () => {
    const value = fc.oneof(fc.double(), fc.string(), fc.constant(null), fc.constant(undefined), fc.boolean());
    const answer = fc.record(
      {
        data: fc.array(fc.oneof(fc.dictionary(fc.string(), value), value), { maxLength: 30 }),
        averages: fc.dictionary(fc.string(), value),
        note: value,
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(answer, (a) => {
        expect(drain(jsonSteps(a))).toBe(JSON.stringify(a));
      }),
      { numRuns: 300 },
    );
  });

  it('yields between slices of a long data array, and only there', () => {
    const data = Array.from({ length: 20_000 }, (_, i) => ({ word: `w${i}`, scores: { a: i / 7, b: -i / 3 } }));
    const steps = jsonSteps({ data, averages: { a: 1 } });
    let yields = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) yields++;
    expect(yields).toBeGreaterThan(1);
    expect(r.value).toBe(JSON.stringify({ data, averages: { a: 1 } }));
    expect([...jsonSteps({ data: [1, 2], x: 'y' })]).toEqual([]);
  });
});
