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

/** Characters of JSON written between two steps of jsonSteps (a few ms of work). */
const JSON_STEP_CHARS = 200_000;
/** Units of a character of JSON written (core/cost.ts answerByte, repeated to keep this module a leaf). */
const JSON_CHAR_UNITS = 0.00002;

/**
 * JSON.stringify(answer), in steps: an answer's `data` array is written element by element with
 * a step every JSON_STEP_CHARS characters, so a megabytes-long answer is serialized in slices.
 * The same text as JSON.stringify: members in their order, undefined members left out, an
 * undefined element written as null.
 */
export function* jsonSteps(answer: object): Steps<string> {
  const parts: string[] = ['{'];
  let first = true;
  for (const [key, value] of Object.entries(answer)) {
    if (value === undefined || typeof value === 'function' || typeof value === 'symbol') continue;
    parts.push(`${first ? '' : ','}${JSON.stringify(key)}:`);
    first = false;
    if (key !== 'data' || !Array.isArray(value)) {
      parts.push(JSON.stringify(value));
      continue;
    }
    parts.push('[');
    let chars = 0;
    for (let i = 0; i < value.length; i++) {
      const item = (JSON.stringify(value[i]) as string | undefined) ?? 'null';
      parts.push(i === 0 ? item : `,${item}`);
      chars += item.length;
      if (chars >= JSON_STEP_CHARS) {
        yield chars * JSON_CHAR_UNITS;
        chars = 0;
      }
    }
    parts.push(']');
  }
  parts.push('}');
  return parts.join('');
}
