/**
 * Routing in the API Worker (docs/architecture.md "Model hosts"): each scoring call goes to the
 * host its model is placed on (worker/hosts/placement.ts), as an RPC over a service binding, and
 * comes back as the engine's own answer or refusal. The route then charges as before: a host
 * that fails or does not answer within HOST_TIMEOUT_MS is a 503 with Retry-After and nothing is
 * charged. Models the placement does not name are scored in-process (worker/sources/).
 */
import type { Context } from 'hono';
import { endTime, setMetric, startTime } from 'hono/timing';
import { normalizeLanguage } from '../../core/tokenizer';
import { LEGACY_ENGLISH_MODEL_ID } from '../../core/projection';
import type { Engine } from '../../core/engine';
import type { AppEnv, Env } from '../env';
import { engineOf } from '../sources';
import { loadingStatus, type LoadingStatus } from '../sources/models';
import type { HostMethod, HostStub } from './host';
import { hostStub, routesOf } from './placement';
import {
  hostUnavailable,
  serializedSteps,
  unwrap,
  type HostAnswer,
  type SerializedAnswer,
  type SerializedMethod,
} from './protocol';
import { paced } from '../../core/scoring/steps';
import { isolateGate } from './gate';

/** How long the API Worker waits for a host's answer (a host itself waits up to MODEL_WAIT_MS for a model). */
export const HOST_TIMEOUT_MS = 20_000;

function timeoutOf(env: Env): number {
  const n = Number(env.HOST_TIMEOUT_MS);
  return Number.isFinite(n) && n > 0 ? n : HOST_TIMEOUT_MS;
}

/**
 * One call to the host bound as `binding`: what it returned; 503 when it throws or is late. Late is
 * judged by the timer and by the clock when the answer arrives: locally every worker shares one
 * thread, so a host computing holds the timer back, and an answer that took longer than the
 * timeout is refused as the timer would have refused it.
 */
async function reach<T>(env: Env, binding: string, call: () => Promise<T>): Promise<T> {
  const ms = timeoutOf(env);
  const started = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = (): Error => new Error(`no answer within ${ms} ms`);
  try {
    const a = await Promise.race([
      call(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(late()), ms);
      }),
    ]);
    if (Date.now() - started > ms) throw late();
    return a;
  } catch (err) {
    const message = (err as Error).message;
    console.error(`[hosts] ${binding}: ${message}`);
    throw hostUnavailable(binding, message.startsWith('no answer') ? message : 'it failed');
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** One call to a host, its answer unwrapped (the engine's value, or its refusal thrown). */
export async function callHost<T>(env: Env, binding: string, call: () => Promise<HostAnswer<T>>): Promise<T> {
  return unwrap(await reach(env, binding, call));
}

/** The engine's endpoint methods, as the routes call them (the ones a host runs). */
type Scorer = Pick<Engine, HostMethod> & {
  /** textScores and wordScores with the answer's body serialized where it is computed (protocol.ts SerializedAnswer). */
  serialized(method: SerializedMethod, body: unknown): Promise<SerializedAnswer>;
};

/**
 * The scorer of a request: the engine's endpoint methods, each run by the host of its model (of
 * its language for tokenizations, of the target model for translations), or in-process.
 */
export function scorerOf(c: Context<AppEnv>): Scorer {
  const env = c.env;
  const routes = routesOf(env);
  // The estimate admission priced the request at (worker/admission/admit.ts); the host's gate admits by it.
  const admission = { units: c.get('costUnits') ?? 1, timeoutMs: timeoutOf(env) };
  /** The host's answer to one call, with its phases as Server-Timing metrics. */
  const onHost = async <T>(binding: string, call: (stub: HostStub) => Promise<HostAnswer<unknown>>): Promise<T> => {
    const stub = hostStub(env, binding)!;
    startTime(c, 'host');
    let a: HostAnswer<T>;
    try {
      a = (await reach(env, binding, () => call(stub))) as HostAnswer<T>;
    } finally {
      endTime(c, 'host', 2);
    }
    // The host's own phases, as the in-process engine marks them.
    if (a.timing.load !== undefined) setMetric(c, 'load', a.timing.load, undefined, 2);
    if (a.timing.compute !== undefined) setMetric(c, 'compute', a.timing.compute, undefined, 2);
    // A row-sharded model's fetches (docs/benchmarks.md "Row sharding"): the slowest part's scans,
    // every part's scans, merging, fetching rows (ms), and the engine runs and part scans (counts).
    const sh = a.timing.shards;
    if (sh) {
      setMetric(c, 'shard-scan', sh.scan, undefined, 3);
      setMetric(c, 'shard-scan-sum', sh.scanSum, undefined, 3);
      setMetric(c, 'shard-merge', sh.merge, undefined, 3);
      setMetric(c, 'shard-rows', sh.rows, undefined, 3);
      setMetric(c, 'shard-runs', sh.rounds, undefined, 0);
      setMetric(c, 'shard-part-scans', sh.partScans, undefined, 0);
    }
    return unwrap(a);
  };
  /** In-process: this isolate's gate, as a host's would. */
  const inProcess = async <T>(work: (engine: Engine) => Promise<T>): Promise<T> => {
    const ticket = isolateGate.admit(admission.units, admission.timeoutMs);
    try {
      return await work(engineOf(c, ticket.pace));
    } finally {
      ticket.done();
    }
  };
  /** In-process, the answer serialized in the gate's slices as a host would. */
  const inProcessSerialized = async (method: SerializedMethod, body: unknown): Promise<SerializedAnswer> => {
    const ticket = isolateGate.admit(admission.units, admission.timeoutMs);
    try {
      const engine = engineOf(c, ticket.pace);
      const value = method === 'textScores' ? await engine.textScores(body) : await engine.wordScores(body);
      return await paced(serializedSteps(method, value), ticket.pace);
    } finally {
      ticket.done();
    }
  };
  const routed = <M extends HostMethod>(
    binding: string | undefined,
    method: M,
    args: Parameters<Engine[M]>,
  ): Promise<Awaited<ReturnType<Engine[M]>>> =>
    hostStub(env, binding)
      ? onHost(binding!, (stub) => stub.run(method, args, admission))
      : inProcess((engine) =>
          (engine[method] as (...a: unknown[]) => Promise<Awaited<ReturnType<Engine[M]>>>)(...args),
        );
  const modelOf = (body: unknown): string | undefined =>
    routes.models.get((body as { embeddingModelId: string }).embeddingModelId);
  return {
    textScores: (body) => routed(modelOf(body), 'textScores', [body]),
    serialized: (method, body) => {
      const binding = modelOf(body);
      return hostStub(env, binding)
        ? onHost<SerializedAnswer>(binding!, (stub) => stub.run(method, [body], { ...admission, serialized: true }))
        : inProcessSerialized(method, body);
    },
    wordScores: (body) => routed(modelOf(body), 'wordScores', [body]),
    autocomplete: (body) => routed(modelOf(body), 'autocomplete', [body]),
    wordAvailabilities: (id, body) => routed(routes.models.get(id), 'wordAvailabilities', [id, body]),
    similarityMatrix: (id, body) => routed(routes.models.get(id), 'similarityMatrix', [id, body]),
    tokenize: (body) => {
      const language = normalizeLanguage((body as { language: string }).language);
      return routed(language ? routes.languages.get(language) : undefined, 'tokenize', [body]);
    },
    // A translation scans its target model: the target's host answers, fetching the source's rows.
    // Without a target it is the source's English companion (a var without companions: the legacy one).
    wordTranslations: (id, req) =>
      routed(
        routes.models.get(req.targetModelId ?? routes.companions.get(id) ?? LEGACY_ENGLISH_MODEL_ID) ??
          routes.models.get(id),
        'wordTranslations',
        [id, req],
      ),
  };
}

/** Each host's memory, as the isolate that answered counts it (admin diagnostics). */
export async function hostsMemory(env: Env) {
  const routes = routesOf(env);
  return Promise.all(
    routes.hosts.map(async (h) => {
      const stub = hostStub(env, h.binding);
      const base = { name: h.name, binding: h.binding, placedModels: h.models };
      if (!stub) return { ...base, memory: null, error: 'not bound to this Worker' };
      try {
        return { ...base, memory: await reach(env, h.binding, () => stub.memory()) };
      } catch (err) {
        return { ...base, memory: null, error: (err as Error).message };
      }
    }),
  );
}

/**
 * The loading status of each model as its host answers it (loaded in the isolate that answered,
 * or not); in-process models from this isolate's registry; `error` when the host did not answer.
 */
export async function modelStatuses(env: Env, ids: readonly string[]): Promise<Map<string, LoadingStatus>> {
  const routes = routesOf(env);
  const out = new Map<string, LoadingStatus>();
  const byHost = new Map<string, string[]>();
  for (const id of ids) {
    const binding = routes.models.get(id);
    if (!binding || !hostStub(env, binding)) out.set(id, loadingStatus(id));
    else byHost.set(binding, [...(byHost.get(binding) ?? []), id]);
  }
  await Promise.all(
    [...byHost].map(async ([binding, list]) => {
      try {
        const stub = hostStub(env, binding)!;
        const statuses = await reach(env, binding, () => stub.statuses(list));
        statuses.forEach((status, i) => out.set(list[i]!, status));
      } catch {
        for (const id of list) out.set(id, 'error');
      }
    }),
  );
  return out;
}
