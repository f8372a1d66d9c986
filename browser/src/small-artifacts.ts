/**
 * The small artifacts a model's answers need beside it: the language data of its language,
 * the stored dimension seeds and (subwordFallback) its sub-word table, each downloaded once, verified, cached in IndexedDB (cache.ts) and
 * revalidated on later loads.
 */
import { sharedLoad } from '../../core/shared-load';
import type { StoredDimensionSeeds, StoredSeed } from '../../core/scoring';
import { parseLanguageData, type LanguageData } from '../../core/tokenizer';
import { cachedArtifact, ProblemError, type ProgressFn } from './cache';
import { languageCopyName } from './early-reads';
import { phase } from './phases';
import { config } from './scorer-config';

const languages = new Map<string, Promise<LanguageData>>();
const subwordTables = new Map<string, Promise<ArrayBuffer | null>>();
let storedSeeds: Map<number, StoredSeed> | null = null;

export function loadLanguage(
  language: string,
  onProgress?: ProgressFn,
  revalidate: boolean | Promise<boolean> = true,
): Promise<LanguageData> {
  return sharedLoad(languages, language, undefined, async () => {
    const { artifact } = await cachedArtifact(
      ['lang', language],
      config.baseUrl,
      config.token,
      `/api/v1/artifacts/languages/${language}`,
      { artifact: 'language', name: language, onProgress },
      revalidate,
      // Read first from its OPFS copy: with the model's head, what a first score from the cache waits for.
      languageCopyName(language),
    );
    return phase('language-parse', () => parseLanguageData(artifact.bytes));
  });
}

/**
 * A model's sub-word table (request option subwordFallback), downloaded on the first request that
 * opts in and cached like the language data; null when the model has none (404).
 */
export function loadSubwordTable(modelId: string, onProgress?: ProgressFn): Promise<ArrayBuffer | null> {
  return sharedLoad(subwordTables, modelId, undefined, async () => {
    try {
      const { artifact } = await cachedArtifact(
        ['subword', modelId],
        config.baseUrl,
        config.token,
        `/api/v1/artifacts/models/${encodeURIComponent(modelId)}/subword-table`,
        { artifact: 'subword', name: modelId, onProgress },
      );
      return artifact.bytes;
    } catch (err) {
      if (err instanceof ProblemError && err.problem.status === 404) return null;
      throw err;
    }
  });
}

async function loadStoredSeeds(onProgress?: ProgressFn, revalidate: boolean | Promise<boolean> = true): Promise<void> {
  try {
    const { artifact } = await cachedArtifact(
      ['dimensions'],
      config.baseUrl,
      config.token,
      '/api/v1/artifacts/dimensions',
      { artifact: 'dimensions', name: 'dimensions', onProgress },
      revalidate,
    );
    const parsed = JSON.parse(new TextDecoder().decode(artifact.bytes)) as {
      data: Array<{ id: number; name: string; words: string[] }>;
    };
    storedSeeds = new Map(parsed.data.map((d) => [d.id, { words: d.words, name: d.name }]));
  } catch (err) {
    // Without the stored seeds only dimensions of type `dimension` are affected (422 as unknown).
    if (!storedSeeds) storedSeeds = new Map();
    if (!(err instanceof ProblemError)) throw err;
  }
}

/** The stored seeds of these dimension ids that are known (the others answer 422 as unknown). */
export function storedSeedsOf(ids: Iterable<number>): StoredDimensionSeeds {
  const out = new Map<number, StoredSeed>();
  for (const id of ids) {
    const seeds = storedSeeds?.get(id);
    if (seeds) out.set(id, seeds);
  }
  return out;
}

/**
 * Language data and stored seeds (cached; revalidated when `revalidate` says so: a promise lets
 * the IndexedDB reads start before the service has answered).
 */
export function loadSmall(
  language: string,
  onProgress: ProgressFn | undefined,
  revalidate: boolean | Promise<boolean>,
): Promise<[unknown, void]> {
  const p = Promise.all([
    language
      ? phase('language-data', () => loadLanguage(language, onProgress, revalidate)).catch(() => null)
      : Promise.resolve(null),
    phase('stored-seeds', () => loadStoredSeeds(onProgress, revalidate)),
  ]);
  p.catch(() => {});
  return p;
}
