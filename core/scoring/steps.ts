/**
 * Scoring in steps: a scorer that can take long is written as a generator that yields, after each
 * piece of its work, about how many work units that piece cost (core/cost.ts's unit: about 1 ms
 * of one core). Run to its end at once (`drain`) it is the plain synchronous scorer the browser,
 * the CLI and the tests call; run with a pace (`paced`), a model host computes it in slices and
 * lets other requests run between them (worker/hosts/gate.ts). Yielding never changes a result.
 */
export type Steps<T> = Generator<number, T, void>;

/** Called after each step with its units; a promise holds the next step until it settles. */
export type Pace = (units: number) => void | Promise<void>;

/** Runs the steps to their end, synchronously. */
export function drain<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/**
 * Runs the steps, awaiting `pace` after each one that returns a promise; `pace(0)` comes before
 * the first step (a host's gate takes its lock there).
 */
export async function paced<T>(steps: Steps<T>, pace: Pace): Promise<T> {
  const first = pace(0);
  if (first) await first;
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    const wait = pace(r.value);
    if (wait) await wait;
  }
}

/**
 * The texts' indices cut into consecutive groups of about `maxChars` characters (a text longer
 * than that is a group of its own): the pieces a text scorer yields after.
 */
export function textGroups(texts: readonly string[], maxChars: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  let from = 0;
  let chars = 0;
  for (let i = 0; i < texts.length; i++) {
    if (i > from && chars + texts[i].length > maxChars) {
      out.push([from, i]);
      from = i;
      chars = 0;
    }
    chars += texts[i].length;
  }
  if (texts.length > from || out.length === 0) out.push([from, texts.length]);
  return out;
}
