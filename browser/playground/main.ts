/**
 * The playground: text scores with goal-score bars, nearest words chart, similarity heatmap,
 * autocomplete, and a switch between the API and the offline scorer (browser/src). The page
 * is cached by a service worker (sw.js) so it reloads without network; the offline scorer's
 * model comes from IndexedDB.
 */
import { createOfflineScorer } from '../src/index';
import { api } from './api';
import { attachAutocomplete, renderDims } from './dimensions-view';
import { loadModels, renderMappers, renderModelOptions } from './models-view';
import { ensureOfflineModel, offline, progressLog } from './offline';
import { textRequest } from './requests';
import { scoreMatrix, scoreTexts, scoreWords } from './results-view';
import { showError } from './scorers';
import { $, setMode, state, store, type Mode } from './state';
import './style.css';

function init(): void {
  $<HTMLTextAreaElement>('texts').value = [
    'The river winds through the quiet forest below the snowy mountain, and the morning is wonderful.',
    'Quarterly revenue fell sharply; investors fear the market will punish the company again.',
    'We had a terrible, sad day: the flight was cancelled and the hotel was awful.',
  ].join('\n\n');
  $<HTMLInputElement>('token').value = state.token;
  setMode(state.mode);
  renderDims();
  attachAutocomplete($<HTMLInputElement>('seed-words'));

  $('token').addEventListener('change', () => {
    state.token = $<HTMLInputElement>('token').value.trim();
    store.set('token', state.token);
    void state.offline?.setToken(state.token || undefined);
    void loadModels();
  });
  $('language').addEventListener('change', () => {
    state.language = $<HTMLSelectElement>('language').value;
    store.set('language', state.language);
    renderModelOptions();
    store.set('model', state.modelId);
    state.offlineReady = null;
    renderMappers();
  });
  $('model').addEventListener('change', () => {
    state.modelId = $<HTMLSelectElement>('model').value;
    store.set('model', state.modelId);
    state.offlineReady = null;
    renderMappers();
  });
  document.querySelectorAll<HTMLInputElement>('input[name=mode]').forEach((r) =>
    r.addEventListener('change', () => {
      setMode(r.value as Mode);
      if (r.value === 'offline') ensureOfflineModel().catch(showError);
    }),
  );
  $('cache-model').addEventListener('click', () => {
    state.offlineReady = null;
    ensureOfflineModel().catch(showError);
  });
  $('add-dimension').addEventListener('click', () => {
    state.dims.push({
      id: Math.max(0, ...state.dims.map((d) => d.id)) + 1,
      name: '',
      type: 'manual',
      words: '',
      opposite: '',
      weight: 1,
    });
    renderDims();
  });
  $('model-rank').addEventListener(
    'input',
    () => ($('model-rank-out').textContent = $<HTMLInputElement>('model-rank').value),
  );
  $('score-texts').addEventListener('click', () => void scoreTexts());
  $('score-words').addEventListener('click', () => void scoreWords());
  $('score-matrix').addEventListener('click', () => void scoreMatrix());

  // Console and test hook: both scorers with the same request shapes.
  (window as any).playground = {
    api,
    offline,
    state,
    textRequest,
    ensureOfflineModel,
    progressLog,
    createOfflineScorer,
  };

  if ('serviceWorker' in navigator) {
    navigator.serviceWorker.register('/sw.js').catch((err) => console.warn('service worker not registered', err));
  }
  void loadModels().then(() => {
    if (state.mode === 'offline') return ensureOfflineModel().catch(showError);
  });
}

init();
