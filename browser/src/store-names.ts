/**
 * Names of the offline scorer's IndexedDB storage (idb-keyval: one database, one object store),
 * shared by the worker (cache.ts) and the page (head-offer.ts), in a module of its own so the
 * page bundle does not pull in the worker's modules.
 */
export const DB_NAME = 'embedding-edge-offline';
export const STORE_NAME = 'artifacts';

/** The OPFS copy of a cached model's head (head-file.ts). */
export const headFileName = (id: string, version: string): string =>
  `${encodeURIComponent(id)}@${encodeURIComponent(version)}.head`;

/** The OPFS copy of a language's tokenizer data (cache.ts, source.ts). */
export const languageFileName = (language: string): string => `lang-${encodeURIComponent(language)}.bin`;
