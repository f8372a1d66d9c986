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
 * One gate per isolate: the API Worker's own (models it scores in-process) or a host's.
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

export class HostGate {
  /** Units admitted and not finished. */
  private queued = 0;
  private held = false;
  private readonly waiting: Array<() => void> = [];
  /** Requests admitted and refused so far (diagnostics). */
  admitted = 0;
  refused = 0;

  /** Units admitted and not finished (diagnostics). */
  get queuedUnits(): number {
    return this.queued;
  }

  /**
   * Admits `units` of work that must answer within `timeoutMs`, or throws HOST_BUSY at once.
   * The caller runs the work with the ticket's pace and calls done() when it has answered.
   */
  admit(units: number, timeoutMs: number): Ticket {
    const budget = timeoutMs * DEADLINE_SHARE;
    if (this.queued > 0 && this.queued + units > budget) {
      this.refused++;
      throw hostBusy(
        `The model host has ${Math.round(this.queued)} work units in progress and cannot finish ${units} more within ${timeoutMs / 1000} s`,
        this.queued / 1000,
      );
    }
    this.admitted++;
    this.queued += units;
    const deadline = Date.now() + timeoutMs - Math.min(DEADLINE_MARGIN_MS, timeoutMs / 10);
    const heavy = units > SMALL_UNITS;
    let holding = false;
    let sliceUnits = 0;
    let finished = false;
    const pace: Pace = (stepUnits) => {
      if (!heavy) return;
      if (!holding) return this.acquire().then(() => void ((holding = true), (sliceUnits = 0)));
      sliceUnits += stepUnits;
      if (sliceUnits < SLICE_UNITS) return;
      if (Date.now() > deadline)
        throw hostBusy('The request could not be finished before its deadline', this.queued / 1000);
      // A new task before the next slice: what arrived meanwhile (small requests, health checks,
      // catalogs) runs now. The lock is kept: heavy requests run one after another, so each
      // finishes as early as it can and their answers do not all fall due at once.
      sliceUnits = 0;
      return nextTask();
    };
    return {
      pace,
      done: () => {
        if (finished) return;
        finished = true;
        this.queued -= units;
        if (holding) {
          holding = false;
          this.release();
        }
      },
    };
  }

  private acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      // A timer of the waiting request's own: the runtime cancels a request that waits only on
      // another request's promise as hung; with a timer of its own pending, it is waiting.
      const alive = setInterval(() => {}, 1_000);
      this.waiting.push(() => {
        clearInterval(alive);
        resolve();
      });
      // Its first slice in a task of its own (the request that handed the lock on may be ending).
    }).then(nextTask);
  }

  /** Hands the lock to the next heavy request (which starts in a task of its own), or frees it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

function nextTask(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/** This isolate's gate. */
export const isolateGate = new HostGate();
