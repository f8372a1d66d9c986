/**
 * Placement (core/placement.ts, build/placement.ts; issue 32): the shipped models packed into
 * hosts within the budget, each placed once; a model imported with the importer is placed by
 * configuration (the placement written from the models directory), no code change; a model that
 * fits no isolate is refused with the reason.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { placementBytes } from '../../core/footprint';
import { CACHE_RESERVE_BYTES, planPlacement, PlacementError, type PlacementModel } from '../../core/placement';
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

  it('refuses a model no isolate can hold (1.5M words x 300 dims), naming the budget', () => {
    expect(() => planPlacement([model('huge', 1_500_000, 300)], new Map(), 100_000_000)).toThrow(PlacementError);
    expect(() => planPlacement([model('huge', 1_500_000, 300)], new Map(), 100_000_000)).toThrow(
      /100000000-byte budget/,
    );
  });
});

describe('the build placement', () => {
  it('places the shipped models on hosts within the default budget', () => {
    const models = modelsIn(path.join(GENERATED, 'models'));
    expect(models.map((m) => m.id)).toContain('en-glove-6b-100d');
    const p = planPlacement(models, languageSizesIn(path.join(GENERATED, 'lang')), 100_000_000);
    for (const h of p.hosts) expect(h.bytes).toBeLessThanOrEqual(100_000_000);
    expect(Object.keys(p.models).sort()).toEqual(models.map((m) => m.id).sort());
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
