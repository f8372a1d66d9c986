/**
 * browser/src/head-file.ts for the baseline worker of `npm run bench:browser` (build.ts): earlier
 * releases kept no copy of a model's head in the Origin Private File System, so nothing is read
 * from one (the early reads and the cached load find none).
 */
import * as headFile from '../../browser/src/head-file';

export * from '../../browser/src/head-file';

export const readHeadFile: typeof headFile.readHeadFile = async () => undefined;
