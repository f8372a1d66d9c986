/**
 * What crosses between the API Worker and a model host (service binding RPC, worker/hosts/host.ts):
 * a host answers every call with a HostAnswer instead of throwing, because RPC carries an
 * exception's message but not an ApiError's code, status, field errors and headers. The caller
 * turns a refusal back into the same ApiError the engine threw, so a routed answer equals the
 * in-process one byte for byte; a host that throws, cannot be reached or answers late is a 503.
 */
import { ApiError, asApiError, type FieldProblem, type ProblemCode } from '../../core/problem';
import { StorageError } from '../storage-guard';
import type { ShardTiming } from '../../core/sharded-index';
import { jsonSteps, type Steps } from '../../core/scoring/steps';

export type HostAnswer<T> =
  | { ok: true; value: T; timing: HostTiming }
  | {
      ok: false;
      problem?: {
        code: ProblemCode;
        detail: string;
        status: number;
        errors?: FieldProblem[];
        headers: Record<string, string>;
        members?: Record<string, number>;
      };
      /** An error that is not a refusal: the in-process path answers it 500 INTERNAL_ERROR too. */
      internal?: string;
      timing: HostTiming;
    };

/** The engine's phases in the host, in ms (Server-Timing `host-load`, `host-compute`). */
export interface HostTiming {
  load?: number;
  compute?: number;
  /** A row-sharded model's fetches (core/sharded-index.ts ShardTiming). */
  shards?: ShardTiming;
}

/** Runs `work` in the host and wraps its result or refusal. */
export async function answer<T>(work: (timing: HostTiming) => Promise<T>): Promise<HostAnswer<T>> {
  const timing: HostTiming = {};
  try {
    return { ok: true, value: await work(timing), timing };
  } catch (err) {
    const apiError = asApiError(err) ?? storageProblem(err);
    if (apiError)
      return {
        ok: false,
        problem: {
          code: apiError.code,
          detail: apiError.message,
          status: apiError.status,
          errors: apiError.errors,
          headers: apiError.headers,
          members: apiError.members,
        },
        timing,
      };
    console.error(`[host] ${(err as Error).stack ?? String(err)}`);
    return { ok: false, internal: (err as Error).message ?? String(err), timing };
  }
}

/** As app.ts answers a storage failure (nothing changed, retry). */
function storageProblem(err: unknown): ApiError | null {
  if (!(err instanceof StorageError)) return null;
  return new ApiError(
    'STORAGE_UNAVAILABLE',
    `Storage did not answer (${err.binding}); nothing was changed or charged, retry the request`,
    { headers: { 'retry-after': '5' } },
  );
}

/** The value of an answer, or its refusal thrown again as the ApiError (or internal error) it was. */
export function unwrap<T>(a: HostAnswer<T>): T {
  if (a.ok) return a.value;
  if (a.problem)
    throw new ApiError(a.problem.code, a.problem.detail, {
      status: a.problem.status,
      errors: a.problem.errors,
      headers: a.problem.headers,
      members: a.problem.members,
    });
  throw new Error(a.internal ?? 'model host failed');
}

/** A host that failed, could not be reached or did not answer in time: nothing was charged, retry. */
export function hostUnavailable(host: string, why: string): ApiError {
  return new ApiError(
    'EMBEDDING_MODEL_UNAVAILABLE',
    `The model host ${host} did not answer (${why}); nothing was charged, retry the request`,
    { headers: { 'retry-after': '1' } },
  );
}

/**
 * An answer with its body already serialized where it was computed: the host writes the JSON text
 * in slices (core/scoring/steps.ts jsonSteps), which crosses to the API Worker as one string and is
 * answered as it is, instead of an object tree cloned across and serialized again (an answer of
 * text-scores with explain or of a 10,000-word whitelist is megabytes, and each of those passes is
 * work that cannot be sliced). `amount` is what the route charges: text-scores' tokens, word-scores'
 * words.
 */
export interface SerializedAnswer {
  amount: number;
  json: string;
}

/** The engine methods whose answers travel serialized. */
export type SerializedMethod = 'textScores' | 'wordScores';

/** The body and the charged amount of an engine answer of `method`, serialized in steps. */
export function* serializedSteps(method: SerializedMethod, value: unknown): Steps<SerializedAnswer> {
  if (method === 'textScores') {
    const { response, tokenCount } = value as { response: object; tokenCount: number };
    return { amount: tokenCount, json: yield* jsonSteps(response) };
  }
  const response = value as { data: unknown[] };
  return { amount: response.data.length, json: yield* jsonSteps(response) };
}
