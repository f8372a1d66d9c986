/**
 * `npm run bench:overload`: admission control and overload (docs/spec/decisions.md "Admission and
 * cost (turn 4)"), against the local server as `npm start` serves it (build/serve.ts: the API
 * Worker and the model hosts of the placement, one workerd) on 127.0.0.1:8811, in its own state
 * directory. Works with or without the admission features and says what it saw: `X-Cost-Units`
 * on priced answers, 413 REQUEST_TOO_EXPENSIVE (estimatedUnits, capUnits), 429 RATE_LIMITED and
 * 503 HOST_BUSY with Retry-After, 403 ERROR_NO_REMAINING_QUOTA before any work.
 *
 *  1. Largest admitted request of each heavy family (bench/overload/families.ts: long texts; many
 *     expanded contrastive dimensions with explain, sub-word fallback and the mappers; a
 *     10,000-word whitelist; find-and-score at limit 1,000 with expanded dimensions; 500-word
 *     matrices; word-translations (with an aligned model); plagiarism checks; tokenizations of
 *     100,000 characters): the size found by growing and bisecting each size axis against the
 *     cap read from a 413 (without X-Cost-Units: against the server's time, <= 0.9 s; see
 *     bench/overload/sizing.ts), its X-Cost-Units and its time alone (median of 3: Server-Timing
 *     total/host/compute, wall). Target: each runs in 0.5-1.0 s (a family still under the cap at
 *     the schema's limits: <= 1.0 s).
 *  2. Mixed traffic, 16 connections, one workspace: a baseline of small requests only (README
 *     word-scores, bench/api.ts's text-scores 10 x 200 words, a sentence's tokenization,
 *     autocomplete, GET /api/health), then 90% small and 10% heavy (the families' largest
 *     admitted requests in turn). Both phases are paced: a request is sent once the units of
 *     those sent before it (each request's X-Cost-Units alone) fit in BENCH_OVERLOAD_RATE_SHARE of
 *     the workspace bucket's rate (WORKSPACE_COST_RATE_UNITS_PER_S_DEFAULT) times the time since
 *     the start, so the heavy requests set the pace of the mixed phase. Targets: small p99 mixed
 *     <= max(2 x baseline p99, baseline p99 + 100 ms); heavy answered 200 >= 90%; 0 connections
 *     closed without an answer; 0 5xx other than 503 with Retry-After; slowest 503/429 <= 1 s;
 *     offered units/s below the bucket's rate.
 *  3. Eight concurrent heavy requests (BENCH_OVERLOAD_HOST_FAMILY, one model host; one workspace
 *     each) while GET /api/health is polled every 50 ms on its own connection. Targets: health
 *     p99 <= 200 ms, every health request answered; each heavy request 200 or refused
 *     (503/429/413) within 1 s; no 200 slower than the host deadline (20 s).
 *  4. Refusal before work: a workspace with a tokens allowance of 0 sends the largest text-scores
 *     body the limits allow (~2 MB: 100 texts, 100 dimensions with expand 50 contrastive,
 *     explain, subwordFallback, the mappers, batchZscore) once to warm up, then up to 200 times (a p99 of 200 answers, not the slowest of 50)
 *     (at most BENCH_OVERLOAD_SECONDS). Targets: every answer 403 ERROR_NO_REMAINING_QUOTA, p99
 *     <= 50 ms, no Server-Timing host, load or compute metric.
 *  5. Throughput of bench/api.ts's text-scores request on this working tree against
 *     BENCH_OVERLOAD_BASE (default HEAD~1, in a git worktree: bench/overload/base.ts), one server
 *     at a time, in rounds of both (the order alternating), each side started, warmed up,
 *     measured and stopped. Target: this tree's req/s >= 0.95 x the base's (the median of the
 *     rounds' ratios: both sides of a round see about the same load from the machine's other work).
 *
 * Options (env): BENCH_OVERLOAD_SECONDS (each phase of 2 and 3, the budget of 4; default 60),
 * BENCH_OVERLOAD_ONLY (sections, e.g. "1,4"; 2 and 3 run 1 first), BENCH_OVERLOAD_FAMILIES
 * (family names, comma separated), BENCH_OVERLOAD_RATE_UNITS_PER_S (the bucket's rate, default
 * the constant below), BENCH_OVERLOAD_RATE_SHARE (default 0.9), BENCH_OVERLOAD_HOST_FAMILY
 * (default text-scores-dims), BENCH_OVERLOAD_BASE, BENCH_OVERLOAD_BASE_DIR (default
 * /tmp/overload-prev), BENCH_OVERLOAD_ROUNDS (5), BENCH_OVERLOAD_ROUND_SECONDS (10),
 * BENCH_OVERLOAD_TP_CONNECTIONS (4). Each section prints a table; the last line is one JSON object.
 */
import { WORKSPACE_COST_RATE_UNITS_PER_S_DEFAULT } from '../worker/admission/rate-bucket';
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Agent, Client, Pool } from 'undici';
import { PLACEMENT_FILE, ROOT } from '../build/paths';
import { LIMITS } from '../core/limits';
import { devSecret, mint, startLocalWorker, stopWranglerDev } from '../test/e2e/support/dev-server';
import { baseDevServer, compareThroughput, prepareBaseTree, type Side } from './overload/base';
import {
  heavyFamilies,
  largestTextScoresBody,
  loadVocab,
  MODEL,
  plagiarismPages,
  smallRequests,
  textScores10x200,
  type FamilyContext,
  type Vocab,
} from './overload/families';
import {
  isRetryable,
  median,
  quantile,
  round,
  send,
  serverMs,
  sleep,
  table,
  unitsOf,
  verdict,
  type Answer,
  type Req,
} from './overload/http';
import {
  alone,
  BAND_MS,
  detectAdmission,
  largestAdmitted,
  type Admission,
  type Largest,
  type Sender,
} from './overload/sizing';

const PORT = 8811;
const BASE_PORT = 8812;
const BASE = `http://127.0.0.1:${PORT}`;
const env = process.env;
const SECONDS = Number(env.BENCH_OVERLOAD_SECONDS ?? 60);
const ONLY = new Set((env.BENCH_OVERLOAD_ONLY ?? '1,2,3,4,5').split(',').map((s) => Number(s.trim())));
const FAMILIES = env.BENCH_OVERLOAD_FAMILIES ? new Set(env.BENCH_OVERLOAD_FAMILIES.split(',')) : null;
const RATE = Number(env.BENCH_OVERLOAD_RATE_UNITS_PER_S ?? WORKSPACE_COST_RATE_UNITS_PER_S_DEFAULT);
const RATE_SHARE = Number(env.BENCH_OVERLOAD_RATE_SHARE ?? 0.9);
const HOST_FAMILY = env.BENCH_OVERLOAD_HOST_FAMILY ?? 'text-scores-dims';
const BASE_REF = env.BENCH_OVERLOAD_BASE ?? 'HEAD~1';
const BASE_DIR = path.resolve(env.BENCH_OVERLOAD_BASE_DIR ?? '/tmp/overload-prev');
const ROUNDS = Number(env.BENCH_OVERLOAD_ROUNDS ?? 5);
const ROUND_SECONDS = Number(env.BENCH_OVERLOAD_ROUND_SECONDS ?? 10);
const TP_CONNECTIONS = Number(env.BENCH_OVERLOAD_TP_CONNECTIONS ?? 4);
const CONNECTIONS = 16;
const HEAVY_SHARE = 0.1;
/** The API Worker's deadline for a model host's answer (worker/env.ts HOST_TIMEOUT_MS default). */
const HOST_DEADLINE_MS = 20_000;
const REFUSAL_MS = 1000;
/** Requests of section 4 (refusal before work). */
const REFUSALS = 200;
const SUB = 'bench-overload';

const log = (s: string) => console.log(`[bench:overload] ${s}`);
const ms = (x: number | null | undefined) =>
  x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(1);
const sizeText = (l: Largest) =>
  Object.entries(l.size)
    .map(([k, v]) => `${k} ${v.toLocaleString('en-US')}`)
    .join(', ');
/** Connections idle at most 1 s are reused (bench/traffic.ts: workerd closes idle ones after 5 s). */
const agent = () => new Agent({ keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });

let workspaceCount = 0;
let adminToken: string | null = null;
/**
 * A fresh workspace with a tokens and a plagiarismChecks allowance of `limit` (monthly and daily)
 * and its token (test/e2e/support/dev-server.ts createWorkspace sets tokens only).
 */
async function workspace(base: string, what: string, limit: number = LIMITS.quotaAmountMax) {
  const ws = `ws_overload_${what}_${Date.now().toString(36)}_${workspaceCount++}`;
  adminToken ??= await mint(devSecret(), { scope: 'admin', sub: SUB }, 7200);
  const res = await fetch(`${base}/api/admin/v1/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      id: ws,
      name: `bench:overload ${what}`,
      quotas: ['tokens', 'plagiarismChecks'].map((usageTypeKey) => ({
        usageTypeKey,
        limitAmount: limit,
        limitAmountDaily: limit,
      })),
    }),
  });
  if (res.status !== 201) throw new Error(`workspace ${ws}: ${res.status} ${(await res.text()).slice(0, 300)}`);
  return { ws, token: await mint(devSecret(), { workspaceId: ws, sub: SUB }, 7200) };
}

// ---------------------------------------------------------------------------------------------
// Setup: the English mapper keys, an aligned model for translations, the plagiarism corpus.

async function getJson(url: string, token: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: res.ok ? await res.json() : await res.text() };
}

async function englishMapperKeys(token: string): Promise<{ keys: string[]; source: string }> {
  const own = await getJson(`${BASE}/api/v1/embedding-models/${MODEL}/mappers?size=100`, token);
  const fromList = (data: any[]) =>
    data.filter((m) => m.multilingual !== true && (m.language ?? 'en') === 'en').map((m) => String(m.key));
  if (own.status === 200 && Array.isArray(own.body?.data))
    return { keys: fromList(own.body.data).slice(0, 4), source: `GET /api/v1/embedding-models/${MODEL}/mappers` };
  const all = await getJson(`${BASE}/api/v1/mappers?language=en&size=100`, token);
  if (all.status !== 200) throw new Error(`mapper catalog: ${all.status} ${String(all.body).slice(0, 200)}`);
  return { keys: fromList(all.body.data).slice(0, 4), source: 'GET /api/v1/mappers?language=en' };
}

/** An aligned model the default English model translates into (first one that answers a 1-word translation). */
async function alignedModel(token: string): Promise<string | undefined> {
  const catalog = await getJson(`${BASE}/api/v1/embedding-models?size=100`, token);
  const ids: string[] = (catalog.body?.data ?? [])
    .filter((m: any) => m.language !== 'en')
    .map((m: any) => String(m.id))
    .sort((a: string, b: string) => Number(b.includes('distilled')) - Number(a.includes('distilled')));
  const d = agent();
  try {
    for (const id of ids) {
      const a = await send(
        d,
        BASE,
        {
          method: 'POST',
          path: `/api/v1/embedding-models/${MODEL}/word-translations`,
          body: JSON.stringify({ words: ['house'], limit: 1, targetModelId: id }),
        },
        token,
      );
      if (a.status === 200) return id;
    }
  } finally {
    await d.close();
  }
  return undefined;
}

async function putPlagiarismPages(admin: string, vocab: Vocab): Promise<void> {
  for (const page of plagiarismPages(vocab)) {
    const res = await fetch(`${BASE}/api/admin/v1/plagiarism/pages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify(page),
    });
    if (res.status !== 201 && res.status !== 200)
      throw new Error(`plagiarism page: ${res.status} ${(await res.text()).slice(0, 200)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Section 1.

async function section1(
  ctx: FamilyContext,
  token: string,
): Promise<{ admission: Admission; largest: Largest[]; json: unknown }> {
  const d = agent();
  const s: Sender = { dispatcher: d, base: BASE, token };
  try {
    const families = heavyFamilies(ctx).filter((f) => !FAMILIES || FAMILIES.has(f.name));
    const admission = await detectAdmission(s, smallRequests(ctx.ws, ctx.vocab)[0].req);
    log(`admission: ${admission.note}`);
    if (!ctx.alignedModel) log('word-translations: skipped (no aligned model is served: it needs the Debian data)');
    const largest: Largest[] = [];
    for (const f of families) {
      const t0 = performance.now();
      const l = await largestAdmitted(s, f, admission);
      if (l.req) l.alone = await alone(s, l.req);
      largest.push(l);
      log(
        `${f.name}: ${l.error ? `ERROR ${l.error}` : `${sizeText(l)} (limited by ${l.limitedBy}${l.axis ? ` on ${l.axis}` : ''}), ${l.probes.length} probes`} in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
    const timeOf = (l: Largest) => l.alone?.totalMs ?? l.alone?.wallMs ?? NaN;
    const inBand = (l: Largest): boolean | null => {
      if (!l.alone) return null;
      const t = timeOf(l);
      return t <= BAND_MS[1] && (l.limitedBy === 'schema' || t >= BAND_MS[0]);
    };
    if (admission.mode === 'cap')
      admission.note +=
        admission.capUnits === undefined
          ? '; no 413 REQUEST_TOO_EXPENSIVE seen (no cap enforced yet?)'
          : `; cap ${admission.capUnits} units (capUnits of a 413)`;
    const title =
      admission.mode === 'time'
        ? 'no X-Cost-Units: sizes bisected on the server time <= 0.9 s'
        : admission.capUnits === undefined
          ? 'X-Cost-Units but no 413 seen'
          : `cap ${admission.capUnits} units`;
    console.log(`\n1. Largest admitted request per family (${title}); alone, median of 3\n`);
    console.log(
      table(
        [
          'family',
          'size',
          'limited by',
          'X-Cost-Units',
          'of cap',
          'refused at',
          'total ms',
          'host ms',
          'compute ms',
          'wall ms',
          '0.5-1.0 s',
        ],
        largest.map((l) => [
          l.family,
          l.error ? 'error (below)' : sizeText(l),
          l.limitedBy + (l.axis ? ` (${l.axis})` : ''),
          l.alone?.units ?? l.units,
          admission.capUnits && (l.alone?.units ?? l.units) !== undefined
            ? `${((100 * (l.alone?.units ?? l.units)!) / admission.capUnits).toFixed(0)}%`
            : null,
          l.refusedUnits,
          ms(l.alone?.totalMs),
          ms(l.alone?.hostMs),
          ms(l.alone?.computeMs),
          ms(l.alone?.wallMs),
          verdict(inBand(l)),
        ]),
      ),
    );
    for (const l of largest) console.log(`   ${l.family}: ${l.what}${l.error ? `\n     error: ${l.error}` : ''}`);
    const json = {
      admission,
      families: Object.fromEntries(
        largest.map((l) => [
          l.family,
          {
            size: l.size,
            limitedBy: l.limitedBy,
            axis: l.axis ?? null,
            units: l.alone?.units ?? l.units ?? null,
            refusedUnits: l.refusedUnits ?? null,
            capUnits: l.capUnits ?? null,
            probes: l.probes.length,
            statuses: l.alone?.statuses ?? null,
            totalMs: round(l.alone?.totalMs ?? undefined),
            hostMs: round(l.alone?.hostMs ?? undefined),
            computeMs: round(l.alone?.computeMs ?? undefined),
            wallMs: round(l.alone?.wallMs),
            inBand: inBand(l),
            error: l.error ?? null,
          },
        ]),
      ),
      allInBand: largest.every((l) => inBand(l) === true),
    };
    return { admission, largest, json };
  } finally {
    await d.close();
  }
}

// ---------------------------------------------------------------------------------------------
// Section 2.

interface Planned {
  heavy: boolean;
  kind: string;
  req: Req;
  expectedUnits: number;
}

interface PhaseResult {
  seconds: number;
  small: Answer[];
  smallKinds: Map<string, number[]>;
  heavy: Map<string, Answer[]>;
  all: Answer[];
  socketErrors: string[];
  other5xx: string[];
  unitsSum: number;
  unitsFromHeader: number;
}

/**
 * `connections` loops for `seconds`, each sending `plan()`'s next request as soon as its last one
 * was answered and the cost budget allows it: the requests sent so far (their units measured
 * alone) stay within `unitsPerS` x the time since the start, so the offered cost stays below the
 * workspace bucket's rate whatever the mix. A 429/503 with Retry-After makes its loop wait that
 * long (at most 2 s).
 */
async function trafficPhase(
  token: string,
  seconds: number,
  unitsPerS: number,
  plan: () => Planned,
): Promise<PhaseResult> {
  const pool = new Pool(BASE, { connections: CONNECTIONS, keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
  const r: PhaseResult = {
    seconds: 0,
    small: [],
    smallKinds: new Map(),
    heavy: new Map(),
    all: [],
    socketErrors: [],
    other5xx: [],
    unitsSum: 0,
    unitsFromHeader: 0,
  };
  let reserved = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < until) {
        const p = plan();
        // Paced: reserve this request's units, then wait until the budget has grown to them.
        reserved += p.expectedUnits;
        const at = t0 + (reserved / unitsPerS) * 1000;
        if (at > performance.now()) await sleep(at - performance.now());
        if (performance.now() >= until) break;
        const a = await send(pool, BASE, p.req, p.req.path === '/api/health' ? undefined : token, 60_000);
        r.all.push(a);
        // Offered cost: the answer's X-Cost-Units, else the request's units measured alone.
        if (a.status !== 0) r.unitsSum += a.units ?? p.expectedUnits;
        if (a.units !== undefined) r.unitsFromHeader++;
        if (p.heavy) r.heavy.set(p.kind, [...(r.heavy.get(p.kind) ?? []), a]);
        else {
          r.small.push(a);
          const k = r.smallKinds.get(p.kind) ?? [];
          k.push(a.ms);
          r.smallKinds.set(p.kind, k);
        }
        if (a.status === 0) r.socketErrors.push(`${p.kind}: ${a.error} after ${a.ms.toFixed(0)} ms`);
        else if (a.status >= 500 && !(a.status === 503 && a.retryAfter !== undefined))
          r.other5xx.push(`${p.kind}: ${a.status} ${a.code ?? ''} ${String(a.problem?.detail ?? '').slice(0, 120)}`);
        if (isRetryable(a)) await sleep(Math.min(2000, (a.retryAfter ?? 0) * 1000));
      }
    }),
  );
  r.seconds = (performance.now() - t0) / 1000;
  await pool.close();
  return r;
}

function phaseSummary(r: PhaseResult) {
  const smallMs = r.small.map((a) => a.ms);
  const heavy = [...r.heavy.values()].flat();
  const refusals = r.all.filter((a) => a.status === 429 || a.status === 503);
  const statuses: Record<string, number> = {};
  for (const a of r.all) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  return {
    seconds: round(r.seconds),
    requests: r.all.length,
    statuses,
    smallCount: r.small.length,
    smallOk: r.small.filter((a) => a.status === 200).length,
    smallP50Ms: round(quantile(smallMs, 0.5)),
    smallP99Ms: round(quantile(smallMs, 0.99)),
    smallMaxMs: round(Math.max(...smallMs)),
    smallByKind: Object.fromEntries(
      [...r.smallKinds].map(([k, xs]) => [
        k,
        { count: xs.length, p50Ms: round(quantile(xs, 0.5)), p99Ms: round(quantile(xs, 0.99)) },
      ]),
    ),
    heavyCount: heavy.length,
    heavyOk: heavy.filter((a) => a.status === 200).length,
    heavyShareOfRequests: round(heavy.length / Math.max(1, r.all.length), 3),
    heavyOkShare: heavy.length ? round(heavy.filter((a) => a.status === 200).length / heavy.length, 3) : null,
    heavyByFamily: Object.fromEntries(
      [...r.heavy].map(([k, xs]) => [
        k,
        {
          count: xs.length,
          ok: xs.filter((a) => a.status === 200).length,
          p50Ms: round(median(xs.map((a) => a.ms))),
          maxMs: round(Math.max(...xs.map((a) => a.ms))),
          statuses: [...new Set(xs.map((a) => `${a.status}${a.code ? ` ${a.code}` : ''}`))],
        },
      ]),
    ),
    socketErrors: r.socketErrors.length,
    socketErrorSamples: r.socketErrors.slice(0, 5),
    other5xx: r.other5xx.length,
    other5xxSamples: r.other5xx.slice(0, 5),
    refusals: refusals.length,
    slowestRefusalMs: refusals.length ? round(Math.max(...refusals.map((a) => a.ms))) : null,
    unitsPerS: round(r.unitsSum / r.seconds),
    unitsFromHeader: r.unitsFromHeader > 0,
  };
}

async function section2(ctx: FamilyContext, largest: Largest[]) {
  const { ws, token } = await workspace(BASE, 'mixed');
  const d = agent();
  // Each small request's units alone (median of 5): X-Cost-Units, else its server time.
  const smalls: Array<{ kind: string; req: Req; units: number }> = [];
  for (const s of smallRequests(ws, ctx.vocab)) {
    const answers: Answer[] = [];
    for (let i = 0; i < 5; i++)
      answers.push(await send(d, BASE, s.req, s.req.path === '/api/health' ? undefined : token));
    smalls.push({ ...s, units: median(answers.map(unitsOf)) });
  }
  await d.close();
  const families = heavyFamilies({ ...ctx, ws });
  const heavies = largest
    .filter((l) => l.req && l.alone?.statuses.includes(200))
    .map((l) => ({
      kind: l.family,
      req: families.find((f) => f.name === l.family)!.build(l.size),
      units: l.alone?.units ?? l.units ?? l.alone?.totalMs ?? l.alone?.wallMs ?? 1000,
    }));
  const budgetRate = RATE * RATE_SHARE;
  let issued = 0;
  let heavyIssued = 0;
  /** 1 request in 10 heavy (the families in turn) with `withHeavy`, the small ones in turn. */
  const plan = (withHeavy: boolean) => (): Planned => {
    issued++;
    if (withHeavy && heavies.length && heavyIssued < HEAVY_SHARE * issued) {
      const h = heavies[heavyIssued++ % heavies.length];
      return { heavy: true, kind: h.kind, req: h.req, expectedUnits: h.units };
    }
    const s = smalls[issued % smalls.length];
    return { heavy: false, kind: s.kind, req: s.req, expectedUnits: s.units };
  };
  log(`small requests alone: ${smalls.map((s) => `${s.kind} ${s.units.toFixed(1)}`).join(', ')} units`);
  log(
    `mixed traffic: baseline (small requests only), ${SECONDS} s at ${CONNECTIONS} connections, paced below ${Math.round(budgetRate)} units/s`,
  );
  const baseline = phaseSummary(await trafficPhase(token, SECONDS, budgetRate, plan(false)));
  issued = 0;
  log(
    `mixed traffic: 90% small + 10% heavy (${heavies.map((h) => `${h.kind} ~${Math.round(h.units)} units`).join(', ')}), paced below ${Math.round(budgetRate)} units/s`,
  );
  const mixed = phaseSummary(await trafficPhase(token, SECONDS, budgetRate, plan(true)));
  const b99 = baseline.smallP99Ms ?? NaN;
  const p99Target = Math.max(2 * b99, b99 + 100);
  const targets = {
    smallP99: (mixed.smallP99Ms ?? Infinity) <= p99Target,
    heavyOk: mixed.heavyOkShare === null ? null : mixed.heavyOkShare >= 0.9,
    socketErrors: baseline.socketErrors + mixed.socketErrors === 0,
    other5xx: baseline.other5xx + mixed.other5xx === 0,
    slowestRefusal: Math.max(baseline.slowestRefusalMs ?? 0, mixed.slowestRefusalMs ?? 0) <= REFUSAL_MS,
    offeredRate: (mixed.unitsPerS ?? Infinity) < RATE,
  };
  console.log(`\n2. Mixed traffic, ${CONNECTIONS} connections, ${SECONDS} s per phase\n`);
  console.log(
    table(
      [
        'phase',
        'requests',
        'small p50',
        'small p99',
        'small max',
        'heavy',
        'heavy 200',
        'socket err',
        'other 5xx',
        '503/429',
        'slowest refusal',
        'units/s',
      ],
      [baseline, mixed].map((p, i) => [
        i ? 'mixed' : 'baseline',
        p.requests,
        p.smallP50Ms,
        p.smallP99Ms,
        p.smallMaxMs,
        p.heavyCount,
        p.heavyOkShare === null ? '-' : `${(p.heavyOkShare * 100).toFixed(0)}%`,
        p.socketErrors,
        p.other5xx,
        p.refusals,
        p.slowestRefusalMs,
        `${p.unitsPerS}${p.unitsFromHeader ? '' : ' (time proxy)'}`,
      ]),
    ),
  );
  console.log(
    '\n' +
      table(
        ['small request', 'baseline p50', 'baseline p99', 'mixed p50', 'mixed p99'],
        smalls.map((s) => [
          s.kind,
          baseline.smallByKind[s.kind]?.p50Ms,
          baseline.smallByKind[s.kind]?.p99Ms,
          mixed.smallByKind[s.kind]?.p50Ms,
          mixed.smallByKind[s.kind]?.p99Ms,
        ]),
      ),
  );
  console.log(
    '\n' +
      table(
        ['heavy family (mixed)', 'sent', '200', 'p50 ms', 'max ms', 'answers'],
        Object.entries(mixed.heavyByFamily).map(([k, h]) => [
          k,
          h.count,
          h.ok,
          h.p50Ms,
          h.maxMs,
          h.statuses.join(', '),
        ]),
      ),
  );
  for (const s of [...baseline.socketErrorSamples, ...mixed.socketErrorSamples]) console.log(`   no answer: ${s}`);
  for (const s of [...baseline.other5xxSamples, ...mixed.other5xxSamples]) console.log(`   5xx: ${s}`);
  console.log(
    `\n   small p99 mixed ${ms(mixed.smallP99Ms)} ms vs max(2 x ${ms(b99)}, ${ms(b99)} + 100) = ${ms(p99Target)} ms: ${verdict(targets.smallP99)}` +
      `\n   heavy answered 200: ${mixed.heavyOk}/${mixed.heavyCount} (>= 90%): ${verdict(targets.heavyOk)}` +
      `\n   connections closed without an answer: ${baseline.socketErrors + mixed.socketErrors} (0): ${verdict(targets.socketErrors)}` +
      `\n   5xx other than 503 with Retry-After: ${baseline.other5xx + mixed.other5xx} (0): ${verdict(targets.other5xx)}` +
      `\n   slowest 503/429: ${ms(Math.max(baseline.slowestRefusalMs ?? 0, mixed.slowestRefusalMs ?? 0))} ms (<= ${REFUSAL_MS} ms): ${verdict(targets.slowestRefusal)}` +
      `\n   offered ${mixed.unitsPerS} units/s${mixed.unitsFromHeader ? '' : ' (no X-Cost-Units: each request counted at its server ms alone)'} vs the bucket's ${RATE} units/s (paced to ${Math.round(budgetRate)}): ${verdict(targets.offeredRate)}`,
  );
  return {
    baseline,
    mixed,
    smallP99TargetMs: round(p99Target),
    rateUnitsPerS: RATE,
    pacedUnitsPerS: budgetRate,
    targets,
  };
}

// ---------------------------------------------------------------------------------------------
// Section 3.

async function section3(ctx: FamilyContext, largest: Largest[]) {
  const l = largest.find((x) => x.family === HOST_FAMILY && x.req);
  if (!l) throw new Error(`no largest admitted request of ${HOST_FAMILY} (section 1)`);
  const clients = await Promise.all(Array.from({ length: 8 }, () => workspace(BASE, 'heavy8')));
  const reqs = clients.map((c) =>
    heavyFamilies({ ...ctx, ws: c.ws })
      .find((f) => f.name === HOST_FAMILY)!
      .build(l.size),
  );
  const pool = new Pool(BASE, { connections: 8, keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
  const healthClient = new Client(BASE, { keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
  // The model's host (build/generated/placement.json): every request of the family goes there.
  let host: string | null = null;
  try {
    host = (JSON.parse(fs.readFileSync(PLACEMENT_FILE, 'utf8')) as { models: Record<string, string> }).models[MODEL];
  } catch {
    // no placement file: the one-Worker deployment
  }
  const heavy: Answer[] = [];
  const health: Answer[] = [];
  const t0 = performance.now();
  const until = t0 + SECONDS * 1000;
  log(
    `8 concurrent ${HOST_FAMILY} (${sizeText(l)}; model host ${host ?? 'none'}) for ${SECONDS} s, GET /api/health every 50 ms`,
  );
  await Promise.all([
    ...clients.map(async (c, i) => {
      while (performance.now() < until) {
        const a = await send(pool, BASE, reqs[i], c.token, 120_000);
        heavy.push(a);
        if (isRetryable(a)) await sleep(Math.min(until - performance.now(), (a.retryAfter ?? 0) * 1000));
      }
    }),
    (async () => {
      // One at a time, each started 50 ms after the last one (or as soon as a slower one answered).
      while (performance.now() < until) {
        const a = await send(healthClient, BASE, { method: 'GET', path: '/api/health' }, undefined, 10_000);
        health.push(a);
        await sleep(Math.max(0, 50 - a.ms));
      }
    })(),
  ]);
  await Promise.all([pool.close(), healthClient.close()]);
  const hMs = health.map((a) => a.ms);
  const ok = heavy.filter((a) => a.status === 200);
  const refused = heavy.filter((a) => [413, 429, 503].includes(a.status));
  const other = heavy.filter((a) => a.status !== 200 && ![413, 429, 503].includes(a.status));
  const statuses: Record<string, number> = {};
  for (const a of heavy) {
    const k = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    statuses[k] = (statuses[k] ?? 0) + 1;
  }
  const out = {
    family: HOST_FAMILY,
    host,
    size: l.size,
    health: {
      count: health.length,
      unanswered: health.filter((a) => a.status !== 200).length,
      p50Ms: round(quantile(hMs, 0.5)),
      p99Ms: round(quantile(hMs, 0.99)),
      maxMs: round(Math.max(...hMs)),
    },
    heavy: {
      count: heavy.length,
      statuses,
      ok: ok.length,
      okP50Ms: round(median(ok.map((a) => a.ms))),
      okMaxMs: ok.length ? round(Math.max(...ok.map((a) => a.ms))) : null,
      okOverDeadline: ok.filter((a) => a.ms > HOST_DEADLINE_MS).length,
      refused: refused.length,
      slowestRefusalMs: refused.length ? round(Math.max(...refused.map((a) => a.ms))) : null,
      refusalsOver1s: refused.filter((a) => a.ms > REFUSAL_MS).length,
      other: other.length,
      otherSamples: other.slice(0, 5).map((a) => `${a.status} ${a.code ?? a.error ?? ''} after ${a.ms.toFixed(0)} ms`),
    },
    targets: {} as Record<string, boolean>,
  };
  out.targets = {
    healthP99: (out.health.p99Ms ?? Infinity) <= 200,
    healthAllAnswered: out.health.unanswered === 0,
    heavyAnsweredOrRefusedFast: out.heavy.other === 0 && out.heavy.refusalsOver1s === 0,
    noOkOverDeadline: out.heavy.okOverDeadline === 0,
  };
  console.log(`\n3. Eight concurrent ${HOST_FAMILY} (${sizeText(l)}), GET /api/health every 50 ms, ${SECONDS} s\n`);
  console.log(
    table(
      ['', 'count', 'p50 ms', 'p99 ms', 'max ms', 'answers'],
      [
        [
          'health',
          out.health.count,
          out.health.p50Ms,
          out.health.p99Ms,
          out.health.maxMs,
          `${out.health.unanswered} not 200`,
        ],
        [
          'heavy',
          out.heavy.count,
          out.heavy.okP50Ms,
          '-',
          out.heavy.okMaxMs,
          Object.entries(statuses)
            .map(([k, n]) => `${n} x ${k}`)
            .join(', '),
        ],
      ],
    ),
  );
  for (const s of out.heavy.otherSamples) console.log(`   other: ${s}`);
  console.log(
    `\n   health p99 ${ms(out.health.p99Ms)} ms (<= 200): ${verdict(out.targets.healthP99)}; every health request answered: ${verdict(out.targets.healthAllAnswered)}` +
      `\n   heavy: ${ok.length} x 200, ${refused.length} refused (slowest ${ms(out.heavy.slowestRefusalMs)} ms, ${out.heavy.refusalsOver1s} over 1 s), ${other.length} other: ${verdict(out.targets.heavyAnsweredOrRefusedFast)}` +
      `\n   200 answers slower than the host deadline (${HOST_DEADLINE_MS / 1000} s): ${out.heavy.okOverDeadline} (slowest ${ms(out.heavy.okMaxMs)} ms): ${verdict(out.targets.noOkOverDeadline)}`,
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Section 4.

async function section4(ctx: FamilyContext) {
  const { ws, token } = await workspace(BASE, 'empty', 0);
  const built = largestTextScoresBody(ws, ctx.vocab, ctx.mapperKeys);
  // Encoded once: the client's own 2 MB UTF-8 encoding on every send is not the server's latency.
  const req = { ...built, body: Buffer.from(built.body as string, 'utf8') };
  const bytes = req.body.byteLength;
  const d = agent();
  const answers: Answer[] = [];
  log(
    `refusal before work: ${(bytes / 1e6).toFixed(2)} MB text-scores body, allowance 0, up to ${REFUSALS} requests / ${SECONDS} s`,
  );
  let first: Answer;
  try {
    // The first request warms the route and the workspace's meter up (reported apart).
    first = await send(d, BASE, req, token, 180_000);
    const t0 = performance.now();
    while (answers.length < REFUSALS && (answers.length === 0 || performance.now() - t0 < SECONDS * 1000))
      answers.push(await send(d, BASE, req, token, 180_000));
  } finally {
    await d.close();
  }
  const wall = answers.map((a) => a.ms);
  const workMetrics = ['host', 'load', 'compute'];
  const withWork = answers.filter((a) => workMetrics.some((m) => m in a.timing));
  const statuses: Record<string, number> = {};
  for (const a of answers) {
    const k = `${a.status}${a.code ? ` ${a.code}` : ''}`;
    statuses[k] = (statuses[k] ?? 0) + 1;
  }
  const out = {
    bodyBytes: bytes,
    first: { status: first.status, code: first.code ?? null, ms: round(first.ms) },
    requests: answers.length,
    statuses,
    p50Ms: round(quantile(wall, 0.5)),
    p99Ms: round(quantile(wall, 0.99)),
    maxMs: round(Math.max(...wall)),
    serverTotalP50Ms: round(median(answers.map(serverMs))),
    serverTotalP99Ms: round(quantile(answers.map(serverMs), 0.99)),
    withWorkMetrics: withWork.length,
    metricsSeen: [...new Set(answers.flatMap((a) => Object.keys(a.timing)))],
    targets: {} as Record<string, boolean>,
  };
  out.targets = {
    refused403: answers.every((a) => a.status === 403 && a.code === 'ERROR_NO_REMAINING_QUOTA'),
    p99: (out.p99Ms ?? Infinity) <= 50,
    noWorkMetrics: withWork.length === 0,
  };
  console.log(`\n4. Refusal before work (allowance 0, ${(bytes / 1e6).toFixed(2)} MB text-scores body)\n`);
  console.log(
    table(
      [
        'requests',
        'answers',
        'p50 ms',
        'p99 ms',
        'max ms',
        'server total p50',
        'server total p99',
        'Server-Timing metrics',
        'with host/load/compute',
      ],
      [
        [
          out.requests,
          Object.entries(statuses)
            .map(([k, n]) => `${n} x ${k}`)
            .join(', '),
          out.p50Ms,
          out.p99Ms,
          out.maxMs,
          out.serverTotalP50Ms,
          out.serverTotalP99Ms,
          out.metricsSeen.join(' '),
          out.withWorkMetrics,
        ],
      ],
    ),
  );
  console.log(
    `\n   first request (not counted): ${first.status} ${first.code ?? ''} in ${first.ms.toFixed(1)} ms` +
      `\n   403 ERROR_NO_REMAINING_QUOTA every time: ${verdict(out.targets.refused403)}; p99 ${ms(out.p99Ms)} ms (<= 50): ${verdict(out.targets.p99)}; no host/load/compute metric: ${verdict(out.targets.noWorkMetrics)}`,
  );
  return out;
}

// ---------------------------------------------------------------------------------------------
// Section 5.

async function section5(vocab: Vocab) {
  const tree = prepareBaseTree(BASE_REF, BASE_DIR);
  const dev = await baseDevServer(tree);
  const makeSide = (
    name: string,
    port: number,
    start: () => Promise<ChildProcess>,
    stop: (c: ChildProcess) => Promise<void>,
  ): Side => {
    const base = `http://127.0.0.1:${port}`;
    return {
      name,
      base,
      start,
      stop,
      workspaces: (n) => Promise.all(Array.from({ length: n }, () => workspace(base, 'tp'))),
    };
  };
  const current = makeSide(
    'current',
    PORT,
    // A state directory of its own, as the base's: sections 1-4 left theirs full of workspaces and usage.
    () =>
      startLocalWorker(PORT, path.join(os.tmpdir(), 'embedding-edge-bench-overload-current'), ['--log-level', 'warn']),
    stopWranglerDev,
  );
  const base = makeSide(
    'base',
    BASE_PORT,
    () =>
      dev.startLocalWorker(BASE_PORT, path.join(os.tmpdir(), 'embedding-edge-bench-overload-base'), [
        '--log-level',
        'warn',
      ]),
    dev.stopWranglerDev,
  );
  log(
    `throughput: bench/api.ts's text-scores (10 x 200 words) at ${TP_CONNECTIONS} connections, ${ROUNDS} rounds of ${ROUND_SECONDS} s, this tree vs ${tree.subject}`,
  );
  const rounds = await compareThroughput([current, base], (ws) => textScores10x200(ws, vocab), {
    rounds: ROUNDS,
    seconds: ROUND_SECONDS,
    connections: TP_CONNECTIONS,
  });
  const of = (side: string) => rounds.filter((r) => r.side === side);
  const cur = median(of('current').map((r) => r.perSecond));
  const prev = median(of('base').map((r) => r.perSecond));
  // Both sides of a round ran within a minute of each other: their ratio sees the same machine.
  const ratios = of('current').map(
    (r) => r.perSecond / (of('base').find((b) => b.round === r.round)?.perSecond ?? NaN),
  );
  const ratio = median(ratios);
  console.log(
    `\n5. Throughput of bench/api.ts's text-scores (10 x 200 words), ${TP_CONNECTIONS} connections, ${ROUND_SECONDS} s rounds (req/s)\n`,
  );
  console.log(
    table(
      ['', ...Array.from({ length: ROUNDS }, (_, i) => `round ${i + 1}`), 'median', 'non-200'],
      [
        [
          'this tree',
          ...of('current').map((r) => r.perSecond.toFixed(1)),
          cur.toFixed(1),
          of('current').reduce((n, r) => n + r.other, 0),
        ],
        [
          `base ${tree.subject.slice(0, 30)}`,
          ...of('base').map((r) => r.perSecond.toFixed(1)),
          prev.toFixed(1),
          of('base').reduce((n, r) => n + r.other, 0),
        ],
        ['ratio', ...ratios.map((x) => x.toFixed(3)), ratio.toFixed(3), ''],
        [
          'load (1 min)',
          ...of('current').map((r) =>
            Math.max(r.load1, of('base').find((b) => b.round === r.round)?.load1 ?? 0).toFixed(1),
          ),
          '',
          '',
        ],
      ],
    ),
  );
  console.log(
    `\n   this tree / base, median of the rounds' ratios ${ratio.toFixed(3)} (>= 0.95): ${verdict(ratio >= 0.95)}; ratio of the medians ${(cur / prev).toFixed(3)}`,
  );
  return {
    base: { ref: tree.ref, commit: tree.commit, subject: tree.subject },
    connections: TP_CONNECTIONS,
    roundSeconds: ROUND_SECONDS,
    rounds: rounds.map((r) => ({
      ...r,
      perSecond: round(r.perSecond),
      p50Ms: round(r.p50Ms, 2),
      startMs: Math.round(r.startMs),
      load1: round(r.load1, 2),
    })),
    currentReqPerS: round(cur),
    baseReqPerS: round(prev),
    roundRatios: ratios.map((x) => round(x, 3)),
    ratio: round(ratio, 3),
    ratioOfMedians: round(cur / prev, 3),
    targets: { within5Percent: ratio >= 0.95 },
  };
}

// ---------------------------------------------------------------------------------------------

function gitInfo() {
  const git = (args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  try {
    const changed = git(['status', '--porcelain', '--', 'worker', 'core'])
      .split('\n')
      .filter((l) => l.trim()).length;
    return { commit: git(['rev-parse', '--short', 'HEAD']), uncommittedWorkerCoreFiles: changed };
  } catch {
    return { commit: null, uncommittedWorkerCoreFiles: null };
  }
}

async function main(): Promise<void> {
  const out: Record<string, unknown> = {
    bench: 'overload',
    ...gitInfo(),
    seconds: SECONDS,
    workspaceRateUnitsPerS: RATE,
  };
  let child: ChildProcess | null = null;
  const stop = async () => {
    const c = child;
    child = null;
    await stopWranglerDev(c);
  };
  process.on('SIGINT', () => {
    void stop().finally(() => process.exit(130));
  });
  const section = async <T>(n: number, name: string, run: () => Promise<T>): Promise<T | null> => {
    try {
      const r = await run();
      out[name] = r;
      return r;
    } catch (err) {
      console.error(`[bench:overload] section ${n} (${name}) failed:`, err);
      out[name] = { error: String((err as Error).message ?? err).slice(0, 500) };
      return null;
    }
  };
  try {
    const vocab = loadVocab();
    if ([1, 2, 3, 4].some((n) => ONLY.has(n))) {
      child = await startLocalWorker(PORT, path.join(os.tmpdir(), 'embedding-edge-bench-overload'), [
        '--log-level',
        'warn',
      ]);
      const admin = await mint(devSecret(), { scope: 'admin', sub: SUB }, 7200);
      const sizing = await workspace(BASE, 'sizing');
      const mappers = await englishMapperKeys(sizing.token);
      log(`mappers (${mappers.source}): ${mappers.keys.join(', ')}`);
      const ctx: FamilyContext = {
        ws: sizing.ws,
        vocab,
        mapperKeys: mappers.keys,
        alignedModel: await alignedModel(sizing.token),
      };
      out.mapperKeys = mappers.keys;
      out.alignedModel = ctx.alignedModel ?? null;
      await putPlagiarismPages(admin, vocab);
      let largest: Largest[] = [];
      if ([1, 2, 3].some((n) => ONLY.has(n))) {
        const s1 = await section(1, 'largestAdmitted', async () => {
          const r = await section1(ctx, sizing.token);
          largest = r.largest;
          return r.json;
        });
        if (!s1) largest = [];
      }
      if (ONLY.has(2)) await section(2, 'mixedTraffic', () => section2(ctx, largest));
      if (ONLY.has(3)) await section(3, 'concurrentHeavy', () => section3(ctx, largest));
      if (ONLY.has(4)) await section(4, 'refusalBeforeWork', () => section4(ctx));
      await stop();
    }
    // One server at a time: the sections' server is stopped before the throughput rounds.
    if (ONLY.has(5)) await section(5, 'throughputVsBase', () => section5(vocab));
  } finally {
    await stop();
  }
  // Every target of the run, by section.
  const targets: Record<string, boolean | null> = {};
  const s1 = out.largestAdmitted as { allInBand?: boolean } | undefined;
  if (s1?.allInBand !== undefined) targets['1.allInBand'] = s1.allInBand;
  const sections: Array<[number, string]> = [
    [2, 'mixedTraffic'],
    [3, 'concurrentHeavy'],
    [4, 'refusalBeforeWork'],
    [5, 'throughputVsBase'],
  ];
  for (const [n, key] of sections) {
    const t = (out[key] as { targets?: Record<string, boolean | null> } | undefined)?.targets;
    for (const [name, met] of Object.entries(t ?? {})) targets[`${n}.${name}`] = met;
  }
  out.targets = targets;
  const missed = Object.entries(targets).filter(([, met]) => met === false);
  console.log(
    `\ntargets: ${Object.values(targets).filter((m) => m === true).length} met, ${missed.length} not met${missed.length ? ` (${missed.map(([k]) => k).join(', ')})` : ''}`,
  );
  console.log(JSON.stringify(out));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
