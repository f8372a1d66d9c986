/**
 * German, French and Japanese models aligned to English (decisions.md "Languages and aligned
 * models"): each foreign word's vector is the weighted, normalised sum of its dictionary
 * translations' vectors in an English model (core/projection.ts), so coordinates mean the same
 * in every language. Each language has a model per English base (build/aligned-specs.ts): the
 * GloVe ones from before the distilled default, unchanged, and the ones on the default English model; an aligned
 * manifest names its base in `englishModelId` (absent on the GloVe ones, which predate it). Dictionaries are pinned Debian packages (`apt-get download`,
 * `dpkg-deb -x` into a temp dir, no install):
 *
 *   de  trans-de-en (Ding de-en, GPL-2+)
 *   fr  dict-freedict-fra-eng + dict-freedict-eng-fra (GPL-2+), and through the German vectors
 *       dict-freedict-fra-deu + dict-freedict-deu-fra (WikDict, CC-BY-SA-3.0)
 *   ja  edict (JMdict/EDICT, EDRDG, CC-BY-SA-3.0)
 *
 * The projected vectors go through the model importer (build/import-model.ts importModel, as a
 * word2vec binary temp file), so the artifacts have the English model's format and int8
 * quantization. Licences carry over: the artifacts are derived works of the dictionaries.
 *
 *   npm run model:build -- de|fr|ja|<aligned model id> [--force]   (a language: both its models)
 *
 * `npm start`, the test setup and the benchmarks build them through ensureAlignedModels; where a
 * package cannot be had (no apt-get, no network) the model is skipped, said in the run's one
 * Debian skip report (build/debian.ts), and tried again once the cause is gone (the tools appear,
 * the network answers, or an hour has passed); `npm run model:build` always tries again. The
 * catalog lists only what exists.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { ARTIFACT_FORMAT_VERSION, decodeWord, parseArtifact } from '../core/artifact';
import {
  ArraySpace,
  LEGACY_ENGLISH_MODEL_ID,
  orderProjected,
  projectWord,
  type ProjectedWord,
  type SourceSpace,
} from '../core/projection';
import { R2_KEYS } from '../core/storage-keys';
import { ensureDefaultModel } from './default-model';
import { ensureGloveModel } from './glove-model';
import {
  mergeDictionaries,
  parseDictd,
  parseDing,
  parseEdict,
  reverseDictionary,
  type Dictionary,
} from './dictionaries';
import { runBuildChild } from './build-child';
import type { EnsureOptions, R2Artifact } from './ensure';
import { importModel, IMPORTER_VERSION } from './import-model';
import {
  DebianPackageMissing,
  debianToolsAvailable,
  fetchDebianFile,
  blockedDownload,
  NO_DEBIAN_TOOLS,
  noteDebianSkip,
  recordToolsMissing,
  reportDebianSkips,
  retryDebianNow,
} from './debian';
import { readArrayBuffer } from './load-model';
import { fileChecksum, stampMatches, withLock, writeAtomic, writeStamp } from './stamp';
import { DEFAULT_MODEL_ID, GLOVE_MODEL_ID, languageFile, modelFile, modelManifestFile, MODELS_DIR } from './paths';
import {
  ALIGNED,
  ALIGNED_GLOVE,
  ALIGNED_LANGUAGES,
  ALIGNED_MODELS,
  alignedSpec,
  type AlignedLanguage,
  type AlignedSpec,
} from './aligned-specs';

// Also exported here: the tests, benches and mapper steps import them from this module.
export { ALIGNED, ALIGNED_GLOVE, ALIGNED_LANGUAGES, ALIGNED_MODELS, type AlignedLanguage, type AlignedSpec };

export const alignedModelFile = (spec: AlignedSpec): string => modelFile(spec.id);
export const alignedManifestFile = (spec: AlignedSpec): string => modelManifestFile(spec.id);
/** word<TAB>English translation words (single words in the English vocabulary, at most 5): the cross-lingual mapper check. */
export const alignedTranslationsFile = (spec: AlignedSpec): string =>
  path.join(MODELS_DIR, `${spec.id}.translations.tsv`);
const stampFile = (spec: AlignedSpec): string => path.join(MODELS_DIR, `${spec.id}.stamp.json`);
const lockFile = (spec: AlignedSpec): string => path.join(MODELS_DIR, `${spec.id}.lock`);
/** French projects through the German model of its base, so that one is built first. */
const pivotOf = (spec: AlignedSpec): AlignedSpec[] => (spec.pivot ? [alignedSpec(spec.pivot)!] : []);

/** The checksum in a model's manifest, null when the model is not built. */
function builtChecksum(id: string): string | null {
  return fs.existsSync(modelFile(id)) && fs.existsSync(modelManifestFile(id))
    ? (JSON.parse(fs.readFileSync(modelManifestFile(id), 'utf8')) as { checksum: string }).checksum
    : null;
}

function stampFor(spec: AlignedSpec): Record<string, unknown> {
  return {
    packages: spec.packages.map((p) => `${p.pkg}=${p.version}`),
    english: builtChecksum(spec.english.id),
    pivot: pivotOf(spec).map((d) => builtChecksum(d.id)),
    // The vocabulary flags come from the language's data (build/vocab-flags.ts): a file rebuilt
    // with Debian data it went without (German synonyms) rebuilds the model.
    languageData: fileChecksum(languageFile(spec.language)),
    projectionVersion: spec.english.projectionVersion,
    importerVersion: IMPORTER_VERSION,
    formatVersion: ARTIFACT_FORMAT_VERSION,
  };
}

export function alignedModelIsFresh(spec: AlignedSpec): boolean {
  return (
    fs.existsSync(alignedModelFile(spec)) &&
    fs.existsSync(alignedManifestFile(spec)) &&
    fs.existsSync(alignedTranslationsFile(spec)) &&
    stampMatches(stampFile(spec), stampFor(spec))
  );
}

function artifactsOf(spec: AlignedSpec): R2Artifact[] {
  return [
    { key: R2_KEYS.model(spec.id), file: alignedModelFile(spec), contentType: 'application/octet-stream' },
    { key: R2_KEYS.modelManifest(spec.id), file: alignedManifestFile(spec), contentType: 'application/json' },
  ];
}

// ---------------------------------------------------------------------------------------------
// Source spaces
// ---------------------------------------------------------------------------------------------

/** The unit vectors of a model artifact (dequantized) as a projection source, rows in rank order. */
export function artifactSpace(file: string, compoundHeads = false): ArraySpace {
  const a = parseArtifact(readArrayBuffer(file));
  const vectors = new Float32Array(a.size * a.dims);
  for (let r = 0; r < a.size; r++) {
    const s = a.scales[r]!;
    for (let d = 0; d < a.dims; d++) vectors[r * a.dims + d] = a.rows[r * a.dims + d]! * s;
  }
  const words = new Array<string>(a.size);
  for (let r = 0; r < a.size; r++) words[r] = decodeWord(a.vocab, a.wordOffsets, r);
  return new ArraySpace(a.dims, words, vectors, compoundHeads);
}

// ---------------------------------------------------------------------------------------------
// Dictionaries per language
// ---------------------------------------------------------------------------------------------

type Translations = Map<string, Array<{ space: SourceSpace; phrase: string }>>;

function addAll(out: Translations, dict: Dictionary, space: SourceSpace): void {
  for (const [word, phrases] of dict) {
    let list = out.get(word);
    if (!list) out.set(word, (list = []));
    for (const phrase of phrases) list.push({ space, phrase });
  }
}

function readDictd(root: string, name: string): Dictionary {
  const dir = path.join(root, 'usr/share/dictd');
  return parseDictd(
    fs.readFileSync(path.join(dir, `${name}.index`), 'utf8'),
    fs.readFileSync(path.join(dir, `${name}.dict.dz`)),
  );
}

interface Gathered {
  translations: Translations;
  /** Lower value = earlier row (ja: JMdict common entries first). */
  priority?: (w: ProjectedWord) => number;
  counts: Record<string, number>;
}

function gather(spec: AlignedSpec, roots: Map<string, string>, english: SourceSpace): Gathered {
  const translations: Translations = new Map();
  if (spec.language === 'de') {
    const dict = parseDing(fs.readFileSync(path.join(roots.get('trans-de-en')!, 'usr/share/trans/de-en'), 'utf8'), {
      mainEntriesFirst: spec.english.projectionVersion >= 3,
    });
    addAll(translations, dict, english);
    return { translations, counts: { dingHeadwords: dict.size } };
  }
  if (spec.language === 'fr') {
    const fraEng = mergeDictionaries(
      readDictd(roots.get('dict-freedict-fra-eng')!, 'freedict-fra-eng'),
      reverseDictionary(readDictd(roots.get('dict-freedict-eng-fra')!, 'freedict-eng-fra')),
    );
    const fraDeu = mergeDictionaries(
      readDictd(roots.get('dict-freedict-fra-deu')!, 'freedict-fra-deu'),
      reverseDictionary(readDictd(roots.get('dict-freedict-deu-fra')!, 'freedict-deu-fra')),
    );
    addAll(translations, fraEng, english);
    addAll(translations, fraDeu, artifactSpace(modelFile(spec.pivot!), true));
    return { translations, counts: { frEnHeadwords: fraEng.size, frDeHeadwords: fraDeu.size } };
  }
  const raw = fs.readFileSync(path.join(roots.get('edict')!, 'usr/share/edict/edict'));
  const { dict, common } = parseEdict(new TextDecoder('euc-jp').decode(raw));
  addAll(translations, dict, english);
  return {
    translations,
    priority: (w) => (common.has(w.word) ? 0 : 1),
    counts: { edictForms: dict.size, commonForms: common.size },
  };
}

// ---------------------------------------------------------------------------------------------
// Build
// ---------------------------------------------------------------------------------------------

/** Writes projected words as a word2vec binary file (the importer's input). */
function writeWord2vecBinary(file: string, words: ProjectedWord[], dims: number): void {
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, `${words.length} ${dims}\n`);
    const buf = Buffer.alloc(dims * 4);
    for (const w of words) {
      fs.writeSync(fd, `${w.word} `);
      for (let d = 0; d < dims; d++) buf.writeFloatLE(w.vector[d]!, d * 4);
      fs.writeSync(fd, buf);
      fs.writeSync(fd, '\n');
    }
  } finally {
    fs.closeSync(fd);
  }
}

function writeTranslations(spec: AlignedSpec, translations: Translations, english: SourceSpace): void {
  const lines: string[] = [];
  for (const [word, list] of translations) {
    const en = [
      ...new Set(
        list
          .filter((t) => t.space === english && !/\s/.test(t.phrase.trim()) && english.rank(t.phrase.trim()) > 0)
          .map((t) => t.phrase.trim().toLowerCase()),
      ),
    ].slice(0, 5);
    if (en.length > 0) lines.push(`${word}\t${en.join('\t')}`);
  }
  writeAtomic(alignedTranslationsFile(spec), `${lines.join('\n')}\n`);
}

/** Reads the translations sidecar: word -> English words. */
export function readAlignedTranslations(spec: AlignedSpec): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const file = alignedTranslationsFile(spec);
  if (!fs.existsSync(file)) return out;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const [w, ...en] = line.split('\t');
    if (w && en.length) out.set(w, en);
  }
  return out;
}

/** True when `apt-get` and `dpkg-deb` can be run here. */
export function aptAvailable(): boolean {
  return debianToolsAvailable();
}

export interface BuildResult {
  id: string;
  words: number;
  headwords: number;
  counts: Record<string, number>;
  ms: number;
}

/**
 * What the build log and the skip report call a model: "the fr aligned model" (the models of one
 * language on each English base need the same packages: the report says so once).
 */
const modelWhat = (spec: AlignedSpec): string => `the ${spec.language} aligned model`;

/** Downloads the dictionaries and builds one aligned model (its English base and pivot must exist). */
export async function buildAlignedModel(spec: AlignedSpec, options: { progress?: boolean } = {}): Promise<BuildResult> {
  const t0 = performance.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `aligned-${spec.language}-`));
  try {
    const roots = new Map<string, string>();
    for (const p of spec.packages) {
      // fetchDebianFile notes for the skip report why a package cannot be had.
      const got = fetchDebianFile(p, tmp, modelWhat(spec));
      if ('missing' in got) throw new DebianPackageMissing(p.pkg, p.version, got.missing, got.retryAt, true);
      roots.set(p.pkg, got.file.slice(0, got.file.length - p.file.length));
    }
    const through = [spec.english.id, ...pivotOf(spec).map((d) => d.id)].join(' and ');
    console.error(`[build] aligned model ${spec.id} (Debian dictionaries, projected through ${through})`);
    const english = artifactSpace(modelFile(spec.english.id));
    const { translations, priority, counts } = gather(spec, roots, english);
    const projected: ProjectedWord[] = [];
    const bar =
      options.progress !== false && process.stderr.isTTY
        ? new cliProgress.SingleBar(
            {
              format: `[model:build] ${spec.id} [{bar}] {percentage}% | {value}/{total} headwords | ETA {eta}s`,
              stream: process.stderr,
              hideCursor: true,
            },
            cliProgress.Presets.shades_classic,
          )
        : null;
    bar?.start(translations.size, 0);
    let i = 0;
    for (const [word, list] of translations) {
      const p = projectWord(word, list, { senseOrder: spec.english.projectionVersion >= 3 });
      if (p) projected.push(p);
      if (++i % 2000 === 0) bar?.update(i);
    }
    bar?.update(i);
    bar?.stop();
    orderProjected(projected, priority);
    writeTranslations(spec, translations, english);
    const input = path.join(tmp, `${spec.id}.bin`);
    writeWord2vecBinary(input, projected, english.dims);
    await importModel({
      input,
      format: 'w2v-bin',
      id: spec.id,
      language: spec.language,
      country: spec.country,
      version: `${spec.english.projectionVersion}-int8.${IMPORTER_VERSION}`,
      tag: spec.tag,
      sources: spec.sources,
      features: spec.features,
      trainingYear: spec.trainingYear,
      trainingMonth: spec.trainingMonth,
      tokenCount: 6_000_000_000,
      license: spec.license,
      hasTranslation: true,
      // The models projected onto GloVe predate the field: without it they stay byte for byte as built then.
      englishModelId: spec.english.id === LEGACY_ENGLISH_MODEL_ID ? undefined : spec.english.id,
      out: alignedModelFile(spec),
      progress: false,
    });
    writeStamp(stampFile(spec), stampFor(spec));
    return {
      id: spec.id,
      words: projected.length,
      headwords: translations.size,
      counts,
      ms: Math.round(performance.now() - t0),
    };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Builds (when missing or stale) the model and what it projects through. A package whose recorded
 * skip still holds (build/debian.ts blockedDownload) is not tried again, and said again.
 */
async function ensureOne(spec: AlignedSpec, progress: boolean): Promise<R2Artifact[]> {
  for (const dep of pivotOf(spec)) await ensureOne(dep, progress);
  if (alignedModelIsFresh(spec)) return artifactsOf(spec);
  for (const p of spec.packages) {
    const blocked = blockedDownload(p);
    if (blocked) {
      // Said by every run that skips it (a failure of buildAside's child, which says nothing, included).
      noteDebianSkip(modelWhat(spec), p, blocked.reason, blocked.retryAt);
      throw new DebianPackageMissing(p.pkg, p.version, blocked.reason, blocked.retryAt, true);
    }
  }
  await ensureEnglishModel(spec.english.id);
  return withLock(
    lockFile(spec),
    15 * 60_000,
    () => alignedModelIsFresh(spec),
    async () => {
      const r = await buildAlignedModel(spec, { progress });
      console.error(`[build] ${r.id}: ${r.words} words from ${r.headwords} headwords in ${(r.ms / 1000).toFixed(1)} s`);
      return artifactsOf(spec);
    },
    () => artifactsOf(spec),
  );
}

/** Ensures an English base model (its own ensure step builds it when missing or stale). */
async function ensureEnglishModel(id: string): Promise<void> {
  if (id === DEFAULT_MODEL_ID) await ensureDefaultModel();
  else if (id === GLOVE_MODEL_ID) await ensureGloveModel();
  else throw new Error(`no build step for the English model ${id}`);
}

/** The aligned models that exist on disk, of `specs` (default: every one). */
export function builtAligned(specs: readonly AlignedSpec[] = ALIGNED_MODELS): AlignedSpec[] {
  return specs.filter((s) => fs.existsSync(alignedModelFile(s)) && fs.existsSync(alignedManifestFile(s)));
}

/** The languages whose default aligned model (ALIGNED) exists on disk (tests and benchmarks use these). */
export function builtAlignedLanguages(): AlignedLanguage[] {
  return ALIGNED_LANGUAGES.filter((l) => builtAligned([ALIGNED[l]]).length > 0);
}

/** A line for reports that find no aligned model (eval/multilingual.ts). */
export const SKIP_LINE =
  '[build] aligned de/fr/ja models skipped: apt-get/dpkg-deb are not available here (Debian/Ubuntu needed); the catalog lists only the English models';

const packageNames = (spec: AlignedSpec): string => spec.packages.map((p) => p.pkg).join(', ');

/**
 * Ensure step: the de, fr and ja models on each English base where their Debian packages can be
 * had. A model that cannot be built (no apt-get, a failed download, French without its German
 * model, a missing English base) is noted for the run's one skip report or logged, and whatever
 * aligned models exist are served.
 */
export async function ensureAlignedModels(options: EnsureOptions = {}): Promise<R2Artifact[]> {
  const fresh = ALIGNED_MODELS.filter(alignedModelIsFresh);
  if (fresh.length === ALIGNED_MODELS.length) return fresh.flatMap(artifactsOf);
  return reportDebianSkips(async () => {
    if (!aptAvailable()) {
      for (const spec of ALIGNED_MODELS)
        if (!alignedModelIsFresh(spec)) {
          spec.packages.forEach(recordToolsMissing);
          noteDebianSkip(modelWhat(spec), { pkg: packageNames(spec) }, NO_DEBIAN_TOOLS, null);
        }
      return builtAligned().flatMap(artifactsOf);
    }
    const out: R2Artifact[] = [];
    const unavailable = new Map<string, DebianPackageMissing>();
    const { aside, child } = buildAside();
    // This process builds the other base's models first; it reaches the child's last (their locks
    // wait for the child, or build what it left).
    const order = [...ALIGNED_MODELS.filter((s) => !aside.includes(s)), ...aside];
    for (const spec of order) {
      const dep = spec.pivot && unavailable.has(spec.pivot) ? alignedSpec(spec.pivot)! : null;
      try {
        if (dep) {
          // Projected through a model that could not be built: skipped for the same cause, said once.
          const cause = unavailable.get(dep.id)!;
          if (cause.noted)
            noteDebianSkip(
              modelWhat(spec),
              { pkg: `${cause.pkg}, through ${modelWhat(dep)}` },
              cause.reason,
              cause.retryAt,
            );
          unavailable.set(spec.id, cause);
        } else out.push(...(await ensureOne(spec, child === null)));
      } catch (err) {
        if (err instanceof DebianPackageMissing) unavailable.set(spec.id, err);
        else console.error(`[build] aligned model ${spec.id} skipped: ${(err as Error).message.split('\n')[0]}`);
      }
      if (!out.some((a) => a.file === alignedModelFile(spec)) && builtAligned([spec]).length > 0)
        out.push(...artifactsOf(spec));
      // Served while the next one builds (a first `npm start`, build/start.ts).
      if (builtAligned([spec]).length > 0) await options.onArtifacts?.(artifactsOf(spec));
    }
    await child;
    // A model listed twice (fr pulls de) is seeded once.
    return [...new Map(out.map((a) => [a.key, a])).values()];
  });
}

/**
 * When the models of both English bases are stale (a fresh clone), the first base's (GloVe's)
 * build in a child process while this one builds the rest: each chain is one core's work (about
 * 45 s each on the reference machine), and the machines have two. The child says nothing of
 * Debian skips: a package it could not get is recorded (build/debian.ts), so this process finds
 * it and says it once. A child that fails leaves its models stale, and they are built here.
 */
function buildAside(): { aside: AlignedSpec[]; child: Promise<void> | null } {
  const stale = ALIGNED_MODELS.filter((s) => !alignedModelIsFresh(s));
  const bases = [...new Set(stale.map((s) => s.english.id))];
  if (bases.length < 2 || os.availableParallelism() < 2) return { aside: [], child: null };
  const aside = stale.filter((s) => s.english.id === bases[0]);
  const child = runBuildChild(
    fileURLToPath(import.meta.url),
    [CHILD_FLAG, ...aside.map((s) => s.id)],
    `aligned models on ${bases[0]}`,
    'building them here',
  );
  return { aside, child };
}

const CHILD_FLAG = '--aside';

/** buildAside's child: ensures these models (under their locks, without progress bars). */
async function ensureAside(ids: string[]): Promise<void> {
  for (const id of ids) {
    const spec = alignedSpec(id);
    if (!spec) throw new Error(`no aligned model ${id}`);
    try {
      await ensureOne(spec, false);
    } catch (err) {
      if (!(err instanceof DebianPackageMissing)) throw err;
    }
  }
}

async function main(argv: string[]): Promise<void> {
  if (argv[0] === CHILD_FLAG) return ensureAside(argv.slice(1));
  const force = argv.includes('--force');
  const names = argv.filter((a) => !a.startsWith('--'));
  // A language names both its models (GloVe's first); an id names one.
  const specs = names.flatMap((n) =>
    (ALIGNED_LANGUAGES as readonly string[]).includes(n)
      ? ALIGNED_MODELS.filter((s) => s.language === n)
      : (alignedSpec(n) ?? []),
  );
  if (names.length === 0 || specs.length < names.length) {
    const ids = ALIGNED_MODELS.map((s) => s.id).join('|');
    throw new Error(`usage: npm run model:build -- ${ALIGNED_LANGUAGES.join('|')}|${ids} [...] [--force]`);
  }
  if (!aptAvailable()) {
    console.error(SKIP_LINE);
    return;
  }
  // Asked for by name: a skip recorded by an earlier run (even within the hour) is tried again now.
  retryDebianNow();
  await reportDebianSkips(async () => {
    for (const spec of specs) {
      await ensureEnglishModel(spec.english.id);
      for (const dep of pivotOf(spec)) if (!alignedModelIsFresh(dep)) await ensureOne(dep, true);
      if (force || !alignedModelIsFresh(spec)) {
        const r = await buildAlignedModel(spec);
        console.log(JSON.stringify(r));
      } else console.error(`[model:build] ${spec.id} is up to date (--force rebuilds)`);
    }
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? `error: ${err.message}` : err);
    process.exit(1);
  });
}
