/**
 * Imported first by scorer-worker.ts: the moment the worker's script starts to run (its modules are
 * evaluated after this one), so the load phases show the worker's start apart from its code's.
 */
import { mark } from './phases';

/** When the worker's code began to run (ms since the worker started). */
export const scriptStart = performance.now();
mark('worker-script', 0, scriptStart);
