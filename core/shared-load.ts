/**
 * Loads that the callers of one engine share (a model, language data, a mapper bundle, the
 * catalog): one in-flight promise per key, dropped when it fails so the next call retries.
 *
 * On the Worker such a load runs inside the request that started it. workerd cancels a request's pending I/O
 * when that request ends, so if it answered early (a sibling lookup failed, the client went
 * away) the shared promise would never settle and every later request waiting on it would hang.
 * Registering the load with the starting request's waitUntil keeps its I/O running until the
 * load settles.
 */
export interface WaitUntil {
  waitUntil(promise: Promise<unknown>): void;
}

/** Keeps `load` running after the request behind `ctx` has answered (no-op without a ctx). */
export function keepAlive(ctx: WaitUntil | undefined, load: Promise<unknown>): void {
  ctx?.waitUntil(
    load.then(
      () => undefined,
      () => undefined,
    ),
  );
}

/** Loads started by sharedLoad that have not settled yet, per cache (diagnostics: entries in flight are not held state). */
const inFlight = new WeakMap<Map<unknown, unknown>, number>();

/** Entries of `cache` whose load is still running. */
export function loadsInFlight(cache: Map<unknown, unknown>): number {
  return inFlight.get(cache) ?? 0;
}

/**
 * The promise of `key` in `cache`, started with `load` (under `ctx`, keepAlive) when there is none.
 * A rejected load, or one whose value `keep` refuses, is dropped, so the next call loads again.
 */
export function sharedLoad<K, V>(
  cache: Map<K, Promise<V>>,
  key: K,
  ctx: WaitUntil | undefined,
  load: () => Promise<V>,
  keep: (value: V) => boolean = () => true,
): Promise<V> {
  let p = cache.get(key);
  if (!p) {
    const started = load();
    p = started;
    cache.set(key, started);
    inFlight.set(cache, loadsInFlight(cache) + 1);
    keepAlive(ctx, started);
    const drop = (): void => {
      if (cache.get(key) === started) cache.delete(key);
    };
    const settled = (): void => {
      inFlight.set(cache, loadsInFlight(cache) - 1);
    };
    started.then(
      (value) => {
        settled();
        if (!keep(value)) drop();
      },
      () => {
        settled();
        drop();
      },
    );
  }
  return p;
}
