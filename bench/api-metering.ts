/**
 * The metering section of `npm run bench:api` (issue 20): what the per-workspace meter (the
 * WorkspaceMeter Durable Object, worker/quotas/meter-do.ts) costs a request, measured in the same
 * run against the same server.
 *
 * - metered: POST /api/v1/workspaces/{ws}/word-scores with one seed and one whitelisted word
 *   (almost no compute, one charge of 1 token in the workspace's meter);
 * - unmetered: POST /api/v1/embedding-models/{model}/word-availabilities for one word with the same
 *   workspace tokens (auth, body validation, model lookup: the same route shape, no meter);
 * both spread round-robin over 8 workspaces, at 1 and 16 connections (closed loops of sequential
 * requests, latency timed per request with performance.now()). The phases alternate
 * (unmetered, metered, unmetered, metered) and each figure is the median of its two runs, so
 * slow drift of the machine's load hits both sides alike.
 *
 * Targets: metered p50 <= unmetered p50 + 1 ms at 1 connection (`metered_overhead_p50_ms`),
 * metered req/s at 16 connections >= 70 % of unmetered (`metered_throughput_ratio_16`).
 */

interface LoadFigures {
  p50: number;
  p99: number;
  reqPerSec: number;
  requests: number;
  non2xx: number;
}

interface Target {
  path: string;
  token: string;
  body: string;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const median = (xs: number[]) => quantile([...xs].sort((a, b) => a - b), 0.5);

/** `connections` closed loops sending the targets round-robin for `seconds`. */
async function drive(base: string, targets: Target[], connections: number, seconds: number): Promise<LoadFigures> {
  const latencies: number[] = [];
  let non2xx = 0;
  const end = performance.now() + seconds * 1000;
  let next = 0;
  const loop = async () => {
    while (performance.now() < end) {
      const t = targets[next++ % targets.length];
      const start = performance.now();
      const res = await fetch(`${base}${t.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json' },
        body: t.body,
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - start);
      if (res.status < 200 || res.status >= 300) non2xx++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), reqPerSec: latencies.length / elapsed, requests: latencies.length, non2xx };
}

function combine(runs: LoadFigures[]): LoadFigures {
  return {
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    reqPerSec: median(runs.map((r) => r.reqPerSec)),
    requests: runs.reduce((a, r) => a + r.requests, 0),
    non2xx: runs.reduce((a, r) => a + r.non2xx, 0),
  };
}

export interface MeteringBenchOptions {
  base: string;
  model: string;
  adminToken: string;
  /** A workspace-scoped token for `workspaceId`. */
  mintWorkspaceToken: (workspaceId: string) => Promise<string>;
  seconds: number;
}

/** Runs the section, prints its table and returns the figures for the JSON line. */
export async function benchMetering(o: MeteringBenchOptions): Promise<Record<string, unknown>> {
  const stamp = Date.now();
  const workspaces = Array.from({ length: 8 }, (_, i) => `ws_bench_meter_${stamp}_${i}`);
  for (const id of workspaces) {
    const res = await fetch(`${o.base}/api/admin/v1/workspaces`, {
      method: 'POST',
      headers: { authorization: `Bearer ${o.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id, name: 'bench:api metering', quotas: [{ usageTypeKey: 'tokens', limitAmount: 1_000_000_000_000, limitAmountDaily: 1_000_000_000_000 }] }),
    });
    if (res.status !== 201) throw new Error(`creating ${id}: ${res.status} ${await res.text()}`);
  }
  const tokens = await Promise.all(workspaces.map((ws) => o.mintWorkspaceToken(ws)));
  const metered: Target[] = workspaces.map((ws, i) => ({
    path: `/api/v1/workspaces/${ws}/word-scores`,
    token: tokens[i],
    body: JSON.stringify({ seedWords: ['happy'], whitelistWords: ['joy'], embeddingModelId: o.model }),
  }));
  const unmetered: Target[] = workspaces.map((_, i) => ({
    path: `/api/v1/embedding-models/${o.model}/word-availabilities`,
    token: tokens[i],
    body: JSON.stringify({ words: ['happy'] }),
  }));
  // Warm-up: every workspace's meter seeded, the model loaded, connections open.
  await drive(o.base, [...metered, ...unmetered], 4, 2);

  const half = Math.max(1, o.seconds / 2);
  const figures: Record<string, LoadFigures> = {};
  for (const connections of [1, 16]) {
    const u: LoadFigures[] = [];
    const m: LoadFigures[] = [];
    for (let round = 0; round < 2; round++) {
      u.push(await drive(o.base, unmetered, connections, half));
      m.push(await drive(o.base, metered, connections, half));
    }
    figures[`unmetered_${connections}`] = combine(u);
    figures[`metered_${connections}`] = combine(m);
  }
  const overhead = figures.metered_1.p50 - figures.unmetered_1.p50;
  const ratio = figures.metered_16.reqPerSec / figures.unmetered_16.reqPerSec;

  console.log('\nmetering (8 workspaces, round-robin)          p50 ms  p99 ms   req/s  requests  non2xx');
  for (const [name, f] of Object.entries(figures)) {
    console.log(
      `${name.replace('_', ', ').padEnd(44)} ${f.p50.toFixed(2).padStart(7)} ${f.p99.toFixed(2).padStart(7)} ${f.reqPerSec.toFixed(0).padStart(7)} ${String(f.requests).padStart(9)} ${String(f.non2xx).padStart(7)}`,
    );
  }
  console.log(
    `metered p50 overhead at 1 connection: ${overhead.toFixed(2)} ms (target <= 1 ms: ${overhead <= 1 ? 'MET' : 'NOT MET'}); ` +
      `metered/unmetered req/s at 16 connections: ${ratio.toFixed(2)} (target >= 0.7: ${ratio >= 0.7 ? 'MET' : 'NOT MET'})`,
  );
  return {
    metering: figures,
    metered_overhead_p50_ms: +overhead.toFixed(3),
    metered_throughput_ratio_16: +ratio.toFixed(3),
  };
}
