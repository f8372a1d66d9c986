/**
 * bench:overload section 5: throughput of bench/api.ts's text-scores request (10 texts x 200
 * words, 3 dimensions, goal with zscore) on the code of this working tree against a base commit
 * (BENCH_OVERLOAD_BASE, default HEAD~1), one server at a time, in alternating rounds.
 *
 * The base commit is checked out with `git worktree add --detach` (default /tmp/overload-prev;
 * BENCH_OVERLOAD_BASE_DIR). It gets this tree's node_modules (a symlink), .dev.vars (a copy: the
 * same development secret, so the same tokens) and a copy of build/generated without the Worker
 * bundles (models, language data, mappers, sub-word tables, browser bundle, placement, with their
 * stamps and times, so its ensure steps find them fresh; a copy, not a link, so that a build step
 * that differs at the base rebuilds into the copy; files it already has are kept, so such a
 * rebuild happens once). Its own test/e2e/support/dev-server.ts starts
 * its server (bundled from its own worker/ and core/, in its own state directory), as this tree's
 * starts the current one.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { GENERATED, ROOT } from '../../build/paths';
import type * as DevServer from '../../test/e2e/support/dev-server';
import { median, send, type Req } from './http';

export interface BaseTree {
  dir: string;
  ref: string;
  commit: string;
  subject: string;
}

const git = (args: string[], cwd = ROOT): string => execFileSync('git', args, { cwd, encoding: 'utf8' }).trim();

/** Generated folders and files not copied: the Worker bundles (rebuilt from the base's sources) and deploy output. */
const NOT_COPIED = new Set(['worker-bundle', 'deploy']);

/**
 * Copies into `dst` the files of `src` that `dst` lacks (not locks or temp files), with their
 * times. A file the base's ensure steps rebuilt (its stamp differed at the base) stays theirs.
 */
function syncTree(src: string, dst: string, top = true): number {
  let copied = 0;
  fs.mkdirSync(dst, { recursive: true });
  for (const entry of fs.readdirSync(src, { withFileTypes: true })) {
    if ((top && NOT_COPIED.has(entry.name)) || /\.(lock|tmp|copy)$/.test(entry.name)) continue;
    const s = path.join(src, entry.name);
    const d = path.join(dst, entry.name);
    if (entry.isDirectory()) copied += syncTree(s, d, false);
    else if (entry.isFile()) {
      if (fs.existsSync(d)) continue;
      const a = fs.statSync(s);
      const tmp = `${d}.${process.pid}.copy`;
      fs.copyFileSync(s, tmp);
      fs.utimesSync(tmp, a.atime, a.mtime);
      fs.renameSync(tmp, d);
      copied++;
    }
  }
  return copied;
}

/** The base commit's worktree at `dir`, made or reused, with node_modules, .dev.vars and the generated data. */
export function prepareBaseTree(ref: string, dir: string): BaseTree {
  const commit = git(['rev-parse', '--verify', `${ref}^{commit}`]);
  const subject = git(['log', '-1', '--format=%h %s', commit]);
  const registered = git(['worktree', 'list', '--porcelain'])
    .split('\n')
    .some((l) => l === `worktree ${dir}`);
  if (fs.existsSync(dir)) {
    let at = '';
    try {
      at = git(['rev-parse', 'HEAD'], dir);
    } catch {
      // not a git checkout
    }
    if (at !== commit) {
      if (!registered)
        throw new Error(
          `${dir} exists and is not a worktree of this repository: remove it or set BENCH_OVERLOAD_BASE_DIR`,
        );
      git(['worktree', 'remove', '--force', dir]);
    }
  } else if (registered) git(['worktree', 'prune']);
  if (!fs.existsSync(dir)) git(['worktree', 'add', '--detach', dir, commit]);
  const modules = path.join(dir, 'node_modules');
  if (!fs.existsSync(modules)) fs.symlinkSync(path.join(ROOT, 'node_modules'), modules, 'dir');
  const devVars = path.join(ROOT, '.dev.vars');
  if (fs.existsSync(devVars)) fs.copyFileSync(devVars, path.join(dir, '.dev.vars'));
  const copied = syncTree(GENERATED, path.join(dir, 'build', 'generated'));
  console.log(`[bench:overload] base ${subject} in ${dir} (${copied} generated files copied)`);
  return { dir, ref, commit, subject };
}

/** The base tree's own startLocalWorker (its build/ensure, seeding and build/serve.ts). */
export async function baseDevServer(tree: BaseTree): Promise<typeof DevServer> {
  // Its build/paths.ts must find its own build/generated, not a folder this process was told about.
  const saved = process.env.EMBEDDING_EDGE_GENERATED;
  delete process.env.EMBEDDING_EDGE_GENERATED;
  try {
    return (await import(
      pathToFileURL(path.join(tree.dir, 'test', 'e2e', 'support', 'dev-server.ts')).href
    )) as typeof DevServer;
  } finally {
    if (saved !== undefined) process.env.EMBEDDING_EDGE_GENERATED = saved;
  }
}

export interface Side {
  name: string;
  base: string;
  start(): Promise<ChildProcess>;
  stop(child: ChildProcess): Promise<void>;
  /** Fresh workspaces (one per connection) with their tokens, on the running server. */
  workspaces(n: number): Promise<Array<{ ws: string; token: string }>>;
}

export interface RoundFigures {
  side: string;
  round: number;
  ok: number;
  other: number;
  perSecond: number;
  p50Ms: number;
  startMs: number;
  /** The machine's 1-minute load average at the end of the round (others' work shows here). */
  load1: number;
}

/** `connections` closed loops of `req(i)` (connection i) for `seconds`: 200 answers per second. */
async function closedLoop(
  base: string,
  clients: Array<{ ws: string; token: string }>,
  req: (ws: string) => Req,
  seconds: number,
): Promise<Omit<RoundFigures, 'side' | 'round' | 'startMs' | 'load1'>> {
  const pool = new Pool(base, { connections: clients.length, keepAliveTimeout: 1_000, keepAliveMaxTimeout: 1_000 });
  const times: number[] = [];
  let ok = 0;
  let other = 0;
  const t0 = performance.now();
  const until = t0 + seconds * 1000;
  await Promise.all(
    clients.map(async ({ ws, token }) => {
      while (performance.now() < until) {
        const a = await send(pool, base, req(ws), token, 30_000);
        if (a.status === 200) {
          ok++;
          times.push(a.ms);
        } else other++;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  await pool.close();
  return { ok, other, perSecond: ok / elapsed, p50Ms: median(times) };
}

/**
 * `rounds` rounds; in each both sides, one after the other (the order alternates), each started,
 * warmed up (20 requests), measured for `seconds` at `connections` and stopped.
 */
export async function compareThroughput(
  sides: [Side, Side],
  req: (ws: string) => Req,
  options: { rounds: number; seconds: number; connections: number },
): Promise<RoundFigures[]> {
  const figures: RoundFigures[] = [];
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? sides : ([sides[1], sides[0]] as const);
    for (const side of order) {
      const t0 = performance.now();
      const child = await side.start();
      const startMs = performance.now() - t0;
      try {
        const clients = await side.workspaces(options.connections);
        const warm = new Pool(side.base, { connections: 1 });
        for (let i = 0; i < 20; i++) {
          const { ws, token } = clients[i % clients.length];
          const a = await send(warm, side.base, req(ws), token, 60_000);
          if (a.status !== 200 && i === 19)
            throw new Error(`${side.name} warm-up: ${a.status} ${a.code ?? a.error ?? ''}`);
        }
        await warm.close();
        const f = await closedLoop(side.base, clients, req, options.seconds);
        const load1 = os.loadavg()[0];
        figures.push({ side: side.name, round, startMs, load1, ...f });
        console.log(
          `[bench:overload] round ${round + 1} ${side.name.padEnd(8)} ${f.perSecond.toFixed(1).padStart(7)} req/s  p50 ${f.p50Ms.toFixed(1)} ms  (${f.ok} x 200, ${f.other} other; server started in ${(startMs / 1000).toFixed(1)} s; load ${load1.toFixed(1)})`,
        );
      } finally {
        await side.stop(child);
      }
    }
  }
  return figures;
}
