/**
 * Tokenizer language data for the text endpoints: lang/{language}.bin from R2, parsed once per
 * isolate (one in-flight Promise per language; a failure is not cached, so the next request
 * retries). Missing or unreadable data: 503 LANGUAGE_DATA_UNAVAILABLE (core/engine.ts).
 */
import { parseLanguageData, type LanguageData } from '../../core/tokenizer';
import { R2_KEYS } from '../../core/storage-keys';
import { loadsInFlight, sharedLoad, type WaitUntil } from '../../core/shared-load';
import type { Env } from '../env';

const cache = new Map<string, Promise<LanguageData>>();
/** Bytes of each language's data once parsed (the model registry's memory budget counts them). */
const sizes = new Map<string, number>();

/** Bytes of all language data parsed in this isolate. */
export function languageBytes(): number {
  let total = 0;
  for (const b of sizes.values()) total += b;
  return total;
}

/** The parsed data of `language` (rejects when R2 has none or it cannot be parsed). */
export function getLanguageData(env: Env, language: string, ctx?: WaitUntil): Promise<LanguageData> {
  return sharedLoad(cache, language, ctx, async () => {
    const obj = await env.ARTIFACTS.get(R2_KEYS.languageData(language));
    if (!obj) throw new Error(`${R2_KEYS.languageData(language)} is missing`);
    const data = parseLanguageData(await obj.arrayBuffer());
    sizes.set(language, data.byteLength);
    return data;
  });
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
}

/** Bytes of the language data loaded in this isolate (diagnostics). */
export async function languageMemory(): Promise<Array<{ language: string; bytes: number }>> {
  const out: Array<{ language: string; bytes: number }> = [];
  for (const [language, p] of cache) {
    try {
      out.push({ language, bytes: (await p).byteLength });
    } catch {
      // failed loads hold nothing
    }
  }
  return out;
}

/** Languages this isolate holds data for (diagnostics; loads in flight: languageLoadsInFlight). */
export function languageCacheSize(): number {
  return cache.size - loadsInFlight(cache);
}

export function languageLoadsInFlight(): number {
  return loadsInFlight(cache);
}
