/**
 * Issue 12 defect 6 reproduction against a running `npm start` (default http://127.0.0.1:8787):
 * rounds of `concurrency` concurrent metered POSTs (text-scores) while `connections` loops send
 * the soak's mix of ordinary and hostile requests (traffic.ts). Every answer is checked: 5xx,
 * error bodies that are not problem+json, and wrangler's own plain-text 503 "Your worker
 * restarted mid-request" (its dev proxy answers so when the Worker was reloaded while a
 * non-GET request was in flight) counted apart.
 *
 *   flock /tmp/wrangler-dev.lock npm start &        (a stable tree: no edits while it runs)
 *   npx tsx bench/burst.ts --rounds 6 --concurrency 200 --connections 32
 *   npx tsx bench/burst.ts --edit worker/index.ts   (appends a comment to the file in each
 *       round and restores it: wrangler dev reloads the Worker, which shows the mechanism)
 *
 * The last line printed is one JSON object with the figures.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { prng } from '../core/prng';
import { ROOT } from '../build/wrangler';
import { devSecret, mint } from '../test/e2e/support/dev-server';
import { burstRequest, mergeTallies, newTally, requestMix, send, type Tally } from './traffic';

const { values: args } = parseArgs({
  options: {
    base: { type: 'string', default: 'http://127.0.0.1:8787' },
    rounds: { type: 'string', default: '6' },
    concurrency: { type: 'string', default: '200' },
    connections: { type: 'string', default: '32' },
    seed: { type: 'string', default: '1212' },
    edit: { type: 'string' },
  },
});
const BASE = args.base!;
const ROUNDS = Number(args.rounds);
const CONCURRENCY = Number(args.concurrency);
const CONNECTIONS = Number(args.connections);
const SEED = Number(args.seed);

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const secret = devSecret();
  const admin = await mint(secret, { scope: 'admin', sub: 'bench-burst' }, 24 * 3600);
  const ws = `burst_${Date.now().toString(36)}`;
  const created = await fetch(`${BASE}/api/admin/v1/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      id: ws,
      name: 'burst',
      anchorDay: 1,
      quotas: [
        { usageTypeKey: 'tokens', limitAmount: 1_000_000_000, limitAmountDaily: 1_000_000_000 },
        { usageTypeKey: 'plagiarismChecks', limitAmount: 1_000_000, limitAmountDaily: 1_000_000 },
      ],
    }),
  });
  if (created.status !== 201) throw new Error(`create workspace: ${created.status} ${await created.text()}`);
  const token = await mint(secret, { workspaceId: ws, sub: 'bench-burst' }, 24 * 3600);

  const mixed = newTally();
  const rounds: Tally[] = [];
  let done = false;
  const loops = Array.from({ length: CONNECTIONS }, async (_, i) => {
    const rand = prng(SEED + i);
    while (!done) await send(BASE, requestMix(rand, ws), token, admin, mixed);
  });
  const editFile = args.edit ? path.resolve(ROOT, args.edit) : null;
  const original = editFile ? fs.readFileSync(editFile, 'utf8') : '';
  const t0 = performance.now();
  try {
    for (let r = 0; r < ROUNDS; r++) {
      await sleep(3000);
      const tally = newTally();
      const burst = Promise.all(
        Array.from({ length: CONCURRENCY }, () => send(BASE, burstRequest(ws), token, admin, tally)),
      );
      if (editFile) {
        await sleep(200);
        fs.writeFileSync(editFile, `${original}\n// burst ${r}\n`);
      }
      await burst;
      if (editFile) fs.writeFileSync(editFile, original);
      rounds.push(tally);
      console.log(`[bench:burst] round ${r + 1}: ${JSON.stringify(Object.fromEntries(tally.byStatus))}`);
    }
  } finally {
    if (editFile) fs.writeFileSync(editFile, original);
    done = true;
    await Promise.all(loops);
  }
  const bursts = mergeTallies(...rounds);
  const all = mergeTallies(mixed, bursts);
  for (const s of all.samples.slice(0, 10)) console.log(`[bench:burst] sample: ${s}`);
  console.log(
    JSON.stringify({
      burst_base: BASE,
      burst_rounds: ROUNDS,
      burst_concurrency: CONCURRENCY,
      burst_connections: CONNECTIONS,
      burst_edit: args.edit ?? null,
      burst_seconds: +((performance.now() - t0) / 1000).toFixed(1),
      burst_requests: all.total,
      burst_status_counts: Object.fromEntries([...all.byStatus].sort((a, b) => a[0] - b[0])),
      burst_5xx: all.fiveXX,
      burst_non_problem_errors: all.nonProblem,
      burst_burst_5xx: bursts.fiveXX,
      burst_restart_answers: all.restarts,
    }),
  );
  if (all.fiveXX > 0 || all.nonProblem > 0) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
