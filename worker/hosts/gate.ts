/**
 * A model host's own admission and its slices (decisions.md "Admission and cost"). An isolate runs
 * all of its requests on one thread, so one long computation would stall every other request of
 * the host, health checks included. Here:
 *
 * - Work is admitted in work units (the request's estimate, core/cost.ts). A host whose admitted,
 *   unfinished work plus the new request would not finish within the caller's deadline refuses it
 *   at once: 503 HOST_BUSY with Retry-After, nothing computed, nothing charged.
 * - A heavy request (more than SMALL_UNITS) holds the host's one heavy lock and computes in slices
 *   of about SLICE_UNITS, with a new task between two slices, so the requests that arrived
 *   meanwhile run before the next slice. Heavy requests run one after another (first admitted,
 *   first served), so each answers as early as it can; small ones never wait for the lock.
 *   Slices are measured in units, not time: the isolate's clock does not advance while code runs.
 * - A heavy request whose deadline passes between slices stops there (503 HOST_BUSY): its answer
 *   would arrive after the caller gave up, and an answer is never computed to be thrown away.
 *
 * One gate per isolate: the API Worker's own (models it scores in-process) or a host's. A request
 * the runtime cancels (its client gone) never says it is done: it counts until its deadline has
 * passed, and then neither its units nor the lock are kept for it.
 */
import { ApiError } from '../../core/problem';
import type { Pace } from '../../core/scoring/steps';

/** A request estimated at most this many units runs at once, between slices. */
export const SMALL_UNITS = 25;
/** The work of one heavy slice, in units (about 1 ms each). */
export const SLICE_UNITS = 10;
/** Admitted work may fill this share of the deadline: an estimate may be off by this factor. */
const DEADLINE_SHARE = 0.5;
/** A heavy request stops when less than this is left before its deadline (at most a tenth of it). */
const DEADLINE_MARGIN_MS = 1_000;

/** The host's refusal of work it could not finish in time (also after a slice, past the deadline). */
export function hostBusy(detail: string, retryAfterS: number): ApiError {
  return new ApiError('HOST_BUSY', `${detail}; nothing was charged, retry the request later`, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterS))) },
  });
}

export interface Ticket {
  /** The pace of the request's scorer (core/scoring/steps.ts): slices a heavy request. */
  readonly pace: Pace;
  /** The request has answered: its units leave the queue, the lock is handed on. */
  done(): void;
}

/** An admitted request as the gate keeps it. */
interface Admitted {
  units: number;
  /** After this (real time) its caller has given up: the request is over, whether or not it said so. */
  expires: number;
}

/**
 * How long past its deadline an admitted request still counts: a request the runtime cancelled
 * (its client gone) never calls done(), and must not hold units or the lock for good.
 */
const EXPIRY_GRACE_MS = 1_000;
/** How often a waiting request looks whether the lock's holder has expired. */
const WAIT_CHECK_MS = 250;

export class HostGate {
  /** Requests admitted and not finished. */
  private readonly live = new Set<Admitted>();
  /** The heavy request holding the lock, if any, and those waiting for it in order. */
  private holder: Admitted | null = null;
  private readonly waiting: Array<{ request: Admitted; wake: () => void }> = [];
  /** Requests admitted and refused so far (diagnostics). */
  admitted = 0;
  refused = 0;

  /** Units admitted and not finished (diagnostics). */
  get queuedUnits(): number {
    this.forgetExpired();
    let units = 0;
    for (const a of this.live) units += a.units;
    return units;
  }

  /**
   * Admits `units` of work that must answer within `timeoutMs`, or throws HOST_BUSY at once.
   * The caller runs the work with the ticket's pace and calls done() when it has answered.
   */
  admit(units: number, timeoutMs: number): Ticket {
    const budget = timeoutMs * DEADLINE_SHARE;
    const queued = this.queuedUnits;
    if (queued > 0 && queued + units > budget) {
      this.refused++;
      throw hostBusy(
        `The model host has ${Math.round(queued)} work units in progress and cannot finish ${units} more within ${timeoutMs / 1000} s`,
        queued / 1000,
      );
    }
    this.admitted++;
    const now = Date.now();
    const deadline = now + timeoutMs - Math.min(DEADLINE_MARGIN_MS, timeoutMs / 10);
    const request: Admitted = { units, expires: now + timeoutMs + EXPIRY_GRACE_MS };
    this.live.add(request);
    const heavy = units > SMALL_UNITS;
    let sliceUnits = 0;
    const pace: Pace = (stepUnits) => {
      if (!heavy) return;
      if (this.holder !== request)
        return this.acquire(request).then(() => {
          // Woken past its deadline (the lock went to those still waiting): its caller has given up.
          if (this.holder !== request)
            throw hostBusy('The request could not be finished before its deadline', this.queuedUnits / 1000);
          sliceUnits = 0;
        });
      sliceUnits += stepUnits;
      if (sliceUnits < SLICE_UNITS) return;
      if (Date.now() > deadline)
        throw hostBusy('The request could not be finished before its deadline', this.queuedUnits / 1000);
      // A new task before the next slice: what arrived meanwhile (small requests, health checks,
      // catalogs) runs now. The lock is kept: heavy requests run one after another, so each
      // finishes as early as it can and their answers do not all fall due at once.
      sliceUnits = 0;
      return nextTask();
    };
    return {
      pace,
      done: () => {
        this.live.delete(request);
        if (this.holder === request) this.handOn();
      },
    };
  }

  private forgetExpired(): void {
    const now = Date.now();
    for (const a of this.live) if (a.expires < now) this.live.delete(a);
    if (this.holder && this.holder.expires < now) this.handOn();
  }

  private acquire(request: Admitted): Promise<void> {
    this.forgetExpired();
    if (this.holder === null) {
      this.holder = request;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      // A timer of the waiting request's own: the runtime cancels a request that waits only on
      // another request's promise as hung. It also looks whether the holder has expired (its
      // request cancelled without a word), and takes the lock on then.
      const check = setInterval(() => this.forgetExpired(), WAIT_CHECK_MS);
      this.waiting.push({
        request,
        wake: () => {
          clearInterval(check);
          resolve();
        },
      });
      // Its first slice in a task of its own (the request that handed the lock on may be ending).
    }).then(nextTask);
  }

  /** Hands the lock to the next waiting request that has not expired (it starts in a task of its own), or frees it. */
  private handOn(): void {
    const now = Date.now();
    for (let next = this.waiting.shift(); next; next = this.waiting.shift()) {
      if (next.request.expires < now) {
        next.wake();
        continue;
      }
      this.holder = next.request;
      next.wake();
      return;
    }
    this.holder = null;
  }
}

function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** This isolate's gate. */
export const isolateGate = new HostGate();
