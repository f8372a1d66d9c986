/**
 * RFC 9457 problem details, with the code/translationKey pairs of decisions.md: the errors of the
 * Worker (rendered by worker/http/problem-response.ts) and of the browser's offline scorer
 * (browser/src/scorer-worker.ts), which answer the same request with the same body.
 */
import { ScoringError } from './scoring/common';
import { normalizeLanguage, SUPPORTED_LANGUAGES, type Language } from './tokenizer/languages';

export interface FieldProblem {
  path: string;
  message: string;
}

export const PROBLEMS = {
  VALIDATION_FAILED: { status: 422, translationKey: 'validationFailed', title: 'Validation failed' },
  PAYLOAD_TOO_LARGE: { status: 413, translationKey: 'payloadTooLarge', title: 'Payload too large' },
  REQUEST_TIMEOUT: { status: 408, translationKey: 'requestTimeout', title: 'Request body timed out' },
  UNAUTHORIZED: { status: 401, translationKey: 'unauthorized', title: 'Unauthorized' },
  WORKSPACE_FORBIDDEN: { status: 403, translationKey: 'workspaceForbidden', title: 'Workspace forbidden' },
  ADMIN_SCOPE_REQUIRED: { status: 403, translationKey: 'adminScopeRequired', title: 'Admin scope required' },
  NOT_FOUND: { status: 404, translationKey: 'notFound', title: 'Not found' },
  METHOD_NOT_ALLOWED: { status: 405, translationKey: 'methodNotAllowed', title: 'Method not allowed' },
  EMBEDDING_MODEL_NOT_FOUND: {
    status: 404,
    translationKey: 'embeddingModelNotFound',
    title: 'Embedding model not found',
  },
  EMBEDDING_MODEL_UNAVAILABLE: {
    status: 503,
    translationKey: 'embeddingModelUnavailable',
    title: 'Embedding model could not be loaded',
  },
  // A local first start serves before everything is built (core/building.ts): what is still being built.
  MODEL_LOADING: { status: 503, translationKey: 'modelLoading', title: 'Still being built' },
  MAPPER_NOT_FOUND: { status: 422, translationKey: 'mapperNotFound', title: 'Mapper not found' },
  MAPPER_MODEL_MISMATCH: {
    status: 422,
    translationKey: 'mapperModelMismatch',
    title: 'Mapper belongs to another model',
  },
  MAPPER_UNAVAILABLE: { status: 503, translationKey: 'mapperUnavailable', title: 'Mapper bundle could not be loaded' },
  DIMENSION_NOT_FOUND: { status: 422, translationKey: 'dimensionNotFound', title: 'Dimension not found' },
  UNSUPPORTED_LANGUAGE: { status: 422, translationKey: 'unsupportedLanguage', title: 'Unsupported language' },
  LANGUAGE_DATA_UNAVAILABLE: {
    status: 503,
    translationKey: 'languageDataUnavailable',
    title: 'Language data could not be loaded',
  },
  PLAGIARISM_TEXT_TOO_SHORT: {
    status: 422,
    translationKey: 'plagiarismTextTooShort',
    title: 'Text too short for a plagiarism check',
  },
  ERROR_NO_REMAINING_PLAGIARISM_CHECKS: {
    status: 403,
    translationKey: 'noRemainingPlagiarismChecks',
    title: 'No remaining plagiarism checks',
  },
  ERROR_NO_REMAINING_QUOTA: { status: 403, translationKey: 'noRemainingQuota', title: 'No remaining quota' },
  DAILY_LIMIT_REACHED: { status: 429, translationKey: 'dailyLimitReached', title: 'Daily limit reached' },
  // Admission (decisions.md "Admission and cost"): priced before any work.
  REQUEST_TOO_EXPENSIVE: { status: 413, translationKey: 'requestTooExpensive', title: 'Request too expensive' },
  RATE_LIMITED: { status: 429, translationKey: 'rateLimited', title: 'Rate limited' },
  HOST_BUSY: { status: 503, translationKey: 'hostBusy', title: 'Model host busy' },
  UPSTREAM_FAILED: { status: 502, translationKey: 'upstreamFailed', title: 'Upstream service failed' },
  CONFLICT: { status: 409, translationKey: 'conflict', title: 'Conflict' },
  IDEMPOTENCY_KEY_REUSED: {
    status: 422,
    translationKey: 'idempotencyKeyReused',
    title: 'Idempotency-Key used for another request',
  },
  IDEMPOTENCY_KEY_IN_PROGRESS: {
    status: 409,
    translationKey: 'idempotencyKeyInProgress',
    title: 'A request with this Idempotency-Key is still running',
  },
  STORAGE_UNAVAILABLE: { status: 503, translationKey: 'storageUnavailable', title: 'Storage temporarily unavailable' },
  INTERNAL_ERROR: { status: 500, translationKey: 'internalError', title: 'Internal error' },
  // The browser's offline scorer only (browser/src/cache.ts): an artifact neither cached nor downloadable, or one that fails its checksum.
  OFFLINE_NOT_CACHED: { status: 503, translationKey: 'offlineNotCached', title: 'Offline not cached' },
  ARTIFACT_CHECKSUM_MISMATCH: {
    status: 502,
    translationKey: 'artifactChecksumMismatch',
    title: 'Artifact checksum mismatch',
  },
} as const;

export type ProblemCode = keyof typeof PROBLEMS;

/** Throw anywhere in a handler; the app's error handler renders it. */
export class ApiError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly errors?: FieldProblem[];
  readonly headers: Record<string, string>;
  /** Extension members of the problem (RFC 9457 section 3.2), e.g. estimatedUnits and capUnits of a 413. */
  readonly members?: Record<string, number>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: {
      errors?: FieldProblem[];
      status?: number;
      headers?: Record<string, string>;
      members?: Record<string, number>;
    } = {},
  ) {
    super(detail);
    this.code = code;
    this.status = options.status ?? PROBLEMS[code].status;
    this.errors = options.errors;
    this.headers = options.headers ?? {};
    if (options.members) this.members = options.members;
  }
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: ProblemCode;
  translationKey: string;
  instance?: string;
  errors?: FieldProblem[];
  /** Extension members (REQUEST_TOO_EXPENSIVE: estimatedUnits, capUnits). */
  [member: string]: unknown;
}

export function problemBody(err: ApiError, instance?: string): ProblemBody {
  const def = PROBLEMS[err.code];
  const body: ProblemBody = {
    type: `https://embedding-edge.dev/problems/${def.translationKey}`,
    title: def.title,
    status: err.status,
    detail: err.message,
    code: err.code,
    translationKey: def.translationKey,
  };
  if (instance) body.instance = instance;
  if (err.errors && err.errors.length > 0) body.errors = err.errors;
  if (err.members) for (const [k, v] of Object.entries(err.members)) body[k] = v;
  return body;
}

/**
 * The most characters of one value sent by the client that a problem quotes: a detail or
 * message never echoes a long value whole, so an answer stays small however large the request. Longer values are cut with `excerpt`.
 */
export const QUOTED_INPUT_CHARS = 64;
/** At most this many field errors in one problem; the detail gives the total. */
export const PROBLEM_ERRORS_MAX = 100;
/** Our own messages are shorter; this only bounds what a library might put into one. */
const MESSAGE_MAX_CHARS = 500;

/** A client value as a problem quotes it: at most `max` characters, then "…" and its length. */
export function excerpt(value: string, max: number = QUOTED_INPUT_CHARS): string {
  if (value.length <= max) return value;
  // Never cut between the two halves of a surrogate pair.
  const last = value.charCodeAt(max - 1);
  const end = last >= 0xd800 && last <= 0xdbff ? max - 1 : max;
  return `${value.slice(0, end)}… (${value.length} characters)`;
}

/** The issues of a failed zod safeParse (`keys`: the member names of an unrecognized_keys issue). */
export type ZodIssues = ReadonlyArray<{
  path: ReadonlyArray<PropertyKey>;
  message: string;
  code?: string;
  keys?: ReadonlyArray<string>;
}>;

/** The message of an issue; zod's message of unknown members names them whole, ours cuts them. */
function issueMessage(issue: ZodIssues[number]): string {
  if (issue.code === 'unrecognized_keys' && issue.keys) {
    const shown = issue.keys.slice(0, 5).map((k) => JSON.stringify(excerpt(k)));
    const more = issue.keys.length > shown.length ? ` and ${issue.keys.length - shown.length} more` : '';
    return `Unrecognized key${issue.keys.length === 1 ? '' : 's'}: ${shown.join(', ')}${more}`;
  }
  return excerpt(issue.message, MESSAGE_MAX_CHARS);
}

/** Zod issues -> field problems ({ path: "texts.0", message }); path members and messages are cut (excerpt). */
export function zodIssuesToProblems(issues: ZodIssues): FieldProblem[] {
  return issues.map((i) => ({
    path: i.path.map((p) => excerpt(String(p))).join('.') || '(root)',
    message: issueMessage(i),
  }));
}

/**
 * A request that does not match its zod schema: 422 VALIDATION_FAILED with one entry a zod
 * issue, at most PROBLEM_ERRORS_MAX of them (the detail says how many there were).
 */
export function validationFailed(issues: ZodIssues): ApiError {
  const detail =
    issues.length > PROBLEM_ERRORS_MAX
      ? `The request does not match the schema (${issues.length} errors; the first ${PROBLEM_ERRORS_MAX} are listed)`
      : 'The request does not match the schema';
  return new ApiError('VALIDATION_FAILED', detail, {
    errors: zodIssuesToProblems(issues.slice(0, PROBLEM_ERRORS_MAX)),
  });
}

/**
 * The ApiError an error is answered with: itself, or for a core scorer's refusal (ScoringError)
 * its code and message, with the field it names in errors[]. Anything else: null (an internal error).
 */
export function asApiError(err: unknown): ApiError | null {
  if (err instanceof ApiError) return err;
  if (err instanceof ScoringError)
    return new ApiError(err.code, err.message, err.path ? { errors: [{ path: err.path, message: err.message }] } : {});
  return null;
}

/** A request's `language` as a tokenizer language; 422 UNSUPPORTED_LANGUAGE (listing the supported ones) otherwise. */
export function requireLanguage(language: string): Language {
  const normalized = normalizeLanguage(language);
  if (normalized) return normalized;
  const supported = SUPPORTED_LANGUAGES.join(', ');
  throw new ApiError(
    'UNSUPPORTED_LANGUAGE',
    `Language '${excerpt(language)}' is not supported; supported languages: ${supported}`,
    {
      errors: [{ path: 'language', message: `Expected one of: ${supported}` }],
    },
  );
}
