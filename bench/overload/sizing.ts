/**
 * bench:overload section 1: the largest admitted request of each heavy family.
 *
 * With the admission features (decisions.md "Admission and cost"; detected by `X-Cost-Units` on a
 * priced answer): a request over the cap is 413 REQUEST_TOO_EXPENSIVE with `estimatedUnits` and
 * `capUnits`; the size of each axis grows (x2) from its low end until a 413, then is bisected
 * until the admitted size and the refused one are within 2%: the admitted one's `X-Cost-Units` is
 * then just under the cap. A 200 slower than RUNAWAY_MS also stops the growth (the cap does not
 * bind that family, or not yet), so that a missing cap cannot make the probes run away. Without
 * the features (no `X-Cost-Units`) the bench says so and bisects on the server's time instead, up
 * to 0.9 s (the band the cap is calibrated for is 0.5-1.0 s), so that the other sections still
 * load the server with requests of the intended weight.
 */
import type { Dispatcher } from 'undici';
import { LIMITS } from '../../core/limits';
import { isRetryable, median, send, serverMs, sleep, type Answer, type Req } from './http';
import type { Family, Size } from './families';

/** The band the cap is calibrated for (decisions.md): the largest admitted request runs in 0.5-1.0 s of one core. */
export const BAND_MS = [500, 1000] as const;
/** Without a cap, sizes are bisected up to this server time: the band's top less 10% for the noise of one probe. */
export const TIME_TARGET_MS = 900;
/** With the cost features, a 200 slower than this stops the growth too (5 x the band's top). */
export const RUNAWAY_MS = 5000;

export interface Admission {
  /** A priced answer carried `X-Cost-Units`. */
  costHeader: boolean;
  /** The cap read from a 413 REQUEST_TOO_EXPENSIVE. */
  capUnits?: number;
  /** cap: sizes bisected on the server's 413s; time: on the server's time (no cap seen). */
  mode: 'cap' | 'time';
  note: string;
}

export interface Probe {
  size: Size;
  status: number;
  code?: string;
  units?: number;
  estimatedUnits?: number;
  serverMs: number;
  admitted: boolean;
}

export interface Alone {
  statuses: number[];
  units?: number;
  totalMs: number | null;
  hostMs: number | null;
  computeMs: number | null;
  wallMs: number;
}

export interface Largest {
  family: string;
  what: string;
  /** The largest admitted size (every axis). */
  size: Size;
  /** What stopped the growth: the cap (413), the time band (no cap), the limits of the schema (every axis at its maximum), the body limit, or an error. */
  limitedBy: 'cap' | 'time' | 'schema' | 'body' | 'refused-at-minimum' | 'error';
  /** The axis being grown when it stopped. */
  axis?: string;
  /** Units of the largest admitted request (X-Cost-Units). */
  units?: number;
  /** The estimate of the smallest refused size (413's estimatedUnits). */
  refusedUnits?: number;
  capUnits?: number;
  probes: Probe[];
  error?: string;
  alone?: Alone;
  /** The request itself (the other sections send it). */
  req?: Req;
}

export interface Sender {
  dispatcher: Dispatcher;
  base: string;
  token: string;
}

/** Sends `req`, waiting out 429/503 answers with Retry-After (at most 6 tries). */
export async function sendPatiently(s: Sender, req: Req, timeoutMs = 120_000): Promise<Answer> {
  let a = await send(s.dispatcher, s.base, req, s.token, timeoutMs);
  for (let i = 0; i < 5 && isRetryable(a); i++) {
    await sleep(Math.min(5000, Math.max(200, (a.retryAfter ?? 1) * 1000)));
    a = await send(s.dispatcher, s.base, req, s.token, timeoutMs);
  }
  return a;
}

const num = (x: unknown): number | undefined => (typeof x === 'number' && Number.isFinite(x) ? x : undefined);

/** Whether the server prices requests: `small` is a priced request, whose answer then carries X-Cost-Units. */
export async function detectAdmission(s: Sender, small: Req): Promise<Admission> {
  const a = await sendPatiently(s, small);
  if (a.units === undefined)
    return {
      costHeader: false,
      mode: 'time',
      note: `no X-Cost-Units on a priced answer (${a.status}): no admission features yet; sizes are bisected on the server's time (<= ${TIME_TARGET_MS} ms)`,
    };
  return {
    costHeader: true,
    mode: 'cap',
    note: `X-Cost-Units on a priced answer (${a.units} units): sizes are grown until a 413 REQUEST_TOO_EXPENSIVE (or a 200 slower than ${RUNAWAY_MS} ms)`,
  };
}

/** The largest admitted request of `family` (see the header). */
export async function largestAdmitted(s: Sender, family: Family, admission: Admission): Promise<Largest> {
  const size: Size = Object.fromEntries(family.axes.map((a) => [a.name, a.lo]));
  const out: Largest = { family: family.name, what: family.what, size, limitedBy: 'schema', probes: [] };
  const probe = async (sz: Size): Promise<Probe | 'body'> => {
    const req = family.build(sz);
    if (req.body !== undefined && Buffer.byteLength(req.body) > LIMITS.bodyBytes) return 'body';
    const a = await sendPatiently(s, req);
    const p: Probe = {
      size: { ...sz },
      status: a.status,
      code: a.code,
      units: a.units,
      estimatedUnits: num(a.problem?.estimatedUnits),
      serverMs: serverMs(a),
      admitted: a.status === 200 && serverMs(a) <= (admission.mode === 'cap' ? RUNAWAY_MS : TIME_TARGET_MS),
    };
    out.probes.push(p);
    if (a.status === 413 && a.code === 'REQUEST_TOO_EXPENSIVE') {
      out.capUnits = num(a.problem?.capUnits) ?? out.capUnits;
      admission.capUnits ??= out.capUnits;
      return p;
    }
    if (a.status === 413 && a.code === 'PAYLOAD_TOO_LARGE') return 'body';
    if (a.status !== 200)
      throw new Error(
        `${a.status} ${a.code ?? a.error ?? ''} ${String(a.problem?.detail ?? '').slice(0, 200)} for ${JSON.stringify(sz)}`,
      );
    return p;
  };
  try {
    for (const axis of family.axes) {
      out.axis = axis.name;
      let good = axis.lo;
      const first = await probe({ ...size, [axis.name]: good });
      if (first === 'body' || !first.admitted) {
        if (axis === family.axes[0]) {
          out.limitedBy = 'refused-at-minimum';
          return out;
        }
        out.limitedBy = first === 'body' ? 'body' : first.status === 413 ? 'cap' : 'time';
        break;
      }
      let lastGood = first;
      let bad: number | null = null;
      let stop: Largest['limitedBy'] = 'schema';
      const test = async (v: number): Promise<boolean> => {
        const p = await probe({ ...size, [axis.name]: v });
        if (p !== 'body' && p.admitted) {
          lastGood = p;
          return true;
        }
        stop = p === 'body' ? 'body' : p.status === 413 ? 'cap' : 'time';
        if (p !== 'body') out.refusedUnits = p.estimatedUnits ?? p.units;
        return false;
      };
      while (good < axis.hi) {
        const next = Math.min(axis.hi, Math.max(good + 1, good * 2));
        if (await test(next)) good = next;
        else {
          bad = next;
          break;
        }
      }
      while (bad !== null && bad - good > Math.max(1, Math.ceil(good * 0.02))) {
        const mid = Math.floor((good + bad) / 2);
        if (await test(mid)) good = mid;
        else bad = mid;
      }
      size[axis.name] = good;
      out.units = lastGood.units;
      if (bad !== null) {
        out.limitedBy = stop;
        break;
      }
    }
    if (out.limitedBy === 'schema') out.axis = undefined;
    out.req = family.build(size);
  } catch (err) {
    out.limitedBy = 'error';
    out.error = (err as Error).message;
  }
  return out;
}

/** The request alone, `runs` times in a row: medians of the server's phases and of the wall time. */
export async function alone(s: Sender, req: Req, runs = 3): Promise<Alone> {
  const answers: Answer[] = [];
  for (let i = 0; i < runs; i++) answers.push(await sendPatiently(s, req));
  const ok = answers.filter((a) => a.status === 200);
  const med = (name: string): number | null => {
    const xs = ok.map((a) => a.timing[name]).filter((x) => Number.isFinite(x));
    return xs.length ? median(xs) : null;
  };
  return {
    statuses: answers.map((a) => a.status),
    units: ok[0]?.units,
    totalMs: med('total'),
    hostMs: med('host'),
    computeMs: med('compute'),
    wallMs: median(answers.map((a) => a.ms)),
  };
}
