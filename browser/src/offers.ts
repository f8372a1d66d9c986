/**
 * The worker side of the page's head downloads (head-offer.ts): the page announces a head it may
 * be downloading (`expectOffer`, posted before the call that needs it, so it is known when the
 * load starts) and hands it over (`settleOffer`, a transferred ArrayBuffer, or null). A load
 * takes the offer once (`takeOffer`) and downloads itself when it is null or does not match.
 */
import type { HeadOffer } from './head-offer';
import { mark } from './phases';

const offers = new Map<string, Promise<HeadOffer | null>>();
const settlers = new Map<string, (o: HeadOffer | null) => void>();

export function expectOffer(id: string): void {
  if (offers.has(id) || settlers.has(id)) return;
  offers.set(id, new Promise<HeadOffer | null>((resolve) => settlers.set(id, resolve)));
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
