// Builds whatever generated data the tests need (the WASM kernels, language data, models, mappers)
// when it is missing; not the browser bundle, which the e2e server builds for itself.
import { ensureBuilt } from '../../../build/ensure';

export default async function setup(): Promise<void> {
  await ensureBuilt({ browserBundle: false });
}
