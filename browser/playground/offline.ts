/**
 * The offline side of the playground: one offline scorer (browser/src) for the page, its progress
 * in the status line, and the line listing what it has cached.
 */
import { createOfflineScorer, type OfflineScorer, type Progress } from '../src/index';
import { $, setStatus, state } from './state';

/** Every progress event of this page (newest last, bounded): shown in the status line, read by tests. */
export const progressLog: Progress[] = [];

export function onProgress(p: Progress): void {
  progressLog.push(p);
  if (progressLog.length > 500) progressLog.shift();
  const bar = $<HTMLProgressElement>('progress');
  if (p.phase === 'download' && p.totalBytes > 0) {
    bar.hidden = false;
    bar.value = p.loadedBytes / p.totalBytes;
    setStatus(
      `Downloading ${p.artifact} ${p.name}: ${(p.loadedBytes / 1e6).toFixed(1)} / ${(p.totalBytes / 1e6).toFixed(1)} MB`,
    );
  } else if (p.phase === 'verify') {
    setStatus(`Verifying ${p.artifact} ${p.name} (SHA-256)`);
  } else if (p.phase === 'cache') {
    setStatus(`Loading ${p.artifact} ${p.name} from the browser cache`);
  } else if (p.phase === 'ready' && p.artifact === 'model') {
    bar.hidden = true;
  }
}

export function offline(): OfflineScorer {
  if (!state.offline)
    state.offline = createOfflineScorer({ baseUrl: location.origin, token: state.token || undefined, onProgress });
  return state.offline;
}

export async function ensureOfflineModel(): Promise<void> {
  const s = offline();
  state.offlineReady ??= s.loadModel(state.modelId).then(
    async (info) => {
      setStatus(
        `Offline model ${info.id} ${info.version} ready (${info.fromCache ? 'from the browser cache' : 'downloaded'}${info.online ? '' : ', service unreachable'})`,
      );
      await refreshCached();
      return info;
    },
    (err) => {
      state.offlineReady = null;
      throw err;
    },
  );
  await state.offlineReady;
}

export async function refreshCached(): Promise<void> {
  const cached = await offline()
    .listCachedModels()
    .catch(() => []);
  $('cached').textContent = cached.length
    ? `Cached offline: ${cached.map((c) => `${c.id} ${c.version} (${(c.bytes / 1e6).toFixed(0)} MB)`).join(', ')}`
    : 'Nothing cached offline yet';
}
