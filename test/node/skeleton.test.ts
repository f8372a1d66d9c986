import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../core/limits';

describe('node project', () => {
  it('runs', () => {
    expect(LIMITS.textsPerRequest).toBe(100);
  });
});
