/**
 * Placement (core/placement.ts, build/placement.ts; issue 32): the shipped models packed into
 * hosts within the budget, each placed once; a model imported with the importer is placed by
 * configuration (the placement written from the models directory), no code change; a model that
 * fits no isolate is row-sharded into the fewest equal parts that fit, plus its word map placed
 * with its language data; a model whose word map alone fits no isolate is refused with the reason.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ISOLATE_MEMORY_BYTES, placementBytes } from '../../core/footprint';
import {
  placementVar,
  routesFromVar,
  CACHE_RESERVE_BYTES,
  mapBytes,
  mapId,
  partBytes,
  partId,
  planPlacement,
  PlacementError,
  type PlacementModel,
} from '../../core/placement';
import { importModel } from '../../build/import-model';
import { languageSizesIn, modelsIn, writePlacement } from '../../build/placement';
import { GENERATED } from '../../build/wrangler';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'placement-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const model = (id: string, n: number, dims: number, language = 'en'): PlacementModel => ({
  id,
  language,
  vocabularySize: n,
  dimensions: dims,
  artifactBytes: n * (dims + 4) + n * 12,
});

describe('planPlacement', () => {
  it('packs largest first into the first host with room; no host over its budget; each model once', () => {
    const models = [
      model('a', 300_000, 100),
      model('b', 200_000, 100),
      model('c', 30_000, 100),
      model('d', 250_000, 100),
    ];
    const budget = 100_000_000;
    const p = planPlacement(models, new Map([['en', 2_000_000]]), budget);
    for (const h of p.hosts) expect(h.bytes).toBeLessThanOrEqual(budget);
    const placed = p.hosts.flatMap((h) => h.models).sort();
    expect(placed).toEqual(['a', 'b', 'c', 'd']);
    // First-fit decreasing: a (largest) opens host-0; the small c joins a host already open.
    expect(p.models.a).toBe('HOST_0');
    expect(p.hosts.length).toBeLessThan(models.length);
    expect(p.languages.en).toBe(p.models[Object.keys(p.models).sort()[0]!]);
    // A host's bytes are its models' placement and cache room plus their languages' data.
    for (const h of p.hosts) {
      const own = h.models.reduce(
        (s, id) => s + placementBytes(models.find((m) => m.id === id)!) + CACHE_RESERVE_BYTES,
        0,
      );
      expect(h.bytes).toBe(own + 2_000_000);
    }
  });

  it('keeps a model apart when its artifact, read whole while it loads, would take its host past the isolate', () => {
    // Two models that fit the budget together, but not together with the larger one's artifact.
    const big = { ...model('big', 300_000, 100), artifactBytes: 40_000_000 };
    const small = model('small', 250_000, 100);
    const budget = 100_000_000;
    const steady = placementBytes(big) + placementBytes(small) + 2 * CACHE_RESERVE_BYTES;
    expect(steady).toBeLessThanOrEqual(budget);
    expect(steady + big.artifactBytes).toBeGreaterThan(ISOLATE_MEMORY_BYTES);
    const p = planPlacement([big, small], new Map(), budget);
    expect(p.models.big).not.toBe(p.models.small);
  });
});

describe('row sharding (core/sharded-index.ts)', () => {
  const BUDGET = 100_000_000;
  const huge = model('huge', 1_500_000, 300);

  /** Bytes of a part of `rows` rows, computed here: a model of those rows, its artifact read whole beside its matrix. */
  const partLoad = (m: PlacementModel, rows: number): number => {
    const artifactBytes = Math.ceil((m.artifactBytes / m.vocabularySize) * rows);
    return placementBytes({ ...m, vocabularySize: rows, artifactBytes }) + artifactBytes;
  };

  it('shards 1.5M words x 300 dims under 100 MB into the fewest equal parts that fit, contiguous over [0, n), each host within budget', () => {
    const small = model('small', 30_000, 100);
    const p = planPlacement([huge, small], new Map([['en', 2_000_000]]), BUDGET);
    for (const h of p.hosts) expect(h.bytes, h.name).toBeLessThanOrEqual(BUDGET);
    expect(Object.keys(p.sharded)).toEqual(['huge']);
    const layout = p.sharded.huge!;
    const n = huge.vocabularySize;
    const count = layout.parts.length;
    expect(count).toBeGreaterThan(1);
    // Contiguous equal ranges (the last may be shorter) covering every row once.
    const per = Math.ceil(n / count);
    expect(layout.parts[0]!.start).toBe(0);
    for (const [i, part] of layout.parts.entries()) {
      if (i > 0) expect(part.start).toBe(layout.parts[i - 1]!.end);
      expect(part.end - part.start).toBe(i < count - 1 ? per : n - per * (count - 1));
      expect(part.end).toBeGreaterThan(part.start);
      expect(part.id).toBe(partId('huge', part.start, part.end));
    }
    expect(layout.parts.at(-1)!.end).toBe(n);
    // The fewest that fit: a part of this size fits the budget, one of one part fewer would not.
    expect(partLoad(huge, per)).toBeLessThanOrEqual(BUDGET);
    expect(partLoad(huge, Math.ceil(n / (count - 1)))).toBeGreaterThan(BUDGET);
    expect(partBytes(huge, per)).toBe(partLoad(huge, per));
    // Each part and the word map placed once, as shards; the model itself is no host's model.
    const shards = p.hosts.flatMap((h) => h.shards).sort();
    expect(shards).toEqual([mapId('huge'), ...layout.parts.map((x) => x.id)].sort());
    expect(p.hosts.flatMap((h) => h.models).sort()).toEqual(['small']);
    for (const part of layout.parts) {
      const host = p.hosts.find((h) => h.binding === part.binding)!;
      expect(host.shards).toContain(part.id);
    }
    // A host of parts only holds their bytes, without language data.
    for (const h of p.hosts.filter((x) => x.models.length === 0 && !x.shards.includes(mapId('huge')))) {
      expect(h.languages).toEqual([]);
      const rows = h.shards.map((id) => layout.parts.find((x) => x.id === id)!);
      expect(h.bytes).toBe(rows.reduce((sum, x) => sum + partLoad(huge, x.end - x.start), 0));
    }
    // The word map's host answers for the model and its language.
    expect(layout.map.id).toBe(mapId('huge'));
    expect(p.models.huge).toBe(layout.map.binding);
    expect(p.hosts.find((h) => h.binding === layout.map.binding)!.shards).toContain(mapId('huge'));
    expect(p.languages.en).toBe(layout.map.binding);
    // The model that fits is placed whole.
    expect(p.hosts.find((h) => h.binding === p.models.small)!.models).toContain('small');
  });

  it('counts the word map with its language data; refuses the model when they do not fit together', () => {
    const map = mapBytes(huge);
    expect(map).toBeLessThan(BUDGET);
    const language = BUDGET - map;
    const p = planPlacement([huge], new Map([['en', language]]), BUDGET);
    const host = p.hosts.find((h) => h.binding === p.sharded.huge!.map.binding)!;
    expect(host.shards).toEqual([mapId('huge')]);
    expect(host.languages).toEqual(['en']);
    expect(host.bytes).toBe(map + language);
    expect(() => planPlacement([huge], new Map([['en', language + 1]]), BUDGET)).toThrow(PlacementError);
  });

  it('refuses a model whose word map alone exceeds the budget, naming the budget', () => {
    const vast = model('vast', 5_000_000, 300);
    expect(mapBytes(vast)).toBeGreaterThan(BUDGET);
    expect(() => planPlacement([vast], new Map(), BUDGET)).toThrow(PlacementError);
    expect(() => planPlacement([vast], new Map(), BUDGET)).toThrow(/100000000-byte budget/);
  });
});

describe('the PLACEMENT var', () => {
  it('carries the routes in a few hundred bytes and gives back every host, model, language and part', () => {
    const p = planPlacement(
      [model('huge', 1_500_000, 300), model('a', 300_000, 100), model('b', 30_000, 100, 'de')],
      new Map([
        ['en', 2_000_000],
        ['de', 11_000_000],
      ]),
      100_000_000,
    );
    const text = placementVar(p);
    expect(text.length).toBeLessThan(400);
    const r = routesFromVar(text);
    expect(Object.fromEntries(r.models)).toEqual(p.models);
    expect(Object.fromEntries(r.languages)).toEqual(p.languages);
    expect(Object.fromEntries(r.sharded)).toEqual(p.sharded);
    expect(r.hosts).toEqual(
      p.hosts.map((h) => ({ name: h.name, binding: h.binding, models: [...h.models, ...h.shards].sort() })),
    );
  });

  it("carries each aligned model's English companion (GloVe when its manifest names none), and refuses one not placed", () => {
    const aligned = (id: string, language: string, englishModelId?: string): PlacementModel => ({
      ...model(id, 50_000, 100, language),
      features: ['dictionary-projected', 'aligned-en'],
      ...(englishModelId ? { englishModelId } : {}),
    });
    const models = [
      model('en-glove-6b-100d', 300_000, 100),
      model('en-new-100d', 300_000, 100),
      aligned('de-old', 'de'),
      aligned('de-new', 'de', 'en-new-100d'),
    ];
    const p = planPlacement(models, new Map(), 100_000_000);
    expect(p.companions).toEqual({ 'de-new': 'en-new-100d', 'de-old': 'en-glove-6b-100d' });
    const r = routesFromVar(placementVar(p));
    expect(r.companions.get('de-new')).toBe('en-new-100d');
    expect(r.models.get(r.companions.get('de-new')!)).toBe(p.models['en-new-100d']);
    // A var written before companions were placed routes by none.
    const { companions: _c, ...older } = JSON.parse(placementVar(p)) as Record<string, unknown>;
    expect(routesFromVar(JSON.stringify(older)).companions.size).toBe(0);
    expect(() => planPlacement(models.slice(1), new Map(), 100_000_000)).toThrow(
      /de-old: its English companion en-glove-6b-100d is not among the models placed/,
    );
  });

  it('refuses a placement whose routes exceed a Worker var (5 KB)', () => {
    const many = Array.from({ length: 400 }, (_, i) => model(`model-number-${i}`, 10_000, 50));
    expect(() => placementVar(planPlacement(many, new Map(), 100_000_000))).toThrow(/Worker var/);
  });
});

describe('the build placement', () => {
  it('places the shipped models on hosts within the default budget', () => {
    const models = modelsIn(path.join(GENERATED, 'models'));
    expect(models.map((m) => m.id)).toContain('en-glove-6b-100d');
    const p = planPlacement(models, languageSizesIn(path.join(GENERATED, 'lang')), 100_000_000);
    for (const h of p.hosts) {
      expect(h.bytes).toBeLessThanOrEqual(100_000_000);
      // While its largest model loads, the host holds that artifact besides: still within 128 MiB.
      const largest = Math.max(...h.models.map((id) => models.find((m) => m.id === id)!.artifactBytes));
      expect(h.bytes + largest).toBeLessThanOrEqual(ISOLATE_MEMORY_BYTES);
    }
    expect(Object.keys(p.models).sort()).toEqual(models.map((m) => m.id).sort());
    // Every aligned model built here is placed with its companion.
    for (const m of models.filter((x) => x.features?.includes('aligned-en')))
      expect(p.models[p.companions[m.id]!], m.id).toBeDefined();
  });

  it('places a model added with the importer, from the models directory alone', async () => {
    const models = path.join(dir, 'models');
    fs.mkdirSync(models);
    for (const f of fs.readdirSync(path.join(GENERATED, 'models')))
      if (f.startsWith('en-glove-6b-100d.')) fs.copyFileSync(path.join(GENERATED, 'models', f), path.join(models, f));
    const before = writePlacement({ modelsDir: models, out: path.join(dir, 'before.json') });
    expect(Object.keys(before.models)).toEqual(['en-glove-6b-100d']);

    // A small word2vec-style model, imported as `npm run model:import -- ... --no-upload` would.
    const words = Array.from({ length: 2000 }, (_, i) => `w${i}`);
    let seed = 7;
    const lines = words.map(
      (w) =>
        `${w} ${Array.from({ length: 16 }, () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32 - 0.5).toFixed(5)).join(' ')}`,
    );
    const input = path.join(dir, 'tiny.txt');
    fs.writeFileSync(input, `${lines.join('\n')}\n`);
    await importModel({
      input,
      format: 'glove',
      id: 'en-tiny-test-16d',
      language: 'en',
      country: 'US',
      out: path.join(models, 'en-tiny-test-16d.emb'),
      progress: false,
    });
    const after = writePlacement({ modelsDir: models, out: path.join(dir, 'after.json') });
    expect(Object.keys(after.models).sort()).toEqual(['en-glove-6b-100d', 'en-tiny-test-16d']);
    const host = after.hosts.find((h) => h.binding === after.models['en-tiny-test-16d'])!;
    expect(host.models).toContain('en-tiny-test-16d');
    expect(host.bytes).toBeLessThanOrEqual(after.budgetBytes);
    // The file the server reads is what was returned.
    expect(JSON.parse(fs.readFileSync(path.join(dir, 'after.json'), 'utf8'))).toEqual(after);
  });
});
