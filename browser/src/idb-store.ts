/**
 * The offline scorer's IndexedDB object store (idb-keyval), in a module of its own so the worker's
 * first chunk (early-reads.ts) can read from it without the cache's other imports.
 */
import { createStore, type UseStore } from 'idb-keyval';
import { DB_NAME, STORE_NAME } from './store-names';

let store: UseStore | null = null;
export const idb = (): UseStore => (store ??= createStore(DB_NAME, STORE_NAME));
