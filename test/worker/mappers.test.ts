/**
 * The trained default mapper bundles served end to end: the real default model and the bundles
 * built by the ensure step (build/generated via FIXTURES) put into R2, then read by the catalog
 * and the scoring endpoints in workerd.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseMapperBundle, type MapperBundle } from '../../core/mapper-bundle';
import type { MapperBundleInfo } from '../../core/types';
import { invalidateCatalog } from '../../worker/catalog/store';
import { call, expectProblem, makeModel, uploadEnglish, uploadModel, WS } from './support/api';

const MODEL = 'en-glove-6b-100d';
// The default bundles that were built here: pattern's lexicon is a Debian package (without
// apt-get it is not built, and its checks are skipped with one line).
const KEYS = ['afinn', 'pattern', 'sentiment'];
const WS_PATH = `/api/v1/workspaces/${WS}`;

async function fixture(rel: string): Promise<ArrayBuffer> {
  const res = await env.FIXTURES.fetch(`http://f/${rel}`);
  if (res.status !== 200) throw new Error(`build/generated/${rel} is missing (the ensure step builds it)`);
  return res.arrayBuffer();
}

const bundles = new Map<string, MapperBundle>();
const bins = new Map<string, ArrayBuffer>();
const infos = new Map<string, MapperBundleInfo>();

// Every direct change of a catalog sidecar (mappers/*/*.json, models/*.json) ends with
// invalidateCatalog, as the build scripts bump the catalog generation (worker/catalog/store.ts).
async function putBundle(modelId: string, key: string): Promise<void> {
  await env.ARTIFACTS.put(`mappers/${modelId}/${key}.bin`, bins.get(key)!);
  await env.ARTIFACTS.put(`mappers/${modelId}/${key}.json`, JSON.stringify(infos.get(key)));
  await invalidateCatalog(env);
}

beforeAll(async () => {
  if ((await env.FIXTURES.fetch(`http://f/mappers/${MODEL}/pattern.bin`)).status !== 200) {
    console.warn(
      '[tests] skipped the pattern bundle in mappers.test.ts: needs pattern-mapper (Debian data, not built on this machine; see build/debian.ts)',
    );
    KEYS.splice(KEYS.indexOf('pattern'), 1);
  }
  await env.ARTIFACTS.put(`models/${MODEL}.emb`, await fixture(`models/${MODEL}.emb`));
  const manifestText = new TextDecoder().decode(await fixture(`models/${MODEL}.json`));
  await env.ARTIFACTS.put(`models/${MODEL}.json`, manifestText);
  await invalidateCatalog(env);
  const manifest = JSON.parse(manifestText);
  for (const key of KEYS) {
    const bin = await fixture(`mappers/${MODEL}/${key}.bin`);
    const info = JSON.parse(
      new TextDecoder().decode(await fixture(`mappers/${MODEL}/${key}.json`)),
    ) as MapperBundleInfo;
    bins.set(key, bin);
    infos.set(key, info);
    bundles.set(
      key,
      parseMapperBundle(bin, { id: MODEL, vocabularySize: manifest.vocabularySize, checksum: manifest.checksum }),
    );
    await putBundle(MODEL, key);
  }
  await uploadEnglish();
});

const ids = (): string[] => KEYS.flatMap((k) => infos.get(k)!.variables.map((v) => `${k}_${v}`));

describe('trained mapper bundles in the catalog', () => {
  it('_embedded.mappers of the model lists exactly the bundles present in R2', async () => {
    const expected = (keys: string[]) =>
      keys.map((k) => {
        const i = infos.get(k)!;
        return { key: i.key, variables: i.variables, translationKey: i.translationKey, label: i.label };
      });
    const r = await call('GET', `/api/v1/embedding-models/${MODEL}`);
    expect(r.status).toBe(200);
    expect(r.body._embedded.mappers).toEqual(expected(KEYS));
    const removed = KEYS[1]!;
    await env.ARTIFACTS.delete([`mappers/${MODEL}/${removed}.bin`, `mappers/${MODEL}/${removed}.json`]);
    await invalidateCatalog(env);
    try {
      const fewer = await call('GET', `/api/v1/embedding-models/${MODEL}`);
      expect(fewer.body._embedded.mappers).toEqual(expected(KEYS.filter((k) => k !== removed)));
    } finally {
      await putBundle(MODEL, removed);
    }
  });

  it('GET /api/v1/mappers has one entry per shipped variable; other locales filter them out, multilingual ones stay', async () => {
    const en = await call('GET', '/api/v1/mappers?language=en&country=US&size=100');
    expect(en.status).toBe(200);
    for (const id of ids()) {
      const entry = en.body.data.find((e: any) => e.key === id);
      const info = infos.get(id.slice(0, id.lastIndexOf('_')))!;
      expect(entry, id).toBeDefined();
      expect(entry.variables).toEqual(info.variables);
      expect(entry).toMatchObject({ language: 'en', country: 'US', multilingual: false });
    }
    // A multilingual bundle (re-labelled copy for a synthetic model) is listed under any filter.
    const syn = makeModel('mapper-multi-model', { seed: 31, language: 'xx', country: 'QM' });
    await uploadModel(syn);
    await env.ARTIFACTS.put(
      `mappers/${syn.id}/multimood.json`,
      JSON.stringify({
        ...infos.get('sentiment')!,
        key: 'multimood',
        modelId: syn.id,
        multilingual: true,
        language: null,
        country: null,
      }),
    );
    await invalidateCatalog(env);
    const other = await call('GET', '/api/v1/mappers?language=xx&country=QM&size=100');
    const keys = other.body.data.map((e: any) => e.key);
    expect(keys).toContain('multimood_valence');
    for (const id of ids()) expect(keys).not.toContain(id);
    await env.ARTIFACTS.delete(`mappers/${syn.id}/multimood.json`);
    await invalidateCatalog(env);
  });
});

describe('trained mapper bundles in scoring', () => {
  it('word-scores returns the stored value of each word and their average', async () => {
    const words = ['wonderful', 'table', 'horrible', 'subjective'];
    const mapperKeys = ids();
    const r = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['good'],
      whitelistWords: words,
      embeddingModelId: MODEL,
      mapperKeys,
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data.map((d: any) => d.word).sort()).toEqual([...words].sort());
    for (const id of mapperKeys) {
      const key = id.slice(0, id.lastIndexOf('_'));
      const variable = id.slice(id.lastIndexOf('_') + 1);
      let sum = 0;
      for (const d of r.body.data) {
        const stored = bundles.get(key)!.value(variable, d.modelRank - 1);
        expect(Math.abs(d.mapperScores[id] - stored)).toBeLessThan(1e-6);
        sum += stored;
      }
      expect(Math.abs(r.body.averages.mapperScores[id] - sum / r.body.data.length)).toBeLessThan(1e-6);
    }
    const byWord = Object.fromEntries(r.body.data.map((d: any) => [d.word, d.mapperScores.sentiment_valence]));
    expect(byWord.wonderful).toBeGreaterThan(byWord.table);
    expect(byWord.table).toBeGreaterThan(byWord.horrible);
  });

  it('text-scores: the mean over the tokens, and goalConfig.mappers weights it', async () => {
    const words = await call('POST', `${WS_PATH}/word-scores`, {
      seedWords: ['good'],
      whitelistWords: ['wonderful', 'horrible'],
      embeddingModelId: MODEL,
    });
    const rows = words.body.data.map((d: any) => d.modelRank - 1);
    const sentiment = bundles.get('sentiment')!;
    const expected = (sentiment.value('valence', rows[0]) + sentiment.value('valence', rows[1])) / 2;
    const r = await call('POST', `${WS_PATH}/text-scores`, {
      texts: ['wonderful horrible'],
      embeddingModelId: MODEL,
      mapperKeys: ['sentiment_valence'],
      goalConfig: { mappers: [{ id: 'sentiment_valence', weight: -3 }] },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    const t = r.body.data[0];
    expect(Math.abs(t.mapperScores.sentiment_valence - expected)).toBeLessThan(1e-6);
    // Only factor: goalScore = w * s / |w|.
    expect(Math.abs(t.goalScore + expected)).toBeLessThan(1e-6);
    expect(t.goalScoreFactors).toEqual([expect.objectContaining({ field: 'sentiment_valence', type: 'mapper' })]);
  });

  it('unknown mapper keys: 422 MAPPER_NOT_FOUND', async () => {
    const base = { seedWords: ['good'], whitelistWords: ['nice'], embeddingModelId: MODEL };
    for (const key of ['sentiment_arousal', 'nosuch_valence', 'valence', 'pattern_intensity']) {
      const r = await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: [key] });
      expectProblem(r, 422, 'MAPPER_NOT_FOUND');
    }
    const t = await call('POST', `${WS_PATH}/text-scores`, {
      texts: ['nice'],
      embeddingModelId: MODEL,
      mapperKeys: ['sentiment_nope'],
    });
    expectProblem(t, 422, 'MAPPER_NOT_FOUND');
  });

  it('a bundle trained for another model is refused', async () => {
    const syn = makeModel('mapper-other-model', { seed: 32 });
    await uploadModel(syn);
    const base = { seedWords: ['good'], whitelistWords: ['bad'], embeddingModelId: syn.id };
    // Only the default model has the bundle: 422 with the model it belongs to.
    const r = await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: ['sentiment_valence'] });
    expectProblem(r, 422, 'MAPPER_MODEL_MISMATCH');
    expect(r.body.detail).toContain(MODEL);
    // The default model's bundle file copied under the other model is never applied to it.
    await putBundle(syn.id, 'sentiment');
    const copied = await call('POST', `${WS_PATH}/word-scores`, { ...base, mapperKeys: ['sentiment_valence'] });
    expectProblem(copied, 422, 'MAPPER_MODEL_MISMATCH');
    expect(copied.body.detail).toContain(`trained for model "${MODEL}"`);
    await env.ARTIFACTS.delete([`mappers/${syn.id}/sentiment.bin`, `mappers/${syn.id}/sentiment.json`]);
    await invalidateCatalog(env);
  });
});
