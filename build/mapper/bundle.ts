/**
 * Trains one mapper bundle from a lexicon on a loaded model: training set, nested CV, final
 * fit, materialization, bundle bytes. Node only (build time).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArtifact } from '../../core/artifact';
import { Kernels } from '../../core/kernels';
import { EmbeddingModel } from '../../core/model';
import { writeMapperBundle, type LinearWeights } from '../../core/mapper-bundle';
import type { MapperBundleInfo, ModelManifest } from '../../core/types';
import { writeAtomic } from '../stamp';
import type { Lexicon } from './lexicons';
import type { TrainingProgress } from './progress';
import {
  ANCHORING_METHOD,
  fitMembership,
  flagFeatures,
  GAMMAS,
  halfRangeOf,
  MEMBERSHIP_FEATURES,
  heldOutR,
  membershipProbability,
  neutralOf,
  round as round5,
  selectGamma,
  sentimentLexiconWords,
  shrinkFactor,
  type Anchoring,
  type Item,
  type NeutralCheck,
} from './anchoring';
import { NEUTRAL_NOUNS_ALL_READINGS_SOURCE, NEUTRAL_NOUNS_SOURCE, neutralNounRows } from './neutral-nouns';
import {
  MapperTrainer,
  rowVector,
  type CrossValidation,
  type Method,
  type TrainOptions,
  type TrainingSet,
  type TrainingSpace,
} from './train-core';

/** Bump when the training pipeline changes in a way that changes the values: default bundles rebuild. */
export const TRAINING_VERSION = '4-anchored-membership-pos';
/** A variable whose held-out Pearson r is below this is not shipped. */
export const MIN_PEARSON_R = 0.5;

export interface LoadedModel {
  manifest: ModelManifest;
  space: TrainingSpace;
  /** Vocabulary lookup (exact entry, then lower-cased). */
  rowOf(word: string): number;
  word(row: number): string;
  /** Vocabulary flags of a row (core/vocab-quality.ts VOCAB_FLAG; 0 when the artifact has none). */
  flags(row: number): number;
}

/** Loads a model artifact file for training: raw int8 rows for the trainer, EmbeddingModel for lookups. */
export function loadModelForTraining(modelFile: string, wasmFile: string): LoadedModel {
  const module = new WebAssembly.Module(fs.readFileSync(wasmFile));
  const parsed = parseArtifact(new Uint8Array(fs.readFileSync(modelFile)));
  const model = EmbeddingModel.fromParsed(parsed, Kernels.fromModule(module));
  return {
    manifest: parsed.manifest,
    space: { size: parsed.size, dims: parsed.dims, rows: parsed.rows, scales: parsed.scales, module },
    rowOf: (w) => model.rowOf(w),
    word: (r) => model.word(r),
    flags: (r) => parsed.flags[r] ?? 0,
  };
}

/**
 * Lexicon words found in the vocabulary (exact entry, then lower-cased), with their ratings
 * per variable; several entries landing on one row are averaged. Only rows rated in every
 * variable are kept.
 */
export function trainingSetFrom(lexicon: Lexicon, rowOf: (w: string) => number): TrainingSet & { words: number } {
  const variables = Object.keys(lexicon.variables);
  const acc = new Map<number, { sums: number[]; counts: number[] }>();
  variables.forEach((v, vi) => {
    for (const [word, rating] of lexicon.variables[v].ratings) {
      const row = rowOf(word);
      if (row < 0) continue;
      let a = acc.get(row);
      if (!a) acc.set(row, (a = { sums: variables.map(() => 0), counts: variables.map(() => 0) }));
      a.sums[vi] += rating;
      a.counts[vi]++;
    }
  });
  const rows = [...acc.entries()].filter(([, a]) => a.counts.every((c) => c > 0)).sort((x, y) => x[0] - y[0]);
  const targets: Record<string, Float64Array> = {};
  const clip: Record<string, [number, number]> = {};
  variables.forEach((v, vi) => {
    targets[v] = Float64Array.from(rows, ([, a]) => a.sums[vi] / a.counts[vi]);
    clip[v] = [lexicon.variables[v].scale.min, lexicon.variables[v].scale.max];
  });
  return { rows: Int32Array.from(rows, ([r]) => r), variables, targets, clip, words: rows.length };
}

export interface TrainedBundle {
  info: MapperBundleInfo;
  bytes: Uint8Array;
  cv: CrossValidation;
  timings: { crossValidationMs: number; fitMs: number; materializeMs: number };
}

export interface TrainBundleOptions extends TrainOptions {
  method?: Method;
  /** Skip the r >= 0.5 rule (tests on synthetic data). */
  keepAll?: boolean;
  /** Lexicon anchoring (default true): lexicon words keep their value, the others are shrunk (anchoring.ts). */
  anchor?: boolean;
  /** Told each phase and how far it got (build/mapper/progress.ts). */
  progress?: TrainingProgress;
}

/** Frequent words the membership model's negatives and the gamma selection come from. */
const ANCHOR_WORDS = 20_000;

/**
 * Replaces the materialized values in place: lexicon rows take their lexicon value, the others
 * n + pi(x)^gamma (v - n) with the membership model and gamma chosen by cross-validation
 * (anchoring.ts). Returns the record per variable.
 */
function anchorValues(
  lexicon: Lexicon,
  set: ReturnType<typeof trainingSetFrom>,
  cv: CrossValidation,
  values: Record<string, Float32Array>,
  model: LoadedModel,
  method: Method,
  log: (m: string) => void,
): Record<string, Anchoring> {
  const listed = sentimentLexiconWords();
  for (const v of Object.values(lexicon.variables)) for (const w of v.ratings.keys()) listed.add(w.toLowerCase());
  const lexRow = new Map<number, number>();
  set.rows.forEach((r, i) => lexRow.set(r, i));
  const checkRows = neutralNounRows(model.space.size, (r) => model.word(r), listed);
  const checkRowsAll = neutralNounRows(model.space.size, (r) => model.word(r), listed, true);
  // Neither check list takes part in any fit or selection.
  const check = new Set([...checkRows, ...checkRowsAll]);
  const limit = Math.min(ANCHOR_WORDS, model.space.size);
  const unlistedRows: number[] = [];
  for (let r = 0; r < limit; r++) {
    if (lexRow.has(r) || check.has(r)) continue;
    const w = model.word(r);
    if (!/^[a-z]+$/.test(w) || listed.has(w)) continue;
    unlistedRows.push(r);
  }
  // Membership model: the lexicon's rows (positives) against the unlisted frequent words, on the
  // unit vector and the row's part-of-speech / dictionary flags.
  const d = model.space.dims;
  const features = MEMBERSHIP_FEATURES.map(([name]) => name);
  const cols = d + features.length;
  const fitRows = [...set.rows, ...unlistedRows];
  const X = new Float64Array(fitRows.length * cols);
  fitRows.forEach((r, i) => {
    rowVector(model.space, r, X, i * cols);
    flagFeatures(features, model.flags(r), X, i * cols + d);
  });
  const t = Float64Array.from(fitRows, (_, i) => (i < set.rows.length ? 1 : 0));
  const { membership, oof } = fitMembership(X, t, d, features);
  const nLex = set.rows.length;
  const pi = new Float32Array(model.space.size);
  const x = new Float64Array(d);
  for (let r = 0; r < pi.length; r++)
    pi[r] = membershipProbability(membership, rowVector(model.space, r, x), model.flags(r));
  log(
    `  membership model: ${membership.positives} lexicon words vs ${membership.negatives} unlisted frequent words, lambda ${membership.lambda}, CV log-loss ${membership.logLoss}, flag weights ${features.map((f, k) => `${f} ${membership.featureWeights[k]}`).join(', ')}`,
  );

  const out: Record<string, Anchoring> = {};
  for (const v of set.variables) {
    const scale = lexicon.variables[v].scale;
    const n = neutralOf(scale);
    const held = cv.predictions[v][method];
    const frequentLex: Item[] = [];
    const allLex: Item[] = [];
    for (let i = 0; i < nLex; i++) {
      const it = { pred: held[i], target: set.targets[v][i], pi: oof[i] };
      allLex.push(it);
      if (set.rows[i] < limit) frequentLex.push(it);
    }
    const unlisted: Item[] = unlistedRows.map((r, j) => ({ pred: values[v][r], target: n, pi: oof[nLex + j] }));
    const { gamma, cv: gcv } = selectGamma(frequentLex, unlisted, allLex, n);
    const vals = values[v];
    // Diagnostics (not used by any selection): held-out r and the check nouns' share per gamma.
    const shareAt = (rows: readonly number[], g: number): string => {
      let s = 0;
      for (const r of rows) s += Math.abs(shrinkFactor(pi[r], g) * (vals[r] - n));
      return `${((100 * s) / Math.max(1, rows.length) / halfRangeOf(scale)).toFixed(1)}%`;
    };
    log(
      `  ${v}: per gamma (held-out r shrunk / check nouns / all readings): ${GAMMAS.map((g) => `${g}: ${heldOutR(allLex, g, n).pearsonRShrunk.toFixed(5)} / ${shareAt(checkRows, g)} / ${shareAt(checkRowsAll, g)}`).join('; ')}`,
    );
    for (let r = 0; r < vals.length; r++) {
      const i = lexRow.get(r);
      vals[r] = i !== undefined ? set.targets[v][i] : n + shrinkFactor(pi[r], gamma) * (vals[r] - n);
    }
    const neutralCheck = (rows: readonly number[], source: string): NeutralCheck => {
      let sumAbs = 0;
      for (const r of rows) sumAbs += Math.abs(vals[r] - n);
      const meanAbs = rows.length > 0 ? sumAbs / rows.length : 0;
      const share = meanAbs / halfRangeOf(scale);
      return {
        nouns: rows.length,
        meanAbs: round5(meanAbs),
        shareOfHalfRange: round5(share),
        limit: 0.15,
        pass: rows.length >= 200 && share <= 0.15,
        source,
      };
    };
    out[v] = {
      method: ANCHORING_METHOD,
      membership: { ...membership, gamma },
      neutral: n,
      crossValidation: gcv,
      heldOutLexicon: heldOutR(allLex, gamma, n),
      neutralCheck: neutralCheck(checkRows, NEUTRAL_NOUNS_SOURCE),
      neutralCheckAllReadings: neutralCheck(checkRowsAll, NEUTRAL_NOUNS_ALL_READINGS_SOURCE),
    };
    const share = (c: NeutralCheck): string => `${round5(c.shareOfHalfRange * 100)}%`;
    log(
      `  ${v}: anchoring gamma ${gamma}; CV mse ${gcv.mse} (unshrunk ${gcv.mseUnshrunk}); held-out lexicon r ${out[v].heldOutLexicon.pearsonR} -> ${out[v].heldOutLexicon.pearsonRShrunk}; neutral nouns ${checkRows.length} mean |v| ${share(out[v].neutralCheck)} of half-range (all readings ${checkRowsAll.length}: ${share(out[v].neutralCheckAllReadings)})`,
    );
  }
  return out;
}

export function trainBundle(lexicon: Lexicon, model: LoadedModel, options: TrainBundleOptions = {}): TrainedBundle {
  try {
    return trainBundleNow(lexicon, model, options);
  } finally {
    // A bar left running would keep the terminal's cursor hidden.
    options.progress?.stop();
  }
}

function trainBundleNow(lexicon: Lexicon, model: LoadedModel, options: TrainBundleOptions): TrainedBundle {
  const method = options.method ?? 'ensemble';
  const log = options.log ?? (() => {});
  const set = trainingSetFrom(lexicon, model.rowOf);
  if (set.words < 20)
    throw new Error(`lexicon ${lexicon.name}: only ${set.words} words are in the vocabulary of ${model.manifest.id}`);
  log(`${lexicon.name}: ${set.words} training words in ${model.manifest.id}, variables ${set.variables.join(', ')}`);
  const progress = options.progress;
  const trainer = new MapperTrainer(
    model.space,
    set,
    progress
      ? {
          ...options,
          onFold: (done, total) => {
            options.onFold?.(done, total);
            progress.update(done);
          },
        }
      : options,
  );

  let t = Date.now();
  progress?.phase('cross-validation', options.folds ?? 10, 'folds');
  const cv = trainer.crossValidate();
  const crossValidationMs = Date.now() - t;
  for (const v of set.variables) {
    const m = cv.metrics[v];
    log(
      `  ${v}: ridge r=${m.ridge.pearsonR.toFixed(3)} rho=${m.ridge.spearmanRho.toFixed(3)} | knn r=${m.knn.pearsonR.toFixed(3)} rho=${m.knn.spearmanRho.toFixed(3)} | ensemble r=${m.ensemble.pearsonR.toFixed(3)} rho=${m.ensemble.spearmanRho.toFixed(3)}`,
    );
  }
  const shipped = set.variables.filter((v) => options.keepAll || cv.metrics[v][method].pearsonR >= MIN_PEARSON_R);
  const rejected: Record<string, number> = {};
  for (const v of set.variables) if (!shipped.includes(v)) rejected[v] = round(cv.metrics[v][method].pearsonR);
  if (shipped.length === 0)
    throw new Error(`lexicon ${lexicon.name}: no variable reaches held-out r >= ${MIN_PEARSON_R} with ${method}`);

  t = Date.now();
  progress?.phase('final fit', 1, 'fit');
  const final = trainer.fitFinal();
  progress?.update(1);
  const fitMs = Date.now() - t;
  t = Date.now();
  progress?.phase('values of every word', model.space.size, 'words');
  const values = final.materialize(method, undefined, (done, total) => {
    progress?.update(done);
    if (done % 100000 === 0) log(`  materialized ${done}/${total}`);
  });
  progress?.update(model.space.size);
  const materializeMs = Date.now() - t;
  if (options.anchor !== false) progress?.phase('lexicon anchoring', 1, 'membership model');
  const anchoring = options.anchor === false ? null : anchorValues(lexicon, set, cv, values, model, method, log);
  progress?.update(1);

  const linear: Record<string, LinearWeights> = {};
  for (const v of shipped)
    linear[v] = { weights: Float32Array.from(final.ridge[v].weights), bias: final.ridge[v].bias };
  const pick = <T>(rec: Record<string, T>): Record<string, T> => Object.fromEntries(shipped.map((v) => [v, rec[v]]));
  const info: MapperBundleInfo = {
    key: lexicon.bundle.key,
    variables: shipped,
    translationKey: lexicon.bundle.translationKey,
    label: lexicon.bundle.label,
    language: model.manifest.language,
    country: model.manifest.country,
    multilingual: false,
    modelId: model.manifest.id,
    scales: pick(Object.fromEntries(set.variables.map((v) => [v, lexicon.variables[v].scale]))),
    lexicon: lexicon.source,
    trainingWords: Object.fromEntries(shipped.map((v) => [v, set.words])),
    metrics: Object.fromEntries(shipped.map((v) => [v, roundMetrics(cv.metrics[v][method])])),
    method,
    modelChecksum: model.manifest.checksum,
    valueEncoding: 'u16-linear',
    linearModel: {
      method: 'ridge',
      metrics: Object.fromEntries(shipped.map((v) => [v, roundMetrics(cv.metrics[v].ridge)])),
    },
    trainingVersion: TRAINING_VERSION,
    crossValidation: pick(
      Object.fromEntries(
        set.variables.map((v) => [
          v,
          Object.fromEntries(Object.entries(cv.metrics[v]).map(([m, x]) => [m, roundMetrics(x)])),
        ]),
      ),
    ),
    hyperParameters: pick(final.hyper),
  };
  if (Object.keys(rejected).length > 0) info.rejected = rejected;
  if (anchoring) info.anchoring = pick(anchoring);
  const bytes = writeMapperBundle(info, pick(values), {
    vocabularySize: model.space.size,
    linear,
    lexiconRows: anchoring ? set.rows : undefined,
  });
  return { info, bytes, cv, timings: { crossValidationMs, fitMs, materializeMs } };
}

const round = (x: number): number => Math.round(x * 10000) / 10000;
const roundMetrics = (m: { pearsonR: number; spearmanRho: number }) => ({
  pearsonR: round(m.pearsonR),
  spearmanRho: round(m.spearmanRho),
});

/** Writes build/generated/mappers/{modelId}/{key}.bin + .json atomically; returns both paths. */
export function writeBundleFiles(
  dir: string,
  trained: Pick<TrainedBundle, 'info' | 'bytes'>,
): { bin: string; json: string } {
  const base = path.join(dir, trained.info.modelId);
  fs.mkdirSync(base, { recursive: true });
  const bin = path.join(base, `${trained.info.key}.bin`);
  const json = path.join(base, `${trained.info.key}.json`);
  writeAtomic(bin, trained.bytes);
  writeAtomic(json, `${JSON.stringify(trained.info, null, 2)}\n`);
  return { bin, json };
}
