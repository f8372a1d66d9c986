/** Small SVG charts for the playground (no dependencies): diverging bars, a scatter plot, a heatmap. */
const NS = 'http://www.w3.org/2000/svg';

function el<K extends keyof SVGElementTagNameMap>(
  name: K,
  attrs: Record<string, string | number> = {},
  text?: string,
): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

const COLORS: Record<string, string> = {
  dimension: '#2f6fde',
  mapper: '#8a4fd8',
  intrinsic: '#d98b1c',
  total: '#1d1d1f',
};
const fmt = (x: number): string => {
  const s = Math.abs(x) >= 0.995 ? x.toFixed(2) : x.toFixed(3);
  return /^-0\.0+$/.test(s) ? s.slice(1) : s;
};

/** Diverging horizontal bars around 0 (values in about [-1, 1]); the first row is the total. */
export function bars(rows: Array<{ label: string; value: number; kind: string }>, width = 460): SVGSVGElement {
  const rowH = 22;
  const labelW = 150;
  const valueW = 52;
  const plotW = width - labelW - valueW;
  const max = Math.max(1e-9, ...rows.map((r) => Math.abs(r.value)));
  // Full width for the largest |value| (at least 0.1, so near-zero bars stay small).
  const scale = Math.max(0.1, max);
  const mid = labelW + plotW / 2;
  const svg = el('svg', {
    width,
    height: rows.length * rowH + 6,
    viewBox: `0 0 ${width} ${rows.length * rowH + 6}`,
    class: 'bars',
    role: 'img',
  });
  svg.append(el('line', { x1: mid, x2: mid, y1: 0, y2: rows.length * rowH + 6, stroke: '#bbb' }));
  rows.forEach((r, i) => {
    const y = 3 + i * rowH;
    const w = (Math.abs(r.value) / scale) * (plotW / 2);
    const x = r.value >= 0 ? mid : mid - w;
    svg.append(
      el(
        'text',
        { x: labelW - 8, y: y + 15, 'text-anchor': 'end', class: r.kind === 'total' ? 'lbl total' : 'lbl' },
        r.label,
      ),
    );
    svg.append(
      el('rect', {
        x,
        y: y + 3,
        width: Math.max(1, w),
        height: rowH - 7,
        rx: 3,
        fill: COLORS[r.kind] ?? '#666',
        opacity: r.kind === 'total' ? 1 : 0.85,
      }),
    );
    svg.append(el('text', { x: width - 4, y: y + 15, 'text-anchor': 'end', class: 'val' }, fmt(r.value)));
  });
  return svg;
}

/** Scatter of seed similarity (y) against frequency rank (x, log scale), one labelled dot per word. */
export function scatter(
  points: Array<{ word: string; rank: number; score: number }>,
  width = 900,
  height = 420,
): SVGSVGElement {
  const m = { l: 56, r: 20, t: 16, b: 44 };
  const svg = el('svg', { width, height, viewBox: `0 0 ${width} ${height}`, class: 'scatter', role: 'img' });
  if (points.length === 0) {
    svg.append(el('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'empty' }, 'No words'));
    return svg;
  }
  const lr = points.map((p) => Math.log10(p.rank));
  const x0 = Math.floor(Math.min(...lr));
  const x1 = Math.max(x0 + 1, Math.ceil(Math.max(...lr)));
  const ys = points.map((p) => p.score);
  const y0 = Math.floor(Math.min(...ys) * 10) / 10;
  const y1 = Math.ceil(Math.max(...ys) * 10) / 10 + 0.0001;
  const X = (r: number): number => m.l + ((Math.log10(r) - x0) / (x1 - x0)) * (width - m.l - m.r);
  const Y = (s: number): number => height - m.b - ((s - y0) / (y1 - y0 || 1)) * (height - m.t - m.b);
  for (let e = x0; e <= x1; e++) {
    const x = X(10 ** e);
    svg.append(el('line', { x1: x, x2: x, y1: m.t, y2: height - m.b, class: 'grid' }));
    svg.append(
      el('text', { x, y: height - m.b + 16, 'text-anchor': 'middle', class: 'tick' }, (10 ** e).toLocaleString('en')),
    );
  }
  for (let s = y0; s <= y1 + 1e-9; s += 0.1) {
    const y = Y(s);
    svg.append(el('line', { x1: m.l, x2: width - m.r, y1: y, y2: y, class: 'grid' }));
    svg.append(el('text', { x: m.l - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, s.toFixed(1)));
  }
  svg.append(
    el(
      'text',
      { x: (m.l + width - m.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis' },
      'frequency rank (log scale; 1 = most frequent)',
    ),
  );
  const yl = el(
    'text',
    {
      x: 14,
      y: (m.t + height - m.b) / 2,
      'text-anchor': 'middle',
      class: 'axis',
      transform: `rotate(-90 14 ${(m.t + height - m.b) / 2})`,
    },
    'seed similarity',
  );
  svg.append(yl);
  for (const p of points) {
    const g = el('g', { class: 'pt' });
    g.append(el('circle', { cx: X(p.rank), cy: Y(p.score), r: 4 }));
    g.append(el('text', { x: X(p.rank) + 6, y: Y(p.score) - 5, class: 'word' }, p.word));
    const t = el('title', {}, `${p.word}: similarity ${p.score.toFixed(3)}, rank ${p.rank}`);
    g.append(t);
    svg.append(g);
  }
  return svg;
}

function heatColor(v: number): string {
  // -1 .. 1: blue - white - red
  const t = Math.max(-1, Math.min(1, v));
  const a = Math.abs(t);
  const [r, g, b] = t >= 0 ? [214, 54, 44] : [38, 99, 201];
  const mix = (c: number): number => Math.round(255 + (c - 255) * a);
  return `rgb(${mix(r)},${mix(g)},${mix(b)})`;
}

/** n x n heatmap of a similarity matrix with the words on both axes. */
export function heatmap(words: string[], matrix: number[][], cell = 44): SVGSVGElement {
  const n = words.length;
  const label = 96;
  const size = label + n * cell + 8;
  const svg = el('svg', { width: size, height: size, viewBox: `0 0 ${size} ${size}`, class: 'heatmap', role: 'img' });
  words.forEach((w, i) => {
    svg.append(el('text', { x: label - 6, y: label + i * cell + cell / 2 + 4, 'text-anchor': 'end', class: 'lbl' }, w));
    const cx = label + i * cell + cell / 2;
    svg.append(el('text', { x: cx, y: label - 6, transform: `rotate(-45 ${cx} ${label - 6})`, class: 'lbl' }, w));
  });
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = matrix[i][j];
      const x = label + j * cell;
      const y = label + i * cell;
      svg.append(el('rect', { x, y, width: cell - 1, height: cell - 1, fill: heatColor(v) }));
      svg.append(
        el(
          'text',
          {
            x: x + cell / 2,
            y: y + cell / 2 + 4,
            'text-anchor': 'middle',
            class: Math.abs(v) > 0.6 ? 'cell dark' : 'cell',
          },
          v.toFixed(2),
        ),
      );
    }
  }
  return svg;
}
