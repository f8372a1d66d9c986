/**
 * The first `npm start` (build/start.ts): the server answers once the README's example can be
 * answered (ensure.ts FIRST_STEPS), and the rest (ensure.ts REST_STEPS) builds in the same process
 * while it serves. What is not served yet is said in R2's building.json (core/building.ts): the
 * catalog lists those models as loading and requests for what is still being built get 503
 * MODEL_LOADING (worker/catalog/building.ts). Each finished part is seeded into the running
 * server's R2 at once (build/seeding.ts) and building.json shrinks with it; models built after the
 * server started are not on a model host and are scored by the API Worker itself
 * (worker/hosts/placement.ts) until the next start places them.
 *
 * planFirstStart decides from files and the seeded stamp alone (no build step runs): a model is
 * being built when its build will produce it (missing or stale, and its Debian packages can be
 * had: a model skipped for lack of them is never listed) or it is built but not seeded yet.
 */
import fs from 'node:fs';
import type { BuildingModel, BuildingState } from '../core/building';
import { buildingDone } from '../core/building';
import { modelLabels } from '../core/labels';
import { R2_KEYS } from '../core/storage-keys';
import type { Language } from '../core/tokenizer/languages';
import type { ModelManifest } from '../core/types';
import { ALIGNED_MODELS, alignedSpec, type AlignedSpec } from './aligned-specs';
import { alignedModelIsFresh } from './aligned-models';
import { debianSkipNow } from './debian';
import { ensureHeads, REST_STEPS, type R2Artifact } from './ensure';
import { gloveImportOptions, gloveModelIsFresh } from './glove-model';
import { IMPORTER_VERSION } from './import-model';
import {
  DEFAULT_MODEL_ID,
  GLOVE_MODEL_FILE,
  GLOVE_MODEL_ID,
  languageFile,
  modelFile,
  modelManifestFile,
} from './paths';
import { seedArtifacts, type SeedStamp, type SeedTarget } from './seeding';

/** The languages the background builds (English is built before the server starts). */
const LATER_LANGUAGES = ['de', 'fr', 'ja'] as const;

export interface FirstStartPlan {
  /** What is not served when the server starts. */
  state: BuildingState;
  /** The step that builds each model of the state (its models not seeded after it are skipped ones). */
  stepOf: Map<string, string>;
  /** Models whose mapper bundles, sub-word table or head may be missing from R2. */
  derived: string[];
}

const seededModel = (stamp: SeedStamp, id: string): boolean =>
  stamp.has(R2_KEYS.model(id), modelFile(id)) && stamp.has(R2_KEYS.modelManifest(id), modelManifestFile(id));

const hasMapperSeeded = (stamp: SeedStamp, id: string): boolean =>
  stamp.keys().some((k) => k.startsWith(`mappers/${id}/`) && k.endsWith('.json'));

/** Whether the aligned model's Debian packages (and what it is projected through) can be had now. */
function buildable(spec: AlignedSpec): boolean {
  if (!spec.packages.every((p) => debianSkipNow(p) === null)) return false;
  const pivot = spec.pivot ? alignedSpec(spec.pivot) : undefined;
  return !pivot || alignedModelIsFresh(pivot) || buildable(pivot);
}

/** The catalog fields of a model known before its build: its manifest's when one is on disk. */
function plannedFields(id: string): BuildingModel {
  const file = modelManifestFile(id);
  if (fs.existsSync(file)) {
    const {
      vocabularySize: _v,
      checksum: _c,
      quantization: _q,
      formatVersion: _f,
      ...known
    } = JSON.parse(fs.readFileSync(file, 'utf8')) as ModelManifest;
    return known;
  }
  const spec = alignedSpec(id);
  const o = spec
    ? { ...spec, version: `${spec.english.projectionVersion}-int8.${IMPORTER_VERSION}`, hasTranslation: true }
    : id === GLOVE_MODEL_ID
      ? gloveImportOptions(GLOVE_MODEL_FILE)
      : null;
  if (!o) throw new Error(`no build step for the model ${id}`);
  return {
    id,
    language: o.language,
    country: o.country,
    version: o.version,
    sources: o.sources,
    features: o.features,
    tag: o.tag,
    trainingYear: o.trainingYear,
    trainingMonth: o.trainingMonth,
    labels: modelLabels(o.language, o.country, o.trainingYear ?? '', o.trainingMonth ?? ''),
    tokenCount: 6_000_000_000,
    hasTranslation: o.hasTranslation,
    license: o.license,
  };
}

/** What the background will build or seed, from the files and the seeded stamp; `hold`: models held back (tests). */
export function planFirstStart(stamp: SeedStamp, hold: readonly string[] = []): FirstStartPlan {
  const stepOf = new Map<string, string>();
  if (!gloveModelIsFresh() || !seededModel(stamp, GLOVE_MODEL_ID)) stepOf.set(GLOVE_MODEL_ID, 'glove-model');
  for (const spec of ALIGNED_MODELS) {
    const onDisk = fs.existsSync(modelFile(spec.id)) && fs.existsSync(modelManifestFile(spec.id));
    const rebuilt = !alignedModelIsFresh(spec) && buildable(spec);
    if (rebuilt || (onDisk && !seededModel(stamp, spec.id))) stepOf.set(spec.id, 'aligned-models');
  }
  for (const id of hold) stepOf.set(id, 'held');
  const languages = LATER_LANGUAGES.filter((l) => !stamp.has(R2_KEYS.languageData(l), languageFile(l)));
  // The default model is seeded before the server starts.
  const known = [DEFAULT_MODEL_ID, GLOVE_MODEL_ID, ...ALIGNED_MODELS.map((s) => s.id)].filter(
    (id) => id === DEFAULT_MODEL_ID || stepOf.has(id) || seededModel(stamp, id),
  );
  const derived = [...new Set([...known, ...hold])].filter(
    (id) =>
      stepOf.has(id) ||
      !hasMapperSeeded(stamp, id) ||
      !stamp.hasKey(R2_KEYS.modelHead(id)) ||
      (id === DEFAULT_MODEL_ID && !stamp.hasKey(R2_KEYS.subwordTable(id))),
  );
  return {
    state: { models: [...stepOf.keys()].map(plannedFields), languages, derived },
    stepOf,
    derived,
  };
}

/** What is still not served, once the steps in `done` have run (`finished`: all of them); `held`: models still held back. */
export function buildingNow(
  plan: FirstStartPlan,
  stamp: SeedStamp,
  done: ReadonlySet<string>,
  finished: boolean,
  held: ReadonlySet<string>,
): BuildingState {
  // Not seeded once its step ran: skipped (no Debian data, a failed build), so no longer listed.
  const models = plan.state.models.filter(
    (m) => held.has(m.id) || (!seededModel(stamp, m.id) && !done.has(plan.stepOf.get(m.id)!)),
  );
  const languages = plan.state.languages.filter(
    (l) => !done.has('language-data') && !stamp.has(R2_KEYS.languageData(l), languageFile(l as Language)),
  );
  const listed = (id: string) => models.some((m) => m.id === id) || seededModel(stamp, id);
  const mappersDone = done.has('default-mappers') && done.has('multilingual-mappers');
  const derived = finished
    ? [...held]
    : plan.derived.filter(
        (id) =>
          listed(id) &&
          (held.has(id) ||
            (!mappersDone && !hasMapperSeeded(stamp, id)) ||
            !stamp.hasKey(R2_KEYS.modelHead(id)) ||
            (id === DEFAULT_MODEL_ID && !done.has('subword-table') && !stamp.hasKey(R2_KEYS.subwordTable(id)))),
      );
  return { models, languages, derived };
}

/** Keys of the artifacts of a held model (its model, mappers, head and sub-word table). */
function heldKey(key: string, held: ReadonlySet<string>): boolean {
  for (const id of held)
    if (
      key === R2_KEYS.model(id) ||
      key === R2_KEYS.modelManifest(id) ||
      key === R2_KEYS.modelHead(id) ||
      key === R2_KEYS.subwordTable(id) ||
      key.startsWith(`mappers/${id}/`) ||
      key.startsWith(`mapper-heads/${id}/`)
    )
      return true;
  return false;
}

/** One line of what a batch made available: models, languages, and how many other objects. */
function servedLine(put: readonly R2Artifact[]): string | null {
  const models = put.map((a) => /^models\/([^/]+)\.json$/.exec(a.key)?.[1]).filter(Boolean);
  const languages = put.map((a) => /^lang\/([^/]+)\.bin$/.exec(a.key)?.[1]).filter(Boolean);
  const mappers = put.filter((a) => /^mappers\/.*\.json$/.test(a.key)).length;
  const playground = put.some((a) => a.key === R2_KEYS.web('index.html'));
  const parts = [
    ...(models.length ? [`model${models.length > 1 ? 's' : ''} ${models.join(', ')}`] : []),
    ...(languages.length ? [`language data ${languages.join(', ')}`] : []),
    ...(mappers ? [`${mappers} mapper bundle${mappers > 1 ? 's' : ''}`] : []),
    ...(playground ? ['the playground'] : []),
  ];
  return parts.length ? parts.join('; ') : null;
}

export interface Background {
  /** Runs the steps; resolves when every step has run (held models may still be held). */
  run(): Promise<{ failed: string[] }>;
  /** Seeds the held models now (tests: "their build finished"). */
  release(): Promise<void>;
}

/**
 * Runs REST_STEPS (after seeding what `first` left to seed: the heads of the first models) and
 * seeds into `target` each part as it is built, with building.json updated after it.
 */
export function runBackground(o: {
  target: SeedTarget;
  stamp: SeedStamp;
  plan: FirstStartPlan;
  first: readonly R2Artifact[];
  hold: readonly string[];
  browserBundle: boolean;
  log: (line: string) => void;
}): Background {
  const done = new Set<string>();
  const held = new Set(o.hold);
  const heldArtifacts: R2Artifact[] = [];
  let finished = false;
  // One batch at a time: the stamp and building.json are written by one writer.
  let chain: Promise<unknown> = Promise.resolve();
  const serialized = <T>(work: () => Promise<T>): Promise<T> => {
    const p = chain.then(work);
    chain = p.catch(() => undefined);
    return p;
  };
  const state = () => buildingNow(o.plan, o.stamp, done, finished, held);
  const seed = (artifacts: readonly R2Artifact[]): Promise<void> =>
    serialized(async () => {
      const now = artifacts.filter((a) => !heldKey(a.key, held));
      heldArtifacts.push(...artifacts.filter((a) => heldKey(a.key, held)));
      // Heads as their models and bundles arrive (they are what the offline scorer starts with).
      const heads = await ensureHeads(now);
      const put = await seedArtifacts(o.target, o.stamp, [...now, ...heads], state);
      const line = servedLine(put);
      if (line) o.log(`[start] now served: ${line}`);
    });
  const run = async (): Promise<{ failed: string[] }> => {
    const failed: string[] = [];
    await seed(o.first);
    for (const step of REST_STEPS) {
      try {
        const artifacts = await (await step.load())({ browserBundle: o.browserBundle, onArtifacts: seed });
        done.add(step.name);
        await seed(artifacts);
      } catch (err) {
        // The server keeps serving what was built; what this step would add stays unlisted.
        done.add(step.name);
        failed.push(step.name);
        o.log(`[start] background step ${step.name} failed: ${(err as Error).stack ?? String(err)}`);
        await seed([]);
      }
    }
    finished = true;
    await seed([]);
    return { failed };
  };
  return {
    run,
    release: () => {
      held.clear();
      const artifacts = heldArtifacts.splice(0);
      return seed(artifacts);
    },
  };
}

/** True when the plan has nothing to build or seed (a later start). */
export function nothingToBuild(plan: FirstStartPlan): boolean {
  return buildingDone(plan.state);
}
