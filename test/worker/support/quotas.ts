/** Shared helpers of the quota tests (not a test file). */
import { SELF, env, runInDurableObject } from 'cloudflare:test';
import { expect } from 'vitest';
import { setClock } from '../../../worker/clock';
import { flushMeter } from '../../../worker/quotas/meter-client';
import type { AuditEntry, LedgerEntry, Quota } from '../../../worker/quotas/repository';
import type { pageObject } from '../../../worker/http/openapi';
import { mintToken } from './api';

export { mintToken };

/** The Quota resource as the listing returns it. */
export type QuotaJson = Quota;

/** The page object of a list answer. */
export type PageJson = ReturnType<typeof pageObject>;

export const adminToken = (): Promise<string> => mintToken({ workspaceId: 'ops', scope: 'admin', sub: 'test-admin' });
export const workspaceToken = (workspaceId: string): Promise<string> => mintToken({ workspaceId });

export function uniqueWorkspaceId(prefix = 'ws'): string {
  return `${prefix}_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** Stands the service clock on an instant. */
export function standOn(iso: string | number): number {
  const ms = typeof iso === 'number' ? iso : Date.parse(iso);
  if (Number.isNaN(ms)) throw new Error(`bad instant ${iso}`);
  setClock(() => ms);
  return ms;
}

export function resetClock(): void {
  setClock(null);
}

export async function call(
  method: string,
  path: string,
  opts: { token?: string; body?: unknown; headers?: Record<string, string> } = {},
): Promise<Response> {
  const headers: Record<string, string> = { ...(opts.headers ?? {}) };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  return SELF.fetch(`http://x${path}`, {
    method,
    headers,
    body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
  });
}

export interface Limits {
  usageTypeKey: string;
  limitAmount: number;
  limitAmountDaily: number;
}

export async function createWorkspace(id: string, anchorDay: number, quotas: Limits[]): Promise<void> {
  const res = await call('POST', '/api/admin/v1/workspaces', {
    token: await adminToken(),
    body: { id, anchorDay, quotas },
  });
  if (res.status !== 201) throw new Error(`create workspace ${id}: ${res.status} ${await res.text()}`);
}

export async function listQuotas(workspaceId: string, query = ''): Promise<{ data: QuotaJson[]; page: PageJson }> {
  const res = await call('GET', `/api/usage-service/v1/workspaces/${workspaceId}/quotas${query}`, {
    token: await workspaceToken(workspaceId),
  });
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

export async function quotaOf(workspaceId: string, usageTypeKey: string): Promise<QuotaJson> {
  const { data } = await listQuotas(workspaceId, `?usageTypeKey=${usageTypeKey}`);
  expect(data).toHaveLength(1);
  return data[0];
}

export async function setLimits(
  workspaceId: string,
  usageTypeKey: string,
  limitAmount: number,
  limitAmountDaily: number,
): Promise<Response> {
  return call('PUT', `/api/admin/v1/workspaces/${workspaceId}/quotas/${usageTypeKey}`, {
    token: await adminToken(),
    body: { limitAmount, limitAmountDaily },
  });
}

export async function addBonus(workspaceId: string, usageTypeKey: string, amount: number): Promise<Response> {
  return call('POST', `/api/admin/v1/workspaces/${workspaceId}/quotas/${usageTypeKey}/bonus`, {
    token: await adminToken(),
    body: { amount },
  });
}

export async function setAnchorDay(workspaceId: string, anchorDay: number): Promise<Response> {
  return call('PATCH', `/api/admin/v1/workspaces/${workspaceId}`, { token: await adminToken(), body: { anchorDay } });
}

/** A usage ledger entry as the admin API returns it. */
export type LedgerJson = LedgerEntry;

/** An audit log entry as the admin API returns it. */
export type AuditJson = AuditEntry;

async function allPages<T>(path: string): Promise<T[]> {
  const token = await adminToken();
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const res = await call('GET', `${path}${path.includes('?') ? '&' : '?'}page=${page}&size=200`, { token });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { data: T[]; page: PageJson };
    out.push(...body.data);
    if (page >= body.page.totalPages) return out;
  }
}

/** Writes the workspace meter's outbox to the D1 ledger now (the alarm would within about a second). */
export async function flushLedger(workspaceId: string): Promise<number> {
  return flushMeter(env, workspaceId);
}

/** The D1 usage ledger after a flush of the workspace's meter. */
export async function readLedger(workspaceId: string): Promise<LedgerJson[]> {
  await flushLedger(workspaceId);
  return allPages(`/api/admin/v1/workspaces/${workspaceId}/usage-ledger`);
}
export const readAudit = (workspaceId: string): Promise<AuditJson[]> =>
  allPages(`/api/admin/v1/workspaces/${workspaceId}/audit-log`);

export async function problemOf(res: Response): Promise<{ code: string; status: number; detail: string }> {
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  return res.json();
}

/** The workspace's meter (the WorkspaceMeter Durable Object). */
export const meterOf = (workspaceId: string) => env.METER.get(env.METER.idFromName(workspaceId));

/** Drops the meter's in-memory state (as a code update or a crash would); its storage stays. */
export async function restartMeter(workspaceId: string): Promise<void> {
  await runInDurableObject(meterOf(workspaceId), (_, state) => {
    try {
      state.abort('test restart');
    } catch {
      // abort() throws into the aborted object's own call: expected
    }
  }).catch(() => undefined);
}

/** The meter's outbox (charges not yet flushed to the D1 ledger), in charge order. */
export async function outboxOf(workspaceId: string): Promise<Array<{ usage_type_key: string; amount: number }>> {
  return runInDurableObject(meterOf(workspaceId), (_, state) =>
    state.storage.sql
      .exec<{ usage_type_key: string; amount: number }>('SELECT usage_type_key, amount FROM outbox ORDER BY seq')
      .toArray(),
  );
}
