/**
 * `npm run bench:soak` (issue 12): the local Worker (build/serve.ts as `npm start` runs it: the
 * bundled Worker in Miniflare's workerd, local D1/R2/KV, the default model) under mixed traffic for a long time, hostile requests included.
 *
 *   npm run bench:soak -- --minutes 10 --connections 32     (defaults)
 *
 * Starts the service like `npm start` in a fresh state directory on 127.0.0.1:8795 (run it under
 * `flock /tmp/wrangler-dev.lock`). `connections` loops send requests back to back, drawn from a
 * fixed-seed mix: text-scores, word-scores, tokenizations in every language, autocomplete,
 * vocabulary lookups, plagiarism checks, Idempotency-Key retries and reuses, and hostile requests
 * ("." x 100,000, 40,000 CJK characters, prototype property names, '<div>' x 50,000 HTML,
 * invalid JSON and UTF-8, ids of 1,100 characters, unknown model ids and mapper keys, long asset
 * paths). Every 30 s a burst of 200 concurrent metered POSTs is sent on top (issue 12 defect 6).
 *
 * Scoring requests (text-scores, word-scores) switch between the en/de/fr/ja models built (issue
 * 31: `--models all`, the default; or a comma list of ids), and `--oversize` (default 0.02) of the
 * requests send a body over the limit (413).
 *
 * Checked (the run exits 1 when one fails): no 5xx but 503 problem+json with Retry-After, and those
 * at most 1% of the requests; no request without an answer (dropped connection, timeout); every
 * error answer is problem+json; the diagnostics route's totalBytes at or below its budgetBytes in
 * every sample (every 5 s); one isolate throughout (the diagnostics route's isolateId never changes:
 * the Worker was not restarted); and the usage ledger equal to the quota counters at the end.
 * With a single model (no switching) the isolate's memory must also stay flat within 10% after
 * warm-up (the first 20% of the run), in bytes and in settled per-isolate state entries keyed by
 * request data. The workerd process RSS is printed beside it (it includes local D1/R2 storage).
 * Baseline of the same run: /api/health latency on the idle server before the load.
 * The last line printed is one JSON object with the figures.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prng } from '../core/prng';
import { burstRequest, MIX_LANGUAGE, mergeTallies, newTally, requestMix, send, type MixModel } from './traffic';
import { defaultModelOf } from '../core/model-defaults';
import { DEFAULT_MODEL_ID } from '../build/default-model';
import { devSecret, mint, startLocalWorker, stopWranglerDev } from '../test/e2e/support/dev-server';

const PORT = 8795;
const BASE = `http://127.0.0.1:${PORT}`;

const { values: args } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    connections: { type: 'string', default: '32' },
    seed: { type: 'string', default: '1212' },
    // Models the scoring requests switch between: 'all' (every en/de/fr/ja model built) or ids.
    models: { type: 'string', default: 'all' },
    // Share of requests with a body over the limit (413).
    oversize: { type: 'string', default: '0.02' },
    // single (default): the one-Worker deployment, one isolate holding what it can and evicting the
    // rest (issue 31). hosts: the model hosts of the placement (issue 32).
    topology: { type: 'string', default: 'single' },
  },
});
const MINUTES = Number(args.minutes);
const CONNECTIONS = Number(args.connections);
const SEED = Number(args.seed);
const OVERSIZE = Number(args.oversize);
/** Load shedding allowed: 503 problem+json with Retry-After, at most this share of the requests. */
const MAX_503_SHARE = 0.01;

/** RSS of the workerd process of the local server's process group, in bytes (null when not found). */
function workerdRss(child: ChildProcess): number | null {
  if (child.pid === undefined) return null;
  try {
    const out = execFileSync('ps', ['-o', 'pid=,comm=', '-g', String(child.pid)], { encoding: 'utf8' });
    for (const line of out.trim().split('\n')) {
      const [pid, comm] = line.trim().split(/\s+/);
      if (comm?.startsWith('workerd')) {
        const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
        const m = /VmRSS:\s+(\d+) kB/.exec(status);
        if (m) return Number(m[1]) * 1024;
      }
    }
  } catch {
    // ps or /proc not available
  }
  return null;
}

const quantile = (xs: number[], q: number): number => {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

async function pagesOf<T>(url: string, token: string): Promise<T[]> {
  const out: T[] = [];
  for (let page = 1; ; page++) {
    const res = await fetch(`${url}${url.includes('?') ? '&' : '?'}page=${page}&size=200`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
    const body = (await res.json()) as { data: T[]; page: { totalPages: number } };
    out.push(...body.data);
    if (page >= body.page.totalPages) return out;
  }
}

/** The models of the mix: per language of MIX_LANGUAGE, the catalog's model (the default model for English). */
async function mixModels(token: string): Promise<MixModel[]> {
  const res = await fetch(`${BASE}/api/v1/embedding-models?size=100`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!res.ok) throw new Error(`catalog: ${res.status} ${await res.text()}`);
  const { data } = (await res.json()) as { data: Array<{ id: string; language: string }> };
  const wanted = args.models === 'all' ? null : new Set(args.models.split(','));
  const out: MixModel[] = [];
  for (const [language, words] of Object.entries(MIX_LANGUAGE)) {
    const ofLanguage = data.filter((m) => m.language === language && (!wanted || wanted.has(m.id)));
    // The language's default model (core/model-defaults.ts) where the catalog has it.
    const chosen = ofLanguage.find((m) => m.id === (defaultModelOf(language) ?? DEFAULT_MODEL_ID)) ?? ofLanguage[0];
    if (chosen) out.push({ id: chosen.id, ...words });
    else if (!wanted)
      console.error(`[bench:soak] no ${language} model in the catalog (built from Debian data): left out of the mix`);
  }
  if (out.length === 0) throw new Error(`no model of ${args.models} in the catalog`);
  return out;
}

async function main(): Promise<void> {
  const stateDir = path.join(os.tmpdir(), 'embedding-edge-bench-soak');
  fs.rmSync(stateDir, { recursive: true, force: true });
  const child = await startLocalWorker(PORT, stateDir, args.topology === 'hosts' ? [] : ['--placement', 'none']);
  let failed: boolean | undefined;
  try {
    const secret = devSecret();
    const admin = await mint(secret, { scope: 'admin', sub: 'bench-soak' }, 24 * 3600);
    const ws = `soak_${Date.now().toString(36)}`;
    const created = await fetch(`${BASE}/api/admin/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        id: ws,
        name: 'soak',
        anchorDay: 1,
        quotas: [
          { usageTypeKey: 'tokens', limitAmount: 1_000_000_000, limitAmountDaily: 1_000_000_000 },
          { usageTypeKey: 'plagiarismChecks', limitAmount: 1_000_000, limitAmountDaily: 1_000_000 },
        ],
      }),
    });
    if (created.status !== 201) throw new Error(`create workspace: ${created.status} ${await created.text()}`);
    const token = await mint(secret, { workspaceId: ws, sub: 'bench-soak' }, 24 * 3600);
    const models = await mixModels(token);
    console.error(`[bench:soak] scoring requests switch between ${models.map((m) => m.id).join(', ')}`);
    const switching = models.length > 1;

    // Baseline of this run: the idle server.
    const idle = newTally();
    for (let i = 0; i < 50; i++)
      await send(BASE, { kind: 'health', method: 'GET', path: '/api/health' }, token, admin, idle);
    const healthIdleP50 = quantile(idle.latencies, 0.5);

    const durationMs = MINUTES * 60_000;
    const warmupMs = Math.max(30_000, durationMs * 0.2);
    const start = Date.now();
    const deadline = start + durationMs;
    const tally = newTally();
    const bursts = newTally();
    const memory: Array<{
      t: number;
      rss: number | null;
      diag: number;
      budget: number;
      evictions: number;
      entries: number;
      byKind: Record<string, number>;
      inFlight: number;
      isolate: string | null;
    }> = [];
    const health = newTally();

    const loops = Array.from({ length: CONNECTIONS }, async (_, i) => {
      const rand = prng(SEED + i);
      while (Date.now() < deadline)
        await send(BASE, requestMix(rand, ws, { models, oversize: OVERSIZE }), token, admin, tally);
    });
    const sampler = (async () => {
      let nextBurst = start + 20_000;
      while (Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 5_000));
        const d = await fetch(`${BASE}/api/admin/v1/diagnostics/memory`, {
          headers: { authorization: `Bearer ${admin}` },
        });
        const dj = d.ok
          ? ((await d.json()) as {
              isolateId: string;
              totalBytes: number;
              budgetBytes: number;
              evictions: number;
              stateEntries: Record<string, number>;
              loadsInFlight?: number;
              hosts?: Array<{ memory: { totalBytes: number; budgetBytes: number; evictions: number } | null }>;
            })
          : null;
        // With model hosts (--topology hosts) the API Worker holds no model: every host's isolate
        // is checked, the sample standing for the one nearest its budget (a host not answering is missing).
        const isolates = dj ? [dj, ...(dj.hosts ?? []).map((h) => h.memory)] : [];
        const worst = isolates.reduce<{ totalBytes: number; budgetBytes: number } | null>(
          (w, m) => (!m || !w ? null : m.totalBytes - m.budgetBytes > w.totalBytes - w.budgetBytes ? m : w),
          dj,
        );
        const evictionsAll = isolates.reduce((n, m) => n + (m?.evictions ?? 0), 0);
        const entries = dj ? Object.values(dj.stateEntries).reduce((a, b) => a + b, 0) : -1;
        memory.push({
          t: Date.now() - start,
          rss: workerdRss(child),
          diag: worst?.totalBytes ?? -1,
          budget: worst?.budgetBytes ?? -1,
          evictions: dj ? evictionsAll : -1,
          entries,
          byKind: dj?.stateEntries ?? {},
          inFlight: dj?.loadsInFlight ?? 0,
          isolate: dj?.isolateId ?? null,
        });
        const prev = memory.length > 1 ? memory[memory.length - 2] : null;
        if (!prev || JSON.stringify(prev.byKind) !== JSON.stringify(dj?.stateEntries ?? {})) {
          console.error(
            `[bench:soak] t=${Math.round((Date.now() - start) / 1000)}s state entries ${JSON.stringify(dj?.stateEntries ?? null)} diagnostics ${((dj?.totalBytes ?? 0) / 2 ** 20).toFixed(1)} MiB`,
          );
        }
        await send(BASE, { kind: 'health', method: 'GET', path: '/api/health' }, token, admin, health);
        if (Date.now() >= nextBurst && Date.now() < deadline - 5_000) {
          nextBurst += 30_000;
          // 200 concurrent metered POSTs (issue 12 defect 6).
          await Promise.all(Array.from({ length: 200 }, () => send(BASE, burstRequest(ws), token, admin, bursts)));
        }
      }
    })();
    await Promise.all([...loops, sampler]);
    const elapsed = (Date.now() - start) / 1000;

    // Ledger vs counters: the meter flushes its outbox to the D1 ledger a little later, so the
    // ledger is read again (for at most 60 s) until it has caught up.
    let ledger: Array<{ usageTypeKey: string; amount: number }> = [];
    let quotas: { data: Array<{ usageTypeKey: string; usedAmount: number }> } = { data: [] };
    const ledgerSum = (k: string) => ledger.filter((e) => e.usageTypeKey === k).reduce((s, e) => s + e.amount, 0);
    const used = (k: string) => quotas.data.find((q) => q.usageTypeKey === k)?.usedAmount ?? 0;
    let ledgerEqual = false;
    for (const until = Date.now() + 60_000; !ledgerEqual && Date.now() < until;) {
      ledger = await pagesOf(`${BASE}/api/admin/v1/workspaces/${ws}/usage-ledger`, admin);
      quotas = (await (
        await fetch(`${BASE}/api/usage-service/v1/workspaces/${ws}/quotas`, {
          headers: { authorization: `Bearer ${token}` },
        })
      ).json()) as typeof quotas;
      ledgerEqual = ['tokens', 'plagiarismChecks'].every((k) => ledgerSum(k) === used(k));
      if (!ledgerEqual) await new Promise((r) => setTimeout(r, 2_000));
    }

    const after = memory.filter((m) => m.t >= warmupMs);
    // The budget is a promise (issue 31): every sample at or below it, switching or not.
    const overBudget = memory.filter((m) => m.diag < 0 || m.diag > m.budget);
    const spread = (xs: number[]): number => {
      if (xs.length === 0) return 0;
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      return mean > 0 ? (100 * (Math.max(...xs) - Math.min(...xs))) / mean : 0;
    };
    const rss = after.map((m) => m.rss).filter((x): x is number => x !== null);
    const rssSpreadPct = spread(rss);
    const diagSpreadPct = spread(after.map((m) => m.diag));
    // A new isolate id in the diagnostics answers: the runtime started the Worker again.
    const isolates = new Set(memory.flatMap((m) => (m.isolate ? [m.isolate] : []))).size;
    const entriesAfter = after.map((m) => m.entries);
    const all = mergeTallies(tally, bursts, health);
    const figures = {
      soak_minutes: +(elapsed / 60).toFixed(2),
      soak_connections: CONNECTIONS,
      soak_seed: SEED,
      soak_requests: all.total,
      soak_requests_per_s: +(tally.total / elapsed).toFixed(1),
      soak_status_counts: Object.fromEntries([...all.byStatus].sort((a, b) => a[0] - b[0])),
      soak_models: models.map((m) => m.id),
      soak_oversize_share: OVERSIZE,
      soak_5xx: all.fiveXX,
      soak_503_retry_after: all.retryable503,
      soak_503_retry_after_share: +(all.retryable503 / Math.max(1, all.total)).toFixed(5),
      soak_dropped_connections: all.dropped,
      soak_oversize_413: tally.byStatus.get(413) ?? 0,
      soak_memory_samples: memory.length,
      soak_memory_samples_over_budget: overBudget.length,
      soak_diagnostics_max_mib: memory.length ? +(Math.max(...memory.map((m) => m.diag)) / 2 ** 20).toFixed(1) : null,
      soak_budget_mib: memory.length ? +(memory[0].budget / 2 ** 20).toFixed(1) : null,
      soak_evictions: memory.length ? memory[memory.length - 1].evictions : null,
      soak_non_problem_errors: all.nonProblem,
      soak_bursts: Math.round(bursts.total / 200),
      soak_burst_5xx: bursts.fiveXX,
      soak_restart_answers: all.restarts,
      soak_isolates_seen: isolates,
      soak_mixed_p50_ms: +quantile(tally.latencies, 0.5).toFixed(1),
      soak_mixed_p99_ms: +quantile(tally.latencies, 0.99).toFixed(1),
      soak_health_under_load_p50_ms: +quantile(health.latencies, 0.5).toFixed(1),
      soak_baseline_health_idle_p50_ms: +healthIdleP50.toFixed(1),
      soak_rss_mib_after_warmup_first: rss.length ? +(rss[0] / 2 ** 20).toFixed(1) : null,
      soak_rss_mib_last: rss.length ? +(rss[rss.length - 1] / 2 ** 20).toFixed(1) : null,
      soak_rss_spread_pct: +rssSpreadPct.toFixed(1),
      soak_diagnostics_total_mib: after.length ? +(after[after.length - 1].diag / 2 ** 20).toFixed(1) : null,
      soak_diagnostics_spread_pct: +diagSpreadPct.toFixed(1),
      soak_state_entries_min_max: entriesAfter.length ? [Math.min(...entriesAfter), Math.max(...entriesAfter)] : null,
      soak_loads_in_flight_max: after.length ? Math.max(...after.map((m) => m.inFlight)) : null,
      soak_state_entries_by_kind: Object.fromEntries(
        [...new Set(after.flatMap((m) => Object.keys(m.byKind)))].map((k) => {
          const xs = after.map((m) => m.byKind[k] ?? 0);
          return [k, [Math.min(...xs), Math.max(...xs)]];
        }),
      ),
      soak_ledger_tokens: ledgerSum('tokens'),
      soak_quota_used_tokens: used('tokens'),
      soak_ledger_plagiarism_checks: ledgerSum('plagiarismChecks'),
      soak_quota_used_plagiarism_checks: used('plagiarismChecks'),
      soak_ledger_equals_quota: ledgerEqual,
    };
    for (const s of all.samples.slice(0, 40)) console.log(`[bench:soak] sample: ${s}`);
    const problems: string[] = [];
    const other5xx = all.fiveXX - all.retryable503 - all.dropped;
    if (other5xx > 0) problems.push(`${other5xx} answers were 5xx other than 503 with Retry-After`);
    if (all.retryable503 > MAX_503_SHARE * all.total)
      problems.push(`${all.retryable503} answers (more than ${100 * MAX_503_SHARE}%) were 503 with Retry-After`);
    if (all.dropped > 0) problems.push(`${all.dropped} requests got no answer (connection dropped or timed out)`);
    if (all.nonProblem > 0) problems.push(`${all.nonProblem} error answers were not problem+json`);
    if (overBudget.length > 0)
      problems.push(
        `${overBudget.length} of ${memory.length} diagnostics samples were over the budget (or missing): max ${Math.max(...overBudget.map((m) => m.diag))} bytes`,
      );
    // Without model switching the isolate's memory must also stay flat after warm-up (issue 12):
    // its bytes and its per-isolate state entries. With switching, models come and go by design.
    // The workerd process RSS is reported beside it: it also holds local D1/R2 (SQLite, growing
    // with the ledger) and V8's heap sizing, so it is a figure, not the criterion.
    if (!switching && diagSpreadPct > 10)
      problems.push(`diagnostics memory moved ${diagSpreadPct.toFixed(1)}% after warm-up`);
    if (!switching && entriesAfter.length && Math.max(...entriesAfter) > 1.1 * Math.min(...entriesAfter))
      problems.push(
        `per-isolate state entries grew from ${Math.min(...entriesAfter)} to ${Math.max(...entriesAfter)} after warm-up`,
      );
    if (!ledgerEqual) problems.push('usage ledger differs from the quota counters');
    if (isolates > 1) problems.push(`the diagnostics route was answered by ${isolates} isolates: the Worker restarted`);
    for (const p of problems) console.error(`[bench:soak] FAILED: ${p}`);
    failed = problems.length > 0;
    console.log(JSON.stringify(figures));
  } finally {
    await stopWranglerDev(child);
  }
  if (failed) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
