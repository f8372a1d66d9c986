/**
 * Names of the offline scorer's storage, shared by the worker (cache.ts, head-file.ts) and the
 * page (head-offer.ts), in a module of its own so the page bundle does not pull in the worker's.
 */

/** The IndexedDB database and its one object store (idb-keyval). */
export const DB_NAME = 'embedding-edge-offline';
export const STORE_NAME = 'artifacts';

/** The Origin Private File System copy of a model's head (head-file.ts), percent-encoded. */
export const headFileName = (id: string, version: string): string =>
  `${encodeURIComponent(id)}@${encodeURIComponent(version)}.head`;
