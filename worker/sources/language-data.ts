/**
 * Tokenizer language data for the text endpoints: lang/{language}.bin from R2, parsed once per
 * isolate (one in-flight Promise per language; a failure is not cached, so the next request
 * retries). Missing or unreadable data: 503 LANGUAGE_DATA_UNAVAILABLE (core/engine.ts).
 *
 * The isolate's memory budget (./models.ts) counts every language's bytes: parsed data, data
 * being read, and the data a loaded model's requests will read (its size from R2, learned once).
 * A load first asks the budget for room (`admit`), like a model load.
 */
import { parseLanguageData, type LanguageData } from '../../core/tokenizer';
import { R2_KEYS } from '../../core/storage-keys';
import { loadsInFlight, sharedLoad, type WaitUntil } from '../../core/shared-load';
import type { Env } from '../env';

const cache = new Map<string, Promise<LanguageData>>();
/** Bytes of each language's data once parsed. */
const sizes = new Map<string, number>();
/**
 * The loads of a language now, with their bytes (one entry per load: a dropped language may be
 * read twice at once). A load's bytes are counted once it is admitted (in the same turn as the
 * budget's look that let it in), not while it waits for room.
 */
const loading = new Set<{ language: string; bytes: number; admitted: boolean }>();

/** What the budget's admission of one language load needs (./memory-budget.ts admitLanguage). */
export interface LanguageAdmission {
  /** `f` evaluated as if the load were admitted (what the budget would count then). */
  counted<T>(f: () => T): T;
  /** Admits the load: its bytes are counted from now on. */
  admit(): void;
}
/** Drops per language (a load started before the last drop keeps nothing). */
const drops = new Map<string, number>();
const isLoading = (language: string): boolean => [...loading].some((l) => l.admitted && l.language === language);
/** Size of each language's R2 object, once learned (a reserve for data not read yet). */
const objectSizes = new Map<string, number>();

/** Room kept for a language whose size is not known yet (the largest, de, is 11.3 MB). */
export const LANGUAGE_RESERVE_BYTES = 12_000_000;

/**
 * Bytes the budget counts for language data: parsed and loading data, and for each language of
 * `spoken` (the loaded models' languages, plus one about to be loaded) that is neither, its size.
 */
export function languageBytes(spoken: Iterable<string> = []): number {
  let total = 0;
  for (const b of sizes.values()) total += b;
  for (const l of loading) if (l.admitted) total += l.bytes;
  for (const language of new Set(spoken))
    if (!sizes.has(language) && !isLoading(language)) total += objectSizes.get(language) ?? LANGUAGE_RESERVE_BYTES;
  return total;
}

/** The size of the language's data in R2 (0 when there is none), learned once per isolate. */
export async function languageObjectSize(env: Env, language: string): Promise<number> {
  const known = sizes.get(language) ?? objectSizes.get(language);
  if (known !== undefined) return known;
  const head = await env.ARTIFACTS.head(R2_KEYS.languageData(language));
  // None in R2: nothing to reserve (a later upload is admitted when it is read).
  const size = head?.size ?? 0;
  objectSizes.set(language, size);
  return size;
}

/**
 * The parsed data of `language` (rejects when R2 has none or it cannot be parsed). `admit`
 * waits until the budget has room for the data (./memory-budget.ts admitLanguage) or rejects with 503.
 */
export function getLanguageData(
  env: Env,
  language: string,
  ctx: WaitUntil | undefined,
  admit: (language: string, load: LanguageAdmission) => Promise<void>,
): Promise<LanguageData> {
  return sharedLoad(cache, language, ctx, async () => {
    const size = await languageObjectSize(env, language);
    // Counted from its admission (while it is read), and by its own admission while room is made.
    const load = { language, bytes: size, admitted: false };
    loading.add(load);
    const generation = drops.get(language) ?? 0;
    try {
      await admit(language, {
        counted(f) {
          const was = load.admitted;
          load.admitted = true;
          try {
            return f();
          } finally {
            load.admitted = was;
          }
        },
        admit() {
          load.admitted = true;
        },
      });
      const obj = await env.ARTIFACTS.get(R2_KEYS.languageData(language));
      if (!obj) throw new Error(`${R2_KEYS.languageData(language)} is missing`);
      const data = parseLanguageData(await obj.arrayBuffer());
      // Dropped while it was read (its last model was evicted): not kept.
      if ((drops.get(language) ?? 0) === generation) sizes.set(language, data.byteLength);
      return data;
    } finally {
      loading.delete(load);
    }
  });
}

/** Parsed languages that no language of `spoken` names (the budget may drop them: dropLanguageData). */
export function unspokenLanguages(spoken: ReadonlySet<string>): string[] {
  return [...sizes.keys()].filter((language) => !spoken.has(language));
}

/** Languages being read now. */
export function languagesLoading(): number {
  return loading.size;
}

/** True when the language's data is parsed in this isolate. */
export function languageLoaded(language: string): boolean {
  return sizes.has(language);
}

/**
 * Forgets a language's data (its last model was evicted: worker/sources/models.ts). Requests still using
 * it keep their reference; the next request loads it again.
 */
export function dropLanguageData(language: string): void {
  cache.delete(language);
  sizes.delete(language);
  drops.set(language, (drops.get(language) ?? 0) + 1);
}

/** Bytes of the language data loaded in this isolate (diagnostics). */
export function languageMemory(): Array<{ language: string; bytes: number }> {
  return [...sizes].map(([language, bytes]) => ({ language, bytes }));
}

/** Languages this isolate holds data for (diagnostics; loads in flight: languageLoadsInFlight). */
export function languageCacheSize(): number {
  return sizes.size;
}

export function languageLoadsInFlight(): number {
  return loadsInFlight(cache);
}
