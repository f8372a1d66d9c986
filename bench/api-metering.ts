/**
 * The metering section of `npm run bench:api` (issue 20): what the per-workspace meter (the
 * WorkspaceMeter Durable Object, worker/quotas/meter-do.ts) costs a request, measured in the same
 * run against the same server.
 *
 * - metered: POST /api/v1/workspaces/{ws}/word-scores with one seed and one whitelisted word
 *   (almost no compute, one charge of 1 token in the workspace's meter);
 * - unmetered: the very same request (route, body, token, validation, scoring, response) with
 *   `X-Bench-Unmetered: 1`, which skips only the call to the meter in a server built with
 *   `--define __BENCH_UNMETERED_TWIN__:true` (worker/quotas/bench-twin.ts; bench/api.ts
 *   starts its server so). After the run the section checks that every workspace's meter counted
 *   exactly its metered requests, so a server without the twin (a reused one) cannot pass as
 *   unmetered;
 * - reference (not a target): POST /api/v1/embedding-models/{model}/word-availabilities for one
 *   word (auth, validation, model lookup, no scoring, no meter), the comparator used before.
 * All spread round-robin over 8 workspaces, at 1 and 16 connections (closed loops of sequential
 * requests, latency timed per request with performance.now()). The phases alternate
 * (unmetered, metered, unmetered, metered, then the reference) and each figure is the median of
 * its two runs, so slow drift of the machine's load hits both sides alike.
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
  headers?: Record<string, string>;
  /** 2xx answers so far (the meter's count is checked against the metered ones). */
  ok: number;
}

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

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
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', ...t.headers },
        body: t.body,
      });
      await res.arrayBuffer();
      latencies.push(performance.now() - start);
      if (res.status < 200 || res.status >= 300) non2xx++;
      else t.ok++;
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: connections }, loop));
  const elapsed = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    reqPerSec: latencies.length / elapsed,
    requests: latencies.length,
    non2xx,
  };
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
      body: JSON.stringify({
        id,
        name: 'bench:api metering',
        quotas: [{ usageTypeKey: 'tokens', limitAmount: 1_000_000_000_000, limitAmountDaily: 1_000_000_000_000 }],
      }),
    });
    if (res.status !== 201) throw new Error(`creating ${id}: ${res.status} ${await res.text()}`);
  }
  const tokens = await Promise.all(workspaces.map((ws) => o.mintWorkspaceToken(ws)));
  const wordScores = (i: number, unmeteredTwin: boolean): Target => ({
    path: `/api/v1/workspaces/${workspaces[i]}/word-scores`,
    token: tokens[i],
    body: JSON.stringify({ seedWords: ['happy'], whitelistWords: ['joy'], embeddingModelId: o.model }),
    // The same header bytes on both sides; only '1' asks for the twin.
    headers: { 'x-bench-unmetered': unmeteredTwin ? '1' : '0' },
    ok: 0,
  });
  const metered: Target[] = workspaces.map((_, i) => wordScores(i, false));
  const unmetered: Target[] = workspaces.map((_, i) => wordScores(i, true));
  const reference: Target[] = workspaces.map((_, i) => ({
    path: `/api/v1/embedding-models/${o.model}/word-availabilities`,
    token: tokens[i],
    body: JSON.stringify({ words: ['happy'] }),
    ok: 0,
  }));
  // Warm-up: every workspace's meter seeded, the model loaded, connections open.
  await drive(o.base, [...metered, ...unmetered, ...reference], 4, 2);

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
    figures[`reference_availabilities_${connections}`] = await drive(o.base, reference, connections, half);
  }
  await checkTwinUncharged(o, workspaces, tokens, metered);
  const overhead = figures.metered_1.p50 - figures.unmetered_1.p50;
  const ratio = figures.metered_16.reqPerSec / figures.unmetered_16.reqPerSec;
  const refOverhead = figures.metered_1.p50 - figures.reference_availabilities_1.p50;
  const refRatio = figures.metered_16.reqPerSec / figures.reference_availabilities_16.reqPerSec;

  console.log('\nmetering (8 workspaces, round-robin)          p50 ms  p99 ms   req/s  requests  non2xx');
  for (const [name, f] of Object.entries(figures)) {
    console.log(
      `${name.replace(/_(\d+)$/, ', $1').padEnd(44)} ${f.p50.toFixed(2).padStart(7)} ${f.p99.toFixed(2).padStart(7)} ${f.reqPerSec.toFixed(0).padStart(7)} ${String(f.requests).padStart(9)} ${String(f.non2xx).padStart(7)}`,
    );
  }
  console.log(
    `metered p50 overhead at 1 connection: ${overhead.toFixed(2)} ms (target <= 1 ms: ${overhead <= 1 ? 'MET' : 'NOT MET'}); ` +
      `metered/unmetered req/s at 16 connections: ${ratio.toFixed(2)} (target >= 0.7: ${ratio >= 0.7 ? 'MET' : 'NOT MET'})`,
  );
  console.log(
    `against the word-availabilities reference instead (not the target's comparator): overhead ${refOverhead.toFixed(2)} ms, req/s ratio ${refRatio.toFixed(2)}`,
  );
  return {
    metering: figures,
    metered_overhead_p50_ms: +overhead.toFixed(3),
    metered_throughput_ratio_16: +ratio.toFixed(3),
    reference_overhead_p50_ms: +refOverhead.toFixed(3),
    reference_throughput_ratio_16: +refRatio.toFixed(3),
  };
}

/**
 * Every workspace's meter must have counted exactly its metered 2xx answers: more means the
 * unmetered twin was charged (a server built without the twin define, e.g. a reused one), and
 * the comparison would be metered against metered.
 */
async function checkTwinUncharged(
  o: MeteringBenchOptions,
  workspaces: string[],
  tokens: string[],
  metered: Target[],
): Promise<void> {
  for (let i = 0; i < workspaces.length; i++) {
    const res = await fetch(`${o.base}/api/usage-service/v1/workspaces/${workspaces[i]}/quotas?usageTypeKey=tokens`, {
      headers: { authorization: `Bearer ${tokens[i]}` },
    });
    if (res.status !== 200) throw new Error(`quotas of ${workspaces[i]}: ${res.status} ${await res.text()}`);
    const used = ((await res.json()) as { data: { usedAmount: number }[] }).data[0]?.usedAmount;
    if (used !== metered[i].ok) {
      throw new Error(
        `${workspaces[i]}: the meter counted ${used} tokens for ${metered[i].ok} metered requests; the unmetered twin was charged ` +
          '(start the server with --define __BENCH_UNMETERED_TWIN__:true, as bench/api.ts does; do not reuse another server)',
      );
    }
  }
}
