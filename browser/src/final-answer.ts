/**
 * Answers of the progressive cold start (docs/offline-browser.md): a scoring call that ran on a
 * model's head (core/partial-index.ts) and looked past it answers at once, marked partial by the
 * model's status; the complete model's answer follows through onFinal once the rest is in. A call
 * that failed on a head after looking past it waits for the complete model and answers from it.
 * Everything else (no head involved, or only head rows read) is final as it is. A scorer without
 * `progressive` (whose cached loads also score from the head first, cached-head.ts) sends final answers
 * only: a call that looked past the head waits for the complete model and answers from it.
 */
import type { EngineSource } from '../../core/engine';
import { incompleteAccesses } from '../../core/partial-index';
import type { ProgressFn } from './cache';
import type { FinalAnswer } from './protocol';
import { offlineSource } from './engine-source';
import type { Loaded } from './loaded-models';
import { progressive } from './scorer-config';

export async function answer<T>(
  compute: (source: EngineSource) => Promise<T>,
  onProgress?: ProgressFn,
  onFinal?: (f: FinalAnswer<T>) => unknown,
): Promise<T> {
  // The heads this call runs on: each stays in memory until the call is done (Loaded.release).
  const used: Loaded[] = [];
  const use = (m: Loaded): Loaded => {
    if (m.complete) {
      m.inflight = (m.inflight ?? 0) + 1;
      used.push(m);
    }
    return m;
  };
  const before = incompleteAccesses();
  const complete = (): Promise<unknown> => Promise.all(used.map((m) => m.complete));
  let result: T;
  try {
    result = await compute(offlineSource(onProgress, use));
  } catch (err) {
    if (used.length === 0 || incompleteAccesses() === before) throw err;
    await complete();
    return compute(offlineSource(onProgress));
  } finally {
    for (const m of used) {
      m.inflight = (m.inflight ?? 1) - 1;
      m.release?.();
    }
  }
  if (used.length === 0 || incompleteAccesses() === before) return result;
  if (!progressive()) {
    // Not a progressive scorer: only final answers go out, so this one waits for the complete model.
    await complete();
    return compute(offlineSource(onProgress));
  }
  complete()
    .then(() => compute(offlineSource(onProgress)))
    .then((response) => onFinal?.({ response, changed: JSON.stringify(response) !== JSON.stringify(result) }))
    .catch(() => {});
  return result;
}
