/**
 * The playground: text scores with a table of scores and goal shares, nearest words chart,
 * similarity heatmap, autocomplete, and a switch between the API and the offline scorer
 * (browser/src). The page is cached by a service worker (sw.js) so it reloads without network;
 * the offline scorer's model comes from IndexedDB.
 */
import { createOfflineScorer } from '../src/index';
import { api } from './api';
import { attachAutocomplete, renderDims } from './dimensions-view';
import { loadCatalogs, renderMappers, renderModelOptions } from './models-view';
import { ensureOfflineModel, offline, progressLog } from './offline';
import { textRequest } from './requests';
import { redrawChartsOnResize, scoreMatrix, scoreTexts, scoreWords } from './results-view';
import { sampleDims, samplesOf } from './samples';
import { showError } from './scorers';
import { $, setMode, state, store, type Mode } from './state';
import './style.css';

/** The language whose samples fill the form; a field the user changed keeps its text on a switch. */
let samplesLanguage = '';

/** Fills the form with `language`'s samples, field by field where it still shows the previous samples. */
function applySamples(language: string): void {
  const before = samplesLanguage ? samplesOf(samplesLanguage) : null;
  const next = samplesOf(language);
  const fields: Array<[string, (s: typeof next) => string]> = [
    ['texts', (s) => s.texts.join('\n\n')],
    ['seed-words', (s) => s.nearest],
    ['matrix-words', (s) => s.heatmap],
  ];
  for (const [id, value] of fields) {
    const input = $<HTMLInputElement | HTMLTextAreaElement>(id);
    if (!before || input.value === value(before) || input.value === '') input.value = value(next);
  }
  const untouched =
    !before || state.dims.length === 0 || JSON.stringify(state.dims) === JSON.stringify(sampleDims(samplesLanguage));
  if (untouched) {
    state.dims = sampleDims(language);
    renderDims();
  }
  samplesLanguage = language;
}

/**
 * Offline, a picked model starts loading once the picker rests: arrowing through a closed select
 * fires `change` at every step, and each would start a download of tens of MB.
 */
let pickTimer: ReturnType<typeof setTimeout> | undefined;
function loadPickedSoon(): void {
  clearTimeout(pickTimer);
  pickTimer = setTimeout(() => {
    if (state.mode === 'offline') ensureOfflineModel().catch(showError);
  }, 400);
}

/**
 * Takes the token field's value when it changed: stores it and loads the catalogs with it at once
 * (a paste, before the field loses focus). The same value again (`change` after `input`) loads
 * nothing, so the mappers the user has set are not reset.
 */
function takeToken(): void {
  const token = $<HTMLInputElement>('token').value.trim();
  if (token === state.token) return;
  state.token = token;
  store.set('token', token);
  void state.offline?.setToken(token || undefined);
  void loadCatalogs(() => applySamples(state.language));
}

/** A scoring button: the token as typed so far first, so that the click waits for its catalogs. */
function onScore(id: string, score: () => Promise<void>): void {
  $(id).addEventListener('click', () => {
    takeToken();
    void score();
  });
}

function init(): void {
  $<HTMLInputElement>('token').value = state.token;
  setMode(state.mode);
  applySamples(state.language || 'en');
  attachAutocomplete($<HTMLInputElement>('seed-words'));

  $('token').addEventListener('input', takeToken);
  $('token').addEventListener('change', takeToken);
  $('language').addEventListener('change', () => {
    state.language = $<HTMLSelectElement>('language').value;
    store.set('language', state.language);
    renderModelOptions();
    store.set('model', state.modelId);
    renderMappers();
    applySamples(state.language);
    if (state.mode === 'offline') loadPickedSoon();
  });
  $('model').addEventListener('change', () => {
    state.modelId = $<HTMLSelectElement>('model').value;
    store.set('model', state.modelId);
    renderMappers();
    if (state.mode === 'offline') loadPickedSoon();
  });
  // Offline: the model downloads (once) as soon as the switch is set; no separate button.
  document.querySelectorAll<HTMLInputElement>('input[name=mode]').forEach((r) =>
    r.addEventListener('change', () => {
      setMode(r.value as Mode);
      if (r.value === 'offline') ensureOfflineModel().catch(showError);
    }),
  );
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
  onScore('score-texts', scoreTexts);
  onScore('score-words', scoreWords);
  onScore('score-matrix', scoreMatrix);
  redrawChartsOnResize();

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
  void loadCatalogs(() => applySamples(state.language)).then(() => {
    if (state.mode === 'offline') return ensureOfflineModel().catch(showError);
  });
}

init();
