/**
 * Tokenizer language data for the text endpoints: lang/{language}.bin from R2, parsed once per
 * isolate (one in-flight Promise per language; a failure is not cached, so the next request
 * retries). Missing or unreadable data: 503 LANGUAGE_DATA_UNAVAILABLE.
 */
import { parseLanguageData, tokenize, type LanguageData } from '../core/tokenizer';
import { languageLexicon, type TokenLike, type WordLexicon } from '../core/scoring';
import { R2_KEYS } from '../core/types';
import { ApiError } from './problem';
import type { Env } from './env';
import { loadsInFlight, sharedLoad, type WaitUntil } from './shared-load';

const cache = new Map<string, Promise<LanguageData>>();
/** Bytes of each language's data once parsed (the model registry's memory budget counts them). */
const sizes = new Map<string, number>();

/** Bytes of all language data parsed in this isolate. */
export function languageBytes(): number {
  let total = 0;
  for (const b of sizes.values()) total += b;
  return total;
}

export async function getLanguageData(env: Env, language: string, ctx?: WaitUntil): Promise<LanguageData> {
  const p = sharedLoad(cache, language, ctx, async () => {
    const obj = await env.ARTIFACTS.get(R2_KEYS.languageData(language));
    if (!obj) throw new Error(`${R2_KEYS.languageData(language)} is missing`);
    const data = parseLanguageData(await obj.arrayBuffer());
    sizes.set(language, data.byteLength);
    return data;
  });
  try {
    return await p;
  } catch (err) {
    throw new ApiError('LANGUAGE_DATA_UNAVAILABLE', `Tokenizer data for language '${language}' could not be loaded: ${(err as Error).message}`);
  }
}

/** True when the language's data is parsed in this isolate. */
export function languageLoaded(language: string): boolean {
  return sizes.has(language);
}

/**
 * Forgets a language's data (its last model was evicted: worker/models.ts). Requests still using
 * it keep their reference; the next request loads it again.
 */
export function dropLanguageData(language: string): void {
  cache.delete(language);
  sizes.delete(language);
}

/** A tokenize function bound to the language's data. */
export async function getTokenizer(env: Env, language: string, ctx?: WaitUntil): Promise<(text: string) => TokenLike[]> {
  const data = await getLanguageData(env, language, ctx);
  return (text: string) => tokenize(text, data, { synonyms: false }).tokens;
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

/** Stop-word and dictionary rules of the language for seed expansion (core/scoring/candidates.ts). */
export async function getLexicon(env: Env, language: string, ctx?: WaitUntil): Promise<WordLexicon> {
  return languageLexicon(await getLanguageData(env, language, ctx));
}
