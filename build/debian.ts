/**
 * Optional data from Debian packages: `apt-get download` of a pinned version, unpacked with
 * `dpkg-deb -x` into a temp dir (nothing is installed). On a machine without apt-get or
 * dpkg-deb (macOS), or where the download fails (no network, no apt access), the data is skipped
 * and the build goes on without it; what was skipped and why is said once, at the end of the
 * ensure run (reportDebianSkips).
 *
 * A failed download is tried again, but at most once an hour (failed-downloads record below): a
 * machine without network must not wait on apt-get in every `npm start` and test run.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GENERATED } from './paths';
import { withLockSync, writeAtomic } from './stamp';

export interface DebianFile {
  /** Package name, e.g. "mythes-fr". */
  pkg: string;
  /** Exact Debian version, e.g. "1:7.5.0-1". */
  version: string;
  /** Path of the wanted file inside the package. */
  file: string;
}

/** What a fetch gave: the unpacked file, or why the package could not be had. */
export type DebianFetch = { file: string } | { missing: string; retryAt: number | null };

/** The reason recorded when the tools themselves are missing (no retry schedule: their arrival is seen at once). */
export const NO_DEBIAN_TOOLS = 'apt-get/dpkg-deb not found on PATH';

/**
 * Failed downloads, per package spec, with the reason and when (one file for the whole machine,
 * so every process of a run, and every run within the hour, sees the same answer).
 */
const FAILED_FILE = path.join(GENERATED, 'debian-skipped.json');
export const RETRY_AFTER_MS = 60 * 60 * 1000;

interface FailedDownload {
  reason: string;
  at: number;
}

export const debianSpec = (d: Pick<DebianFile, 'pkg' | 'version'>): string => `${d.pkg}=${d.version}`;

function readFailed(): Map<string, FailedDownload> {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(FAILED_FILE, 'utf8'));
    if (!parsed || typeof parsed !== 'object') return new Map();
    const out = new Map<string, FailedDownload>();
    for (const [spec, v] of Object.entries(parsed as Record<string, Partial<FailedDownload>>))
      if (typeof v?.reason === 'string' && typeof v.at === 'number') out.set(spec, { reason: v.reason, at: v.at });
    return out;
  } catch {
    return new Map();
  }
}

function writeFailed(all: Map<string, FailedDownload>): void {
  fs.mkdirSync(GENERATED, { recursive: true });
  writeAtomic(FAILED_FILE, `${JSON.stringify(Object.fromEntries(all), null, 2)}\n`);
}

/**
 * The failed download of `d` that still blocks a retry (within the hour), if any: why, when it is
 * tried again, and whether it failed during this run (since this process started: in it or in a
 * child process of it, which leaves the saying to this one), i.e. is not said yet.
 */
export function recentFailure(
  d: Pick<DebianFile, 'pkg' | 'version'>,
): { reason: string; retryAt: number; thisRun: boolean } | null {
  const failed = readFailed().get(debianSpec(d));
  return failed && Date.now() - failed.at < RETRY_AFTER_MS
    ? { reason: failed.reason, retryAt: failed.at + RETRY_AFTER_MS, thisRun: failed.at >= PROCESS_STARTED }
    : null;
}

const PROCESS_STARTED = Date.now() - process.uptime() * 1000;

const APT_LOCK = path.join(GENERATED, 'apt.lock');

/**
 * One build process at a time downloads (the aligned models build in two): two `apt-get update` at
 * once fail on apt's own lock, and that failure would block the package for an hour. A lock older
 * than any download (its process was killed) is taken over.
 */
const withAptLock = <T>(work: () => T): T => withLockSync(APT_LOCK, 10 * 60_000, work);

function onPath(cmd: string): boolean {
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter(Boolean);
  return dirs.some((d) => {
    try {
      fs.accessSync(path.join(d, cmd), fs.constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Whether this machine can fetch Debian packages at all (apt-get and dpkg-deb on PATH). */
export function debianToolsAvailable(): boolean {
  return onPath('apt-get') && onPath('dpkg-deb');
}

/** Whether a fetch of `d` would try a download now: the tools are there and no download failed within the hour. */
export function debianFetchDue(d: DebianFile): boolean {
  return debianToolsAvailable() && recentFailure(d) === null;
}

// ---------------------------------------------------------------------------------------------
// Skip report: every skip of the run, said once at its end
// ---------------------------------------------------------------------------------------------

interface SkipNote {
  /** What goes without the package, e.g. "German synonyms". */
  what: string;
  pkg: string;
  reason: string;
  /** When the next download is tried; null when the tools are missing. */
  retryAt: number | null;
}

const notes: SkipNote[] = [];
/** Skips this process has said (what, package, reason): a process that ensures twice says them once. */
const said = new Set<string>();
let reportDepth = 0;

/** Records that `what` goes without `d` this run (said by the enclosing reportDebianSkips). */
export function noteDebianSkip(what: string, d: Pick<DebianFile, 'pkg'>, reason: string, retryAt: number | null): void {
  const key = JSON.stringify([what, d.pkg, reason]);
  if (said.has(key)) return;
  said.add(key);
  notes.push({ what, pkg: d.pkg, reason, retryAt });
}

/**
 * Runs `work`; when the outermost of these ends, prints the Debian skips of the run: one line
 * when they have one cause, else one block with a line per cause. The ensure run (build/ensure.ts)
 * and each ensure step wrap themselves, so a step run on its own reports too.
 */
export async function reportDebianSkips<T>(work: () => Promise<T>): Promise<T> {
  reportDepth++;
  try {
    return await work();
  } finally {
    if (--reportDepth === 0) {
      const lines = skipReport(notes.splice(0));
      if (lines.length > 0) console.warn(lines.join('\n'));
    }
  }
}

/** "13:05" (local time): when the next build tries the download again. */
function clock(ms: number): string {
  return new Date(ms).toTimeString().slice(0, 5);
}

/** What follows from a cause: when it is tried again, or what adds it. */
function outlook(retryAt: number | null): string {
  if (retryAt === null) return 'added by a build where apt-get and dpkg-deb are on PATH (Debian/Ubuntu)';
  const next = `the first build after ${clock(retryAt)} tries again`;
  // The apt-get update run after a failed download needs root; root is never told to become root.
  return process.getuid?.() === 0 ? next : `${next} (if the package lists are missing: sudo apt-get update)`;
}

/** The lines of the skip report: one per cause (a cause lists everything it skipped). */
export function skipReport(all: readonly SkipNote[]): string[] {
  const byReason = new Map<string, SkipNote[]>();
  for (const n of all) {
    const list = byReason.get(n.reason);
    if (list) list.push(n);
    else byReason.set(n.reason, [n]);
  }
  const causes = [...byReason].map(([reason, list]) => {
    const retryAt = list.reduce<number | null>(
      (at, n) => (n.retryAt === null ? at : Math.max(at ?? 0, n.retryAt)),
      null,
    );
    const skipped = list.map((n) => `${n.what} (${n.pkg})`).join(', ');
    return `${skipped}: ${reason}; ${outlook(retryAt)}`;
  });
  if (causes.length === 0) return [];
  if (causes.length === 1) return [`[debian] skipped ${causes[0]}`];
  return ['[debian] skipped optional Debian data:', ...causes.map((c) => `  ${c}`)];
}

// ---------------------------------------------------------------------------------------------
// Fetch
// ---------------------------------------------------------------------------------------------

/** Why something was not built: a Debian package it needs cannot be had here. */
export class DebianPackageMissing extends Error {
  constructor(
    readonly pkg: string,
    readonly version: string,
    readonly reason: string,
    readonly retryAt: number | null,
    /** Whether this run noted it for the skip report (else it was said within the hour). */
    readonly noted: boolean,
  ) {
    super(`needs the Debian package ${pkg}=${version} (${reason})`);
  }
}

/** The line of a failed command's output that says why: its first error ("E: ..."), else its first line. */
function firstError(output: string): string {
  const lines = output
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.find((l) => l.startsWith('E:')) ?? lines[0] ?? 'no output';
}

function missing(what: string, d: DebianFile, reason: string, retryAt: number | null): DebianFetch {
  noteDebianSkip(what, d, reason, retryAt);
  return { missing: reason, retryAt };
}

/**
 * The local path of `d.file` from the package, unpacked below `tmp`; or, when the package cannot
 * be had here, why (noted for the run's skip report as missing from `what`). A download that
 * failed within the hour is not tried again.
 */
export function fetchDebianFile(d: DebianFile, tmp: string, what: string): DebianFetch {
  const spec = debianSpec(d);
  if (!debianToolsAvailable()) return missing(what, d, NO_DEBIAN_TOOLS, null);
  const failed = recentFailure(d);
  if (failed) return missing(what, d, failed.reason, failed.retryAt);
  const dir = fs.mkdtempSync(path.join(tmp, `${d.pkg}-`));
  const fetched = withAptLock((): { deb: string } | { reason: string; retryAt: number } => {
    // Another process may have failed (and recorded) this very download while this one waited.
    const before = recentFailure(d);
    if (before) return before;
    const download = () => spawnSync('apt-get', ['download', spec], { cwd: dir, encoding: 'utf8' });
    let res = download();
    if (res.status !== 0) {
      // Package lists may be missing on a fresh machine.
      spawnSync('apt-get', ['update'], { encoding: 'utf8', stdio: 'ignore' });
      res = download();
    }
    const deb = fs.readdirSync(dir).find((f) => f.endsWith('.deb'));
    const all = readFailed();
    if (res.status !== 0 || !deb) {
      const reason = `apt-get download failed: ${firstError(res.stderr || res.error?.message || '')}`;
      const at = Date.now();
      all.set(spec, { reason, at });
      writeFailed(all);
      return { reason, retryAt: at + RETRY_AFTER_MS };
    }
    if (all.delete(spec)) writeFailed(all);
    return { deb };
  });
  if (!('deb' in fetched)) return missing(what, d, fetched.reason, fetched.retryAt);
  const deb = fetched.deb;
  const x = spawnSync('dpkg-deb', ['-x', path.join(dir, deb), path.join(dir, 'x')], { encoding: 'utf8' });
  if (x.status !== 0) throw new Error(`[debian] dpkg-deb -x ${deb} failed: ${firstError(x.stderr)}`);
  const file = path.join(dir, 'x', d.file);
  if (!fs.existsSync(file)) throw new Error(`[debian] ${d.pkg} has no ${d.file}`);
  return { file };
}
