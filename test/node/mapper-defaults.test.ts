/**
 * The default mapper bundles built by the ensure step (global setup) for the default model.
 */
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseMapperBundle, type MapperBundle } from '../../core/mapper-bundle';
import type { MapperBundleInfo, ModelManifest } from '../../core/types';
import { DEFAULT_MODEL_FILE, DEFAULT_MODEL_MANIFEST_FILE } from '../../build/default-model';
import { KERNELS_WASM } from '../../build/build-wasm';
import { DEFAULT_BUNDLES, MAPPERS_DIR } from '../../build/mapper/defaults';
import { loadModelForTraining, MIN_PEARSON_R, trainingSetFrom, type LoadedModel } from '../../build/mapper/bundle';
import { loadLexicon } from '../../build/mapper/lexicons';
import { MapperTrainer, rowVector } from '../../build/mapper/train-core';
import { MEMBERSHIP_FEATURES, membershipProbability, shrinkFactor } from '../../build/mapper/anchoring';
import { VOCAB_FLAG } from '../../core/vocab-quality';
import { needs } from '../support/optional-data';

const manifest = JSON.parse(fs.readFileSync(DEFAULT_MODEL_MANIFEST_FILE, 'utf8')) as ModelManifest;
const dir = path.join(MAPPERS_DIR, manifest.id);
const expected = { id: manifest.id, vocabularySize: manifest.vocabularySize, checksum: manifest.checksum };

function load(key: string): { info: MapperBundleInfo; bundle: MapperBundle } {
  const info = JSON.parse(fs.readFileSync(path.join(dir, `${key}.json`), 'utf8')) as MapperBundleInfo;
  const bundle = parseMapperBundle(new Uint8Array(fs.readFileSync(path.join(dir, `${key}.bin`))), expected);
  return { info, bundle };
}

describe('default mapper bundles of the default model', () => {
  let model: LoadedModel;
  beforeAll(() => {
    model = loadModelForTraining(DEFAULT_MODEL_FILE, KERNELS_WASM);
  });

  it('exist for every default lexicon, belong to the model and ship only variables with held-out r >= 0.5', () => {
    // The pattern lexicon is a Debian package: without apt-get its bundle is not built.
    const built = DEFAULT_BUNDLES.filter(
      ({ key }) => key !== 'pattern' || needs('pattern mapper bundle checks', 'pattern-mapper'),
    );
    expect(built.length).toBeGreaterThanOrEqual(2);
    for (const { key } of built) {
      const { info, bundle } = load(key);
      expect(bundle.info).toEqual(info); // the catalog sidecar is the bundle's own info
      expect(info.key).toBe(key);
      expect(info.modelId).toBe(manifest.id);
      expect(info.multilingual).toBe(false);
      expect(info.language).toBe(manifest.language);
      expect(info.variables.length).toBeGreaterThan(0);
      for (const v of info.variables) {
        expect(info.metrics[v].pearsonR).toBeGreaterThanOrEqual(MIN_PEARSON_R);
        expect(info.trainingWords[v]).toBeGreaterThan(500);
        expect(info.scales[v].max).toBeGreaterThan(info.scales[v].min);
        expect(info.lexicon.license.length).toBeGreaterThan(0);
        expect(bundle.linear(v)!.weights.length).toBe(manifest.dimensions);
        // Every vocabulary word gets a value on the documented scale.
        const values = bundle.values(v);
        for (let r = 0; r < values.length; r += 97) {
          expect(values[r]).toBeGreaterThanOrEqual(info.scales[v].min - 1e-4);
          expect(values[r]).toBeLessThanOrEqual(info.scales[v].max + 1e-4);
        }
      }
      for (const r of Object.values(info.rejected ?? {})) expect(r).toBeLessThan(MIN_PEARSON_R);
    }
  });

  it('lexicon anchoring of every shipped variable: shrinkage chosen by CV, held-out lexicon r kept, lexicon rows stored, neutral nouns near neutral', () => {
    const keys = ['sentiment', 'afinn'];
    if (needs('pattern anchoring checks', 'pattern-mapper')) keys.push('pattern');
    const misses: string[] = [];
    for (const key of keys) {
      const { info, bundle } = load(key);
      for (const v of info.variables) {
        const a = info.anchoring![v];
        expect(a.membership.weights).toHaveLength(manifest.dimensions);
        // The membership model sees the part-of-speech and dictionary flags (never the polarity flags).
        expect(a.membership.features).toEqual(MEMBERSHIP_FEATURES.map(([name]) => name));
        expect(a.membership.featureWeights).toHaveLength(MEMBERSHIP_FEATURES.length);
        expect(a.membership.gamma).toBeGreaterThan(0);
        expect(a.crossValidation.mse).toBeLessThan(a.crossValidation.mseUnshrunk);
        expect(a.heldOutLexicon.pearsonR).toBeCloseTo(info.metrics[v].pearsonR, 4);
        // The rule: shrinkage must not lower the r of lexicon words the model did not train on.
        expect(a.heldOutLexicon.pearsonRShrunk).toBeGreaterThanOrEqual(a.heldOutLexicon.pearsonR);
        // Both neutral-noun lists: nouns only (the check) and nouns whatever their other readings.
        for (const [list, check] of [
          ['nouns', a.neutralCheck],
          ['all readings', a.neutralCheckAllReadings!],
        ] as const) {
          expect(check.nouns).toBeGreaterThanOrEqual(200);
          expect(check.pass).toBe(check.shareOfHalfRange <= 0.15);
          if (!check.pass) misses.push(`${key}/${v} ${list}`);
        }
        expect(bundle.lexiconSize).toBe(info.trainingWords[v]);
      }
    }
    // The one known miss (docs/mappers.md, #36): on the distilled model the AFINN valence of 300
    // neutral nouns averages 16.2% of the half-range. The shrinkage that would bring it under 15%
    // (gamma 0.1: 13.0%) lowers the held-out lexicon r from 0.8942 to 0.8935, which the anchoring
    // rule forbids; the VADER-anchored sentiment mapper passes (9.5%).
    expect(misses).toEqual(['afinn/valence nouns', 'afinn/valence all readings']);
  });

  it('pattern membership: the adjective flag raises pi (pattern lists adjectives), proper nouns lower it', () => {
    if (!needs('pattern membership checks', 'pattern-mapper')) return;
    const m = load('pattern').info.anchoring!.subjectivity.membership;
    const x = rowVector(model.space, model.rowOf('table'));
    const base = VOCAB_FLAG.DICTIONARY | VOCAB_FLAG.NOUN;
    expect(membershipProbability(m, x, base | VOCAB_FLAG.ADJ)).toBeGreaterThan(membershipProbability(m, x, base));
    expect(membershipProbability(m, x, base | VOCAB_FLAG.PROPER)).toBeLessThan(membershipProbability(m, x, base));
  });

  it('valence trained on VADER reaches held-out Pearson r >= 0.76', () => {
    const { info } = load('sentiment');
    expect(info.variables).toContain('valence');
    expect(info.metrics.valence.pearsonR).toBeGreaterThanOrEqual(0.76);
    expect(info.crossValidation!.valence.ensemble.pearsonR).toBe(info.metrics.valence.pearsonR);
  });

  it('stored values are the trained method recomputed on the model (sampled rows), and order obvious words', async () => {
    const { info, bundle } = load('sentiment');
    const lexicon = await loadLexicon('vader');
    const set = trainingSetFrom(lexicon, model.rowOf);
    expect(set.words).toBe(info.trainingWords.valence);
    const final = new MapperTrainer(model.space, set).fitFinal(info.hyperParameters);
    const sample = Int32Array.from({ length: 400 }, (_, i) => Math.floor((i * manifest.vocabularySize) / 400));
    const values = final.materialize(info.method as 'ensemble', sample).valence;
    // Lexicon-anchored (build/mapper/anchoring.ts): lexicon words keep their rating, the others are
    // shrunk by pi^gamma, pi from the row's vector and its vocabulary flags.
    const m = info.anchoring!.valence.membership;
    const rating = new Map(Array.from(set.rows, (r, i) => [r, set.targets.valence[i]]));
    for (const row of sample) {
      const expected =
        rating.get(row) ??
        shrinkFactor(membershipProbability(m, rowVector(model.space, row), model.flags(row)), m.gamma) * values[row];
      expect(bundle.isLexiconRow(row)).toBe(rating.has(row));
      expect(Math.abs(bundle.value('valence', row) - expected)).toBeLessThanOrEqual(bundle.precision('valence') + 1e-5);
    }
    expect(bundle.value('valence', model.rowOf('good'))).toBeCloseTo(1.9 / 4, 4);
    const v = (w: string): number => bundle.value('valence', model.rowOf(w));
    expect(v('wonderful')).toBeGreaterThan(v('table'));
    expect(v('table')).toBeGreaterThan(v('horrible'));
  });
});
