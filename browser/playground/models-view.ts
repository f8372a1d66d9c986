/**
 * The model pickers: the models of the API's catalog (or, offline, the ones cached in this
 * browser), grouped by language, and the mapper variables of the picked model.
 */
import { api, ProblemShown } from './api';
import { defaultModelOf } from '../../core/model-defaults';
import { englishCompanionOf } from '../../core/projection';
import { languageName, mapperLabel } from './labels';
import { offline, refreshCached } from './offline';
import { GOAL_MAPPER } from './samples';
import { showError } from './scorers';
import { $, setMode, setStatus, state, type ModelOption } from './state';

/**
 * The models of the API's catalog; when the service cannot be reached (or before a token is
 * pasted), the models kept in this browser. Only an unreachable service switches the page to
 * Offline by itself.
 */
let loads = 0;

export async function loadModels(): Promise<void> {
  // A later call (a token pasted while the first listing still runs) wins: an earlier one's answer is dropped.
  const mine = ++loads;
  let models: ModelOption[] = [];
  let unreachable = state.token !== '' && navigator.onLine === false;
  if (state.token && !unreachable) {
    try {
      const { json } = await api.listModels();
      models = (json.data as any[]).map((m) => ({
        id: m.id,
        label: m.label,
        mappers: (m._embedded?.mappers ?? []).flatMap((b: any) =>
          (b.variables as string[]).map((v) => ({
            key: `${b.key}_${v}`,
            bundleLabel: String(b.label ?? b.key),
            variable: v,
          })),
        ),
        language: String(m.language ?? ''),
        companion: englishCompanionOf(m),
      }));
    } catch (err) {
      unreachable = err instanceof ProblemShown && (err.code === 'NETWORK_ERROR' || err.code === 'TIMEOUT');
      // A token typed on since (an input event each key) has its own listing: this one's error is not shown.
      if (mine === loads) showError(err);
    }
  }
  if (models.length === 0) {
    const cached = await offline()
      .listCachedModels()
      .catch(() => []);
    if (mine !== loads) return;
    models = cached.map((c) => ({
      id: c.id,
      label: `${languageName(c.language)}: ${c.id} (kept in this browser)`,
      mappers: c.mapperBundles.flatMap((b) =>
        b.variables.map((v) => ({ key: `${b.key}_${v}`, bundleLabel: b.label, variable: v })),
      ),
      language: c.language,
    }));
    if (models.length > 0 && unreachable) {
      if (state.mode === 'api')
        setStatus('The service cannot be reached: switched to Offline, with the models kept in this browser.');
      setMode('offline');
    }
  }
  if (mine !== loads) return;
  state.models = models;
  renderLanguages();
  renderModelOptions();
  renderMappers();
  await refreshCached();
  if (models.length > 0 && state.token && $('status').className !== 'error' && state.mode === 'api')
    setStatus(`Ready: scoring through the API with the ${languageName(state.language)} model.`);
}

/** The latest catalog load with the form filled from it (loadCatalogs). */
let catalogs: Promise<unknown> = Promise.resolve();

/**
 * Loads the catalogs (models and their mappers), then `fill`s the form from them. A click waits
 * for it (catalogsSettled) before it builds its request, so the request is the form as shown.
 */
export function loadCatalogs(fill: () => void): Promise<void> {
  const load = loadModels().then(fill);
  catalogs = load;
  return load;
}

/** Resolves once no catalog load is in flight, also one started while waiting: the form is filled. */
export async function catalogsSettled(): Promise<void> {
  for (;;) {
    const awaited = catalogs;
    await awaited.catch(() => undefined);
    if (awaited === catalogs) return;
  }
}

/** The language picker: every language that has a model (the models' own language codes). */
export function renderLanguages(): void {
  const langs = [...new Set(state.models.map((m) => m.language).filter(Boolean))].sort();
  const sel = $<HTMLSelectElement>('language');
  sel.replaceChildren(...langs.map((l) => new Option(languageName(l), l)));
  const current = state.models.find((m) => m.id === state.modelId)?.language;
  if (!langs.includes(state.language)) state.language = current ?? langs[0] ?? '';
  sel.value = state.language;
}

/** The model select: the models of the picked language. */
export function renderModelOptions(): void {
  const models = state.models.filter((m) => !state.language || m.language === state.language);
  const sel = $<HTMLSelectElement>('model');
  const preferred = defaultModelOf(state.language);
  // Two models of one language share a catalog label: the other ones show their id.
  sel.replaceChildren(
    ...models.map((m) => {
      const o = new Option(m.id === preferred ? `${m.label} (default)` : `${m.label} · ${m.id}`, m.id);
      o.title = m.id;
      return o;
    }),
  );
  // Switching language picks that language's default model where the catalog has it.
  if (!models.some((m) => m.id === state.modelId) && models.length > 0) {
    state.modelId = models.find((m) => m.id === preferred)?.id ?? models[0].id;
  }
  sel.value = state.modelId;
}

/**
 * The mapper variables of the picked model: a checkbox (score it) and a goal weight each. The
 * default goal is the sentiment mapper alone (samples.ts GOAL_MAPPER), the others unchecked.
 */
export function renderMappers(): void {
  const model = state.models.find((m) => m.id === state.modelId);
  const box = $('mappers');
  box.replaceChildren();
  const goal = model?.mappers.find((m) => m.key === GOAL_MAPPER)?.key ?? model?.mappers[0]?.key;
  // The goal's mapper first, then the others in the catalog's order.
  const keys = [...(model?.mappers ?? [])].sort((a, b) => Number(b.key === goal) - Number(a.key === goal));
  for (const option of keys) {
    const { key } = option;
    const { name, scale } = mapperLabel(key, option);
    const row = document.createElement('div');
    row.className = 'mapper-row';
    const label = document.createElement('label');
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.dataset.key = key;
    cb.checked = key === goal;
    const scaleNote = document.createElement('small');
    scaleNote.textContent = scale;
    label.append(cb, ` ${name} `, scaleNote);
    label.title = key;
    const w = document.createElement('input');
    w.type = 'number';
    w.min = '-10';
    w.max = '10';
    w.value = String(cb.checked ? 1 : 0);
    w.dataset.weight = key;
    w.setAttribute('aria-label', `Goal weight of ${name}`);
    w.title = 'Goal weight (−10 … 10; 0 = not in the goal)';
    row.append(label, w);
    box.append(row);
  }
}
