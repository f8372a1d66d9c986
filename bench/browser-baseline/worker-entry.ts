/**
 * The page side of the baseline build (build.ts): Vite bundles the Worker this names through its
 * worker pipeline, as for the playground's offline scorer. Only the worker's chunks are used.
 */
export const baselineWorker = (): Worker =>
  new Worker(new URL('../../browser/src/scorer-worker.ts', import.meta.url), { type: 'module' });
