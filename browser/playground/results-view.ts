/**
 * The answers shown: text scores (goal-score bars, the tokens that drove each factor, a note on
 * a text that looks like another language than the model's), word scores (nearest words chart)
 * and the similarity heatmap, each with its JSON and timing.
 */
import { bars, heatmap, scatter } from './charts';
import { splitWords, textRequest } from './requests';
import { run, showError } from './scorers';
import { $, setStatus, state } from './state';

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

const LANGUAGE_NAMES = new Map([
  ['en', 'English'],
  ['de', 'German'],
  ['fr', 'French'],
  ['ja', 'Japanese'],
]);
const languageName = (code: string): string => LANGUAGE_NAMES.get(code) ?? code;

/** The note on a text that looks like another language than the model's (text-scores `languageMismatch`). */
function mismatchNote(m: { modelLanguage: string; detectedLanguage: string; evidence: string }): HTMLElement {
  const p = document.createElement('p');
  p.className = 'mismatch';
  p.setAttribute('role', 'note');
  p.textContent = `This text looks ${languageName(m.detectedLanguage)}; the model is ${languageName(m.modelLanguage)}.`;
  p.title = `languageMismatch: evidence "${m.evidence}"; the scores are computed as for any text`;
  return p;
}

export async function scoreTexts(): Promise<void> {
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
      if (t.languageMismatch) card.append(mismatchNote(t.languageMismatch));
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

export async function scoreWords(): Promise<void> {
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

export async function scoreMatrix(): Promise<void> {
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
