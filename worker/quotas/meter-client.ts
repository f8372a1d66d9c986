/**
 * The Worker's side of the WorkspaceMeter Durable Object (meter-do.ts): every call is bounded
 * (METER_TIMEOUT_MS, default 5 s), and a meter that throws, times out or is reset answers the
 * request with 503 STORAGE_UNAVAILABLE + Retry-After, consuming nothing. There is no fallback to
 * deducting in D1: two authorities would disagree (decisions.md "Metering authority").
 *
 * A failed call is repeated only when the runtime marks the error retryable and repeating it
 * cannot charge twice: a charge that carries an Idempotency-Key (the meter recognizes the key),
 * a key claim (the same lock token), or a read.
 */
import type { Env } from '../env';
import { ApiError, excerpt } from '../../core/problem';
import type { UsageTypeKey } from './usage-types';
import type { MeterChargeRequest } from './meter-charge';
import type { MeterAdmitRequest, MeterAdmitResult, MeterQuotas, WorkspaceMeter } from './meter-do';
import type { AdmissionSnapshot } from '../admission/isolate-copy';
import type { ClaimResult } from './meter-keys';
import type { ConsumeOutcome } from './repository';

export const DEFAULT_METER_TIMEOUT_MS = 5_000;
const ATTEMPTS_WHEN_RETRYABLE = 3;

type MeterEnv = Pick<Env, 'METER' | 'METER_TIMEOUT_MS'>;
/** The meter's RPC methods as plain async functions (the stub's Rpc.Result types add nothing here). */
type Stub = Pick<
  WorkspaceMeter,
  'charge' | 'admit' | 'exists' | 'quotas' | 'sync' | 'claimKey' | 'completeKey' | 'releaseKey' | 'flush'
>;

export function meterTimeoutMs(env: MeterEnv): number {
  const raw = Number(env.METER_TIMEOUT_MS);
  return Number.isFinite(raw) && raw > 0 ? raw : DEFAULT_METER_TIMEOUT_MS;
}

export function meterStub(env: MeterEnv, workspaceId: string): Stub {
  return env.METER.get(env.METER.idFromName(workspaceId)) as unknown as Stub;
}

export class MeterUnavailable extends Error {
  constructor(
    readonly operation: string,
    cause: unknown,
    readonly retryable = false,
  ) {
    super(
      `meter.${operation} failed: ${cause instanceof Error ? cause.message.slice(0, 300) : String(cause).slice(0, 300)}`,
    );
    this.name = 'MeterUnavailable';
  }
}

function unavailable(operation: string): ApiError {
  return new ApiError(
    'STORAGE_UNAVAILABLE',
    `The workspace's meter did not answer (${operation}); nothing was charged, retry the request`,
    {
      headers: { 'retry-after': '1' },
    },
  );
}

/**
 * One bounded call; a fresh stub per attempt (a stub that saw an exception may stay broken). One
 * promise and one timer per call (this is on every metered request's path).
 */
function attempt<T>(
  env: MeterEnv,
  workspaceId: string,
  operation: string,
  ms: number,
  fn: (stub: Stub) => Promise<T>,
): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new MeterUnavailable(operation, new Error(`no answer within ${ms} ms`))), ms);
    const fail = (err: unknown) => {
      clearTimeout(timer);
      reject(new MeterUnavailable(operation, err, (err as { retryable?: unknown } | null)?.retryable === true));
    };
    try {
      fn(meterStub(env, workspaceId)).then((value) => {
        clearTimeout(timer);
        resolve(value);
      }, fail);
    } catch (err) {
      fail(err);
    }
  });
}

/**
 * Calls the meter of `workspaceId`; `repeatable` says whether a retryable failure may be tried
 * again. Any failure that remains is ApiError 503 STORAGE_UNAVAILABLE (Retry-After: 1).
 */
export async function callMeter<T>(
  env: MeterEnv,
  workspaceId: string,
  operation: string,
  repeatable: boolean,
  fn: (stub: Stub, deadlineMs: number) => Promise<T>,
): Promise<T> {
  const ms = meterTimeoutMs(env);
  for (let i = 1; ; i++) {
    // The meter refuses a charge that reaches it after the deadline, so a timed-out call does not
    // charge later behind the caller's back (a small margin before the caller stops waiting).
    const deadlineMs = Date.now() + Math.max(1, ms - Math.min(250, ms / 4));
    try {
      return await attempt(env, workspaceId, operation, ms, (stub) => fn(stub, deadlineMs));
    } catch (err) {
      const e = err instanceof MeterUnavailable ? err : new MeterUnavailable(operation, err);
      if (repeatable && e.retryable && i < ATTEMPTS_WHEN_RETRYABLE) continue;
      console.error(`[meter] ${workspaceId}: ${e.message}`);
      throw unavailable(operation);
    }
  }
}

/**
 * Checks and deducts `amount` in the workspace's meter (the authority): N concurrent calls
 * against a remaining allowance L succeed exactly min(N, L) times. Throws the quota problem
 * (403/429, 404 for an unknown workspace, 409 for a key used for another charge) or 503.
 */
export async function consume(
  env: MeterEnv,
  req: Omit<MeterChargeRequest, 'deadlineMs'>,
  dailyRetryAfterSeconds: number,
): Promise<ConsumeOutcome & { snapshot?: AdmissionSnapshot }> {
  const result = await callMeter(env, req.workspaceId, 'charge', req.idempotencyKey !== null, (stub, deadlineMs) =>
    stub.charge({ ...req, deadlineMs }),
  );
  switch (result.status) {
    case 'charged':
    case 'replayed':
    case 'free':
      return { status: result.status, snapshot: result.snapshot };
    case 'expired':
      throw unavailable('charge');
    default:
      if (result.code === 'DAILY_LIMIT_REACHED') {
        throw new ApiError('DAILY_LIMIT_REACHED', result.detail, {
          headers: { 'retry-after': String(dailyRetryAfterSeconds) },
        });
      }
      throw new ApiError(result.code, result.detail);
  }
}

/**
 * Admission in the workspace's meter before any work (worker/admission/admit.ts): the refusal as
 * a value, or the admitted request's snapshot. A read that takes from the rate bucket: repeating
 * a failed call could take twice, so it is not repeated.
 */
export function admitInMeter(env: MeterEnv, req: MeterAdmitRequest): Promise<MeterAdmitResult> {
  return callMeter(env, req.workspaceId, 'admit', false, (stub) => stub.admit(req));
}

/** The live quotas of a workspace from its meter; 404 when there is no such workspace. */
export async function meterQuotas(
  env: MeterEnv,
  workspaceId: string,
  atMs: number,
  usageTypeKey?: UsageTypeKey | string,
): Promise<MeterQuotas> {
  const out = await callMeter(env, workspaceId, 'quotas', true, (stub) => stub.quotas(workspaceId, atMs, usageTypeKey));
  if (!out) throw new ApiError('NOT_FOUND', `Workspace '${excerpt(workspaceId)}' does not exist`);
  return out;
}

/** After an admin change in D1: the meter applies it (idempotent: it replays the audit log after its watermark). */
export async function syncMeter(env: MeterEnv, workspaceId: string, atMs: number): Promise<MeterQuotas> {
  const out = await callMeter(env, workspaceId, 'sync', true, (stub) => stub.sync(workspaceId, atMs));
  if (!out) throw new ApiError('NOT_FOUND', `Workspace '${excerpt(workspaceId)}' does not exist`);
  return out;
}

export function claimKey(
  env: MeterEnv,
  workspaceId: string,
  key: string,
  request: { method: string; path: string; bodySha256: string; lock: string; atMs: number; leaseMs: number },
): Promise<ClaimResult> {
  return callMeter(env, workspaceId, 'claim', true, (stub) =>
    stub.claimKey(
      workspaceId,
      key,
      request.method,
      request.path,
      request.bodySha256,
      request.lock,
      request.atMs,
      request.leaseMs,
    ),
  );
}

export function completeKey(
  env: MeterEnv,
  workspaceId: string,
  key: string,
  lock: string,
  status: number,
  contentType: string | null,
  body: string,
): Promise<void> {
  return callMeter(env, workspaceId, 'complete', true, (stub) =>
    stub.completeKey(key, lock, status, contentType, body),
  );
}

export function releaseKey(env: MeterEnv, workspaceId: string, key: string, lock: string): Promise<void> {
  return callMeter(env, workspaceId, 'release', true, (stub) => stub.releaseKey(key, lock));
}

/** Writes the meter's outbox to the D1 ledger now (operators, tests); returns the events written. */
export function flushMeter(env: MeterEnv, workspaceId: string, atMs?: number): Promise<number> {
  return callMeter(env, workspaceId, 'flush', true, (stub) => stub.flush(atMs));
}
