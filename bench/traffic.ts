/**
 * Request traffic shared by `npm run bench:soak` (soak.ts) and the burst reproduction
 * (burst.ts): the fixed-seed mix of ordinary and hostile requests, and a tally that checks every
 * answer (5xx, error bodies that are not problem+json).
 */
import { Agent, fetch as undiciFetch } from 'undici';
import { DEFAULT_MODEL_ID } from '../build/default-model';
import { LIMITS } from '../core/limits';

/**
 * Connections idle for at most 1 s are reused. workerd closes a keep-alive connection after 5 s
 * idle (kj's pipeline timeout) and fetch's default pool reuses one for up to 4 s; on a loaded
 * machine the two race and a request written into a connection the server is closing is lost
 * (ECONNRESET, "other side closed"): a client problem, not the Worker's (docs/reliability.md,
 * defect 6). Clients of any HTTP/1.1 server with an idle timeout must keep theirs shorter.
 */
const pool = new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

const MODEL = DEFAULT_MODEL_ID;

export const PROTO = [
  ...new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Function.prototype)]),
];
export const PROSE =
  'The quick brown fox jumps over the lazy dog while the children watch from the old wooden bridge near the river';

export interface Req {
  kind: string;
  method: string;
  path: string;
  body?: string | Uint8Array;
  headers?: Record<string, string>;
  admin?: boolean;
}

/** A model the mix scores with, and texts and words of its language. */
export interface MixModel {
  id: string;
  texts: string[];
  seeds: string[];
  words: string[];
}

/** Texts and words per language for the scoring requests of the mix (model switching). */
export const MIX_LANGUAGE: Record<string, Omit<MixModel, 'id'>> = {
  en: { texts: [PROSE, 'I am not happy with this'], seeds: ['good', 'great'], words: ['fine', 'bad'] },
  de: {
    texts: ['Die Kinder spielen im Garten', 'Das Essen war nicht gut'],
    seeds: ['gut'],
    words: ['schlecht', 'Haus'],
  },
  fr: {
    texts: ['Les enfants jouent dans le jardin', "Le repas n'était pas bon"],
    seeds: ['bon'],
    words: ['mauvais', 'maison'],
  },
  ja: { texts: ['東京都に住んでいます', '料理はとても美味しかった'], seeds: ['良い'], words: ['悪い', '家'] },
};

const DEFAULT_MIX_MODELS: MixModel[] = [{ id: MODEL, ...MIX_LANGUAGE.en }];

/**
 * A request drawn from the mix. `models`: the models the scoring requests pick from, one at
 * random per request (several: every request may need another model than the last).
 * `oversize`: the share of requests whose body is over the body limit (413).
 */
export function requestMix(
  rand: () => number,
  ws: string,
  options: { models?: MixModel[]; oversize?: number } = {},
): Req {
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const json = (o: unknown) => JSON.stringify(o);
  const w = `/api/v1/workspaces/${ws}`;
  if (options.oversize && rand() < options.oversize)
    return {
      kind: 'oversize',
      method: 'POST',
      path: `${w}/text-scores`,
      body: json({ texts: ['x'.repeat(LIMITS.bodyBytes + 1024)], embeddingModelId: MODEL }),
    };
  const model = pick(options.models ?? DEFAULT_MIX_MODELS);
  const r = rand();
  if (r < 0.2)
    return {
      kind: 'text-scores',
      method: 'POST',
      path: `${w}/text-scores`,
      body: json({
        texts: [...model.texts, pick(PROTO)],
        embeddingModelId: model.id,
        mapperKeys: ['sentiment_valence'],
      }),
    };
  if (r < 0.32)
    return {
      kind: 'word-scores',
      method: 'POST',
      path: `${w}/word-scores`,
      body: json({
        seedWords: model.seeds,
        whitelistWords: [...model.words, pick(PROTO)],
        embeddingModelId: model.id,
      }),
    };
  if (r < 0.47) {
    const [language, text] = pick([
      ['en', PROSE],
      ['de', 'Die Kinder spielen im Garten'],
      ['fr', "L'homme marche dans la rue"],
      ['ja', '東京都に住んでいます'],
      ['en', PROTO.join(' ')],
    ]);
    return { kind: 'tokenizations', method: 'POST', path: `${w}/tokenizations`, body: json({ language, text }) };
  }
  if (r < 0.55)
    return {
      kind: 'autocomplete',
      method: 'POST',
      path: `${w}/autocomplete-suggestions`,
      body: json({ word: pick(['hap', 'constr', '__pro', 'wat']), embeddingModelId: MODEL }),
    };
  if (r < 0.6)
    return {
      kind: 'availability',
      method: 'POST',
      path: `/api/v1/embedding-models/${MODEL}/word-availabilities`,
      body: json({ words: ['cat', ...PROTO] }),
    };
  if (r < 0.65)
    return {
      kind: 'plagiarism',
      method: 'POST',
      path: `${w}/plagiarism-checks`,
      body: json({ text: `${PROSE} ${PROSE}` }),
    };
  if (r < 0.7) {
    // Idempotency: a few keys reused with the same body (replay) or another body (422).
    const key = `soak-${Math.floor(rand() * 20)}`;
    return {
      kind: 'idempotent',
      method: 'POST',
      path: `${w}/tokenizations`,
      headers: { 'idempotency-key': key },
      body: json({ language: 'en', text: rand() < 0.7 ? 'cat dog' : 'cat dog bird' }),
    };
  }
  // Hostile requests.
  const hostile: Array<() => Req> = [
    () => ({
      kind: 'hostile-dots',
      method: 'POST',
      path: `${w}/tokenizations`,
      body: json({ language: 'en', text: '.'.repeat(100_000) }),
    }),
    () => ({
      kind: 'hostile-cjk',
      method: 'POST',
      path: `${w}/text-scores`,
      body: json({ texts: ['漢字かな'.repeat(10_000)], embeddingModelId: MODEL }),
    }),
    () => ({ kind: 'hostile-json', method: 'POST', path: `${w}/text-scores`, body: '{"texts": [' }),
    () => ({
      kind: 'hostile-utf8',
      method: 'POST',
      path: `${w}/tokenizations`,
      body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
    }),
    () => ({
      kind: 'hostile-long-id',
      method: 'POST',
      path: `${w}/text-scores`,
      body: json({ texts: ['cat'], embeddingModelId: 'm'.repeat(1100) }),
    }),
    () => ({
      kind: 'unknown-model',
      method: 'POST',
      path: `${w}/word-scores`,
      body: json({ seedWords: ['cat'], embeddingModelId: `nope-${Math.floor(rand() * 1e9)}` }),
    }),
    () => ({
      kind: 'unknown-mapper',
      method: 'POST',
      path: `${w}/text-scores`,
      body: json({ texts: ['cat'], embeddingModelId: MODEL, mapperKeys: [`x${Math.floor(rand() * 1e9)}_y`] }),
    }),
    () => ({ kind: 'long-asset', method: 'GET', path: `/assets/${'a'.repeat(1100)}` }),
    () => ({ kind: 'unknown-catalog', method: 'GET', path: `/api/v1/embedding-models/${'z'.repeat(128)}` }),
    () => ({
      kind: 'hostile-html',
      method: 'POST',
      admin: true,
      path: '/api/admin/v1/plagiarism/pages',
      body: json({
        url: `https://soak.example/${Math.floor(rand() * 50)}`,
        html: pick(['<svg/>', '<math/>', '<b>'.repeat(20_000), '<div>'.repeat(50_000)]),
      }),
    }),
    () => ({
      kind: 'proto-json',
      method: 'POST',
      path: `${w}/text-scores`,
      body: `{"texts":["constructor"],"embeddingModelId":"${MODEL}","__proto__":{"x":1},"constructor":1}`,
    }),
  ];
  return pick(hostile)();
}

export interface Tally {
  total: number;
  byStatus: Map<number, number>;
  fiveXX: number;
  nonProblem: number;
  samples: string[];
  /** Kinds of answer sampled already (one sample each). */
  sampled: Set<string>;
  latencies: number[];
  /** wrangler dev's plain-text 503 "Your worker restarted mid-request" (its proxy, not the Worker). */
  restarts: number;
  /** 503 problem+json answers with Retry-After (a load shed: allowed up to a share of the requests). */
  retryable503: number;
  /** Requests with no answer at all (connection reset or closed, timeout). */
  dropped: number;
}

export const newTally = (): Tally => ({
  total: 0,
  byStatus: new Map(),
  fiveXX: 0,
  nonProblem: 0,
  samples: [],
  sampled: new Set(),
  latencies: [],
  restarts: 0,
  retryable503: 0,
  dropped: 0,
});

export async function send(base: string, req: Req, token: string, adminToken: string, tally: Tally): Promise<void> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${req.admin ? adminToken : token}`,
    ...(req.headers ?? {}),
  };
  if (req.body !== undefined) headers['content-type'] = 'application/json';
  const t0 = performance.now();
  let status = 0;
  let contentType = '';
  let retryAfter: string | null = null;
  let text = '';
  try {
    const res = await undiciFetch(`${base}${req.path}`, {
      method: req.method,
      headers,
      body: req.body,
      signal: AbortSignal.timeout(120_000),
      dispatcher: pool,
    });
    status = res.status;
    contentType = res.headers.get('content-type') ?? '';
    retryAfter = res.headers.get('retry-after');
    text = await res.text();
  } catch (err) {
    status = 599; // no answer at all (connection reset, timeout): counted as a 5xx
    tally.dropped++;
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    text = `${String(err)}${cause ? ` (${cause.code ?? ''} ${cause.message ?? ''})` : ''} after ${Math.round(performance.now() - t0)} ms`;
  }
  tally.latencies.push(performance.now() - t0);
  tally.total++;
  tally.byStatus.set(status, (tally.byStatus.get(status) ?? 0) + 1);
  const note = () => {
    // One sample per kind of answer (a problem's detail up to its first digit, else the text).
    let what = text.slice(0, 160);
    try {
      what = String((JSON.parse(text) as { detail?: unknown }).detail ?? what).slice(0, 240);
    } catch {
      // not JSON
    }
    const key = `${status} ${what.replace(/[0-9].*$/s, '')}`;
    if (tally.samples.length < 40 && !tally.sampled.has(key)) {
      tally.sampled.add(key);
      tally.samples.push(`${req.kind} ${req.method} ${req.path.slice(0, 80)} -> ${status} ${contentType} ${what}`);
    }
  };
  if (text.includes('restarted mid-request')) tally.restarts++;
  if (status === 503 && retryAfter !== null && contentType.includes('application/problem+json')) tally.retryable503++;
  if (status >= 500) {
    tally.fiveXX++;
    note();
  }
  if (status >= 400 && status < 599) {
    let ok = contentType.includes('application/problem+json');
    if (ok) {
      try {
        const p = JSON.parse(text) as { code?: unknown; status?: unknown };
        ok = typeof p.code === 'string' && p.status === status;
      } catch {
        ok = false;
      }
    }
    if (!ok) {
      tally.nonProblem++;
      note();
    }
  }
}

/** The metered POST of the bursts (issue 12 defect 6): text-scores of one sentence. */
export function burstRequest(ws: string): Req {
  return {
    kind: 'burst',
    method: 'POST',
    path: `/api/v1/workspaces/${ws}/text-scores`,
    body: JSON.stringify({ texts: [PROSE], embeddingModelId: MODEL }),
  };
}

/** Sums tallies (status counts, 5xx, non-problem errors, samples). */
export function mergeTallies(...tallies: Tally[]): Tally {
  const all = newTally();
  for (const t of tallies) {
    all.total += t.total;
    all.fiveXX += t.fiveXX;
    all.nonProblem += t.nonProblem;
    all.restarts += t.restarts;
    all.retryable503 += t.retryable503;
    all.dropped += t.dropped;
    all.samples.push(...t.samples);
    for (const [s, n] of t.byStatus) all.byStatus.set(s, (all.byStatus.get(s) ?? 0) + n);
  }
  return all;
}
