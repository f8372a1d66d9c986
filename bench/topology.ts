/**
 * `npm run bench:topology` (issue 32): model hosts against the one-Worker path, in one run.
 *
 * Starts the local server as `npm start` does (build/serve.ts: the API Worker and the model hosts
 * of build/generated/placement.json in one workerd) with the one-Worker deployment of the same
 * bundle beside it (--single-port: every model in-process, one isolate). Then, closed-loop
 * clients (fetch, keep-alive) for `--seconds` per phase:
 *   - text-scores, one text per request with one dimension, English only and round-robin
 *     en/de/fr/ja through the hosts, at 4 and at 16 connections;
 *   - the same English-only text-scores and an English find-and-score (word-scores) through the
 *     hosts and through the one-Worker path (the regression baseline): latency at 1 connection,
 *     throughput at 4;
 *   - round-robin en/de/fr/ja through the one-Worker path (what the hosts replace);
 *   - then the Durable Object candidate (bench/workers/topology-do-entry.ts: one object per host
 *     instead of a Worker script per host), English-only and mixed at 4 and 16 connections.
 * Every host's memory diagnostics are sampled each second throughout: every sample must be at or
 * below its budget and no host may evict after the warm-up.
 *
 * Targets: mixed/English throughput >= 0.8 and mixed p99 <= 2x English p99 at both connection
 * counts; English p50 through the hosts within 1 ms of the one-Worker path (1 connection); 0 evictions; every
 * sample within budget. Last line: one JSON object.
 *
 *   npm run bench:topology -- [--seconds 15] [--placement-budget BYTES]
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { ChildProcess } from 'node:child_process';
import { MIX_LANGUAGE } from './traffic';
import { createWorkspace, startLocalWorker, stopWranglerDev } from '../test/e2e/support/dev-server';
import type { Placement } from '../core/placement';
import { PLACEMENT_FILE, writePlacement } from '../build/placement';
import fs from 'node:fs';
import { DEFAULT_MEMORY_BUDGET_BYTES } from '../core/footprint';

const PORT = 8793;
const SINGLE_PORT = 8794;
/** The API Worker's own socket: the one-Worker path is measured on its own too (no entry worker in front). */
const DIRECT_PORT = 8796;
const ROUTED = `http://127.0.0.1:${DIRECT_PORT}`;
const SINGLE = `http://127.0.0.1:${SINGLE_PORT}`;
const CAP_BYTES = 128 * 1024 * 1024;

const { values: args } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    // Packs the placement for this budget instead (the hosts keep their 100 MB budget): e.g.
    // 400000000 puts every model on one host, which this bench must then fail (evictions).
    'placement-budget': { type: 'string' },
  },
});
const SECONDS = Number(args.seconds);

interface Phase {
  name: string;
  requests: number;
  errors: number;
  perSecond: number;
  p50: number;
  p99: number;
}

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! : NaN;
}

/** `connections` clients, each sending the next request of `make` as soon as its last one answered. */
async function load(
  name: string,
  base: string,
  connections: number,
  make: (i: number) => { url: string; body: unknown },
  token: string,
): Promise<Phase> {
  const until = Date.now() + SECONDS * 1000;
  const times: number[] = [];
  let errors = 0;
  let n = 0;
  const client = async (): Promise<void> => {
    while (Date.now() < until) {
      const { url, body } = make(n++);
      const t0 = performance.now();
      const r = await fetch(`${base}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await r.arrayBuffer();
      if (r.status !== 200) errors++;
      times.push(performance.now() - t0);
    }
  };
  const t0 = Date.now();
  await Promise.all(Array.from({ length: connections }, client));
  const s = times.sort((a, b) => a - b);
  const phase = {
    name,
    requests: s.length,
    errors,
    perSecond: s.length / ((Date.now() - t0) / 1000),
    p50: quantile(s, 0.5),
    p99: quantile(s, 0.99),
  };
  console.log(
    `[bench:topology] ${name.padEnd(34)} ${phase.perSecond.toFixed(0).padStart(5)} req/s  p50 ${phase.p50.toFixed(1)} ms  p99 ${phase.p99.toFixed(1)} ms  (${phase.requests} requests, ${errors} errors)`,
  );
  return phase;
}

interface HostSample {
  binding: string;
  memory: { totalBytes: number; budgetBytes: number; evictions: number; models: Array<{ id: string }> } | null;
}

async function main(): Promise<void> {
  const state = path.join(os.tmpdir(), 'embedding-edge-bench-topology');
  let child: ChildProcess | null = null;
  try {
    let placementFile = PLACEMENT_FILE;
    if (args['placement-budget']) {
      placementFile = path.join(os.tmpdir(), 'embedding-edge-bench-topology-placement.json');
      writePlacement({ budgetBytes: Number(args['placement-budget']), out: placementFile });
    }
    child = await startLocalWorker(PORT, state, [
      '--log-level',
      'warn',
      '--single-port',
      String(SINGLE_PORT),
      '--direct-port',
      String(DIRECT_PORT),
      // The hosts keep the isolate's budget whatever the placement was packed for.
      ...(args['placement-budget']
        ? ['--placement', placementFile, '--var', `MODEL_MEMORY_BUDGET_BYTES=${DEFAULT_MEMORY_BUDGET_BYTES}`]
        : []),
    ]);
    const placement = JSON.parse(fs.readFileSync(placementFile, 'utf8')) as Placement;
    const workspace = `ws_topology_bench_${Date.now()}`;
    const { admin, token } = await createWorkspace(ROUTED, workspace, 'bench-topology', 1e12);
    const ws = `/api/v1/workspaces/${workspace}`;

    const models = Object.keys(placement.models).sort();
    const english = models.find((id) => id.startsWith('en-'))!;
    const textRequest = (id: string, i: number) => {
      const m = MIX_LANGUAGE[id.slice(0, 2)]!;
      return {
        url: `${ws}/text-scores`,
        body: {
          embeddingModelId: id,
          texts: [m.texts[i % m.texts.length]],
          dimensions: [{ id: 1, type: 'manual', name: 'good', words: m.seeds }],
        },
      };
    };
    const english1 = (i: number) => textRequest(english, i);
    const mixed = (i: number) => textRequest(models[i % models.length]!, i);
    const find = () => ({
      url: `${ws}/word-scores`,
      body: { embeddingModelId: english, seedWords: ['happy', 'joy'], limit: 20 },
    });

    // Memory of every host, each second, from the first request on.
    const samples: HostSample[][] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const r = await fetch(`${ROUTED}/api/admin/v1/diagnostics/memory`, {
          headers: { authorization: `Bearer ${admin}` },
        });
        samples.push(((await r.json()) as { hosts: HostSample[] }).hosts);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    })();

    /** Every model loaded where `bases` serve it: each answers 8 text-scores requests. */
    const warmUp = async (bases: string[]): Promise<void> => {
      for (let i = 0; i < 8; i++)
        for (const id of models)
          for (const base of bases) {
            const { url, body } = textRequest(id, i);
            const r = await fetch(`${base}${url}`, {
              method: 'POST',
              headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            await r.arrayBuffer();
            if (r.status !== 200) throw new Error(`warm-up ${id} on ${base}: ${r.status}`);
          }
    };
    // Every model loaded in its host and in the one-Worker isolate (which then evicts).
    await warmUp([ROUTED, SINGLE]);
    const warm = samples.length;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const evictionsAtWarm = new Map((samples.at(-1) ?? []).map((h) => [h.binding, h.memory?.evictions ?? 0] as const));

    const results: Record<string, Phase> = {};
    for (const c of [4, 16]) {
      results[`en_${c}`] = await load(`hosts en-only text-scores x${c}`, ROUTED, c, english1, token);
      results[`mixed_${c}`] = await load(`hosts mixed text-scores x${c}`, ROUTED, c, mixed, token);
    }
    // Latency at one connection (the workerd thread not saturated: at 4 the p50 is mostly queueing
    // behind the thread's per-request CPU), then throughput at 4.
    results.single_en = await load('one-Worker en-only text-scores x1', SINGLE, 1, english1, token);
    results.hosts_en = await load('hosts en-only text-scores x1', ROUTED, 1, english1, token);
    results.single_find = await load('one-Worker en find-and-score x1', SINGLE, 1, find, token);
    results.hosts_find = await load('hosts en find-and-score x1', ROUTED, 1, find, token);
    results.single_en_4 = await load('one-Worker en-only text-scores x4', SINGLE, 4, english1, token);
    results.single_find_4 = await load('one-Worker en find-and-score x4', SINGLE, 4, find, token);
    results.hosts_find_4 = await load('hosts en find-and-score x4', ROUTED, 4, find, token);
    results.single_mixed = await load('one-Worker mixed text-scores x4', SINGLE, 4, mixed, token);

    sampling = false;
    await sampler;

    // The Durable Object candidate: the same placement, one ModelHostObject per host (bench entry).
    await stopWranglerDev(child);
    child = await startLocalWorker(PORT, state, [
      '--log-level',
      'warn',
      '--entry',
      'bench/workers/topology-do-entry.ts',
      '--host-kind',
      'durable-object',
      '--direct-port',
      String(DIRECT_PORT),
      // The hosts keep the isolate's budget whatever the placement was packed for.
      ...(args['placement-budget']
        ? ['--placement', placementFile, '--var', `MODEL_MEMORY_BUDGET_BYTES=${DEFAULT_MEMORY_BUDGET_BYTES}`]
        : []),
    ]);
    await warmUp([ROUTED]);
    for (const c of [4, 16]) {
      results[`do_en_${c}`] = await load(`objects en-only text-scores x${c}`, ROUTED, c, english1, token);
      results[`do_mixed_${c}`] = await load(`objects mixed text-scores x${c}`, ROUTED, c, mixed, token);
    }
    const after = samples.slice(warm);
    const last = samples.at(-1) ?? [];
    let overBudget = 0;
    let missing = 0;
    for (const sample of samples)
      for (const h of sample) {
        if (!h.memory) missing++;
        else if (h.memory.totalBytes > h.memory.budgetBytes) overBudget++;
      }
    const evictionsAfterWarm = last.reduce(
      (n, h) => n + Math.max(0, (h.memory?.evictions ?? 0) - (evictionsAtWarm.get(h.binding) ?? 0)),
      0,
    );
    const maxBytes = new Map<string, number>();
    // Each host's own budget, as its isolate reports it (the placement may have been packed for another).
    const budgets = new Map<string, number>();
    for (const sample of samples)
      for (const h of sample) {
        maxBytes.set(h.binding, Math.max(maxBytes.get(h.binding) ?? 0, h.memory?.totalBytes ?? 0));
        if (h.memory) budgets.set(h.binding, h.memory.budgetBytes);
      }

    console.log('');
    for (const h of placement.hosts)
      console.log(
        `[bench:topology] ${h.name} (${h.models.join(', ')}): max ${((maxBytes.get(h.binding) ?? 0) / 2 ** 20).toFixed(1)} MiB in use, budget ${((budgets.get(h.binding) ?? NaN) / 2 ** 20).toFixed(1)} MiB, isolate cap ${(CAP_BYTES / 2 ** 20).toFixed(0)} MiB; placed ${(h.bytes / 2 ** 20).toFixed(1)} MiB`,
      );
    const ratio = (a: Phase, b: Phase) => a.perSecond / b.perSecond;
    const checks = {
      mixed_over_en_4: ratio(results.mixed_4!, results.en_4!),
      mixed_over_en_16: ratio(results.mixed_16!, results.en_16!),
      p99_mixed_over_en_4: results.mixed_4!.p99 / results.en_4!.p99,
      p99_mixed_over_en_16: results.mixed_16!.p99 / results.en_16!.p99,
      text_p50_hosts_minus_single_ms: results.hosts_en!.p50 - results.single_en!.p50,
      find_p50_hosts_minus_single_ms: results.hosts_find!.p50 - results.single_find!.p50,
      single_mixed_over_single_en: ratio(results.single_mixed!, results.single_en_4!),
      hosts_over_single_en_4: ratio(results.en_4!, results.single_en_4!),
      hosts_over_single_find_4: ratio(results.hosts_find_4!, results.single_find_4!),
      do_mixed_over_en_4: ratio(results.do_mixed_4!, results.do_en_4!),
      do_mixed_over_en_16: ratio(results.do_mixed_16!, results.do_en_16!),
      do_over_service_en_16: ratio(results.do_en_16!, results.en_16!),
      do_over_service_mixed_16: ratio(results.do_mixed_16!, results.mixed_16!),
    };
    const met = {
      throughput: checks.mixed_over_en_4 >= 0.8 && checks.mixed_over_en_16 >= 0.8,
      p99: checks.p99_mixed_over_en_4 <= 2 && checks.p99_mixed_over_en_16 <= 2,
      regression: checks.text_p50_hosts_minus_single_ms <= 1 && checks.find_p50_hosts_minus_single_ms <= 1,
      evictions: evictionsAfterWarm === 0,
      budget: overBudget === 0 && missing === 0,
      // Every answer through the hosts is a 200 (the one-Worker mixed phase is the baseline they replace).
      errors: Object.entries(results).every(([k, p]) => k === 'single_mixed' || p.errors === 0),
    };
    console.log(
      `[bench:topology] mixed/en throughput x4 ${checks.mixed_over_en_4.toFixed(2)}, x16 ${checks.mixed_over_en_16.toFixed(2)} (target >= 0.8: ${met.throughput ? 'MET' : 'NOT MET'}); ` +
        `one-Worker mixed/en ${checks.single_mixed_over_single_en.toFixed(2)}`,
    );
    console.log(
      `[bench:topology] mixed/en p99 x4 ${checks.p99_mixed_over_en_4.toFixed(2)}, x16 ${checks.p99_mixed_over_en_16.toFixed(2)} (target <= 2: ${met.p99 ? 'MET' : 'NOT MET'})`,
    );
    console.log(
      `[bench:topology] throughput hosts/one-Worker at x4 (English only): text-scores ${checks.hosts_over_single_en_4.toFixed(2)}, find-and-score ${checks.hosts_over_single_find_4.toFixed(2)}`,
    );
    console.log(
      `[bench:topology] en p50 at x1 hosts - one-Worker: text-scores ${checks.text_p50_hosts_minus_single_ms.toFixed(2)} ms, find-and-score ${checks.find_p50_hosts_minus_single_ms.toFixed(2)} ms (target <= 1 ms: ${met.regression ? 'MET' : 'NOT MET'})`,
    );
    console.log(
      `[bench:topology] evictions after warm-up ${evictionsAfterWarm} (target 0: ${met.evictions ? 'MET' : 'NOT MET'}); samples over budget ${overBudget}, unanswered ${missing} of ${samples.length * placement.hosts.length} (target 0: ${met.budget ? 'MET' : 'NOT MET'})`,
    );
    console.log(
      `[bench:topology] Durable Object candidate: mixed/en x4 ${checks.do_mixed_over_en_4.toFixed(2)}, x16 ${checks.do_mixed_over_en_16.toFixed(2)}; ` +
        `objects/service bindings at x16: en ${checks.do_over_service_en_16.toFixed(2)}, mixed ${checks.do_over_service_mixed_16.toFixed(2)}`,
    );
    const ok = Object.values(met).every(Boolean);
    if (!ok) process.exitCode = 1;
    console.log(
      JSON.stringify({
        topology_seconds_per_phase: SECONDS,
        topology_hosts: placement.hosts.map((h) => ({
          name: h.name,
          models: h.models,
          placed_mib: +(h.bytes / 2 ** 20).toFixed(1),
          max_in_use_mib: +((maxBytes.get(h.binding) ?? 0) / 2 ** 20).toFixed(1),
          budget_mib: +((budgets.get(h.binding) ?? NaN) / 2 ** 20).toFixed(1),
          cap_mib: CAP_BYTES / 2 ** 20,
        })),
        ...Object.fromEntries(
          Object.entries(results).map(([k, p]) => [
            `topology_${k}`,
            { per_s: +p.perSecond.toFixed(1), p50_ms: +p.p50.toFixed(2), p99_ms: +p.p99.toFixed(2), errors: p.errors },
          ]),
        ),
        ...Object.fromEntries(Object.entries(checks).map(([k, v]) => [`topology_${k}`, +v.toFixed(3)])),
        topology_evictions_after_warmup: evictionsAfterWarm,
        topology_samples: samples.length,
        topology_samples_after_warmup: after.length,
        topology_samples_over_budget: overBudget,
        topology_targets_met: ok,
      }),
    );
  } finally {
    await stopWranglerDev(child);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
