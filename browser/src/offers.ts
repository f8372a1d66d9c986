/**
 * The worker side of the page's head downloads (head-offer.ts): the page announces a head it may
 * be downloading (`expectOffer`, posted before the call that needs it, so it is known when the
 * load starts) and hands it over (`settleOffer`, a transferred ArrayBuffer, or null). A load
 * takes the offer once (`takeOffer`) and downloads itself when it is null or does not match.
 */
import type { HeadOffer } from './head-offer';
import type { CopiesOffer } from './page-copies';
import { mark } from './phases';

const offers = new Map<string, Promise<HeadOffer | null>>();
const settlers = new Map<string, (o: HeadOffer | null) => void>();
/** The page's reads of a cached model's copies (page-copies.ts), announced with the head's offer. */
const copies = new Map<string, Promise<CopiesOffer | null>>();
const copySettlers = new Map<string, (o: CopiesOffer | null) => void>();

export function expectOffer(id: string): void {
  if (offers.has(id) || settlers.has(id)) return;
  offers.set(id, new Promise<HeadOffer | null>((resolve) => settlers.set(id, resolve)));
  copies.set(id, new Promise<CopiesOffer | null>((resolve) => copySettlers.set(id, resolve)));
}

/** The page's reads for a cached model `id`, or null (not cached, no copies): settled soon after the page's pointer read. */
export function settleCopies(id: string, offer: CopiesOffer | null): void {
  if (offer) {
    mark('page-pointer', offer.startedAt - performance.timeOrigin, offer.pointerAt - performance.timeOrigin);
    mark('page-copies', offer.pointerAt - performance.timeOrigin, offer.endedAt - performance.timeOrigin);
  }
  const settle = copySettlers.get(id);
  copySettlers.delete(id);
  settle?.(offer);
}

/** The copies announced for `id`, once (a later load reads itself), or null when none were. */
export function takeCopies(id: string): Promise<CopiesOffer | null> {
  const o = copies.get(id);
  copies.delete(id);
  return o ?? Promise.resolve(null);
}

export function settleOffer(id: string, offer: HeadOffer | null): void {
  if (offer?.startedAt && offer.endedAt)
    mark(`page-head-${offer.kind}`, offer.startedAt - performance.timeOrigin, offer.endedAt - performance.timeOrigin);
  const settle = settlers.get(id);
  settlers.delete(id);
  settle?.(offer);
}

/** The offer announced for `id`, once (a later load reads itself), or null when none was. */
export function takeOffer(id: string): Promise<HeadOffer | null> {
  const o = offers.get(id);
  offers.delete(id);
  return o ?? Promise.resolve(null);
}
