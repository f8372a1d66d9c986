/**
 * The metering section of `npm run bench:api` (issue 20): what the per-workspace meter (the
 * WorkspaceMeter Durable Object, worker/quotas/meter-do.ts) costs a request, measured in the same
 * run against the same server.
 *
 * - metered: POST /api/v1/workspaces/{ws}/word-scores with one seed and one whitelisted word
 *   (almost no compute, one charge of 1 token in the workspace's meter);
 * - unmetered: the very same request (route, body, token, validation, scoring, response) with
 *   `X-Bench-Unmetered: 1`, which skips only the call to the meter in a server running the bench
 *   entry bench/workers/metering-entry.ts (bench/api.ts starts its server so). After the run the
 *   section checks that every workspace's meter counted exactly its metered requests, so a server
 *   without the twin (a reused one) cannot pass as unmetered;
 * - floor probes (1 connection only; the same bench entry): the very same
 *   request with `X-Bench-Meter-Probe: rpc` (the bounded call to the workspace's meter, which
 *   writes nothing) and `X-Bench-Meter-Probe: write` (the same call making the smallest durable
 *   write the object can make: one row of its own, one synchronous transaction, answered after the
 *   output gate, no charge). They split the meter's overhead into the round trip, the durable
 *   commit every charge needs, and what the meter adds on top of both (metered - write);
 * - reference (not a target): POST /api/v1/embedding-models/{model}/word-availabilities for one
 *   word (auth, validation, model lookup, no scoring, no meter), the comparator used before.
 * All spread round-robin over 8 workspaces, at 1 and 16 connections (closed loops of sequential
 * requests, latency timed per request with performance.now()).
 *
 * Noise (the machine is small and shared; one run's figure used to swing 0.5 to 3 ms): the
 * unmetered and metered phases alternate in ROUNDS rounds (default 6, BENCH_METER_ROUNDS) in the
 * order U M, M U, U M, ... (ABBA: neither side always goes first, so a trend in the machine's
 * load cancels within each pair of rounds); at 1 connection the probes run in the same rounds
 * (U R W M, M W R U, ...). Each phase first runs LEAD_IN_S unmeasured, then
 * measures a window of WINDOW_S: the lead-in is longer than the meter's flush delay (2 s,
 * METER_FLUSH_DELAY_MS), so the flush still pending from a metered phase runs before the next
 * window instead of inside an unmetered one, and a metered window sees its flushes at the
 * steady-state rate (one per workspace per 2 s, the window is one such period). A window counts the
 * requests that completed inside it (req/s = count / window) and their latencies. Each round
 * gives a paired overhead (metered p50 - unmetered p50) and ratio (metered / unmetered req/s);
 * the target figures are the medians of those per-round pairs, every round is printed, and none
 * is dropped. The table shows each side's median over the rounds.
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

/** u: unmetered twin, r: rpc probe, w: write probe, m: metered. */
type Side = 'u' | 'r' | 'w' | 'm';

interface Target {
  path: string;
  token: string;
  body: string;
  headers?: Record<string, string>;
  /** 2xx answers so far (the meter's count is checked against the metered ones). */
  ok: number;
}

const ROUNDS = Math.max(2, Math.round(Number(process.env.BENCH_METER_ROUNDS ?? 6)));
/** Unmeasured start of every phase: longer than the meter's flush delay (METER_FLUSH_DELAY_MS, 2 s). */
const LEAD_IN_S = 2.5;
/** Measured part of every phase: one flush period of the meter. */
const WINDOW_S = 2;

function quantile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The median (the mean of the middle two for an even count). */
function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * `connections` closed loops sending the targets round-robin for `leadInSeconds` unmeasured and
 * then `seconds` measured: the figures are of the requests that completed inside the window.
 */
async function drive(
  base: string,
  targets: Target[],
  connections: number,
  seconds: number,
  leadInSeconds = 0,
): Promise<LoadFigures> {
  const latencies: number[] = [];
  let non2xx = 0;
  const windowStart = performance.now() + leadInSeconds * 1000;
  const windowEnd = windowStart + seconds * 1000;
  let next = 0;
  const loop = async () => {
    while (performance.now() < windowEnd) {
      const t = targets[next++ % targets.length];
      const start = performance.now();
      const res = await fetch(`${base}${t.path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.token}`, 'content-type': 'application/json', ...t.headers },
        body: t.body,
      });
      await res.arrayBuffer();
      const end = performance.now();
      // Every 2xx counts for the meter check, measured or not.
      if (res.status < 200 || res.status >= 300) non2xx++;
      else t.ok++;
      if (end >= windowStart && end <= windowEnd) latencies.push(end - start);
    }
  };
  await Promise.all(Array.from({ length: connections }, loop));
  latencies.sort((a, b) => a - b);
  return {
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    reqPerSec: latencies.length / seconds,
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
  const probe = (kind: 'rpc' | 'write'): Target[] =>
    workspaces.map((_, i) => {
      const t = wordScores(i, false);
      t.headers = { ...t.headers, 'x-bench-meter-probe': kind };
      return t;
    });
  const sides: Record<Side, Target[]> = { u: unmetered, r: probe('rpc'), w: probe('write'), m: metered };
  const reference: Target[] = workspaces.map((_, i) => ({
    path: `/api/v1/embedding-models/${o.model}/word-availabilities`,
    token: tokens[i],
    body: JSON.stringify({ words: ['happy'] }),
    ok: 0,
  }));
  // Warm-up: every workspace's meter seeded, the model loaded, connections open.
  await drive(o.base, [...metered, ...unmetered, ...sides.r, ...sides.w, ...reference], 4, 2);

  const figures: Record<string, LoadFigures> = {};
  const rounds: Record<string, { overheadP50Ms: number; ratio: number }[]> = {};
  /** Per round at 1 connection: rpc - unmetered, write - unmetered and metered - write p50 (ms). */
  const floorRounds: { rpcP50Ms: number; writeP50Ms: number; meteredOverWriteP50Ms: number }[] = [];
  for (const connections of [1, 16]) {
    const runs: Record<Side, LoadFigures[]> = { u: [], r: [], w: [], m: [] };
    // The probes only at 1 connection (the latency target).
    const base: Side[] = connections === 1 ? ['u', 'r', 'w', 'm'] : ['u', 'm'];
    for (let round = 0; round < ROUNDS; round++) {
      // ABBA: U M, M U, U M, ... (U R W M, M W R U, ... with the probes)
      const order = round % 2 === 0 ? base : [...base].reverse();
      for (const side of order) runs[side].push(await drive(o.base, sides[side], connections, WINDOW_S, LEAD_IN_S));
    }
    const { u, r, w, m } = runs;
    figures[`unmetered_${connections}`] = combine(u);
    figures[`metered_${connections}`] = combine(m);
    rounds[connections] = u.map((ur, i) => ({
      overheadP50Ms: +(m[i].p50 - ur.p50).toFixed(3),
      ratio: +(m[i].reqPerSec / ur.reqPerSec).toFixed(3),
    }));
    if (connections === 1) {
      figures.probe_rpc_1 = combine(r);
      figures.probe_write_1 = combine(w);
      for (let i = 0; i < u.length; i++) {
        floorRounds.push({
          rpcP50Ms: +(r[i].p50 - u[i].p50).toFixed(3),
          writeP50Ms: +(w[i].p50 - u[i].p50).toFixed(3),
          meteredOverWriteP50Ms: +(m[i].p50 - w[i].p50).toFixed(3),
        });
      }
    }
    figures[`reference_availabilities_${connections}`] = await drive(
      o.base,
      reference,
      connections,
      Math.max(1, o.seconds / 2),
      LEAD_IN_S,
    );
  }
  await checkTwinUncharged(o, workspaces, tokens, metered);
  // The medians of the per-round pairs (each pair measured back to back).
  const overhead = median(rounds[1].map((r) => r.overheadP50Ms));
  const ratio = median(rounds[16].map((r) => r.ratio));
  const rpcFloor = median(floorRounds.map((r) => r.rpcP50Ms));
  const writeFloor = median(floorRounds.map((r) => r.writeP50Ms));
  const overFloor = median(floorRounds.map((r) => r.meteredOverWriteP50Ms));
  const refOverhead = figures.metered_1.p50 - figures.reference_availabilities_1.p50;
  const refRatio = figures.metered_16.reqPerSec / figures.reference_availabilities_16.reqPerSec;

  console.log(
    `\nmetering (8 workspaces, round-robin; ${ROUNDS} rounds of ${LEAD_IN_S} s lead-in + ${WINDOW_S} s window per side)`,
  );
  console.log('                                             p50 ms  p99 ms   req/s  requests  non2xx');
  for (const [name, f] of Object.entries(figures)) {
    console.log(
      `${name.replace(/_(\d+)$/, ', $1').padEnd(44)} ${f.p50.toFixed(2).padStart(7)} ${f.p99.toFixed(2).padStart(7)} ${f.reqPerSec.toFixed(0).padStart(7)} ${String(f.requests).padStart(9)} ${String(f.non2xx).padStart(7)}`,
    );
  }
  console.log(
    `per round, 1 connection, metered - unmetered p50 ms: ${rounds[1].map((r) => r.overheadP50Ms.toFixed(2)).join(' ')}`,
  );
  console.log(
    `per round, 16 connections, metered / unmetered req/s: ${rounds[16].map((r) => r.ratio.toFixed(2)).join(' ')}`,
  );
  console.log(
    `metered p50 overhead at 1 connection (median of rounds): ${overhead.toFixed(2)} ms (target <= 1 ms: ${overhead <= 1 ? 'MET' : 'NOT MET'}); ` +
      `metered/unmetered req/s at 16 connections (median of rounds): ${ratio.toFixed(2)} (target >= 0.7: ${ratio >= 0.7 ? 'MET' : 'NOT MET'})`,
  );
  console.log(
    `per round, 1 connection, probe rpc - unmetered / probe write - unmetered / metered - probe write p50 ms: ${floorRounds
      .map((r) => `${r.rpcP50Ms.toFixed(2)}/${r.writeP50Ms.toFixed(2)}/${r.meteredOverWriteP50Ms.toFixed(2)}`)
      .join(' ')}`,
  );
  console.log(
    `floor under the meter at 1 connection (medians of rounds): round trip to the meter ${rpcFloor.toFixed(2)} ms, ` +
      `round trip + smallest durable write ${writeFloor.toFixed(2)} ms; the meter on top of that floor ${overFloor.toFixed(2)} ms`,
  );
  console.log(
    `against the word-availabilities reference instead (not the target's comparator): overhead ${refOverhead.toFixed(2)} ms, req/s ratio ${refRatio.toFixed(2)}`,
  );
  return {
    metering: figures,
    metering_rounds: { connections_1: rounds[1], connections_16: rounds[16], floor_1: floorRounds },
    meter_rpc_floor_p50_ms: +rpcFloor.toFixed(3),
    meter_durable_write_floor_p50_ms: +writeFloor.toFixed(3),
    metered_over_write_floor_p50_ms: +overFloor.toFixed(3),
    metered_overhead_p50_ms: +overhead.toFixed(3),
    metered_throughput_ratio_16: +ratio.toFixed(3),
    reference_overhead_p50_ms: +refOverhead.toFixed(3),
    reference_throughput_ratio_16: +refRatio.toFixed(3),
  };
}

/**
 * Every workspace's meter must have counted exactly its metered 2xx answers: more means the
 * unmetered twin was charged (a server without the bench entry, e.g. a reused one), and
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
          '(serve the bench entry bench/workers/metering-entry.ts, as bench/api.ts does; do not reuse another server)',
      );
    }
  }
}
