/**
 * Names of the offline scorer's IndexedDB storage (idb-keyval: one database, one object store),
 * shared by the worker (cache.ts) and the page (head-offer.ts), in a module of its own so the
 * page bundle does not pull in the worker's modules.
 */
export const DB_NAME = 'embedding-edge-offline';
export const STORE_NAME = 'artifacts';
