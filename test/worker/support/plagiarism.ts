/** Helpers of the plagiarism workerd tests (not a test file). */
import { expect } from 'vitest';
import { env as testEnv, SELF } from 'cloudflare:test';
import type { Env } from '../../../worker/env';
import type { PlagiarismMatch } from '../../../worker/plagiarism/provider';
import { mintToken } from './api';

/** The test bindings, typed as the Worker's Env. */
export const env = testEnv as unknown as Env;

export const token = (claims: Record<string, unknown>): Promise<string> => mintToken(claims);

export const adminToken = () => token({ workspaceId: 'ops', scope: 'admin' });

export function uid(prefix = 'x'): string {
  return `${prefix}${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;
}

/** Random lower-case pseudo-words no other test uses: text built from them matches only itself. */
export function freshWords(n: number): string[] {
  const tag = uid('');
  return Array.from({ length: n }, (_, i) => `w${tag}${i.toString(36)}`);
}

export async function api(
  method: string,
  path: string,
  opts: { token?: string; json?: unknown; body?: string; contentType?: string } = {},
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.body !== undefined) {
    headers['content-type'] = opts.contentType ?? 'application/x-ndjson';
    body = opts.body;
  }
  return SELF.fetch(`http://x${path}`, { method, headers, body });
}

/** A workspace with a plagiarismChecks allowance (admin API of the quotas). */
export async function createWorkspace(limitAmount = 100, limitAmountDaily = 100): Promise<string> {
  const id = uid('ws_p');
  const res = await api('POST', '/api/admin/v1/workspaces', {
    token: await adminToken(),
    json: { id, anchorDay: 1, quotas: [{ usageTypeKey: 'plagiarismChecks', limitAmount, limitAmountDaily }] },
  });
  if (res.status !== 201) throw new Error(`create workspace: ${res.status} ${await res.text()}`);
  return id;
}

export async function usedChecks(workspaceId: string): Promise<number> {
  const res = await api('GET', `/api/usage-service/v1/workspaces/${workspaceId}/quotas?usageTypeKey=plagiarismChecks`, {
    token: await token({ workspaceId }),
  });
  if (res.status !== 200) throw new Error(`quotas: ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { data: Array<{ usedAmount: number }> };
  return body.data[0].usedAmount;
}

/** A match as the check answers it. */
export type MatchJson = PlagiarismMatch;

export interface CheckJson {
  wordCount: number;
  matches: MatchJson[];
}

export async function check(workspaceId: string, text: string): Promise<Response> {
  return api('POST', `/api/v1/workspaces/${workspaceId}/plagiarism-checks`, {
    token: await token({ workspaceId }),
    json: { text },
  });
}

export async function ingest(page: { url: string; title?: string; text?: string; html?: string }): Promise<Response> {
  return api('POST', '/api/admin/v1/plagiarism/pages', { token: await adminToken(), json: page });
}

export async function ingestOk(page: {
  url: string;
  title?: string;
  text?: string;
  html?: string;
}): Promise<{ id: number; replaced: boolean }> {
  const res = await ingest(page);
  if (res.status !== 201 && res.status !== 200)
    throw new Error(`ingest ${page.url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** A fresh reference page URL. */
export const url = (): string => `https://ref.example/${uid('p')}`;

/** A plagiarism check that must succeed; its answer. */
export async function checkOk(ws: string, text: string): Promise<CheckJson> {
  const res = await check(ws, text);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}
