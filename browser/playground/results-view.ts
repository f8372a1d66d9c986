/**
 * The answers shown: text scores (a table of each text's scores, goal weights and shares of the
 * goal score with bars, the words that drove each score, a note on a text that looks like another
 * language than the model's), word scores (nearest words chart) and the similarity heatmap, each
 * with its JSON and timing. Charts are redrawn to the new width when the window is resized.
 */
import { count } from '../../core/plural';
import { heatmap, scatter, type ScatterPoint } from './charts';
import { companionChecked } from './companion-prompt';
import { COMMON_WORDS, languageName, mapperLabel } from './labels';
import { catalogsSettled } from './models-view';
import { ensureOfflineModel } from './offline';
import { splitWords, textRequest } from './requests';
import { run, task } from './scorers';
import { $, state } from './state';

interface ExplainedToken {
  string: string;
  indexStart: number;
  indexEnd: number;
  value: number;
  weight: number;
  rules: string[];
}

/** "+0.123", "−0.045" (a real minus sign), "0.000". */
const signed = (x: number, digits = 3): string => {
  const s = Math.abs(x).toFixed(digits);
  if (Number(s) === 0) return s;
  return `${x < 0 ? '−' : '+'}${s}`;
};

type Kind = 'dimension' | 'mapper' | 'intrinsic';

/**
 * The text with the words that drove one score highlighted (from `explain`), each followed by its
 * own score: for a topic blue (close to the topic) or orange (close to the opposite pole), for
 * word ratings green (positive) or red (negative); a stronger colour for a larger |weight x value|.
 */
function highlighted(label: string, kind: Kind, text: string, tokens: ExplainedToken[]): HTMLElement {
  const p = document.createElement('p');
  p.className = `explain ${kind}`;
  const b = document.createElement('b');
  b.textContent = `${label}: `;
  p.append(b);
  const max = Math.max(1e-9, ...tokens.map((t) => Math.abs(t.weight * t.value)));
  const spans = [...tokens].sort((a, c) => a.indexStart - c.indexStart);
  const [pos, neg] = kind === 'dimension' ? ['47, 111, 222', '217, 139, 28'] : ['46, 157, 91', '192, 57, 43'];
  let at = 0;
  for (const t of spans) {
    if (t.indexStart < at) continue;
    p.append(text.slice(at, t.indexStart));
    const m = document.createElement('mark');
    const strength = Math.abs(t.weight * t.value) / max;
    m.style.background = `rgba(${t.value >= 0 ? pos : neg}, ${0.15 + 0.5 * strength})`;
    m.dataset.value = t.value.toFixed(3);
    m.title = `${t.value.toFixed(3)} × ${t.weight}${t.rules.length ? ` (${t.rules.join(', ')})` : ''}`;
    m.textContent = text.slice(t.indexStart, t.indexEnd);
    const v = document.createElement('sup');
    v.textContent = signed(t.value, 2);
    m.append(v);
    p.append(m);
    at = t.indexEnd;
  }
  p.append(text.slice(at));
  return p;
}

/** The note on a text that looks like another language than the model's (text-scores `languageMismatch`). */
function mismatchNote(m: { modelLanguage: string; detectedLanguage: string; evidence: string }): HTMLElement {
  const p = document.createElement('p');
  p.className = 'mismatch';
  p.setAttribute('role', 'note');
  p.textContent = `This text looks ${languageName(m.detectedLanguage)}; the model is ${languageName(m.modelLanguage)}.`;
  p.title = `languageMismatch: evidence "${m.evidence}"; the scores are computed as for any text`;
  return p;
}

interface Row {
  name: string;
  key: string;
  kind: Kind | 'goal';
  score: number | null;
  weight: number | null;
  share: number | null;
}

const KIND_NAMES: Record<Kind, string> = { dimension: 'topic', mapper: 'word ratings', intrinsic: 'word frequency' };

/** A diverging bar around 0, full width at ±`scale`; the value is written beside it. */
function bar(value: number, kind: Row['kind'], scale: number): HTMLElement {
  const cell = document.createElement('td');
  const wrap = document.createElement('span');
  wrap.className = 'share';
  cell.append(wrap);
  const track = document.createElement('span');
  track.className = 'track';
  const fill = document.createElement('span');
  fill.className = `fill ${kind}`;
  const half = Math.min(50, (Math.abs(value) / scale) * 50);
  fill.style.left = `${value >= 0 ? 50 : 50 - half}%`;
  fill.style.width = `${Math.max(half, 0.5)}%`;
  track.append(fill);
  const v = document.createElement('span');
  v.className = 'num';
  v.textContent = signed(value);
  wrap.append(track, v);
  return cell;
}

/** One text's table: goal score first, then every factor of the goal, then the scores outside it. */
function factorTable(rows: Row[], scale: number): HTMLTableElement {
  const table = document.createElement('table');
  table.className = 'factors';
  table.innerHTML =
    '<thead><tr><th scope="col">Score of</th><th scope="col">Score</th><th scope="col">Weight</th><th scope="col">Share of goal</th></tr></thead>';
  const body = document.createElement('tbody');
  for (const r of rows) {
    const tr = document.createElement('tr');
    tr.className = r.kind;
    const name = document.createElement('th');
    name.scope = 'row';
    name.textContent = r.name;
    if (r.kind !== 'goal') {
      const k = document.createElement('small');
      k.textContent = ` ${KIND_NAMES[r.kind]}`;
      name.append(k);
    }
    name.title = r.key;
    const score = document.createElement('td');
    score.className = 'num';
    score.textContent = r.score === null ? '–' : r.score.toFixed(3);
    const weight = document.createElement('td');
    weight.className = 'num';
    weight.textContent = r.weight === null ? '' : r.weight === 0 ? 'not in goal' : String(r.weight);
    tr.append(name, score, weight);
    if (r.share === null) tr.append(document.createElement('td'));
    else tr.append(bar(r.share, r.kind, scale));
    body.append(tr);
  }
  table.append(body);
  return table;
}

export async function scoreTexts(): Promise<void> {
  await task('text-results', async (current) => {
    // Clicked before the catalogs arrived: the request is built from the form once they have filled it.
    await catalogsSettled();
    const mode = state.mode;
    if (mode === 'offline') {
      await ensureOfflineModel();
      await catalogsSettled(); // a token entered during the download
    }
    const req = await companionChecked(textRequest(), () => void scoreTexts());
    if (!req) return 'Offline scoring waits for your answer under the Score texts button.';
    const { json, raw, ms } = await run('textScores', req);
    if (!current()) return null;
    $('texts-json').textContent = raw;
    $('texts-timing').textContent = `${mode === 'api' ? 'API' : 'offline'}: ${ms.toFixed(0)} ms`;
    const out = $('text-results');
    out.replaceChildren();
    const dims = new Map<string, { name: string; weight: number }>(
      req.dimensions.map((d: any) => [
        String(d.id),
        {
          name: d.name ?? `dimension ${d.id}`,
          weight: req.goalConfig.dimensions.find((g: any) => g.id === d.id)?.weight ?? 0,
        },
      ]),
    );
    const mapperWeight = (key: string): number =>
      req.goalConfig.mappers.find((m: { id: string }) => m.id === key)?.weight ?? 0;
    const model = state.models.find((m) => m.id === req.embeddingModelId);
    const mapperName = (key: string): string =>
      mapperLabel(
        key,
        model?.mappers.find((m) => m.key === key),
      ).name;
    const rowsOf = (t: any): Row[] => {
      // Every weight 0: no goal, rather than a goal score of 0 that reads as "neutral".
      const noGoal = (t.goalScoreFactors as unknown[]).length === 0;
      const rows: Row[] = [
        {
          name: noGoal ? 'Goal score: none (every weight is 0)' : 'Goal score',
          key: 'goalScore',
          kind: 'goal',
          score: noGoal ? null : (t.goalScore ?? null),
          weight: null,
          share: noGoal ? null : (t.goalScore ?? 0),
        },
      ];
      const inGoal = new Set<string>();
      for (const f of t.goalScoreFactors as Array<{ field: string; id?: string; value: number; type: Kind }>) {
        const id = f.id ?? f.field;
        inGoal.add(`${f.type}:${id}`);
        if (f.type === 'intrinsic')
          rows.push({
            name: COMMON_WORDS,
            key: 'modelRankScore',
            kind: f.type,
            score: t.modelRankScore,
            weight: req.goalConfig.modelRankScore,
            share: f.value,
          });
        else if (f.type === 'dimension')
          rows.push({
            name: dims.get(id)?.name ?? f.field,
            key: `dimensionScores.${id}`,
            kind: f.type,
            score: t.dimensionScores[id] ?? null,
            weight: dims.get(id)?.weight ?? null,
            share: f.value,
          });
        else
          rows.push({
            name: mapperName(id),
            key: `mapperScores.${id}`,
            kind: 'mapper',
            score: t.mapperScores[id] ?? null,
            weight: mapperWeight(id),
            share: f.value,
          });
      }
      for (const [id, v] of Object.entries(t.dimensionScores as Record<string, number>))
        if (!inGoal.has(`dimension:${id}`))
          rows.push({
            name: dims.get(id)?.name ?? id,
            key: `dimensionScores.${id}`,
            kind: 'dimension',
            score: v,
            weight: 0,
            share: null,
          });
      for (const [id, v] of Object.entries(t.mapperScores as Record<string, number>))
        if (!inGoal.has(`mapper:${id}`))
          rows.push({
            name: mapperName(id),
            key: `mapperScores.${id}`,
            kind: 'mapper',
            score: v,
            weight: 0,
            share: null,
          });
      return rows;
    };
    const all = (json.data as any[]).map(rowsOf);
    // One scale for every text, so that bars compare across texts (at least 0.1: near-zero bars stay small).
    const scale = Math.max(0.1, ...all.flat().map((r) => Math.abs(r.share ?? 0)));
    (json.data as any[]).forEach((t, i) => {
      const card = document.createElement('article');
      card.className = 'text-card';
      const h = document.createElement('h3');
      const text = req.texts[i] as string;
      h.textContent = text.length > 90 ? `${text.slice(0, 90)}…` : text;
      card.append(h);
      if (t.languageMismatch) card.append(mismatchNote(t.languageMismatch));
      card.append(factorTable(all[i]!, scale));
      if (t.explanation) {
        for (const [k, e] of Object.entries(t.explanation.dimensions as Record<string, { tokens: ExplainedToken[] }>))
          card.append(highlighted(dims.get(k)?.name ?? k, 'dimension', text, e.tokens));
        for (const [k, e] of Object.entries(t.explanation.mappers as Record<string, { tokens: ExplainedToken[] }>))
          card.append(highlighted(mapperName(k), 'mapper', text, e.tokens));
      }
      out.append(card);
    });
    return `Scored ${count(json.data.length, 'text')} ${mode === 'api' ? 'through the API' : 'offline in this tab'}.`;
  });
}

/**
 * Each word in the casing a person expects (German nouns capitalized, proper nouns): the API's
 * `word` is lower-cased, autocomplete answers in display casing. One autocomplete per first
 * letter with the words as its allow-list (at most 10 suggestions a call); words without a
 * cased letter (Japanese) are left as they are.
 */
async function displayCasing(words: string[], modelId: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const groups = new Map<string, string[]>();
  for (const w of words) {
    if (w.includes(' ') || !/\p{Ll}/u.test(w)) continue;
    const first = w[0]!.toLowerCase();
    groups.set(first, [...(groups.get(first) ?? []), w]);
  }
  const calls: Array<{ word: string; embeddingModelId: string; whitelistWords: string[] }> = [];
  for (const [first, group] of groups)
    for (let i = 0; i < group.length; i += 10)
      calls.push({ word: first, embeddingModelId: modelId, whitelistWords: group.slice(i, i + 10) });
  // Best effort, four calls at a time: a word whose casing could not be had keeps the API's.
  for (let i = 0; i < calls.length; i += 4) {
    const answers = await Promise.allSettled(calls.slice(i, i + 4).map((body) => run('autocomplete', body)));
    for (const a of answers)
      if (a.status === 'fulfilled') for (const w of a.value.json.suggestions as string[]) out.set(w.toLowerCase(), w);
  }
  return out;
}

/** The chart's width: its box's, or the page's less its margins before it is laid out. */
const chartWidth = (box: HTMLElement): number => Math.max(280, Math.min(1100, box.clientWidth || 900));

let lastScatter: ScatterPoint[] | null = null;
function drawScatter(): void {
  if (!lastScatter) return;
  const box = $('words-chart');
  const { svg, unlabelled } = scatter(lastScatter, chartWidth(box));
  const more = document.createElement('p');
  more.className = 'unlabelled';
  more.textContent = unlabelled.length ? `Not labelled (no room): ${unlabelled.join(', ')}` : '';
  box.replaceChildren(svg, more);
}

export async function scoreWords(): Promise<void> {
  await task('words-chart', async (current) => {
    // The model and seed words as shown once the catalogs (in flight at the click) have filled the form.
    await catalogsSettled();
    const wordrank = Number($<HTMLInputElement>('wordrank').value);
    const req = {
      seedWords: splitWords($<HTMLInputElement>('seed-words').value),
      embeddingModelId: state.modelId,
      limit: Number($<HTMLInputElement>('limit').value) || 40,
      ...(wordrank ? { wordrankLimit: wordrank } : {}),
      seedScore: 1,
    };
    const mode = state.mode;
    const { json, raw, ms } = await run('wordScores', req);
    if (!current()) return null;
    const scored = (json.data as any[]).filter((w) => w.seedScore !== null);
    const shown = await displayCasing(
      scored.map((w) => w.word as string),
      req.embeddingModelId,
    );
    if (!current()) return null;
    $('words-json').textContent = raw;
    $('words-timing').textContent = `${mode === 'api' ? 'API' : 'offline'}: ${ms.toFixed(0)} ms`;
    lastScatter = scored.map((w) => ({ word: shown.get(w.word) ?? w.word, rank: w.modelRank, score: w.seedScore }));
    drawScatter();
    return `Found ${count(scored.length, 'word')} near ${req.seedWords.join(', ')}.`;
  });
}

let lastMatrix: { words: string[]; matrix: number[][] } | null = null;
function drawHeatmap(): void {
  if (!lastMatrix) return;
  const box = $('heatmap');
  box.replaceChildren(heatmap(lastMatrix.words, lastMatrix.matrix, chartWidth(box)));
}

export async function scoreMatrix(): Promise<void> {
  await task('heatmap', async (current) => {
    await catalogsSettled();
    const req = { words: splitWords($<HTMLInputElement>('matrix-words').value) };
    const mode = state.mode;
    const { json, raw, ms } = await run('similarityMatrix', req, state.modelId);
    if (!current()) return null;
    $('matrix-json').textContent = raw;
    $('matrix-timing').textContent = `${mode === 'api' ? 'API' : 'offline'}: ${ms.toFixed(0)} ms`;
    lastMatrix = json;
    drawHeatmap();
    const known = new Set((json.words as string[]).map((w) => w.toLowerCase()));
    const unknown = req.words.filter((w) => !known.has(w.toLowerCase()));
    return `Compared ${count(json.words.length, 'word')}.${unknown.length ? ` Not in the model, left out: ${unknown.join(', ')}.` : ''}`;
  });
}

/** Charts follow the window's width (a phone turned sideways). */
export function redrawChartsOnResize(): void {
  let width = window.innerWidth;
  let timer = 0;
  window.addEventListener('resize', () => {
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      drawScatter();
      drawHeatmap();
    }, 100);
  });
}
