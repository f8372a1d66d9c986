/**
 * Typed client for the Embedding Edge API.
 *
 * Types come from the served OpenAPI document (openapi.generated.ts, openapi-typescript); the
 * transport is openapi-fetch, wrapped with what a production caller needs:
 *   - every non-2xx answer is thrown as one error class, ApiProblem (the RFC 9457 body's code,
 *     status, errors, plus retryAfter from the Retry-After header);
 *   - 429/502/503/504 and network failures are retried with exponential backoff (full jitter),
 *     honouring Retry-After; a Retry-After longer than maxRetryAfterMs (a daily limit resets at
 *     midnight) is not waited for: the problem is thrown with its retryAfter;
 *   - one Idempotency-Key per logical call (non-GET), the same on each of its retries, so a
 *     metered call whose answer was lost is charged once;
 *   - a timeout per attempt and an AbortSignal per call (aborting stops retries too).
 */
import createFetchClient, { type Client } from 'openapi-fetch';
import type { components, paths } from './openapi.generated';

export type { components, paths, operations } from './openapi.generated';
export type Schemas = components['schemas'];
export type TextScoresRequest = Schemas['TextScoresRequest'];
export type TextScoresResponse = Schemas['TextScoresResponse'];
export type ScoredText = Schemas['ScoredText'];
export type LanguageMismatch = Schemas['LanguageMismatch'];
export type WordScoresRequest = Schemas['WordScoresRequest'];
export type WordScoresResponse = Schemas['WordScoresResponse'];
export type TokenizationRequest = Schemas['TokenizationRequest'];
export type Tokenization = Schemas['Tokenization'];
export type AutocompleteRequest = Schemas['AutocompleteRequest'];
export type AutocompleteResponse = Schemas['AutocompleteResponse'];
export type WordAvailabilitiesRequest = Schemas['WordAvailabilitiesRequest'];
export type WordAvailabilitiesResponse = Schemas['WordAvailabilitiesResponse'];
export type SimilarityMatrixRequest = Schemas['SimilarityMatrixRequest'];
export type SimilarityMatrixResponse = Schemas['SimilarityMatrixResponse'];
export type PlagiarismCheckRequest = Schemas['PlagiarismCheckRequest'];
export type PlagiarismCheckResponse = Schemas['PlagiarismCheckResponse'];
export type EmbeddingModel = Schemas['EmbeddingModel'];
export type EmbeddingModelPage = Schemas['EmbeddingModelPage'];
export type MapperPage = Schemas['MapperPage'];
export type Problem = Schemas['Problem'];

export type RawClient = Client<paths, `${string}/${string}`>;

/** Status codes retried by default: rate limited, and gateway/availability failures. */
export const RETRY_STATUSES: readonly number[] = [429, 502, 503, 504];

/** An error answer of the API (problem+json), or a failure to get one (status 0). */
export class ApiProblem extends Error {
  override readonly name = 'ApiProblem';
  /** HTTP status; 0 when no answer arrived (network failure, timeout). */
  readonly status: number;
  /** Machine code, e.g. VALIDATION_FAILED, DAILY_LIMIT_REACHED; NETWORK_ERROR / TIMEOUT on the client side; HTTP_<status> for a body that is not a problem. */
  readonly code: string;
  readonly title: string;
  readonly detail: string;
  readonly translationKey: string;
  /** Field-level problems (`path` as in `texts.3`). Empty when there are none. */
  readonly errors: Array<{ path: string; message: string }>;
  /** Seconds to wait before trying again (Retry-After), null when the answer had none. */
  readonly retryAfter: number | null;
  /** The service's X-Request-Id of the failed answer, when there was one. */
  readonly requestId: string | null;
  /** Attempts made for this call (1 = no retry). */
  readonly attempts: number;
  /** The problem body as received (null when none or not JSON). */
  readonly body: Problem | null;

  constructor(init: {
    status: number;
    code: string;
    title?: string;
    detail?: string;
    translationKey?: string;
    errors?: Array<{ path: string; message: string }>;
    retryAfter?: number | null;
    requestId?: string | null;
    attempts?: number;
    body?: Problem | null;
    cause?: unknown;
  }) {
    super(
      `${init.status ? `${init.status} ` : ''}${init.code}: ${init.detail ?? init.title ?? ''}`.trim(),
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.code = init.code;
    this.title = init.title ?? init.code;
    this.detail = init.detail ?? '';
    this.translationKey = init.translationKey ?? '';
    this.errors = init.errors ?? [];
    this.retryAfter = init.retryAfter ?? null;
    this.requestId = init.requestId ?? null;
    this.attempts = init.attempts ?? 1;
    this.body = init.body ?? null;
  }

  /** Builds the error from an answer and its already-parsed body (openapi-fetch parses error bodies). */
  static fromResponse(response: Response, body: unknown, attempts = 1): ApiProblem {
    const p = isProblem(body) ? body : null;
    return new ApiProblem({
      status: response.status,
      code: p?.code ?? `HTTP_${response.status}`,
      title: p?.title ?? (response.statusText || `HTTP ${response.status}`),
      detail: p?.detail ?? (typeof body === 'string' ? body.slice(0, 500) : ''),
      translationKey: p?.translationKey,
      errors: p?.errors ?? [],
      retryAfter: retryAfterSeconds(response.headers.get('retry-after')),
      requestId: response.headers.get('x-request-id'),
      attempts,
      body: p,
    });
  }
}

function isProblem(body: unknown): body is Problem {
  return (
    typeof body === 'object' &&
    body !== null &&
    typeof (body as Problem).code === 'string' &&
    typeof (body as Problem).status === 'number'
  );
}

/** Retry-After as seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
export function retryAfterSeconds(value: string | null, now = Date.now()): number | null {
  if (value === null || value.trim() === '') return null;
  const v = value.trim();
  if (/^\d+$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

export interface RetryInfo {
  /** The attempt that just failed (1-based). */
  attempt: number;
  /** The wait before the next attempt. */
  delayMs: number;
  /** Status of the failed attempt; 0 for a network failure or timeout. */
  status: number;
  /** The key sent with every attempt of this call (null for GET). */
  idempotencyKey: string | null;
  error?: unknown;
}

export interface ClientOptions {
  /** Origin of the service, e.g. https://api.example.com (paths start with /api/...). */
  baseUrl: string;
  /** Bearer token, or a function returning one (called per attempt, so it may refresh). */
  token?: string | (() => string | Promise<string>);
  /** Default workspace for workspace-scoped calls. */
  workspaceId?: string;
  /** fetch implementation (default: globalThis.fetch at call time). */
  fetch?: (request: Request) => Promise<Response>;
  /** Retries after the first attempt (default 4). */
  retries?: number;
  /** Statuses that are retried (default 429, 502, 503, 504). */
  retryOn?: readonly number[];
  /** First backoff step (default 250 ms); doubles per attempt, with full jitter. */
  backoffMs?: number;
  /** Largest backoff step (default 10 s). */
  maxBackoffMs?: number;
  /** A Retry-After longer than this is not waited for: the problem is thrown (default 60 s). */
  maxRetryAfterMs?: number;
  /** Timeout of one attempt (default 30 s); 0 disables. */
  timeoutMs?: number;
  /** Headers sent with every request. */
  headers?: Record<string, string>;
  /** Send an Idempotency-Key with non-GET calls (default true; a benchmark measuring the bare route turns it off). */
  idempotency?: boolean;
  /** Idempotency-Key generator (default crypto.randomUUID). */
  idempotencyKey?: () => string;
  /** Called before each retry (logging, metrics). */
  onRetry?: (info: RetryInfo) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's per-attempt timeout. */
  timeoutMs?: number;
  /** Overrides the client's retries for this call. */
  retries?: number;
  /** The Idempotency-Key of this logical call (default: a new one per call). */
  idempotencyKey?: string;
  headers?: Record<string, string>;
  /** Sees every answer (retried ones too), e.g. to read X-Request-Id or Idempotent-Replayed. */
  onResponse?: (response: Response) => void;
}

/** What `call` hands to the raw request: pass it into the openapi-fetch init. */
export type AttemptInit = {
  signal: AbortSignal;
  headers: Record<string, string>;
};

type RawResult = { data?: unknown; error?: unknown; response: Response };

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  // randomUUID needs a secure context in browsers; getRandomValues does not.
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export class EmbeddingEdgeClient {
  /** The openapi-fetch client: GET/POST/... on every path of the API, typed; answers are not thrown. Prefer `call`. */
  readonly raw: RawClient;
  private readonly options: ClientOptions;

  constructor(options: ClientOptions) {
    this.options = options;
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.raw = createFetchClient<paths>({
      baseUrl,
      fetch: (request: Request) => (options.fetch ?? globalThis.fetch)(request),
    });
  }

  get workspaceId(): string | undefined {
    return this.options.workspaceId;
  }

  /**
   * One logical call with retries: `fn` makes one attempt through the typed raw client with the
   * given init (signal, headers), e.g.
   *   client.call((raw, init) => raw.POST('/api/admin/v1/workspaces', { ...init, body }))
   * Resolves to the typed body of a 2xx answer; throws ApiProblem otherwise.
   */
  async call<R extends RawResult>(
    fn: (raw: RawClient, init: AttemptInit) => Promise<R>,
    method: string,
    options: CallOptions = {},
  ): Promise<Exclude<R['data'], undefined>> {
    const o = this.options;
    const retries = options.retries ?? o.retries ?? 4;
    const retryOn = o.retryOn ?? RETRY_STATUSES;
    const timeoutMs = options.timeoutMs ?? o.timeoutMs ?? 30_000;
    const key =
      method.toUpperCase() === 'GET' || (o.idempotency === false && !options.idempotencyKey)
        ? null
        : (options.idempotencyKey ?? (o.idempotencyKey ?? newKey)());
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      const headers: Record<string, string> = { ...o.headers, ...options.headers };
      const token = typeof o.token === 'function' ? await o.token() : o.token;
      if (token) headers.authorization = `Bearer ${token}`;
      if (key) headers['idempotency-key'] = key;
      const attemptSignal = combine(options.signal, timeoutMs);
      let failure: { status: number; problem: ApiProblem; retryAfter: number | null };
      try {
        const result = await fn(this.raw, { signal: attemptSignal.signal, headers });
        options.onResponse?.(result.response);
        if (result.response.ok) return result.data as Exclude<R['data'], undefined>;
        const problem = ApiProblem.fromResponse(result.response, result.error, attempt);
        failure = { status: result.response.status, problem, retryAfter: problem.retryAfter };
      } catch (err) {
        if (options.signal?.aborted) throw options.signal.reason;
        if (err instanceof ApiProblem) throw err;
        const timedOut = attemptSignal.timedOut();
        const problem = new ApiProblem({
          status: 0,
          code: timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
          detail: timedOut ? `No answer within ${timeoutMs} ms` : err instanceof Error ? err.message : String(err),
          attempts: attempt,
          cause: err,
        });
        failure = { status: 0, problem, retryAfter: null };
      } finally {
        attemptSignal.dispose();
      }
      const retryable = failure.status === 0 || retryOn.includes(failure.status);
      if (!retryable || attempt > retries) throw failure.problem;
      let delayMs: number;
      if (failure.retryAfter !== null) {
        delayMs = failure.retryAfter * 1000;
        // A long Retry-After (e.g. the daily limit) is the caller's decision, not a retry.
        if (delayMs > (o.maxRetryAfterMs ?? 60_000)) throw failure.problem;
      } else {
        const cap = Math.min(o.maxBackoffMs ?? 10_000, (o.backoffMs ?? 250) * 2 ** (attempt - 1));
        delayMs = Math.round(cap / 2 + (Math.random() * cap) / 2);
      }
      o.onRetry?.({ attempt, delayMs, status: failure.status, idempotencyKey: key, error: failure.problem });
      await sleep(delayMs, options.signal);
    }
  }

  private ws(workspaceId: string | undefined): string {
    const ws = workspaceId ?? this.options.workspaceId;
    if (!ws) throw new TypeError('workspaceId is required (pass it, or set it in the client options)');
    return ws;
  }

  // --- Endpoints of the interface (service-interface.md), one method each ---------------------

  health(options?: CallOptions) {
    return this.call((raw, init) => raw.GET('/api/health', init), 'GET', options);
  }

  textScores(body: TextScoresRequest, options?: CallOptions & { workspaceId?: string }) {
    const workspaceId = this.ws(options?.workspaceId);
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/workspaces/{workspaceId}/text-scores', { ...init, params: { path: { workspaceId } }, body }),
      'POST',
      options,
    );
  }

  wordScores(body: WordScoresRequest, options?: CallOptions & { workspaceId?: string }) {
    const workspaceId = this.ws(options?.workspaceId);
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/workspaces/{workspaceId}/word-scores', { ...init, params: { path: { workspaceId } }, body }),
      'POST',
      options,
    );
  }

  tokenize(body: TokenizationRequest, options?: CallOptions & { workspaceId?: string }) {
    const workspaceId = this.ws(options?.workspaceId);
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/workspaces/{workspaceId}/tokenizations', {
          ...init,
          params: { path: { workspaceId } },
          body,
        }),
      'POST',
      options,
    );
  }

  autocomplete(body: AutocompleteRequest, options?: CallOptions & { workspaceId?: string }) {
    const workspaceId = this.ws(options?.workspaceId);
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/workspaces/{workspaceId}/autocomplete-suggestions', {
          ...init,
          params: { path: { workspaceId } },
          body,
        }),
      'POST',
      options,
    );
  }

  plagiarismCheck(body: PlagiarismCheckRequest, options?: CallOptions & { workspaceId?: string }) {
    const workspaceId = this.ws(options?.workspaceId);
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/workspaces/{workspaceId}/plagiarism-checks', {
          ...init,
          params: { path: { workspaceId } },
          body,
        }),
      'POST',
      options,
    );
  }

  wordAvailabilities(embeddingModelId: string, body: WordAvailabilitiesRequest, options?: CallOptions) {
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/embedding-models/{embeddingModelId}/word-availabilities', {
          ...init,
          params: { path: { embeddingModelId } },
          body,
        }),
      'POST',
      options,
    );
  }

  similarityMatrix(embeddingModelId: string, body: SimilarityMatrixRequest, options?: CallOptions) {
    return this.call(
      (raw, init) =>
        raw.POST('/api/v1/embedding-models/{embeddingModelId}/word-similarity-matrices', {
          ...init,
          params: { path: { embeddingModelId } },
          body,
        }),
      'POST',
      options,
    );
  }

  listModels(query: paths['/api/v1/embedding-models']['get']['parameters']['query'] = {}, options?: CallOptions) {
    return this.call(
      (raw, init) => raw.GET('/api/v1/embedding-models', { ...init, params: { query } }),
      'GET',
      options,
    );
  }

  getModel(id: string, options?: CallOptions) {
    return this.call(
      (raw, init) => raw.GET('/api/v1/embedding-models/{id}', { ...init, params: { path: { id } } }),
      'GET',
      options,
    );
  }

  listMappers(query: paths['/api/v1/mappers']['get']['parameters']['query'] = {}, options?: CallOptions) {
    return this.call((raw, init) => raw.GET('/api/v1/mappers', { ...init, params: { query } }), 'GET', options);
  }

  quotas(
    query: paths['/api/usage-service/v1/workspaces/{workspaceId}/quotas']['get']['parameters']['query'] = {},
    options?: CallOptions & { workspaceId?: string },
  ) {
    const workspaceId = this.ws(options?.workspaceId);
    return this.call(
      (raw, init) =>
        raw.GET('/api/usage-service/v1/workspaces/{workspaceId}/quotas', {
          ...init,
          params: { path: { workspaceId }, query },
        }),
      'GET',
      options,
    );
  }

  usageTypes(
    query: paths['/api/usage-service/v1/usage-types']['get']['parameters']['query'] = {},
    options?: CallOptions,
  ) {
    return this.call(
      (raw, init) => raw.GET('/api/usage-service/v1/usage-types', { ...init, params: { query } }),
      'GET',
      options,
    );
  }
}

export function createClient(options: ClientOptions): EmbeddingEdgeClient {
  return new EmbeddingEdgeClient(options);
}

/** The caller's signal and a per-attempt timeout as one signal (AbortSignal.any is not everywhere yet). */
function combine(
  outer: AbortSignal | undefined,
  timeoutMs: number,
): { signal: AbortSignal; timedOut(): boolean; dispose(): void } {
  const ctrl = new AbortController();
  let timedOut = false;
  const onAbort = (): void => ctrl.abort(outer!.reason);
  if (outer) {
    if (outer.aborted) ctrl.abort(outer.reason);
    else outer.addEventListener('abort', onAbort, { once: true });
  }
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          ctrl.abort(new DOMException(`No answer within ${timeoutMs} ms`, 'TimeoutError'));
        }, timeoutMs)
      : null;
  return {
    signal: ctrl.signal,
    timedOut: () => timedOut,
    dispose: () => {
      if (timer) clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    },
  };
}
