/**
 * German, French and Japanese models aligned to English (decisions.md "Languages and aligned
 * models"): each foreign word's vector is the weighted, normalised sum of its dictionary
 * translations' vectors in the English default model (core/projection.ts), so coordinates mean
 * the same in every language. Dictionaries are pinned Debian packages (`apt-get download`,
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
 *   npm run model:build -- de|fr|ja [--force]
 *
 * `npm start`, the test setup and the benchmarks build them through ensureAlignedModels; where a
 * package cannot be had (no apt-get, no network) the model is skipped, said in the run's one
 * Debian skip report (build/debian.ts), and tried again with the package's next download (at
 * most once an hour); the catalog lists only what exists.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import cliProgress from 'cli-progress';
import { ARTIFACT_FORMAT_VERSION, decodeWord, parseArtifact } from '../core/artifact';
import {
  ArraySpace,
  COMPOUND_FEATURE,
  orderProjected,
  projectWord,
  type ProjectedWord,
  type SourceSpace,
} from '../core/projection';
import { R2_KEYS } from '../core/storage-keys';
import { ensureGloveModel } from './glove-model';
import {
  mergeDictionaries,
  parseDictd,
  parseDing,
  parseEdict,
  reverseDictionary,
  type Dictionary,
} from './dictionaries';
import type { EnsureOptions, R2Artifact } from './ensure';
import { importModel, IMPORTER_VERSION } from './import-model';
import {
  DebianPackageMissing,
  debianToolsAvailable,
  fetchDebianFile,
  NO_DEBIAN_TOOLS,
  noteDebianSkip,
  recentFailure,
  reportDebianSkips,
} from './debian';
import { readArrayBuffer } from './load-model';
import { fileChecksum, stampMatches, withLock, writeAtomic, writeStamp } from './stamp';
import {
  GLOVE_MODEL_FILE,
  GLOVE_MODEL_ID,
  GLOVE_MODEL_MANIFEST_FILE,
  languageFile,
  modelFile,
  modelManifestFile,
  MODELS_DIR,
} from './paths';

/** Bump when the projection's output for the same dictionaries changes. */
export const PROJECTION_VERSION = 2;

export const ALIGNED_LANGUAGES = ['de', 'fr', 'ja'] as const;
export type AlignedLanguage = (typeof ALIGNED_LANGUAGES)[number];

interface DebianPin {
  pkg: string;
  version: string;
  /** A file of the package (its unpacked root is found from it). */
  file: string;
}

export interface AlignedSpec {
  id: string;
  language: AlignedLanguage;
  country: string;
  tag: string;
  packages: DebianPin[];
  /** Dictionary release used as the training date. */
  trainingYear: string;
  trainingMonth: string;
  sources: string[];
  license: string;
  features: string[];
}

const ENGLISH_SOURCES = ['GloVe 6B 100d (Wikipedia 2014, Gigaword 5) via en-glove-6b-100d'];
const BASE_FEATURES = ['dictionary-projected', 'aligned-en', 'frequency-ordered', 'int8-quantized'];

export const ALIGNED: Record<AlignedLanguage, AlignedSpec> = {
  de: {
    id: 'de-aligned-glove-6b-100d',
    language: 'de',
    country: 'DE',
    tag: 'GloVe 6B 100d via Ding de-en',
    packages: [{ pkg: 'trans-de-en', version: '1.9-6', file: 'usr/share/trans/de-en' }],
    // Ding "Version :: devel 2023-01-30"
    trainingYear: '2023',
    trainingMonth: '01',
    sources: ['Ding de-en dictionary 2023-01-30 (debian:trans-de-en 1.9-6)', ...ENGLISH_SOURCES],
    license: 'GPL-2.0-or-later (Ding de-en dictionary, TU Chemnitz) / PDDL-1.0 (GloVe vectors)',
    features: [...BASE_FEATURES, COMPOUND_FEATURE],
  },
  fr: {
    id: 'fr-aligned-glove-6b-100d',
    language: 'fr',
    country: 'FR',
    tag: 'GloVe 6B 100d via FreeDict fr-en and WikDict fr-de',
    packages: [
      { pkg: 'dict-freedict-fra-eng', version: '2022.04.21-1', file: 'usr/share/dictd/freedict-fra-eng.index' },
      { pkg: 'dict-freedict-eng-fra', version: '2022.04.21-1', file: 'usr/share/dictd/freedict-eng-fra.index' },
      { pkg: 'dict-freedict-fra-deu', version: '2022.12.07-2', file: 'usr/share/dictd/freedict-fra-deu.index' },
      { pkg: 'dict-freedict-deu-fra', version: '2022.12.07-2', file: 'usr/share/dictd/freedict-deu-fra.index' },
    ],
    // The newest of the four dictionary releases (WikDict fra-deu/deu-fra 2022-12-07).
    trainingYear: '2022',
    trainingMonth: '12',
    sources: [
      'FreeDict fra-eng 0.4.1 and eng-fra 0.1.6 (debian:dict-freedict-fra-eng, dict-freedict-eng-fra 2022.04.21-1)',
      'WikDict fra-deu and deu-fra (debian:dict-freedict-fra-deu, dict-freedict-deu-fra 2022.12.07-2), through de-aligned-glove-6b-100d',
      'Ding de-en dictionary 2023-01-30 (debian:trans-de-en 1.9-6)',
      ...ENGLISH_SOURCES,
    ],
    license: 'GPL-2.0-or-later (FreeDict, Ding) and CC-BY-SA-3.0 (WikDict, from Wiktionary) / PDDL-1.0 (GloVe vectors)',
    features: [...BASE_FEATURES, 'pivot-de'],
  },
  ja: {
    id: 'ja-aligned-glove-6b-100d',
    language: 'ja',
    country: 'JP',
    tag: 'GloVe 6B 100d via JMdict/EDICT (approximate)',
    packages: [{ pkg: 'edict', version: '2021.02.03-1', file: 'usr/share/edict/edict' }],
    trainingYear: '2021',
    trainingMonth: '02',
    sources: ['JMdict/EDICT 2021-02-03, EDRDG (debian:edict 2021.02.03-1)', ...ENGLISH_SOURCES],
    license:
      'CC-BY-SA-3.0 (JMdict/EDICT, Electronic Dictionary Research and Development Group) / PDDL-1.0 (GloVe vectors)',
    features: [...BASE_FEATURES, 'kana-and-kanji-forms'],
  },
};

export const alignedModelFile = (lang: AlignedLanguage): string => modelFile(ALIGNED[lang].id);
export const alignedManifestFile = (lang: AlignedLanguage): string => modelManifestFile(ALIGNED[lang].id);
/** word<TAB>English translation words (single words in the English vocabulary, at most 5): the cross-lingual mapper check. */
export const alignedTranslationsFile = (lang: AlignedLanguage): string =>
  path.join(MODELS_DIR, `${ALIGNED[lang].id}.translations.tsv`);
const stampFile = (lang: AlignedLanguage): string => path.join(MODELS_DIR, `${ALIGNED[lang].id}.stamp.json`);
const lockFile = (lang: AlignedLanguage): string => path.join(MODELS_DIR, `${ALIGNED[lang].id}.lock`);
/** French projects through the German model, so German is built first. */
const DEPENDS: Record<AlignedLanguage, AlignedLanguage[]> = { de: [], fr: ['de'], ja: [] };

function stampFor(lang: AlignedLanguage): Record<string, unknown> {
  return {
    packages: ALIGNED[lang].packages.map((p) => `${p.pkg}=${p.version}`),
    english: fs.existsSync(GLOVE_MODEL_FILE)
      ? JSON.parse(fs.readFileSync(GLOVE_MODEL_MANIFEST_FILE, 'utf8')).checksum
      : null,
    pivot: DEPENDS[lang].map((d) =>
      fs.existsSync(alignedManifestFile(d))
        ? JSON.parse(fs.readFileSync(alignedManifestFile(d), 'utf8')).checksum
        : null,
    ),
    // The vocabulary flags come from the language's data (build/vocab-flags.ts): a file rebuilt
    // with Debian data it went without (German synonyms) rebuilds the model.
    languageData: fileChecksum(languageFile(lang)),
    projectionVersion: PROJECTION_VERSION,
    importerVersion: IMPORTER_VERSION,
    formatVersion: ARTIFACT_FORMAT_VERSION,
  };
}

export function alignedModelIsFresh(lang: AlignedLanguage): boolean {
  return (
    fs.existsSync(alignedModelFile(lang)) &&
    fs.existsSync(alignedManifestFile(lang)) &&
    fs.existsSync(alignedTranslationsFile(lang)) &&
    stampMatches(stampFile(lang), stampFor(lang))
  );
}

function artifactsOf(lang: AlignedLanguage): R2Artifact[] {
  const id = ALIGNED[lang].id;
  return [
    { key: R2_KEYS.model(id), file: alignedModelFile(lang), contentType: 'application/octet-stream' },
    { key: R2_KEYS.modelManifest(id), file: alignedManifestFile(lang), contentType: 'application/json' },
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

function gather(lang: AlignedLanguage, roots: Map<string, string>, english: SourceSpace): Gathered {
  const translations: Translations = new Map();
  if (lang === 'de') {
    const dict = parseDing(fs.readFileSync(path.join(roots.get('trans-de-en')!, 'usr/share/trans/de-en'), 'utf8'));
    addAll(translations, dict, english);
    return { translations, counts: { dingHeadwords: dict.size } };
  }
  if (lang === 'fr') {
    const fraEng = mergeDictionaries(
      readDictd(roots.get('dict-freedict-fra-eng')!, 'freedict-fra-eng'),
      reverseDictionary(readDictd(roots.get('dict-freedict-eng-fra')!, 'freedict-eng-fra')),
    );
    const fraDeu = mergeDictionaries(
      readDictd(roots.get('dict-freedict-fra-deu')!, 'freedict-fra-deu'),
      reverseDictionary(readDictd(roots.get('dict-freedict-deu-fra')!, 'freedict-deu-fra')),
    );
    addAll(translations, fraEng, english);
    addAll(translations, fraDeu, artifactSpace(alignedModelFile('de'), true));
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

function writeTranslations(lang: AlignedLanguage, translations: Translations, english: SourceSpace): void {
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
  writeAtomic(alignedTranslationsFile(lang), `${lines.join('\n')}\n`);
}

/** Reads the translations sidecar: word -> English words. */
export function readAlignedTranslations(lang: AlignedLanguage): Map<string, string[]> {
  const out = new Map<string, string[]>();
  const file = alignedTranslationsFile(lang);
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

/** What the build log and the skip report call a model: "the fr aligned model". */
const modelWhat = (lang: AlignedLanguage): string => `the ${lang} aligned model`;

/** Downloads the dictionaries and builds one aligned model (its dependencies must exist). */
export async function buildAlignedModel(
  lang: AlignedLanguage,
  options: { progress?: boolean } = {},
): Promise<BuildResult> {
  const spec = ALIGNED[lang];
  const t0 = performance.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), `aligned-${lang}-`));
  try {
    const roots = new Map<string, string>();
    for (const p of spec.packages) {
      // fetchDebianFile notes for the skip report why a package cannot be had.
      const got = fetchDebianFile(p, tmp, modelWhat(lang));
      if ('missing' in got) throw new DebianPackageMissing(p.pkg, p.version, got.missing, got.retryAt, true);
      roots.set(p.pkg, got.file.slice(0, got.file.length - p.file.length));
    }
    const through = [GLOVE_MODEL_ID, ...DEPENDS[lang].map((d) => ALIGNED[d].id)].join(' and ');
    console.error(`[build] aligned model ${spec.id} (Debian dictionaries, projected through ${through})`);
    const english = artifactSpace(GLOVE_MODEL_FILE);
    const { translations, priority, counts } = gather(lang, roots, english);
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
      const p = projectWord(word, list);
      if (p) projected.push(p);
      if (++i % 2000 === 0) bar?.update(i);
    }
    bar?.update(i);
    bar?.stop();
    orderProjected(projected, priority);
    writeTranslations(lang, translations, english);
    const input = path.join(tmp, `${spec.id}.bin`);
    writeWord2vecBinary(input, projected, english.dims);
    await importModel({
      input,
      format: 'w2v-bin',
      id: spec.id,
      language: spec.language,
      country: spec.country,
      version: `${PROJECTION_VERSION}-int8.${IMPORTER_VERSION}`,
      tag: spec.tag,
      sources: spec.sources,
      features: spec.features,
      trainingYear: spec.trainingYear,
      trainingMonth: spec.trainingMonth,
      tokenCount: 6_000_000_000,
      license: spec.license,
      hasTranslation: true,
      out: alignedModelFile(lang),
      progress: false,
    });
    writeStamp(stampFile(lang), stampFor(lang));
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
 * Builds (when missing or stale) the model and what it projects through. A package whose download
 * failed within the hour is not tried again (DebianPackageMissing, with nothing noted: the run
 * that tried said so).
 */
async function ensureOne(lang: AlignedLanguage, progress: boolean): Promise<R2Artifact[]> {
  for (const dep of DEPENDS[lang]) await ensureOne(dep, progress);
  if (alignedModelIsFresh(lang)) return artifactsOf(lang);
  for (const p of ALIGNED[lang].packages) {
    const failed = recentFailure(p);
    if (failed) throw new DebianPackageMissing(p.pkg, p.version, failed.reason, failed.retryAt, false);
  }
  return withLock(
    lockFile(lang),
    15 * 60_000,
    () => alignedModelIsFresh(lang),
    async () => {
      const r = await buildAlignedModel(lang, { progress });
      console.error(`[build] ${r.id}: ${r.words} words from ${r.headwords} headwords in ${(r.ms / 1000).toFixed(1)} s`);
      return artifactsOf(lang);
    },
    () => artifactsOf(lang),
  );
}

/** The aligned models that exist on disk (tests and benchmarks use these). */
export function builtAlignedLanguages(): AlignedLanguage[] {
  return ALIGNED_LANGUAGES.filter((l) => fs.existsSync(alignedModelFile(l)) && fs.existsSync(alignedManifestFile(l)));
}

/** A line for reports that find no aligned model (eval/multilingual.ts). */
export const SKIP_LINE =
  '[build] aligned de/fr/ja models skipped: apt-get/dpkg-deb are not available here (Debian/Ubuntu needed); the catalog lists only the English model';

const packageNames = (lang: AlignedLanguage): string => ALIGNED[lang].packages.map((p) => p.pkg).join(', ');

/**
 * Ensure step: the de, fr and ja models where their Debian packages can be had. A model that
 * cannot be built (no apt-get, a failed download, or French without the German model) is noted
 * for the run's one skip report, and whatever aligned models exist are served.
 */
export async function ensureAlignedModels(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  const fresh = ALIGNED_LANGUAGES.filter(alignedModelIsFresh);
  if (fresh.length === ALIGNED_LANGUAGES.length) return fresh.flatMap(artifactsOf);
  return reportDebianSkips(async () => {
    if (!aptAvailable()) {
      for (const lang of ALIGNED_LANGUAGES)
        if (!alignedModelIsFresh(lang))
          noteDebianSkip(modelWhat(lang), { pkg: packageNames(lang) }, NO_DEBIAN_TOOLS, null);
      return builtAlignedLanguages().flatMap(artifactsOf);
    }
    await ensureGloveModel();
    const out: R2Artifact[] = [];
    const unavailable = new Map<AlignedLanguage, DebianPackageMissing>();
    for (const lang of ALIGNED_LANGUAGES) {
      const dep = DEPENDS[lang].find((d) => unavailable.has(d));
      try {
        if (dep) {
          // Projected through a model that could not be built: skipped for the same cause, said once.
          const cause = unavailable.get(dep)!;
          if (cause.noted)
            noteDebianSkip(
              modelWhat(lang),
              { pkg: `${cause.pkg}, through ${modelWhat(dep)}` },
              cause.reason,
              cause.retryAt,
            );
          unavailable.set(lang, cause);
        } else out.push(...(await ensureOne(lang, true)));
      } catch (err) {
        if (err instanceof DebianPackageMissing) unavailable.set(lang, err);
        else
          console.error(`[build] aligned model ${ALIGNED[lang].id} skipped: ${(err as Error).message.split('\n')[0]}`);
      }
      if (!out.some((a) => a.file === alignedModelFile(lang)) && builtAlignedLanguages().includes(lang))
        out.push(...artifactsOf(lang));
    }
    // A language listed twice (fr pulls de) is seeded once.
    return [...new Map(out.map((a) => [a.key, a])).values()];
  });
}

async function main(argv: string[]): Promise<void> {
  const force = argv.includes('--force');
  const langs = argv.filter((a) => !a.startsWith('--'));
  if (langs.length === 0 || langs.some((l) => !(ALIGNED_LANGUAGES as readonly string[]).includes(l))) {
    throw new Error(`usage: npm run model:build -- ${ALIGNED_LANGUAGES.join('|')} [...] [--force]`);
  }
  if (!aptAvailable()) {
    console.error(SKIP_LINE);
    return;
  }
  await ensureGloveModel();
  await reportDebianSkips(async () => {
    for (const lang of langs as AlignedLanguage[]) {
      for (const dep of DEPENDS[lang]) if (!alignedModelIsFresh(dep)) await ensureOne(dep, true);
      if (force || !alignedModelIsFresh(lang)) {
        const r = await buildAlignedModel(lang);
        console.log(JSON.stringify(r));
      } else console.error(`[model:build] ${ALIGNED[lang].id} is up to date (--force rebuilds)`);
    }
  });
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(err instanceof Error ? `error: ${err.message}` : err);
    process.exit(1);
  });
}
