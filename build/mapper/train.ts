/**
 * npm run mapper:train -- --model <id> --lexicon <vader|afinn|pattern> [--method ensemble|knn|ridge]
 *                         [--remote] [--no-upload] [--quiet]
 *
 * Trains a mapper bundle on the model build/generated/models/<id>.emb, prints the 10-fold
 * cross-validation table (Pearson r and Spearman rho per variable and method), writes
 * build/generated/mappers/<id>/<key>.bin + .json and puts both into R2 (local by default,
 * --remote for the Cloudflare bucket, --no-upload to skip), then bumps the Worker's catalog
 * generation in KV so the catalog lists the bundle.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { R2_KEYS } from '../../core/storage-keys';
import { bumpCatalogGeneration, r2Put } from '../wrangler';
import { ensureDefaultModel } from '../default-model';
import { ensureKernels } from '../build-wasm';
import { DEFAULT_MODEL_ID, KERNELS_WASM, MAPPERS_DIR, modelFile } from '../paths';
import { loadModelForTraining, MIN_PEARSON_R, trainBundle, writeBundleFiles } from './bundle';
import { LEXICONS, loadLexicon } from './lexicons';
import { METHODS, type Method } from './train-core';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      model: { type: 'string', default: DEFAULT_MODEL_ID },
      lexicon: { type: 'string' },
      method: { type: 'string', default: 'ensemble' },
      remote: { type: 'boolean', default: false },
      'no-upload': { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
    },
  });
  const lexiconName = values.lexicon;
  if (!lexiconName || !LEXICONS[lexiconName])
    throw new Error(`--lexicon is required: one of ${Object.keys(LEXICONS).join(', ')}`);
  const method = values.method as Method;
  if (!METHODS.includes(method)) throw new Error(`--method must be one of ${METHODS.join(', ')}`);
  const modelId = values.model!;
  const log = values.quiet ? () => {} : (m: string) => console.log(m);

  await ensureKernels({});
  if (modelId === DEFAULT_MODEL_ID) await ensureDefaultModel({});
  const file = modelFile(modelId);
  if (!fs.existsSync(file)) throw new Error(`model ${modelId} not found: ${file} is missing (import it first)`);

  const t0 = Date.now();
  const model = loadModelForTraining(file, KERNELS_WASM);
  const lexicon = await loadLexicon(lexiconName);
  const trained = trainBundle(lexicon, model, { method, log });
  const { bin, json } = writeBundleFiles(MAPPERS_DIR, trained);

  console.log(
    `\nbundle ${trained.info.key} for ${modelId} (${trained.info.trainingWords[trained.info.variables[0]]} training words, method ${method})`,
  );
  console.log('| variable | ridge r | ridge rho | knn r | knn rho | ensemble r | ensemble rho | shipped |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const v of Object.keys(trained.cv.metrics)) {
    const m = trained.cv.metrics[v];
    const f = (x: number): string => x.toFixed(3);
    const shipped = trained.info.variables.includes(v) ? 'yes' : `no (r < ${MIN_PEARSON_R})`;
    console.log(
      `| ${v} | ${f(m.ridge.pearsonR)} | ${f(m.ridge.spearmanRho)} | ${f(m.knn.pearsonR)} | ${f(m.knn.spearmanRho)} | ${f(m.ensemble.pearsonR)} | ${f(m.ensemble.spearmanRho)} | ${shipped} |`,
    );
  }
  const t = trained.timings;
  console.log(
    `timings: cross-validation ${(t.crossValidationMs / 1000).toFixed(1)} s, fit ${(t.fitMs / 1000).toFixed(1)} s, materialize ${(t.materializeMs / 1000).toFixed(1)} s, total ${((Date.now() - t0) / 1000).toFixed(1)} s`,
  );
  console.log(`wrote ${bin} (${(trained.bytes.length / 1e6).toFixed(2)} MB) and ${json}`);

  if (!values['no-upload']) {
    const where = values.remote ? '--remote' : '--local';
    for (const [key, file, type] of [
      [R2_KEYS.mapper(modelId, trained.info.key), bin, 'application/octet-stream'],
      [R2_KEYS.mapperInfo(modelId, trained.info.key), json, 'application/json'],
    ] as const) {
      r2Put(key, file, type, [where]);
      console.log(`put ${key} into R2 (${where.slice(2)})`);
    }
    bumpCatalogGeneration([where]);
  }
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
