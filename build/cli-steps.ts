/**
 * The build steps the CLI runs on purpose, and only through here: `models build` and the local
 * service (when an artifact it needs is missing) build what the engine reads, `models import`
 * imports word vectors. Otherwise the CLI takes only paths and loaders from build/ (paths.ts,
 * load-model.ts). The steps load on use, so a command that builds nothing does not load them.
 */
import type { R2Artifact } from './ensure';

/**
 * What the engine reads: kernels, language data, the default and aligned models, their mapper
 * bundles and heads; not the browser bundle. Build logs go to stderr, since the CLI's stdout
 * carries the command's output.
 */
export async function buildEngineArtifacts(): Promise<R2Artifact[]> {
  const { ensureBuilt } = await import('./ensure');
  const log = console.log;
  console.log = console.error;
  try {
    return await ensureBuilt({ browserBundle: false });
  } finally {
    console.log = log;
  }
}

/** `npm run model:import` with these arguments. */
export async function importModelCommand(argv: string[]): Promise<void> {
  await (await import('./import-model')).main(argv);
}
