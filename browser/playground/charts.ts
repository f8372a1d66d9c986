/**
 * Small SVG charts for the playground (no dependencies): a scatter plot of the nearest words and
 * a similarity heatmap. Both fit the width they are given (a phone's 390 px too): labels are
 * measured before they are placed, a word label that would cover another label or a dot is left
 * out (the word is listed under the chart instead), and no label reaches past the chart's edge.
 */
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

let measureCtx: CanvasRenderingContext2D | null = null;
/**
 * The rendered size of `text` at `size` px in the page's font (the charts' text inherits it):
 * its width and the font's ascent and descent, which make the height of an SVG text's box.
 */
function measure(text: string, size: number): { w: number; ascent: number; descent: number } {
  measureCtx ??= document.createElement('canvas').getContext('2d');
  if (!measureCtx) return { w: text.length * size * 0.62, ascent: size, descent: size * 0.3 };
  measureCtx.font = `${size}px ${getComputedStyle(document.body).fontFamily}`;
  const m = measureCtx.measureText(text);
  return { w: m.width, ascent: m.fontBoundingBoxAscent ?? size, descent: m.fontBoundingBoxDescent ?? size * 0.3 };
}
const textWidth = (text: string, size: number): number => measure(text, size).w;

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
}
const overlaps = (a: Box, b: Box): boolean => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;
const inside = (a: Box, area: Box): boolean =>
  a.x >= area.x && a.y >= area.y && a.x + a.w <= area.x + area.w && a.y + a.h <= area.y + area.h;

/** Tick values of a log axis from 10^x0 to 10^x1, thinned so that their labels keep apart. */
function logTicks(x0: number, x1: number, X: (v: number) => number, size: number): number[] {
  const out: number[] = [];
  let lastRight = -Infinity;
  for (let e = x0; e <= x1; e++) {
    const v = 10 ** e;
    const w = textWidth(v.toLocaleString('en'), size);
    // As drawn: centred on its line, the first one starting at it (scatter below).
    const left = out.length === 0 ? X(v) : X(v) - w / 2;
    if (left < lastRight + 8) continue;
    out.push(v);
    lastRight = left + w;
  }
  return out;
}

export interface ScatterPoint {
  word: string;
  rank: number;
  score: number;
}

/**
 * Seed similarity (y) against frequency rank (x, log scale), one dot per word. Labels go to the
 * first free place around their dot (right, left, above, below, then the corners), most similar
 * words first; returns the chart and the words left without a label.
 */
export function scatter(points: ScatterPoint[], width: number): { svg: SVGSVGElement; unlabelled: string[] } {
  const height = width < 560 ? 340 : 420;
  const font = 11;
  const m = { l: 48, r: 16, t: 12, b: 44 };
  const svg = el('svg', {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    class: 'scatter',
    role: 'img',
    'aria-label': `Nearest words: ${points.length} words by similarity to the seed words and how common they are`,
  });
  if (points.length === 0) {
    svg.append(el('text', { x: width / 2, y: height / 2, 'text-anchor': 'middle', class: 'empty' }, 'No words'));
    return { svg, unlabelled: [] };
  }
  const lr = points.map((p) => Math.log10(p.rank));
  const x0 = Math.floor(Math.min(...lr));
  const x1 = Math.max(x0 + 1, Math.ceil(Math.max(...lr)));
  const ys = points.map((p) => p.score);
  const y0 = Math.floor(Math.min(...ys) * 10) / 10;
  const y1 = Math.ceil(Math.max(...ys) * 10) / 10 + 0.0001;
  // The last tick's label is centred on the plot's right edge: keep half of it inside the chart.
  m.r = Math.max(m.r, textWidth((10 ** x1).toLocaleString('en'), font) / 2 + 4);
  const X = (r: number): number => m.l + ((Math.log10(r) - x0) / (x1 - x0)) * (width - m.l - m.r);
  const Y = (s: number): number => height - m.b - ((s - y0) / (y1 - y0 || 1)) * (height - m.t - m.b);
  for (const v of logTicks(x0, x1, X, font)) {
    const x = X(v);
    svg.append(el('line', { x1: x, x2: x, y1: m.t, y2: height - m.b, class: 'grid' }));
    // The first tick's label starts at its line instead of centring on it: it would reach under the y axis' labels.
    const first = x - textWidth(v.toLocaleString('en'), font) / 2 < m.l;
    svg.append(
      el(
        'text',
        { x, y: height - m.b + 16, 'text-anchor': first ? 'start' : 'middle', class: 'tick' },
        v.toLocaleString('en'),
      ),
    );
  }
  const yStep = (height - m.t - m.b) / ((y1 - y0) / 0.1) < 18 ? 0.2 : 0.1;
  for (let s = y0; s <= y1 + 1e-9; s += yStep) {
    const y = Y(s);
    svg.append(el('line', { x1: m.l, x2: width - m.r, y1: y, y2: y, class: 'grid' }));
    svg.append(el('text', { x: m.l - 6, y: y + 4, 'text-anchor': 'end', class: 'tick' }, s.toFixed(1)));
  }
  svg.append(
    el(
      'text',
      { x: (m.l + width - m.r) / 2, y: height - 6, 'text-anchor': 'middle', class: 'axis' },
      width < 560 ? 'how common (1 = most common)' : 'how common: frequency rank (log scale; 1 = most common word)',
    ),
  );
  const midY = (m.t + height - m.b) / 2;
  svg.append(
    el(
      'text',
      { x: 12, y: midY, 'text-anchor': 'middle', class: 'axis', transform: `rotate(-90 12 ${midY})` },
      'similarity to the seeds',
    ),
  );

  const plot: Box = { x: m.l, y: m.t - 2, w: width - m.l - m.r + 2, h: height - m.t - m.b + 4 };
  const dots: Box[] = points.map((p) => ({ x: X(p.rank) - 4, y: Y(p.score) - 4, w: 8, h: 8 }));
  const placed: Box[] = [];
  const unlabelled: string[] = [];
  const labels = new Map<ScatterPoint, { x: number; y: number }>();
  const order = [...points].sort((a, b) => b.score - a.score);
  for (const p of order) {
    const cx = X(p.rank);
    const cy = Y(p.score);
    const size = measure(p.word, font);
    const w = size.w + 2;
    const h = size.ascent + size.descent + 2;
    const candidates: Box[] = [
      { x: cx + 6, y: cy - h / 2, w, h },
      { x: cx - 6 - w, y: cy - h / 2, w, h },
      { x: cx - w / 2, y: cy - 6 - h, w, h },
      { x: cx - w / 2, y: cy + 6, w, h },
      { x: cx + 4, y: cy - 4 - h, w, h },
      { x: cx + 4, y: cy + 4, w, h },
      { x: cx - 4 - w, y: cy - 4 - h, w, h },
      { x: cx - 4 - w, y: cy + 4, w, h },
    ];
    const free = candidates.find(
      (b) => inside(b, plot) && !placed.some((o) => overlaps(b, o)) && !dots.some((d) => overlaps(b, d)),
    );
    if (!free) {
      unlabelled.push(p.word);
      continue;
    }
    placed.push(free);
    labels.set(p, { x: free.x + 1, y: free.y + 1 + size.ascent });
  }
  for (const p of points) {
    const g = el('g', { class: 'pt' });
    g.append(el('circle', { cx: X(p.rank), cy: Y(p.score), r: 4 }));
    const at = labels.get(p);
    if (at) g.append(el('text', { x: at.x, y: at.y, class: 'word' }, p.word));
    g.append(
      el('title', {}, `${p.word}: similarity ${p.score.toFixed(3)}, frequency rank ${p.rank.toLocaleString('en')}`),
    );
    svg.append(g);
  }
  return { svg, unlabelled };
}

/** -1 .. 1: blue - white - red; and whether the cell is dark (white text) or light (black text). */
function heatColor(v: number): { fill: string; dark: boolean } {
  const t = Math.max(-1, Math.min(1, v));
  const a = Math.abs(t);
  const base = t >= 0 ? [190, 30, 30] : [30, 80, 190];
  const rgb = base.map((c) => Math.round(255 + (c - 255) * a));
  // WCAG relative luminance: above 0.179 black text contrasts more than white (both >= 4.58:1 there).
  const lin = rgb.map((c) => (c / 255 <= 0.04045 ? c / 255 / 12.92 : ((c / 255 + 0.055) / 1.055) ** 2.4));
  const luminance = 0.2126 * lin[0]! + 0.7152 * lin[1]! + 0.0722 * lin[2]!;
  return { fill: `rgb(${rgb.join(',')})`, dark: luminance < 0.179 };
}

/**
 * n x n heatmap of a similarity matrix with the words on both axes, fitted to `width`: the row
 * labels' column is as wide as the longest word, the column labels are slanted when the cells
 * leave room for that and vertical otherwise.
 */
export function heatmap(words: string[], matrix: number[][], width: number): SVGSVGElement {
  const n = words.length;
  const font = 12;
  const sizes = words.map((w) => measure(w, font));
  const longest = Math.max(0, ...sizes.map((m) => m.w));
  const lineH = Math.max(font, ...sizes.map((m) => m.ascent + m.descent));
  const left = Math.ceil(longest) + 10;
  const cell = Math.max(26, Math.min(56, Math.floor((width - left - 12) / Math.max(1, n))));
  // A slanted label's box is (w + h) / sqrt 2 wide: slant only when neighbours' boxes stay apart.
  const slant = (longest + lineH) * Math.SQRT1_2;
  const slanted = slant + 2 <= cell;
  const top = Math.ceil(slanted ? slant : longest) + 10;
  const right = slanted ? Math.ceil(slant) : 6;
  const w = left + n * cell + right;
  const h = top + n * cell + 4;
  const svg = el('svg', {
    width: w,
    height: h,
    viewBox: `0 0 ${w} ${h}`,
    class: 'heatmap',
    role: 'img',
    'aria-label': `Similarity of ${n} words to each other, from −1 (opposite) to 1 (same meaning)`,
  });
  words.forEach((word, i) => {
    svg.append(el('text', { x: left - 6, y: top + i * cell + cell / 2 + 4, 'text-anchor': 'end', class: 'lbl' }, word));
    const cx = left + i * cell + cell / 2;
    svg.append(
      slanted
        ? el('text', { x: cx - 4, y: top - 6, transform: `rotate(-45 ${cx - 4} ${top - 6})`, class: 'lbl' }, word)
        : el('text', { x: cx + 4, y: top - 6, transform: `rotate(-90 ${cx + 4} ${top - 6})`, class: 'lbl' }, word),
    );
  });
  const valueFont = cell < 34 ? 9 : 10;
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < n; j++) {
      const v = matrix[i][j];
      const x = left + j * cell;
      const y = top + i * cell;
      const color = heatColor(v);
      const r = el('rect', { x, y, width: cell - 1, height: cell - 1, fill: color.fill });
      r.append(el('title', {}, `${words[i]} – ${words[j]}: ${v.toFixed(2)}`));
      svg.append(r);
      svg.append(
        el(
          'text',
          {
            x: x + cell / 2,
            y: y + cell / 2 + 3,
            'text-anchor': 'middle',
            class: color.dark ? 'cell dark' : 'cell',
            // A presentation attribute, not a style attribute: the page's CSP allows no inline style.
            'font-size': valueFont,
          },
          v.toFixed(2),
        ),
      );
    }
  }
  return svg;
}
