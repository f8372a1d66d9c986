/** Bindings and variables of the Worker (wrangler.toml, .dev.vars, secrets). */
import type { TimingVariables } from 'hono/timing';

export interface Env {
  DB: D1Database;
  ARTIFACTS: R2Bucket;
  CACHE: KVNamespace;
  /** One WorkspaceMeter Durable Object per workspace (worker/quotas/meter-do.ts). */
  METER: DurableObjectNamespace<import('./quotas/meter-do').WorkspaceMeter>;
  DEFAULT_MODEL_ID: string;
  /** HS256 secret for local development (.dev.vars). */
  JWT_SECRET?: string;
  /** Production: JWKS endpoint for RS256/ES256 tokens; takes precedence over JWT_SECRET. */
  JWT_JWKS_URL?: string;
  JWT_ISSUER?: string;
  JWT_AUDIENCE?: string;
  /** Name of the token claim holding the workspace id (default workspaceId). */
  JWT_WORKSPACE_CLAIM?: string;
  PLAGIARISM_PROVIDER?: string;
  PLAGIARISM_HTTP_URL?: string;
  PLAGIARISM_HTTP_API_KEY?: string;
  PLAGIARISM_HTTP_TIMEOUT_MS?: string;
  PLAGIARISM_HTTP_RETRIES?: string;
  /** Bound of every D1/R2/KV call in ms (worker/storage-guard.ts; default 15,000). */
  STORAGE_TIMEOUT_MS?: string;
  /** Bound of every call to a workspace's meter in ms (worker/quotas/meter-client.ts; default 5,000). */
  METER_TIMEOUT_MS?: string;
  /** Delay between a charge and the meter's flush of its outbox to the D1 ledger in ms (worker/quotas/meter-do.ts). */
  METER_FLUSH_DELAY_MS?: string;
}

/** What the auth middleware learned from a verified token. */
export interface AuthContext {
  subject: string | null;
  workspaceId: string | null;
  scopes: string[];
}

export interface AppVariables {
  auth: AuthContext;
  requestId: string;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables & TimingVariables };
