/**
 * The offline side of the playground: one offline scorer (browser/src) for the page, its progress
 * in the status line (in words, with a progress bar while a download runs), and the line listing
 * what it keeps in this browser.
 */
import { createOfflineScorer, type OfflineScorer, type Progress } from '../src/index';
import { languageName, megabytes } from './labels';
import { $, setStatus, state } from './state';

/** Every progress event of this page (newest last, bounded): shown in the status line, read by tests. */
export const progressLog: Progress[] = [];

/** "the German model", and for a model other than the picked one why it is loaded. */
function modelWords(id: string): string {
  const m = state.models.find((x) => x.id === id);
  const language = m ? languageName(m.language) : id.startsWith('en-') ? 'English' : '';
  const picked = state.models.find((x) => x.id === state.modelId);
  const what = `the ${language ? `${language} ` : ''}model`;
  if (id === state.modelId || !picked) return what;
  return `${what} (the ${languageName(picked.language)} model looks up seed words it lacks there)`;
}

function artifactWords(p: Progress): string {
  if (p.artifact === 'model') return modelWords(p.name);
  if (p.artifact === 'language') return `the ${languageName(p.name)} language data`;
  if (p.artifact === 'mapper') return `the ${p.name} word ratings`;
  if (p.artifact === 'subword') return 'the word-part table';
  return 'the stored topics';
}

/** Model loads under way: with the running tasks (state.tasks), when progress is shown; a late event changes nothing. */
let loading = 0;

export function onProgress(p: Progress): void {
  progressLog.push(p);
  if (progressLog.length > 500) progressLog.shift();
  const bar = $<HTMLProgressElement>('progress');
  if (p.phase === 'ready' || p.phase === 'partial') {
    if (p.artifact === 'model') bar.hidden = true;
    return;
  }
  if (loading === 0 && state.tasks === 0) return;
  const what = artifactWords(p);
  if (p.phase === 'download' && p.totalBytes > 0) {
    bar.hidden = false;
    bar.value = p.loadedBytes / p.totalBytes;
    bar.setAttribute('aria-valuetext', `${Math.round(bar.value * 100)} %`);
    setStatus(`Downloading ${what}: ${(p.loadedBytes / 1e6).toFixed(1)} of ${(p.totalBytes / 1e6).toFixed(1)} MB`);
  } else if (p.phase === 'download') {
    setStatus(`Downloading ${what}…`);
  } else if (p.phase === 'verify') {
    setStatus(`Checking the download of ${what}…`);
  } else if (p.phase === 'cache') {
    setStatus(`Opening ${what} from this browser's storage…`);
  } else if (p.phase === 'store') {
    setStatus(`Keeping ${what} in this browser for offline use…`);
  }
}

export function offline(): OfflineScorer {
  if (!state.offline)
    state.offline = createOfflineScorer({ baseUrl: location.origin, token: state.token || undefined, onProgress });
  return state.offline;
}

/**
 * Loads the picked model into the offline scorer (downloading it once); the status line says how
 * it went. Only the latest load speaks: one the user has since left (another model picked) neither
 * writes the status line nor clears the newer load.
 */
export async function ensureOfflineModel(): Promise<void> {
  const s = offline();
  const id = state.modelId;
  if (state.offlineReady?.id !== id) {
    loading++;
    const promise: Promise<unknown> = s
      .loadModel(id)
      .then(
        async (info) => {
          if (state.offlineReady?.promise !== promise) return info;
          const how = info.fromCache ? "from this browser's storage" : `downloaded, ${megabytes(info.bytes)}`;
          setStatus(
            `Offline: ${modelWords(info.id)} is ready in this tab (${how}${info.online ? '' : '; the service is unreachable'}).`,
          );
          $('status').title = `${info.id} version ${info.version}`;
          await refreshCached();
          return info;
        },
        (err) => {
          if (state.offlineReady?.promise === promise) state.offlineReady = null;
          throw err;
        },
      )
      .finally(() => {
        loading--;
        // A failed download leaves no bar behind (a finished one hides it on its `ready` event).
        if (loading === 0) $<HTMLProgressElement>('progress').hidden = true;
      });
    state.offlineReady = { id, promise };
  }
  try {
    await state.offlineReady!.promise;
  } catch (err) {
    // A load of a model the user has since left fails quietly; the picked model's error is theirs.
    if (state.modelId === id) throw err;
  }
}

/** The line listing the models kept in this browser (ids and versions in its tooltip). */
export async function refreshCached(): Promise<void> {
  const cached = await offline()
    .listCachedModels()
    .catch(() => []);
  const line = $('cached');
  line.textContent = cached.length
    ? `Kept in this browser: ${cached.map((c) => `${languageName(c.language)} model (${megabytes(c.bytes)})`).join(', ')}`
    : 'No model kept in this browser yet';
  line.title = cached.map((c) => `${c.id} version ${c.version}`).join('\n');
}
