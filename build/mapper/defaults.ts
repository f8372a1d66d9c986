/**
 * Ensure step `ensureDefaultMappers`: the default mapper bundles of the English models (the
 * default model and en-glove-6b-100d),
 * trained when missing or when the lexicon source, the training version or the model build
 * changed. Each bundle is build/generated/mappers/{modelId}/{key}.bin + .json (+ .stamp.json).
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { R2_KEYS } from '../../core/storage-keys';
import { type ModelManifest } from '../../core/types';
import type { EnsureOptions, R2Artifact } from '../ensure';
import { stampMatches, withLock, writeStamp } from '../stamp';
import { runBuildChild } from '../build-child';
import {
  DEFAULT_MODEL_FILE,
  DEFAULT_MODEL_ID,
  DEFAULT_MODEL_MANIFEST_FILE,
  GLOVE_MODEL_FILE,
  GLOVE_MODEL_ID,
  GLOVE_MODEL_MANIFEST_FILE,
  KERNELS_WASM,
  MAPPERS_DIR,
} from '../paths';
import { loadModelForTraining, trainBundle, TRAINING_VERSION, writeBundleFiles, type LoadedModel } from './bundle';
import { DebianPackageMissing, reportDebianSkips } from '../debian';
import { lexiconSourceVersion, loadLexicon } from './lexicons';
import { trainingProgress } from './progress';

// Also exported here: the tests and benches import it from this module.
export { MAPPERS_DIR } from '../paths';

/** Default bundles: lexicon name -> bundle key (method: ensemble). */
export const DEFAULT_BUNDLES: Array<{ lexicon: string; key: string }> = [
  { lexicon: 'vader', key: 'sentiment' },
  { lexicon: 'afinn', key: 'afinn' },
  { lexicon: 'pattern', key: 'pattern' },
];

function files(modelId: string, key: string): { bin: string; json: string; stamp: string } {
  const base = path.join(MAPPERS_DIR, modelId, key);
  return { bin: `${base}.bin`, json: `${base}.json`, stamp: `${base}.stamp.json` };
}

function stampFor(lexicon: string, manifest: ModelManifest): Record<string, string> {
  return {
    lexicon: lexiconSourceVersion(lexicon),
    trainingVersion: TRAINING_VERSION,
    modelId: manifest.id,
    modelChecksum: manifest.checksum,
  };
}

function isFresh(lexicon: string, key: string, manifest: ModelManifest): boolean {
  const f = files(manifest.id, key);
  if (!fs.existsSync(f.bin) || !fs.existsSync(f.json)) return false;
  return stampMatches(f.stamp, stampFor(lexicon, manifest));
}

export function bundleArtifacts(modelId: string, key: string): R2Artifact[] {
  const f = files(modelId, key);
  return [
    { key: R2_KEYS.mapper(modelId, key), file: f.bin, contentType: 'application/octet-stream' },
    { key: R2_KEYS.mapperInfo(modelId, key), file: f.json, contentType: 'application/json' },
  ];
}

/**
 * Ensure step (after the default model): the default bundles, built when missing or stale (25-45 s
 * of CPU a bundle on the 2-core machine: the membership fits, the kNN materialization over every
 * row and the nested CV); a no-op when fresh. A lexicon that cannot be fetched (the Debian package
 * for pattern) is skipped, so the service still starts, and said at the end of the run.
 */
export async function ensureDefaultMappers(options: EnsureOptions = {}): Promise<R2Artifact[]> {
  return reportDebianSkips(() => ensureDefaultMappersNow(options));
}

/** The English models that get the default bundles: the default model and GloVe (its results stay as they were). */
const ENGLISH_MODELS = [
  { id: DEFAULT_MODEL_ID, file: DEFAULT_MODEL_FILE, manifestFile: DEFAULT_MODEL_MANIFEST_FILE },
  { id: GLOVE_MODEL_ID, file: GLOVE_MODEL_FILE, manifestFile: GLOVE_MODEL_MANIFEST_FILE },
];

type EnglishModel = (typeof ENGLISH_MODELS)[number];

/**
 * The default model's bundles train here while the other English models' train in child
 * processes, one core each (about 100 s a model on its own, the 2-core machine). A child that fails leaves its
 * bundles stale, and they are trained here afterwards.
 */
async function ensureDefaultMappersNow(_options: EnsureOptions): Promise<R2Artifact[]> {
  const [first, ...rest] = ENGLISH_MODELS;
  const children = rest.filter((m) => !bundlesFresh(m)).map((m) => trainInChild(m));
  // Two processes training on one terminal: plain progress lines, no bars.
  const out = await ensureBundlesOf(first!, { bar: children.length === 0 });
  await Promise.all(children);
  for (const m of rest) out.push(...(await ensureBundlesOf(m, { bar: true })));
  return out;
}

function bundlesFresh(english: EnglishModel): boolean {
  if (!fs.existsSync(english.manifestFile)) return false;
  const manifest = JSON.parse(fs.readFileSync(english.manifestFile, 'utf8')) as ModelManifest;
  return DEFAULT_BUNDLES.every((b) => isFresh(b.lexicon, b.key, manifest));
}

function trainInChild(english: EnglishModel): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  return runBuildChild(script, ['--model', english.id], `mapper bundles of ${english.id}`, 'training them here');
}

async function ensureBundlesOf(english: EnglishModel, display: { bar: boolean }): Promise<R2Artifact[]> {
  if (!fs.existsSync(english.manifestFile) || !fs.existsSync(english.file)) {
    throw new Error(`default mappers need the model ${english.file} (run the model step first)`);
  }
  const manifest = JSON.parse(fs.readFileSync(english.manifestFile, 'utf8')) as ModelManifest;
  const allFresh = (): boolean => DEFAULT_BUNDLES.every((b) => isFresh(b.lexicon, b.key, manifest));
  const present = (): R2Artifact[] =>
    DEFAULT_BUNDLES.filter(
      (b) => fs.existsSync(files(manifest.id, b.key).bin) && fs.existsSync(files(manifest.id, b.key).json),
    ).flatMap((b) => bundleArtifacts(manifest.id, b.key));
  if (allFresh()) return present();
  const lock = path.join(MAPPERS_DIR, `${english.id}.lock`);
  return withLock(
    lock,
    15 * 60_000,
    allFresh,
    async () => {
      let model: LoadedModel | null = null;
      for (const b of DEFAULT_BUNDLES) {
        if (isFresh(b.lexicon, b.key, manifest)) continue;
        const started = Date.now();
        let lexicon;
        try {
          lexicon = await loadLexicon(b.lexicon);
        } catch (err) {
          // A missing Debian package is said in the run's one Debian skip report.
          if (!(err instanceof DebianPackageMissing))
            console.error(`[build] mapper bundle "${b.key}" skipped: ${(err as Error).message}`);
          continue;
        }
        model ??= loadModelForTraining(english.file, KERNELS_WASM);
        // The start line (once the lexicon is had, so a skipped bundle is never announced), then its progress.
        console.error(`[build] mapper bundle "${b.key}" for ${manifest.id} from lexicon ${b.lexicon} (25-45 s)`);
        const progress = trainingProgress(`[build]   ${b.key} for ${manifest.id}`, { bar: display.bar });
        const trained = trainBundle(lexicon, model, { method: 'ensemble', progress });
        writeBundleFiles(MAPPERS_DIR, trained);
        writeStamp(files(manifest.id, b.key).stamp, stampFor(b.lexicon, manifest));
        const r = Object.entries(trained.info.metrics)
          .map(([v, m]) => `${v} r=${m.pearsonR}`)
          .join(', ');
        console.error(`[build]   ${b.key}: ${r} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      }
      return present();
    },
    present,
  );
}

// The child process of trainInChild: `node --import tsx build/mapper/defaults.ts --model <id>`.
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const id = process.argv[process.argv.indexOf('--model') + 1];
  const english = ENGLISH_MODELS.find((m) => m.id === id);
  if (!english) {
    console.error(`usage: defaults.ts --model <${ENGLISH_MODELS.map((m) => m.id).join('|')}>`);
    process.exit(2);
  }
  // Trains beside the parent on the same terminal: plain progress lines.
  ensureBundlesOf(english, { bar: false }).then(
    () => process.exit(0),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
