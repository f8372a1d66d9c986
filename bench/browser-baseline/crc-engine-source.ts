/**
 * browser/src/engine-source.ts for the baseline worker of `npm run bench:browser` (build.ts):
 * earlier releases checked each mapper bundle's CRC-32 whenever a load parsed it, where the
 * production source trusts the SHA-256 verified at download.
 */
import * as engineSource from '../../browser/src/engine-source';

export * from '../../browser/src/engine-source';

export const offlineSource: typeof engineSource.offlineSource = (...args) => ({
  ...engineSource.offlineSource(...args),
  bundlesVerified: false,
});
