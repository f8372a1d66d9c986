/**
 * Ensure step `ensureMultilingualMappers`: the English-trained default mapper bundles of each
 * aligned model's English base (its companion: GloVe's for the GloVe ones, the default model's for
 * the others) applied to the aligned model (decisions.md: "A mapper trained on English lexicons applies unchanged to
 * every aligned model"). The aligned vectors live in the English space, so the English bundle's
 * stored ridge weights (trained on the English lexicon, English vectors) give a value for every
 * aligned row: clamp(w . v + b) on the variable's scale. The result is an ordinary bundle under
 * mappers/{alignedModelId}/{key} with `multilingual: true` (language and country null), so the
 * Worker loads it like any other and the catalog lists it in the model's `_embedded.mappers`.
 *
 * Each bundle records its cross-lingual check (`crossLingual`): for the aligned words whose
 * dictionary translations (build/aligned-models.ts translations sidecar) are rated in the
 * English lexicon, Pearson r between the bundle's value and the mean rating of the translations.
 * The English held-out r of the same ridge model (`linearModel.metrics`) is the baseline.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeWord, parseArtifact } from '../../core/artifact';
import { parseMapperBundle, writeMapperBundle, type LinearWeights } from '../../core/mapper-bundle';
import { R2_KEYS } from '../../core/storage-keys';
import { type MapperBundleInfo, type ModelManifest } from '../../core/types';
import { alignedModelFile, builtAligned, readAlignedTranslations, type AlignedSpec } from '../aligned-models';
import type { EnsureOptions, R2Artifact } from '../ensure';
import { readArrayBuffer } from '../load-model';
import { stampMatches, writeStamp } from '../stamp';
import { MAPPERS_DIR } from '../paths';
import { DEFAULT_BUNDLES } from './defaults';
import { loadLexicon } from './lexicons';
import { pearson, spearman } from './stats';
import { writeBundleFiles } from './bundle';

/** Bump when the values of the multilingual bundles change for the same inputs. */
export const MULTILINGUAL_VERSION = '2';

export interface CrossLingualCheck {
  method: string;
  /** Aligned words whose translations are rated in the lexicon. */
  words: number;
  metrics: Record<string, { pearsonR: number; spearmanRho: number }>;
}

const round = (x: number): number => Math.round(x * 10000) / 10000;

/**
 * The English bundle applied to an aligned model: info + bytes. `translations` (aligned word ->
 * English words) and `ratings` (lexicon variable -> English word -> rating) give the check.
 */
export function applyToAligned(
  englishModelId: string,
  englishBundle: Uint8Array,
  aligned: { manifest: ModelManifest; words: string[]; rows: Int8Array; scales: Float32Array; dims: number },
  check?: { translations: Map<string, string[]>; ratings: Record<string, Map<string, number>> },
): { info: MapperBundleInfo & { crossLingual?: CrossLingualCheck }; bytes: Uint8Array } {
  const en = parseMapperBundle(englishBundle);
  const n = aligned.words.length;
  const values: Record<string, Float32Array> = {};
  const linear: Record<string, LinearWeights> = {};
  for (const v of en.info.variables) {
    const l = en.linear(v);
    if (!l)
      throw new Error(`mapper bundle "${en.info.key}" has no linear weights: it cannot be applied to aligned models`);
    if (l.weights.length !== aligned.dims)
      throw new Error(`mapper bundle "${en.info.key}" has ${l.weights.length} dims, the model ${aligned.dims}`);
    linear[v] = l;
    const scale = en.info.scales[v];
    const out = new Float32Array(n);
    for (let r = 0; r < n; r++) {
      let s = l.bias;
      const base = r * aligned.dims;
      const k = aligned.scales[r]!;
      for (let d = 0; d < aligned.dims; d++) s += l.weights[d]! * aligned.rows[base + d]! * k;
      out[r] = scale ? Math.min(scale.max, Math.max(scale.min, s)) : s;
    }
    values[v] = out;
  }
  const info: MapperBundleInfo & { crossLingual?: CrossLingualCheck; appliedFrom?: string } = {
    ...en.info,
    language: null,
    country: null,
    multilingual: true,
    modelId: aligned.manifest.id,
    modelChecksum: aligned.manifest.checksum,
    method: `ridge weights of the English bundle ${englishModelId}/${en.info.key} (trained on the English lexicon) applied to the aligned vectors`,
    appliedFrom: `${englishModelId}/${en.info.key} ${en.info.modelChecksum ?? ''}`.trim(),
    trainingVersion: `${en.info.trainingVersion ?? ''}+multilingual.${MULTILINGUAL_VERSION}`,
  };
  // The English ensemble figures describe another method: what applies here is the ridge model.
  if (en.info.linearModel) info.metrics = en.info.linearModel.metrics;
  // Not lexicon-anchored: the values are the ridge weights on the aligned vectors (no lexicon of
  // the language, no shrinkage), so the English anchoring record (membership model on English
  // vectors and English part-of-speech flags, English check nouns) does not describe them.
  delete info.anchoring;
  if (check) {
    const metrics: Record<string, { pearsonR: number; spearmanRho: number }> = {};
    let words = 0;
    for (const v of en.info.variables) {
      const ratings = check.ratings[v];
      if (!ratings) continue;
      const pred: number[] = [];
      const gold: number[] = [];
      aligned.words.forEach((w, r) => {
        const tr = check.translations.get(w);
        if (!tr) return;
        let sum = 0;
        let cnt = 0;
        for (const t of tr) {
          const x = ratings.get(t);
          if (x !== undefined) {
            sum += x;
            cnt++;
          }
        }
        if (cnt === 0) return;
        gold.push(sum / cnt);
        pred.push(values[v]![r]!);
      });
      words = Math.max(words, gold.length);
      if (gold.length >= 20)
        metrics[v] = { pearsonR: round(pearson(pred, gold)), spearmanRho: round(spearman(pred, gold)) };
    }
    info.crossLingual = {
      method: `${aligned.manifest.language} words vs the mean English lexicon rating of their dictionary translations (in-sample for the English words: the ridge model saw them)`,
      words,
      metrics,
    };
  }
  return { info, bytes: writeMapperBundle(info, values, { vocabularySize: n, linear }) };
}

function files(modelId: string, key: string): { bin: string; json: string; stamp: string } {
  const base = path.join(MAPPERS_DIR, modelId, key);
  return { bin: `${base}.bin`, json: `${base}.json`, stamp: `${base}.stamp.json` };
}

function artifactsOf(modelId: string, key: string): R2Artifact[] {
  const f = files(modelId, key);
  return [
    { key: R2_KEYS.mapper(modelId, key), file: f.bin, contentType: 'application/octet-stream' },
    { key: R2_KEYS.mapperInfo(modelId, key), file: f.json, contentType: 'application/json' },
  ];
}

function stampFor(spec: AlignedSpec, key: string): Record<string, unknown> {
  const manifest = JSON.parse(
    fs.readFileSync(alignedModelFile(spec).replace(/\.emb$/, '.json'), 'utf8'),
  ) as ModelManifest;
  const english = files(spec.english.id, key).bin;
  return {
    model: manifest.checksum,
    englishBundleBytes: fs.statSync(english).size,
    englishBundleMtime: Math.round(fs.statSync(english).mtimeMs),
    version: MULTILINGUAL_VERSION,
  };
}

/** Ensure step (after the default mappers): the multilingual bundles of every built aligned model. */
export async function ensureMultilingualMappers(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  const out: R2Artifact[] = [];
  const isFresh = (spec: AlignedSpec, key: string): boolean => {
    const f = files(spec.id, key);
    return fs.existsSync(f.bin) && fs.existsSync(f.json) && stampMatches(f.stamp, stampFor(spec, key));
  };
  const todo = builtAligned().flatMap((spec) =>
    DEFAULT_BUNDLES.filter((b) => fs.existsSync(files(spec.english.id, b.key).bin) && !isFresh(spec, b.key)),
  ).length;
  // Said before the work: each bundle then gets a numbered line as it is written.
  if (todo > 0) console.error(`[build] multilingual mapper bundles: ${todo} to apply to the aligned models`);
  let done = 0;
  for (const spec of builtAligned()) {
    const { id } = spec;
    const englishId = spec.english.id;
    let parsed: ReturnType<typeof parseArtifact> | null = null;
    let words: string[] | null = null;
    let translations: Map<string, string[]> | null = null;
    for (const b of DEFAULT_BUNDLES) {
      if (!fs.existsSync(files(englishId, b.key).bin)) continue;
      const f = files(id, b.key);
      if (isFresh(spec, b.key)) {
        out.push(...artifactsOf(id, b.key));
        continue;
      }
      parsed ??= parseArtifact(readArrayBuffer(alignedModelFile(spec)));
      words ??= Array.from({ length: parsed.size }, (_, r) => decodeWord(parsed!.vocab, parsed!.wordOffsets, r));
      translations ??= readAlignedTranslations(spec);
      let ratings: Record<string, Map<string, number>> | undefined;
      try {
        const lexicon = await loadLexicon(b.lexicon);
        ratings = Object.fromEntries(Object.entries(lexicon.variables).map(([v, x]) => [v, x.ratings]));
      } catch (err) {
        console.error(
          `[build] multilingual ${b.key} for ${id}: no cross-lingual check (${(err as Error).message.split('\n')[0]})`,
        );
      }
      const applied = applyToAligned(
        englishId,
        new Uint8Array(fs.readFileSync(files(englishId, b.key).bin)),
        { manifest: parsed.manifest, words, rows: parsed.rows, scales: parsed.scales, dims: parsed.dims },
        ratings ? { translations, ratings } : undefined,
      );
      writeBundleFiles(MAPPERS_DIR, applied);
      writeStamp(f.stamp, stampFor(spec, b.key));
      const r = Object.entries(applied.info.crossLingual?.metrics ?? {})
        .map(([v, m]) => `${v} r=${m.pearsonR}`)
        .join(', ');
      console.error(
        `[build] multilingual mapper ${b.key} for ${id} (${++done}/${todo})${r ? `: cross-lingual ${r}` : ''}`,
      );
      out.push(...artifactsOf(id, b.key));
    }
  }
  return out;
}
