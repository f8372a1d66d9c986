/**
 * The model each language defaults to (core/model-defaults.ts, what the playground's language
 * switch picks) is the one the build makes the default: the default English model and the aligned
 * models projected onto it (build/aligned-specs.ts ALIGNED), never an earlier id.
 */
import { describe, expect, it } from 'vitest';
import { defaultModelOf, defaultModels } from '../../core/model-defaults';
import { ALIGNED, ALIGNED_GLOVE, ALIGNED_LANGUAGES } from '../../build/aligned-specs';
import { DEFAULT_MODEL_ID, GLOVE_MODEL_ID } from '../../build/paths';

describe('default model per language', () => {
  it('is the default English model and the aligned models projected onto it', () => {
    expect(defaultModelOf('en')).toBe(DEFAULT_MODEL_ID);
    for (const l of ALIGNED_LANGUAGES) {
      expect(defaultModelOf(l)).toBe(ALIGNED[l].id);
      expect(ALIGNED[l].english.id).toBe(DEFAULT_MODEL_ID);
      expect(ALIGNED_GLOVE[l].english.id).toBe(GLOVE_MODEL_ID);
    }
    expect(defaultModels().map(([l]) => l)).toEqual(['en', ...ALIGNED_LANGUAGES]);
    expect(defaultModelOf('xx')).toBeUndefined();
  });
});
