/**
 * A model version's mapper bundles, and the bundles the requests in progress name (read beside
 * the model when it loads, not after it).
 */
import { cachedArtifact, fetchArtifact, ProblemError, type ProgressFn } from './cache';
import { namedBundles } from './early-reads';
import type { CachedModelInfo } from './protocol';
import { config } from './scorer-config';

/** Mapper bundle keys named by the requests in progress (withBundleHints), counted. */
const hintedBundles = new Map<string, number>();

/**
 * Runs a scoring call whose request names mapper variables (`mapperKeys`): a model loaded
 * meanwhile reads their bundles from IndexedDB beside the model instead of after it. Only a
 * hint: the engine validates the request and resolves the mappers as always.
 */
export async function withBundleHints<T>(body: unknown, fn: () => Promise<T>): Promise<T> {
  const keys = namedBundles(body);
  for (const k of keys) hintedBundles.set(k, (hintedBundles.get(k) ?? 0) + 1);
  try {
    return await fn();
  } finally {
    for (const k of keys) {
      const n = (hintedBundles.get(k) ?? 1) - 1;
      if (n > 0) hintedBundles.set(k, n);
      else hintedBundles.delete(k);
    }
  }
}

/** Starts reading the bundles the waiting requests name (their errors are left to the requests). */
export function readHintedBundles(bundles: Bundles): void {
  for (const key of hintedBundles.keys()) bundles.get(key).catch(() => {});
}

/**
 * The mapper bundles of a model version: each read once, from IndexedDB (revalidated when
 * `revalidate` says so) or downloaded, when a request names it or all at once (`all`). A bundle
 * neither cached nor downloadable is null.
 *
 * `heads`: the bundles of a downloaded model head (progressive cold start) are the bundles' heads
 * (GET .../mappers/{id}/{key}/head: the values of the head's rows, ~7x fewer bytes before the
 * first score; not cached, the complete model downloads and caches the full bundles); a server
 * without them gets the full bundle.
 */
export class Bundles {
  private readonly read = new Map<string, Promise<ArrayBuffer | null>>();

  constructor(
    readonly info: CachedModelInfo,
    private readonly onProgress: ProgressFn | undefined,
    private readonly revalidate: boolean | Promise<boolean>,
    private readonly heads = false,
  ) {}

  get(key: string): Promise<ArrayBuffer | null> {
    const known = this.read.get(key);
    if (known) return known;
    if (!this.info.mapperBundles.some((b) => b.key === key)) return Promise.resolve(null);
    const p = this.heads
      ? fetchArtifact(config.baseUrl, config.token, `${this.path(key)}/head`, undefined, (phase, loaded, total) =>
          this.onProgress?.({
            artifact: 'mapper',
            name: `${key}#head`,
            phase,
            loadedBytes: loaded,
            totalBytes: total,
            fromCache: false,
          }),
        ).then(
          (f) => f.bytes!,
          // No head (404, an older server) or its download failed: the full bundle, as without heads.
          () => this.full(key),
        )
      : this.full(key);
    this.read.set(key, p);
    // A read that failed (e.g. offline) is tried again by the next call, not remembered.
    p.catch(() => {
      if (this.read.get(key) === p) this.read.delete(key);
    });
    return p;
  }

  private path(key: string): string {
    return `/api/v1/artifacts/mappers/${encodeURIComponent(this.info.id)}/${encodeURIComponent(key)}`;
  }

  private full(key: string): Promise<ArrayBuffer | null> {
    return cachedArtifact(
      ['mapper', this.info.id, this.info.version, key],
      config.baseUrl,
      config.token,
      this.path(key),
      { artifact: 'mapper', name: key, onProgress: this.onProgress },
      this.revalidate,
    ).then(
      ({ artifact }) => artifact.bytes,
      (err: unknown) => {
        if (!(err instanceof ProblemError)) throw err;
        return null;
      },
    );
  }

  async all(): Promise<void> {
    await Promise.all(this.info.mapperBundles.map((b) => this.get(b.key)));
  }
}

/** Whether two versions have the same bundles (the same model version and bundle list). */
export const sameBundles = (a: CachedModelInfo, b: CachedModelInfo): boolean =>
  a.id === b.id &&
  a.version === b.version &&
  a.mapperBundles.map((m) => m.key).join('\n') === b.mapperBundles.map((m) => m.key).join('\n');
