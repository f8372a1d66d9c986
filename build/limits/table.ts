/**
 * The rows of `npm run deploy:check`: one figure of the deployment beside one published limit, the
 * page that publishes it, and a verdict. Hard limits (the platform refuses the deployment or kills
 * the isolate) fail the check; the others only warn, since their figure stands in for what the
 * platform would measure (CPU timed in Node, worst cases of rare paths).
 */

export type Unit = 'bytes' | 'ms' | 'count';
export type Status = 'ok' | 'warn' | 'fail';

export interface LimitRow {
  /** What is checked: bundle size, startup, memory, cpu, subrequests, r2 object. */
  check: string;
  /** Of what: a script, a host, an endpoint family, an object key. */
  subject: string;
  /** The figure and its unit; `measured` says whether it was measured or computed. */
  value: number;
  unit: Unit;
  measured: boolean;
  limit: number;
  /** Where the limit is published. */
  source: string;
  /** Exceeding it makes the platform refuse the deployment or fail requests: the check fails. */
  hard: boolean;
  status: Status;
  note?: string;
}

/** A row with its verdict: within the limit ok; over it fail when hard, else warn. */
export function row(r: Omit<LimitRow, 'status'> & { status?: Status }): LimitRow {
  const over = r.value > r.limit;
  return { ...r, status: r.status ?? (over ? (r.hard ? 'fail' : 'warn') : 'ok') };
}

/** The median of repeated timings. */
export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
}

export function failed(rows: readonly LimitRow[]): LimitRow[] {
  return rows.filter((r) => r.status === 'fail');
}

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

/** Sizes in binary units (the limits are published in them), times in ms below a second. */
export function formatValue(value: number, unit: Unit): string {
  if (unit === 'bytes') {
    if (value >= GiB) return `${(value / GiB).toFixed(3)} GiB`;
    return value >= MiB ? `${(value / MiB).toFixed(2)} MiB` : `${(value / KiB).toFixed(1)} KiB`;
  }
  if (unit === 'ms') return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
  return String(value);
}

/** The rows as an aligned text table (one line per row, notes indented below). */
export function formatTable(rows: readonly LimitRow[]): string {
  const cells = rows.map((r) => [
    r.check,
    r.subject,
    `${formatValue(r.value, r.unit)}${r.measured ? '' : ' (computed)'}`,
    formatValue(r.limit, r.unit),
    r.status === 'ok' ? 'ok' : r.status === 'warn' ? 'WARN' : 'FAIL',
    r.source,
  ]);
  const header = ['check', 'subject', 'figure', 'limit', 'status', 'source'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]): string =>
    c
      .map((s, i) => (i === c.length - 1 ? s : s.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out = [line(header), line(widths.map((w) => '-'.repeat(w)))];
  rows.forEach((r, i) => {
    out.push(line(cells[i]!));
    if (r.note) out.push(`    ${r.note}`);
  });
  return out.join('\n');
}

/** A snake_case key part. */
const key = (s: string): string =>
  s
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');

/** The figures as one flat object (the bench convention's last line): `<check>_<subject>_<unit>`. */
export function figuresOf(rows: readonly LimitRow[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of rows) out[`limits_${key(r.check)}_${key(r.subject)}_${r.unit}`] = +r.value.toFixed(2);
  out.limits_failed = failed(rows).length;
  out.limits_warned = rows.filter((r) => r.status === 'warn').length;
  return out;
}
