/**
 * The playground: text scores with goal-score bars, nearest words chart, similarity heatmap,
 * autocomplete, and a switch between the API and the offline scorer (browser/src). The page
 * is cached by a service worker (sw.js) so it reloads without network; the offline scorer's
 * model comes from IndexedDB.
 */
import { createOfflineScorer, OfflineScorerError, type OfflineScorer, type Progress } from '../src/index';
import {
  ApiProblem,
  createClient,
  type AutocompleteRequest,
  type SimilarityMatrixRequest,
  type TextScoresRequest,
  type TokenizationRequest,
  type WordAvailabilitiesRequest,
  type WordScoresRequest,
} from '../../client/src/index';
import { bars, heatmap, scatter } from './charts';
import './style.css';

type Mode = 'api' | 'offline';
interface ModelOption {
  id: string;
  label: string;
  mappers: string[];
  /** ISO 639-1 code: the language picker shows the models of one language. */
  language: string;
}
interface DimRow {
  id: number;
  name: string;
  type: 'manual' | 'axis';
  words: string;
  opposite: string;
  weight: number;
}

const $ = <T extends HTMLElement = HTMLElement>(id: string): T => document.getElementById(id) as T;
const store = {
  get: (k: string): string | null => localStorage.getItem(`playground.${k}`),
  set: (k: string, v: string): void => localStorage.setItem(`playground.${k}`, v),
};

const state = {
  token: store.get('token') ?? '',
  mode: (store.get('mode') as Mode) ?? 'api',
  modelId: store.get('model') ?? 'en-glove-6b-100d',
  language: store.get('language') ?? '',
  models: [] as ModelOption[],
  offline: null as OfflineScorer | null,
  offlineReady: null as Promise<unknown> | null,
  dims: [
    { id: 1, name: 'nature', type: 'manual', words: 'forest, river, mountain, ocean', opposite: '', weight: 2 },
    {
      id: 2,
      name: 'positive vs negative',
      type: 'axis',
      words: 'good, happy, excellent',
      opposite: 'bad, sad, terrible',
      weight: 3,
    },
  ] as DimRow[],
  mapperWeights: new Map<string, number>(),
};

function setStatus(text: string, kind: 'info' | 'error' = 'info'): void {
  const s = $('status');
  s.textContent = text;
  s.className = kind;
}

function workspaceOf(token: string): string | null {
  try {
    const payload = JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))) as Record<
      string,
      unknown
    >;
    return typeof payload.workspaceId === 'string' ? payload.workspaceId : null;
  } catch {
    return null;
  }
}

// ---------------------------------------------------------------------------------------------
// The two scorers
// ---------------------------------------------------------------------------------------------

class ProblemShown extends Error {}

/** The typed API client (client/src): retries 429/502/503/504 with one Idempotency-Key per call. */
const client = createClient({ baseUrl: location.origin, token: () => state.token });

/** One API call; a problem answer is shown as "status code: detail". */
async function apiCall<T>(call: Promise<T>): Promise<{ json: T; raw: string }> {
  try {
    const json = await call;
    return { json, raw: JSON.stringify(json) };
  } catch (err) {
    if (err instanceof ApiProblem) throw new ProblemShown(`${err.status} ${err.code}: ${err.detail}`);
    throw err;
  }
}

const ws = (): string => {
  const w = workspaceOf(state.token);
  if (!w)
    throw new ProblemShown('The token has no workspaceId claim (mint one with npm run token -- --workspace ws_demo)');
  return w;
};

const api = {
  textScores: (body: TextScoresRequest) => apiCall(client.textScores(body, { workspaceId: ws() })),
  wordScores: (body: WordScoresRequest) => apiCall(client.wordScores(body, { workspaceId: ws() })),
  autocomplete: (body: AutocompleteRequest) => apiCall(client.autocomplete(body, { workspaceId: ws() })),
  tokenize: (body: TokenizationRequest) => apiCall(client.tokenize(body, { workspaceId: ws() })),
  wordAvailabilities: (id: string, body: WordAvailabilitiesRequest) => apiCall(client.wordAvailabilities(id, body)),
  similarityMatrix: (id: string, body: SimilarityMatrixRequest) => apiCall(client.similarityMatrix(id, body)),
  listModels: () => apiCall(client.listModels({ size: 100 })),
};

/** Every progress event of this page (newest last, bounded): shown in the status line, read by tests. */
const progressLog: Progress[] = [];

function onProgress(p: Progress): void {
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

function offline(): OfflineScorer {
  if (!state.offline)
    state.offline = createOfflineScorer({ baseUrl: location.origin, token: state.token || undefined, onProgress });
  return state.offline;
}

async function ensureOfflineModel(): Promise<void> {
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

/** Runs one request in the selected mode; returns the response JSON and its text as sent/returned. */
async function run(
  kind: 'textScores' | 'wordScores' | 'autocomplete',
  body: any,
): Promise<{ json: any; raw: string; ms: number }>;
async function run(
  kind: 'similarityMatrix',
  body: any,
  modelId: string,
): Promise<{ json: any; raw: string; ms: number }>;
async function run(kind: string, body: any, modelId?: string): Promise<{ json: any; raw: string; ms: number }> {
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

function showError(err: unknown): void {
  if (err instanceof OfflineScorerError) setStatus(`${err.status} ${err.code}: ${err.message}`, 'error');
  else setStatus(err instanceof Error ? err.message : String(err), 'error');
}

// ---------------------------------------------------------------------------------------------
// Models and mappers
// ---------------------------------------------------------------------------------------------

async function loadModels(): Promise<void> {
  let models: ModelOption[] = [];
  if (state.token && navigator.onLine !== false) {
    try {
      const { json } = await api.listModels();
      models = (json.data as any[]).map((m) => ({
        id: m.id,
        label: m.label,
        mappers: (m._embedded?.mappers ?? []).flatMap((b: any) =>
          (b.variables as string[]).map((v) => `${b.key}_${v}`),
        ),
        language: String(m.language ?? ''),
      }));
    } catch (err) {
      if (err instanceof ProblemShown) setStatus(err.message, 'error');
    }
  }
  if (models.length === 0) {
    // Offline (or no token): the models cached in this browser.
    const cached = await offline()
      .listCachedModels()
      .catch(() => []);
    models = cached.map((c) => ({
      id: c.id,
      label: `${c.id} (cached)`,
      mappers: c.mapperBundles.flatMap((b) => b.variables.map((v) => `${b.key}_${v}`)),
      language: c.language,
    }));
    if (models.length > 0 && state.mode === 'api')
      setStatus('The service cannot be reached: switched to offline scoring with the cached models');
    if (models.length > 0) setMode('offline');
  }
  state.models = models;
  renderLanguages();
  renderModelOptions();
  renderMappers();
  await refreshCached();
  if (models.length > 0 && $('status').className !== 'error' && state.mode === 'api')
    setStatus(`Ready: ${models.length} model(s). Scoring through the API.`);
}

const languageNames = (() => {
  try {
    return new Intl.DisplayNames(['en'], { type: 'language' });
  } catch {
    return null;
  }
})();

/** The language picker: every language that has a model (the models' own language codes). */
function renderLanguages(): void {
  const langs = [...new Set(state.models.map((m) => m.language).filter(Boolean))].sort();
  const sel = $<HTMLSelectElement>('language');
  sel.replaceChildren(...langs.map((l) => new Option(`${languageNames?.of(l) ?? l} (${l})`, l)));
  const current = state.models.find((m) => m.id === state.modelId)?.language;
  if (!langs.includes(state.language)) state.language = current ?? langs[0] ?? '';
  sel.value = state.language;
}

/** The model select: the models of the picked language. */
function renderModelOptions(): void {
  const models = state.models.filter((m) => !state.language || m.language === state.language);
  const sel = $<HTMLSelectElement>('model');
  sel.replaceChildren(...models.map((m) => new Option(m.label, m.id)));
  if (!models.some((m) => m.id === state.modelId) && models.length > 0) state.modelId = models[0].id;
  sel.value = state.modelId;
}

async function refreshCached(): Promise<void> {
  const cached = await offline()
    .listCachedModels()
    .catch(() => []);
  $('cached').textContent = cached.length
    ? `Cached offline: ${cached.map((c) => `${c.id} ${c.version} (${(c.bytes / 1e6).toFixed(0)} MB)`).join(', ')}`
    : 'Nothing cached offline yet';
}

function renderMappers(): void {
  const model = state.models.find((m) => m.id === state.modelId);
  const box = $('mappers');
  box.replaceChildren();
  for (const key of model?.mappers ?? []) {
    if (!state.mapperWeights.has(key)) state.mapperWeights.set(key, 0);
    const row = document.createElement('label');
    row.className = 'mapper';
    const cb = document.createElement('input');
    cb.type = 'checkbox';
    cb.dataset.key = key;
    cb.checked = key === (model?.mappers.find((k) => k.endsWith('_valence')) ?? model?.mappers[0]);
    const w = document.createElement('input');
    w.type = 'number';
    w.min = '-10';
    w.max = '10';
    w.value = String(cb.checked ? 1 : 0);
    w.dataset.weight = key;
    w.title = 'goal weight (-10..10)';
    row.append(cb, ` ${key} `, w);
    box.append(row);
  }
}

// ---------------------------------------------------------------------------------------------
// Dimensions editor with autocomplete
// ---------------------------------------------------------------------------------------------

function renderDims(): void {
  const box = $('dimensions');
  box.replaceChildren();
  for (const d of state.dims) {
    const row = document.createElement('div');
    row.className = 'dim';
    row.innerHTML = `
      <input class="name" value="" placeholder="name">
      <select class="type"><option value="manual">manual</option><option value="axis">axis</option></select>
      <span class="ac-wrap"><input class="ac words" placeholder="seed words" autocomplete="off"></span>
      <span class="ac-wrap opp"><input class="ac opposite" placeholder="opposite pole" autocomplete="off"></span>
      <input class="weight" type="number" min="-10" max="10" title="goal weight (-10..10)">
      <button type="button" class="small remove" title="remove">×</button>`;
    const q = <T extends HTMLElement>(s: string) => row.querySelector(s) as T;
    q<HTMLInputElement>('.name').value = d.name;
    q<HTMLSelectElement>('.type').value = d.type;
    q<HTMLInputElement>('.words').value = d.words;
    q<HTMLInputElement>('.opposite').value = d.opposite;
    q<HTMLInputElement>('.weight').value = String(d.weight);
    (q('.opp') as HTMLElement).hidden = d.type !== 'axis';
    row.addEventListener('input', () => {
      d.name = q<HTMLInputElement>('.name').value;
      d.type = q<HTMLSelectElement>('.type').value as DimRow['type'];
      d.words = q<HTMLInputElement>('.words').value;
      d.opposite = q<HTMLInputElement>('.opposite').value;
      d.weight = Number(q<HTMLInputElement>('.weight').value) || 0;
      (q('.opp') as HTMLElement).hidden = d.type !== 'axis';
    });
    q('.remove').addEventListener('click', () => {
      state.dims = state.dims.filter((x) => x !== d);
      renderDims();
    });
    box.append(row);
    row.querySelectorAll<HTMLInputElement>('input.ac').forEach(attachAutocomplete);
  }
}

const splitWords = (s: string): string[] =>
  s
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

function attachAutocomplete(input: HTMLInputElement): void {
  if (input.dataset.ac) return;
  input.dataset.ac = '1';
  const list = document.createElement('ul');
  list.className = 'ac-list';
  list.hidden = true;
  input.after(list);
  let timer = 0;
  let seq = 0;
  const pick = (word: string): void => {
    const parts = input.value.split(',');
    parts[parts.length - 1] = (parts.length > 1 ? ' ' : '') + word;
    input.value = parts.join(',') + ', ';
    list.hidden = true;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    input.focus();
  };
  input.addEventListener('input', (ev) => {
    if (!(ev instanceof InputEvent)) return;
    clearTimeout(timer);
    const frag = input.value.split(',').pop()!.trim();
    if (frag.length < 1) {
      list.hidden = true;
      return;
    }
    const my = ++seq;
    timer = window.setTimeout(async () => {
      try {
        const { json } = await run('autocomplete', { word: frag, embeddingModelId: state.modelId });
        if (my !== seq) return;
        list.replaceChildren(
          ...(json.suggestions as string[]).map((w) => {
            const li = document.createElement('li');
            li.textContent = w;
            li.addEventListener('mousedown', (e) => {
              e.preventDefault();
              pick(w);
            });
            return li;
          }),
        );
        list.hidden = list.childElementCount === 0;
      } catch (err) {
        showError(err);
      }
    }, 120);
  });
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && !list.hidden && list.firstElementChild) {
      e.preventDefault();
      pick(list.firstElementChild.textContent!);
    } else if (e.key === 'Escape') list.hidden = true;
  });
  input.addEventListener('blur', () => setTimeout(() => (list.hidden = true), 150));
}

// ---------------------------------------------------------------------------------------------
// Requests built from the form
// ---------------------------------------------------------------------------------------------

export function textRequest(): any {
  const texts = $<HTMLTextAreaElement>('texts')
    .value.split(/\n\s*\n/)
    .map((t) => t.trim())
    .filter(Boolean);
  const dims = state.dims.filter((d) => splitWords(d.words).length > 0);
  const dimensions = dims.map((d) => ({
    id: d.id,
    type: d.type,
    name: d.name || undefined,
    words: splitWords(d.words),
    ...(d.type === 'axis' ? { oppositeWords: splitWords(d.opposite) } : {}),
  }));
  const mapperKeys: string[] = [];
  const mappers: Array<{ id: string; weight: number }> = [];
  document.querySelectorAll<HTMLInputElement>('#mappers input[type=checkbox]').forEach((cb) => {
    if (!cb.checked) return;
    const key = cb.dataset.key!;
    mapperKeys.push(key);
    const w =
      Number(
        document.querySelector<HTMLInputElement>(`#mappers input[data-weight="${CSS.escape(key)}"]`)?.value ?? 0,
      ) || 0;
    if (w !== 0) mappers.push({ id: key, weight: Math.max(-10, Math.min(10, Math.round(w))) });
  });
  const goalConfig = {
    modelRankScore: Number($<HTMLInputElement>('model-rank').value),
    dimensions: dims
      .filter((d) => d.weight !== 0)
      .map((d) => ({ id: d.id, weight: Math.max(-10, Math.min(10, Math.round(d.weight))) })),
    mappers,
    normalization: $<HTMLSelectElement>('normalization').value,
  };
  const composition = $<HTMLSelectElement>('composition').value;
  return { texts, embeddingModelId: state.modelId, dimensions, mapperKeys, goalConfig, composition, explain: true };
}

interface ExplainedToken {
  string: string;
  indexStart: number;
  indexEnd: number;
  value: number;
  weight: number;
  rules: string[];
}

/**
 * The text with the tokens that drove one factor highlighted (from `explain`): green for a
 * positive contribution, red for a negative one, stronger colour for a larger |weight x value|.
 */
function highlighted(label: string, text: string, tokens: ExplainedToken[]): HTMLElement {
  const p = document.createElement('p');
  p.className = 'explain';
  const b = document.createElement('b');
  b.textContent = `${label}: `;
  p.append(b);
  const max = Math.max(1e-9, ...tokens.map((t) => Math.abs(t.weight * t.value)));
  const spans = [...tokens].sort((a, c) => a.indexStart - c.indexStart);
  let at = 0;
  for (const t of spans) {
    if (t.indexStart < at) continue;
    p.append(text.slice(at, t.indexStart));
    const m = document.createElement('mark');
    const strength = Math.abs(t.weight * t.value) / max;
    m.style.background =
      t.value >= 0 ? `rgba(46, 157, 91, ${0.15 + 0.6 * strength})` : `rgba(192, 57, 43, ${0.15 + 0.6 * strength})`;
    m.dataset.value = t.value.toFixed(3);
    m.title = `${t.value.toFixed(3)} x ${t.weight}${t.rules.length ? ` (${t.rules.join(', ')})` : ''}`;
    m.textContent = text.slice(t.indexStart, t.indexEnd);
    p.append(m);
    at = t.indexEnd;
  }
  p.append(text.slice(at));
  return p;
}

async function scoreTexts(): Promise<void> {
  const req = textRequest();
  try {
    const { json, raw, ms } = await run('textScores', req);
    $('texts-json').textContent = raw;
    $('texts-timing').textContent = `${state.mode === 'api' ? 'API' : 'offline'}: ${ms.toFixed(0)} ms`;
    const out = $('text-results');
    out.replaceChildren();
    const dimName = new Map(req.dimensions.map((d: any) => [String(d.id), d.name ?? String(d.id)]));
    (json.data as any[]).forEach((t, i) => {
      const card = document.createElement('article');
      card.className = 'text-card';
      const h = document.createElement('h3');
      const text = req.texts[i] as string;
      h.textContent = text.length > 90 ? `${text.slice(0, 90)}…` : text;
      card.append(h);
      const rows = [
        { label: 'goal score', value: t.goalScore ?? 0, kind: 'total' },
        ...t.goalScoreFactors.map((f: any) => ({ label: f.field, value: f.value, kind: f.type })),
      ];
      card.append(bars(rows));
      const dl = document.createElement('p');
      dl.className = 'scores';
      const parts = [`modelRankScore ${t.modelRankScore === null ? '–' : t.modelRankScore.toFixed(3)}`];
      for (const [k, v] of Object.entries(t.dimensionScores))
        parts.push(`${dimName.get(k) ?? k} ${(v as number).toFixed(3)}`);
      for (const [k, v] of Object.entries(t.mapperScores)) parts.push(`${k} ${(v as number).toFixed(3)}`);
      dl.textContent = parts.join(' · ');
      card.append(dl);
      if (t.explanation) {
        for (const [k, e] of Object.entries(t.explanation.dimensions as Record<string, { tokens: ExplainedToken[] }>))
          card.append(highlighted(String(dimName.get(k) ?? k), text, e.tokens));
        for (const [k, e] of Object.entries(t.explanation.mappers as Record<string, { tokens: ExplainedToken[] }>))
          card.append(highlighted(k, text, e.tokens));
      }
      out.append(card);
    });
    setStatus(`Scored ${json.data.length} text(s) ${state.mode === 'api' ? 'through the API' : 'offline in this tab'}`);
  } catch (err) {
    showError(err);
  }
}

async function scoreWords(): Promise<void> {
  const wordrank = Number($<HTMLInputElement>('wordrank').value);
  const req = {
    seedWords: splitWords($<HTMLInputElement>('seed-words').value),
    embeddingModelId: state.modelId,
    limit: Number($<HTMLInputElement>('limit').value) || 40,
    ...(wordrank ? { wordrankLimit: wordrank } : {}),
    seedScore: 1,
  };
  try {
    const { json, raw, ms } = await run('wordScores', req);
    $('words-json').textContent = raw;
    $('words-timing').textContent = `${state.mode === 'api' ? 'API' : 'offline'}: ${ms.toFixed(0)} ms`;
    const pts = (json.data as any[])
      .filter((w) => w.seedScore !== null)
      .map((w) => ({ word: w.word, rank: w.modelRank, score: w.seedScore }));
    const box = $('words-chart');
    box.replaceChildren(scatter(pts, Math.max(600, Math.min(1100, box.clientWidth || 900))));
  } catch (err) {
    showError(err);
  }
}

async function scoreMatrix(): Promise<void> {
  const req = { words: splitWords($<HTMLInputElement>('matrix-words').value) };
  try {
    const { json, raw, ms } = await run('similarityMatrix', req, state.modelId);
    $('matrix-json').textContent = raw;
    $('matrix-timing').textContent = `${state.mode === 'api' ? 'API' : 'offline'}: ${ms.toFixed(0)} ms`;
    $('heatmap').replaceChildren(heatmap(json.words, json.matrix));
  } catch (err) {
    showError(err);
  }
}

function setMode(mode: Mode): void {
  state.mode = mode;
  store.set('mode', mode);
  document.querySelectorAll<HTMLInputElement>('input[name=mode]').forEach((r) => (r.checked = r.value === mode));
  document.body.dataset.mode = mode;
}

// ---------------------------------------------------------------------------------------------
// Wiring
// ---------------------------------------------------------------------------------------------

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
