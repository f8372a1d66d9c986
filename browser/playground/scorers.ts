/**
 * One request in the selected mode (the API or the offline scorer), and how a refusal is shown.
 */
import { OfflineScorerError } from '../src/index';
import { api } from './api';
import { ensureOfflineModel, offline } from './offline';
import { setStatus, state } from './state';

/** Runs one request in the selected mode; returns the response JSON and its text as sent/returned. */
export async function run(
  kind: 'textScores' | 'wordScores' | 'autocomplete',
  body: any,
): Promise<{ json: any; raw: string; ms: number }>;
export async function run(
  kind: 'similarityMatrix',
  body: any,
  modelId: string,
): Promise<{ json: any; raw: string; ms: number }>;
export async function run(kind: string, body: any, modelId?: string): Promise<{ json: any; raw: string; ms: number }> {
  const t0 = performance.now();
  if (state.mode === 'api') {
    const r = kind === 'similarityMatrix' ? await api.similarityMatrix(modelId!, body) : await (api as any)[kind](body);
    return { ...r, ms: performance.now() - t0 };
  }
  await ensureOfflineModel();
  const s = offline() as any;
  const json = kind === 'similarityMatrix' ? await s.similarityMatrix(modelId, body) : await s[kind](body);
  return { json, raw: JSON.stringify(json), ms: performance.now() - t0 };
}

export function showError(err: unknown): void {
  if (err instanceof OfflineScorerError) setStatus(`${err.status} ${err.code}: ${err.message}`, 'error');
  else setStatus(err instanceof Error ? err.message : String(err), 'error');
}
