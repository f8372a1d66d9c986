/**
 * The offline scorer's Web Worker entry (not to be confused with the Cloudflare Worker in worker/),
 * exposed with Comlink. This entry is kept small: the engine
 * (scorer.ts: zod request schemas, core/scoring, the tokenizer, most of the code) is a chunk of its
 * own, imported at once. Compiling it takes this thread ~25 ms on the test machine
 * (docs/offline-browser.md), so the entry runs first, and the first call naming a model starts
 * reading the model's cached pointer and head here (early-reads.ts): what a first score from the
 * cache waits for is read while the engine is fetched and compiled. Every call is handed to the
 * engine once it is in, in arrival order.
 */
import { scriptStart } from './boot-mark';
import * as Comlink from 'comlink';
import { namedBundles, readEarly } from './early-reads';
import type { HeadOffer } from './head-offer';
import { expectOffer, settleOffer } from './offers';
import { mark, phase } from './phases';
import type { ScorerApi } from './scorer';

const scorer = phase('engine-import', () => import('./scorer'));
scorer.catch(() => {});
let engineIn = false;
scorer.then(
  () => (engineIn = true),
  () => {},
);

type Method = keyof ScorerApi;
type Args<K extends Method> = Parameters<ScorerApi[K]>;
type Result<K extends Method> = Promise<Awaited<ReturnType<ScorerApi[K]>>>;

/**
 * Method `name` of the engine's API, called once its chunk is in. `modelOf` names the model a call
 * loads: while the engine is not in yet, that model's cached reads start now.
 */
function later<K extends Method>(name: K, modelOf?: (...args: Args<K>) => unknown): (...args: Args<K>) => Result<K> {
  const call = async (...args: Args<K>): Promise<unknown> => {
    const forget = modelOf && !engineIn ? readEarly(modelOf(...args), [...namedBundles(args[0])]) : undefined;
    try {
      const { api } = await scorer;
      return await (api[name] as (...a: Args<K>) => unknown)(...args);
    } finally {
      forget?.();
    }
  };
  return call as (...args: Args<K>) => Result<K>;
}

const bodyModel = (body: unknown): unknown => (body as { embeddingModelId?: unknown } | null)?.embeddingModelId;
const idArg = (id: unknown): unknown => id;

/** The exposed API: the scoring endpoints' request and response shapes (scorer.ts). */
const api = {
  configure: later('configure'),
  loadModel: later('loadModel', idArg),
  listCachedModels: later('listCachedModels'),
  evictModel: later('evictModel'),
  textScores: later('textScores', bodyModel),
  wordScores: later('wordScores', bodyModel),
  autocomplete: later('autocomplete', bodyModel),
  wordAvailabilities: later('wordAvailabilities', idArg),
  similarityMatrix: later('similarityMatrix', idArg),
  /** The models in memory (`partial` while only the head is in) and the timed load phases. */
  status: later('status'),
  tokenize: later('tokenize'),
  /** The page may be downloading model `id`'s head (head-offer.ts): the next load of it waits for headOffer. */
  expectHead: (id: string) => expectOffer(id),
  /** The page's download of the head (its ArrayBuffer transferred), or null: the load fetches itself. */
  headOffer: (id: string, offer: HeadOffer | null) => settleOffer(id, offer),
  /** Hex SHA-256 of the kernels.wasm bytes this worker runs (compare with the Worker's build). */
  kernelsSha256: later('kernelsSha256'),
};

export type OfflineScorerApi = typeof api;

Comlink.expose(api);
// The end of the entry's evaluation (boot-mark.ts marks its start).
mark('worker-modules', scriptStart);
