/**
 * bench:overload's HTTP side: one request through undici with every answer classified (status,
 * problem code, `X-Cost-Units`, Retry-After, Server-Timing metrics, wall time) and a request
 * without an answer (socket closed, reset, timeout) kept apart as status 0. Plus the small
 * statistics and table helpers of the bench's sections.
 */
import { request, type Dispatcher } from 'undici';

/** A request of the bench: method, path (with query) and JSON body. */
export interface Req {
  method: 'GET' | 'POST';
  path: string;
  /** The body; a Buffer when it is sent many times (undici would encode a string on every send). */
  body?: string | Buffer;
  /**
   * A new body of the same shape for each send (other seed words): the server's expansion and
   * statistics caches never answer it, as the cost estimate assumes (docs/api.md "Cost and admission").
   */
  fresh?: () => string;
}

export interface Answer {
  /** HTTP status; 0 when no answer came (connection closed or reset, timeout). */
  status: number;
  /** Wall time from sending to the last byte of the answer (ms). */
  ms: number;
  /** The problem's `code` of an error answer. */
  code?: string;
  /** `X-Cost-Units` (the request's estimated cost in work units), when the server sent it. */
  units?: number;
  /** Retry-After in seconds, when sent. */
  retryAfter?: number;
  /** Server-Timing durations by metric name (total, host, load, compute, meter, ...). */
  timing: Record<string, number>;
  /** The parsed problem+json body of an error answer. */
  problem?: Record<string, unknown>;
  /** Why no answer came (status 0). */
  error?: string;
  /** Bytes of the answer body. */
  bytes: number;
}

/** Parses `Server-Timing: total;dur=1.2, host;dur=0.9` into { total: 1.2, host: 0.9 }. */
export function parseServerTiming(header: string | undefined): Record<string, number> {
  const out: Record<string, number> = {};
  if (!header) return out;
  for (const entry of header.split(',')) {
    const [name, ...params] = entry.trim().split(';');
    if (!name) continue;
    const dur = params.map((p) => /^\s*dur=([\d.]+)/.exec(p)).find((m) => m);
    out[name.trim()] = dur ? Number(dur[1]) : NaN;
  }
  return out;
}

/** Retry-After as seconds (delta-seconds or an HTTP date). */
export function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}

const header = (h: Record<string, string | string[] | undefined>, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v.join(', ') : v;
};

/** Sends `req` to `base` through `dispatcher` and classifies the answer (never throws). */
export async function send(
  dispatcher: Dispatcher,
  base: string,
  req: Req,
  token: string | undefined,
  timeoutMs = 120_000,
): Promise<Answer> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  const body = req.fresh ? req.fresh() : req.body;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const t0 = performance.now();
  try {
    const res = await request(`${base}${req.path}`, {
      method: req.method,
      headers,
      body,
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const bytes = Buffer.from(await res.body.arrayBuffer());
    const ms = performance.now() - t0;
    const h = res.headers;
    const answer: Answer = {
      status: res.statusCode,
      ms,
      timing: parseServerTiming(header(h, 'server-timing')),
      bytes: bytes.length,
    };
    const units = header(h, 'x-cost-units');
    if (units !== undefined && units.trim() !== '' && Number.isFinite(Number(units))) answer.units = Number(units);
    answer.retryAfter = parseRetryAfter(header(h, 'retry-after'));
    if (res.statusCode >= 400 && (header(h, 'content-type') ?? '').includes('json')) {
      try {
        answer.problem = JSON.parse(bytes.toString('utf8')) as Record<string, unknown>;
        if (typeof answer.problem.code === 'string') answer.code = answer.problem.code;
      } catch {
        // not JSON after all
      }
    }
    return answer;
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause;
    const code = (err as { code?: string }).code ?? cause?.code ?? '';
    return {
      status: 0,
      ms: performance.now() - t0,
      timing: {},
      bytes: 0,
      error: `${code} ${(err as Error).message}`.trim(),
    };
  }
}

/** The server's own time of an answer: Server-Timing `total` when sent, else the wall time. */
export const serverMs = (a: Answer): number => (Number.isFinite(a.timing.total) ? a.timing.total : a.ms);

/** Work units of an answer: `X-Cost-Units`, else (no cost header yet) the server's time as a proxy (1 unit ~ 1 ms). */
export const unitsOf = (a: Answer): number => a.units ?? serverMs(a);

/** A refusal that tells the client when to come back: 429 or 503 with Retry-After. */
export const isRetryable = (a: Answer): boolean => (a.status === 429 || a.status === 503) && a.retryAfter !== undefined;

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** The median (the mean of the two middle values of an even count). */
export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const h = Math.floor(s.length / 2);
  return s.length % 2 ? s[h] : (s[h - 1] + s[h]) / 2;
}

/** A number rounded for the JSON line (NaN/undefined: null). */
export function round(x: number | undefined, digits = 1): number | null {
  if (x === undefined || !Number.isFinite(x)) return null;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A fixed-width table: first column left-aligned, the others right-aligned. */
export function table(head: string[], rows: Array<Array<string | number | null | undefined>>): string {
  const cells = [head, ...rows.map((r) => r.map((c) => (c === null || c === undefined ? '-' : String(c))))];
  const widths = head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? '').length)));
  return cells
    .map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  '))
    .join('\n');
}

/** "MET" / "NOT MET" / "n/a" for a target. */
export const verdict = (ok: boolean | null): string => (ok === null ? 'n/a' : ok ? 'MET' : 'NOT MET');

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
