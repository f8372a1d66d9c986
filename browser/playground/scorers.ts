/**
 * One request in the selected mode (the API or the offline scorer), the status line around it,
 * and how a failure is shown: a plain sentence in the status line, the section's earlier results
 * marked as out of date.
 */
import { OfflineScorerError } from '../src/index';
import { api, ProblemShown } from './api';
import { ensureOfflineModel, offline } from './offline';
import { $, setStatus, state } from './state';

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

/** A failure in words a person can act on; the service's code stays in the status line's tooltip. */
export function plainError(err: unknown): { text: string; code: string } {
  if (err instanceof ProblemShown) {
    if (err.code === 'NETWORK_ERROR')
      return {
        text: 'Cannot reach the service: check the network connection, or switch to Offline to score in this tab.',
        code: err.message,
      };
    if (err.code === 'TIMEOUT')
      return { text: 'The service did not answer in time. Try again, or switch to Offline.', code: err.message };
    if (err.status === 401 || err.status === 403)
      return { text: `The token was not accepted: ${err.detail}`, code: err.message };
    return { text: `The service refused the request: ${err.detail}`, code: err.message };
  }
  if (err instanceof OfflineScorerError) {
    const code = `${err.status} ${err.code}`;
    if (err.code === 'OFFLINE_NOT_CACHED')
      return {
        text: 'This model is not kept in this browser and the service cannot be reached: connect once to download it, or pick a model listed under "Kept in this browser".',
        code,
      };
    if (err.code === 'ARTIFACT_CHECKSUM_MISMATCH')
      return { text: 'A download arrived damaged and was not kept. Try again.', code };
    return { text: `The offline scorer refused the request: ${err.message}`, code };
  }
  return { text: err instanceof Error ? err.message : String(err), code: '' };
}

export function showError(err: unknown): void {
  const { text, code } = plainError(err);
  setStatus(text, 'error');
  $('status').title = code;
}

/** The latest run of each results area: an answer of an earlier run is dropped. */
const runs = new Map<string, number>();

/**
 * One user action on a results area: its progress in the status line, then `done` (or the
 * error). `work` gets `current()`, false once a newer run of the same area has started; it draws
 * nothing then and returns null. A failed action leaves the earlier results on screen, marked as
 * out of date by a note in the page.
 */
export async function task(resultsId: string, work: (current: () => boolean) => Promise<string | null>): Promise<void> {
  const results = $(resultsId);
  const mine = (runs.get(resultsId) ?? 0) + 1;
  runs.set(resultsId, mine);
  const current = (): boolean => runs.get(resultsId) === mine;
  state.tasks++;
  results.setAttribute('aria-busy', 'true');
  try {
    const done = await work(current);
    if (done === null || !current()) return;
    results.classList.remove('stale');
    results.querySelector(':scope > .stale-note')?.remove();
    setStatus(done);
  } catch (err) {
    if (!current()) return;
    if (results.childElementCount > 0 && !results.querySelector(':scope > .stale-note')) {
      results.classList.add('stale');
      const note = document.createElement('p');
      note.className = 'stale-note';
      note.textContent = 'These results are from an earlier run: the last one failed (see the line at the top).';
      results.prepend(note);
    }
    showError(err);
  } finally {
    state.tasks--;
    if (current()) results.removeAttribute('aria-busy');
    // Language data or a mapper bundle downloaded for this run leaves no progress bar behind.
    if (state.tasks === 0) $<HTMLProgressElement>('progress').hidden = true;
  }
}
