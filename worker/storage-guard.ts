/**
 * Storage failures are answered, not crashed on (tested by fault injection): every call the
 * Worker makes on its D1, R2 and KV bindings goes through a guard that
 * - turns a rejected call into a StorageError (the app answers 503 STORAGE_UNAVAILABLE with
 *   Retry-After, unless a loader turns it into its own 503, e.g. EMBEDDING_MODEL_UNAVAILABLE), and
 * - bounds every call by a timeout (STORAGE_TIMEOUT_MS, default 15 s; reading an object's bytes
 *   gets four times as long), so a hanging binding never hangs the request.
 * Applied once per request to c.env (worker/app.ts). D1 statements stay usable in db.batch():
 * the guard hands the real statements to the real batch.
 */
import type { MiddlewareHandler } from 'hono';
import type { AppEnv, Env } from './env';

export class StorageError extends Error {
  constructor(
    readonly binding: string,
    readonly operation: string,
    cause: unknown,
  ) {
    super(
      `${binding}.${operation} failed: ${cause instanceof Error ? cause.message.slice(0, 300) : String(cause).slice(0, 300)}`,
    );
    this.name = 'StorageError';
  }
}

export const DEFAULT_STORAGE_TIMEOUT_MS = 15_000;

function timeoutOf(env: Env): number {
  const raw = Number(env.STORAGE_TIMEOUT_MS);
  return Number.isFinite(raw) && raw > 0 ? raw : DEFAULT_STORAGE_TIMEOUT_MS;
}

function guarded<T>(binding: string, operation: string, ms: number, call: () => Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | null = null;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StorageError(binding, operation, new Error(`no answer within ${ms} ms`))), ms);
  });
  let started: Promise<T>;
  try {
    started = Promise.resolve(call());
  } catch (err) {
    started = Promise.reject(err);
  }
  const wrapped = started.then(
    (v) => v,
    (err: unknown) => {
      throw err instanceof StorageError ? err : new StorageError(binding, operation, err);
    },
  );
  return Promise.race([wrapped, timeout]).finally(() => {
    if (timer !== null) clearTimeout(timer);
  });
}

const BODY_METHODS = new Set(['arrayBuffer', 'text', 'json', 'blob', 'bytes']);

/** An R2 object (body) whose byte-reading methods are guarded too. */
function guardObject<T extends object>(obj: T, binding: string, ms: number): T {
  return new Proxy(obj, {
    get(target, prop) {
      const v = Reflect.get(target, prop, target);
      if (typeof prop === 'string' && BODY_METHODS.has(prop) && typeof v === 'function') {
        return (...args: unknown[]) =>
          guarded(binding, `object.${prop}`, 4 * ms, () =>
            (v as (...a: unknown[]) => Promise<unknown>).apply(target, args),
          );
      }
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** R2 and KV: every method returning a promise is guarded; R2 objects returned are guarded too. */
function guardAsyncMethods<T extends object>(target: T, binding: string, ms: number, objects: boolean): T {
  return new Proxy(target, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t);
      if (typeof v !== 'function') return v;
      return (...args: unknown[]) =>
        guarded(binding, String(prop), ms, async () => {
          const out = await (v as (...a: unknown[]) => unknown).apply(t, args);
          return objects && out !== null && typeof out === 'object' && 'arrayBuffer' in (out as object)
            ? guardObject(out as object, binding, ms)
            : out;
        });
    },
  });
}

/** D1: statements are wrapped (bind keeps the wrapper); batch() gets the real statements. */
function guardD1(db: D1Database, ms: number): D1Database {
  const real = new WeakMap<object, D1PreparedStatement>();
  const wrapStatement = (stmt: D1PreparedStatement): D1PreparedStatement => {
    const proxy = new Proxy(stmt, {
      get(t, prop) {
        const v = Reflect.get(t, prop, t);
        if (typeof v !== 'function') return v;
        if (prop === 'bind')
          return (...args: unknown[]) => wrapStatement((v as (...a: unknown[]) => D1PreparedStatement).apply(t, args));
        return (...args: unknown[]) =>
          guarded('DB', `statement.${String(prop)}`, ms, () =>
            (v as (...a: unknown[]) => Promise<unknown>).apply(t, args),
          );
      },
    });
    real.set(proxy, stmt);
    return proxy;
  };
  return new Proxy(db, {
    get(t, prop) {
      const v = Reflect.get(t, prop, t);
      if (typeof v !== 'function') return v;
      if (prop === 'prepare')
        return (sql: string) => wrapStatement((v as (s: string) => D1PreparedStatement).call(t, sql));
      if (prop === 'batch') {
        return (statements: D1PreparedStatement[]) =>
          guarded('DB', 'batch', ms, () =>
            (v as (s: D1PreparedStatement[]) => Promise<unknown>).call(
              t,
              statements.map((s) => real.get(s) ?? s),
            ),
          );
      }
      return (...args: unknown[]) =>
        guarded('DB', String(prop), ms, () => (v as (...a: unknown[]) => Promise<unknown>).apply(t, args));
    },
  });
}

const GUARDED = Symbol('storage-guarded');

/** The env with guarded DB, ARTIFACTS and CACHE (idempotent: a guarded env is returned as is). */
export function guardStorage(env: Env): Env {
  // No env (an app.request() without bindings, e.g. the OpenAPI generator) or already guarded: as is.
  if (!env || (env as unknown as Record<symbol, boolean>)[GUARDED]) return env;
  const ms = timeoutOf(env);
  const out: Env = { ...env };
  if (env.DB) out.DB = guardD1(env.DB, ms);
  if (env.ARTIFACTS) out.ARTIFACTS = guardAsyncMethods(env.ARTIFACTS, 'ARTIFACTS', ms, true);
  if (env.CACHE) out.CACHE = guardAsyncMethods(env.CACHE, 'CACHE', ms, false);
  Object.defineProperty(out, GUARDED, { value: true, enumerable: false });
  return out;
}

export const storageGuard: MiddlewareHandler<AppEnv> = async (c, next) => {
  c.env = guardStorage(c.env);
  await next();
};
