// Builds whatever generated data the tests need (the WASM kernels, ...) when it is missing.
import { ensureBuilt } from '../../../build/ensure';

export default async function setup(): Promise<void> {
  await ensureBuilt({ forTests: true });
}
