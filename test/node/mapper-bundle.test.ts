import { describe, expect, it } from 'vitest';
import {
  MAPPER_FORMAT_VERSION,
  MapperBundleError,
  mapperBundleHead,
  mapperVariableId,
  parseMapperBundle,
  writeMapperBundle,
  type LinearWeights,
} from '../../core/mapper-bundle';
import type { MapperBundleInfo } from '../../core/types';
import { rng } from '../../build/mapper/stats';

function info(overrides: Partial<MapperBundleInfo> = {}): MapperBundleInfo {
  return {
    key: 'demo',
    variables: ['valence', 'arousal'],
    translationKey: 'mapper.demo',
    label: 'Demo',
    language: 'en',
    country: 'US',
    multilingual: false,
    modelId: 'model-a',
    scales: { valence: { min: -1, max: 1, description: 'v' }, arousal: { min: 0, max: 9, description: 'a' } },
    lexicon: { name: 'synthetic', version: '1', license: 'CC0' },
    trainingWords: { valence: 10, arousal: 10 },
    metrics: { valence: { pearsonR: 0.8, spearmanRho: 0.7 }, arousal: { pearsonR: 0.6, spearmanRho: 0.5 } },
    method: 'ensemble',
    modelChecksum: 'murmur3:00000001',
    ...overrides,
  };
}

function fixture(n = 5003, dims = 7) {
  const r = rng(7);
  const valence = new Float32Array(n).map(() => (r() < 0.1 ? NaN : r() * 2 - 1));
  const arousal = new Float32Array(n).map(() => r() * 9);
  const linear: Record<string, LinearWeights> = {
    valence: { weights: new Float32Array(dims).map(() => r() - 0.5), bias: 0.25 },
    arousal: { weights: new Float32Array(dims).map(() => r() * 3), bias: -1.5 },
  };
  const bytes = writeMapperBundle(info(), { valence, arousal }, { linear });
  return { n, dims, valence, arousal, linear, bytes };
}

describe('mapper bundle format', () => {
  it('round-trips info, values (within the documented precision), NaN and linear weights', () => {
    const f = fixture();
    // Parse from an ArrayBuffer copy, as R2 hands it over.
    const b = parseMapperBundle(f.bytes.slice().buffer, {
      id: 'model-a',
      vocabularySize: f.n,
      checksum: 'murmur3:00000001',
    });
    expect(b.info).toEqual(info());
    expect(b.vocabularySize).toBe(f.n);
    expect(b.variableIds).toEqual([mapperVariableId('demo', 'valence'), mapperVariableId('demo', 'arousal')]);
    expect(b.variableIds).toEqual(['demo_valence', 'demo_arousal']);
    for (const v of ['valence', 'arousal'] as const) {
      const src = f[v];
      let min = Infinity;
      let max = -Infinity;
      for (const x of src) if (!Number.isNaN(x)) [min, max] = [Math.min(min, x), Math.max(max, x)];
      // Documented: error <= step / 2, step = (max - min) / 65534.
      const bound = (max - min) / 65534 / 2;
      expect(b.precision(v)).toBeCloseTo(bound, 12);
      const all = b.values(v);
      for (let r = 0; r < f.n; r++) {
        if (Number.isNaN(src[r])) {
          expect(b.value(v, r)).toBeNaN();
          expect(all[r]).toBeNaN();
        } else {
          expect(Math.abs(b.value(v, r) - src[r])).toBeLessThanOrEqual(bound * 1.0001 + 1e-7);
          expect(Math.abs(all[r] - b.value(v, r))).toBeLessThan(1e-6);
        }
      }
      const lw = b.linear(v)!;
      expect(Array.from(lw.weights)).toEqual(Array.from(f.linear[v].weights));
      expect(lw.bias).toBeCloseTo(f.linear[v].bias, 6);
      const x = Array.from({ length: f.dims }, (_, d) => Math.sin(d + 1));
      let ref = f.linear[v].bias;
      for (let d = 0; d < f.dims; d++) ref += f.linear[v].weights[d] * x[d];
      expect(b.applyLinear(v, x)!).toBeCloseTo(ref, 5);
    }
    expect(b.value('valence', -1)).toBeNaN();
    expect(b.value('valence', f.n)).toBeNaN();
    expect(() => b.value('nope', 0)).toThrow(/no variable "nope"/);
    expect(() => b.applyLinear('valence', [1, 2])).toThrow(/dims/);
  });

  it('the text mean is the float64 mean of the word values over the rows that have one', () => {
    const f = fixture();
    const b = parseMapperBundle(f.bytes);
    const r = rng(3);
    const rows = Array.from({ length: 40 }, () => Math.floor(r() * f.n));
    for (const v of ['valence', 'arousal']) {
      let sum = 0;
      let n = 0;
      for (const row of rows) {
        const x = b.value(v, row);
        if (!Number.isNaN(x)) {
          sum += x;
          n++;
        }
      }
      expect(b.mean(v, rows)).toBeCloseTo(sum / n, 12);
    }
    expect(b.mean('valence', [])).toBeNaN();
  });

  it('without linear weights linear() and applyLinear() return null', () => {
    const bytes = writeMapperBundle(info({ variables: ['valence'] }), { valence: new Float32Array([0.5, -0.5, NaN]) });
    const b = parseMapperBundle(bytes);
    expect(b.dims).toBe(0);
    expect(b.linear('valence')).toBeNull();
    expect(b.applyLinear('valence', [])).toBeNull();
    expect(b.value('valence', 0)).toBeCloseTo(0.5, 4);
    expect(b.value('valence', 1)).toBeCloseTo(-0.5, 4);
    expect(b.value('valence', 2)).toBeNaN();
  });

  it('stores the lexicon rows (format 2): isLexiconRow, checked as ascending vocabulary rows', () => {
    const values = { valence: new Float32Array(50).fill(0.1) };
    const b = parseMapperBundle(
      writeMapperBundle(info({ variables: ['valence'] }), values, { lexiconRows: [40, 3, 17] }),
    );
    expect(b.lexiconSize).toBe(3);
    expect([3, 17, 40].every((r) => b.isLexiconRow(r))).toBe(true);
    expect([0, 4, 39, 49, 50, -1].some((r) => b.isLexiconRow(r))).toBe(false);
    expect(parseMapperBundle(writeMapperBundle(info({ variables: ['valence'] }), values)).lexiconSize).toBe(0);
    expect(() => writeMapperBundle(info({ variables: ['valence'] }), values, { lexiconRows: [3, 3] })).toThrow(
      RangeError,
    );
    expect(() => writeMapperBundle(info({ variables: ['valence'] }), values, { lexiconRows: [50] })).toThrow(
      RangeError,
    );
  });

  it("a bundle's head keeps the first rows' values exactly (same quantization), the lexicon rows below, and applies only to a model's head", () => {
    const r = rng(11);
    const n = 5003;
    const valence = new Float32Array(n).map(() => (r() < 0.1 ? NaN : r() * 2 - 1));
    const arousal = new Float32Array(n).map(() => r() * 9);
    // The head's rows hold a narrower range than the whole: re-quantizing them would change the values.
    valence[4000] = -1;
    arousal[4500] = 9;
    const linear = {
      valence: { weights: new Float32Array([0.5, -0.25]), bias: 0.1 },
      arousal: { weights: new Float32Array([1, 2]), bias: -1 },
    };
    const bytes = writeMapperBundle(info(), { valence, arousal }, { linear, lexiconRows: [4999, 12, 1000, 1001, 7] });
    const full = parseMapperBundle(bytes);
    const headBytes = mapperBundleHead(bytes, 1001);
    expect(headBytes.byteLength).toBeLessThan(bytes.byteLength / 4);
    const model = { id: 'model-a', vocabularySize: n, checksum: 'murmur3:00000001' };
    const head = parseMapperBundle(headBytes, { ...model, rowsPresent: 1001 });
    expect(head.info).toEqual(full.info);
    expect(head.vocabularySize).toBe(1001);
    for (const v of ['valence', 'arousal'])
      for (let row = 0; row < 1001; row++) expect(Object.is(head.value(v, row), full.value(v, row))).toBe(true);
    expect(head.value('valence', 1001)).toBeNaN();
    expect(head.applyLinear('arousal', [1, 1])).toBe(full.applyLinear('arousal', [1, 1]));
    expect([7, 12, 1000].every((row) => head.isLexiconRow(row))).toBe(true);
    expect(head.lexiconSize).toBe(3);
    // A complete model of n rows refuses it (its values stop at row 1,000).
    expect(() => parseMapperBundle(headBytes, model)).toThrow(MapperBundleError);
    expect(() => parseMapperBundle(headBytes, { ...model, rowsPresent: 2000 })).toThrow(/covers 1001 rows/);
    // More rows than the bundle has: the whole bundle.
    expect(mapperBundleHead(bytes, n + 10)).toEqual(bytes);
  });

  it('a constant or all-NaN variable is stored exactly', () => {
    const bytes = writeMapperBundle(info({ variables: ['a', 'b'] }), {
      a: new Float32Array(5).fill(0.3),
      b: new Float32Array(5).fill(NaN),
    });
    const b = parseMapperBundle(bytes);
    for (let r = 0; r < 5; r++) {
      expect(b.value('a', r)).toBeCloseTo(0.3, 6);
      expect(b.value('b', r)).toBeNaN();
    }
  });

  const code = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      expect(err).toBeInstanceOf(MapperBundleError);
      return (err as MapperBundleError).code;
    }
    return 'no error';
  };

  it('rejects truncated, corrupt and wrong-version bundles with clear errors', () => {
    const { bytes } = fixture(300, 4);
    expect(code(() => parseMapperBundle(bytes.slice(0, 10)))).toBe('TRUNCATED');
    expect(code(() => parseMapperBundle(bytes.slice(0, bytes.length - 8)))).toBe('TRUNCATED');
    const extra = new Uint8Array(bytes.length + 8);
    extra.set(bytes);
    expect(code(() => parseMapperBundle(extra))).toBe('CORRUPT');
    const magic = bytes.slice();
    magic[0] = 0x58;
    expect(code(() => parseMapperBundle(magic))).toBe('CORRUPT');
    // A flipped bit anywhere after the header (info JSON, table, weights, values) fails the checksum.
    for (const at of [40, 200, bytes.length - 3]) {
      const bad = bytes.slice();
      bad[at] ^= 0x10;
      expect(code(() => parseMapperBundle(bad))).toBe('CORRUPT');
    }
    const version = bytes.slice();
    new DataView(version.buffer).setUint32(4, MAPPER_FORMAT_VERSION + 1, true);
    expect(code(() => parseMapperBundle(version))).toBe('UNSUPPORTED_VERSION');
    expect(() => parseMapperBundle(version)).toThrow(new RegExp(`format version ${MAPPER_FORMAT_VERSION + 1}`));
  });

  it('refuses a bundle trained for another model', () => {
    const { bytes, n } = fixture(300, 4);
    expect(code(() => parseMapperBundle(bytes, { id: 'model-b', vocabularySize: n }))).toBe('WRONG_MODEL');
    expect(() => parseMapperBundle(bytes, { id: 'model-b', vocabularySize: n })).toThrow(
      /trained for model "model-a", not "model-b"/,
    );
    expect(code(() => parseMapperBundle(bytes, { id: 'model-a', vocabularySize: n + 1 }))).toBe('WRONG_MODEL');
    expect(
      code(() => parseMapperBundle(bytes, { id: 'model-a', vocabularySize: n, checksum: 'murmur3:ffffffff' })),
    ).toBe('WRONG_MODEL');
    expect(code(() => parseMapperBundle(bytes, { id: 'model-a', vocabularySize: n }))).toBe('no error');
  });

  it('validates its input', () => {
    expect(() => writeMapperBundle(info({ variables: ['a'] }), { a: new Float32Array([Infinity]) })).toThrow(/finite/);
    expect(() =>
      writeMapperBundle(info({ variables: ['a', 'b'] }), { a: new Float32Array(3), b: new Float32Array(4) }),
    ).toThrow(/rows/);
    expect(() => writeMapperBundle(info({ variables: ['a'] }), {})).toThrow(/no values/);
    expect(() => writeMapperBundle(info({ variables: ['Bad_name'] }), { Bad_name: new Float32Array(1) })).toThrow(
      /must match/,
    );
    expect(() =>
      writeMapperBundle(
        info({ variables: ['a', 'b'] }),
        { a: new Float32Array(2), b: new Float32Array(2) },
        { linear: { a: { weights: new Float32Array(3), bias: 0 } } },
      ),
    ).toThrow(/linear weights/);
  });
});
