/**
 * Optional data from Debian packages: `apt-get download` of a pinned version, unpacked with
 * `dpkg-deb -x` into a temp dir (nothing is installed). On a machine without apt-get or
 * dpkg-deb (macOS), or where the download fails (no network, no apt access), the data is skipped
 * and the build goes on without it; what was skipped, why and how to retry now is said by every
 * run that skips it, at the end of the ensure run (reportDebianSkips).
 *
 * A skip is recorded with its cause (skip record below). The tools missing: tried again as soon as
 * apt-get or dpkg-deb on PATH is another file than then. A failed download: tried again at once when
 * the network answers again (a cheap probe), else at most once an hour, so a machine without
 * network does not wait on apt-get in every `npm start` and test run. EMBEDDING_EDGE_RETRY_DEBIAN=1
 * (and `npm run model:build`, an explicit request) retries whatever the record says.
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

/** Set to 1: every recorded skip is tried again now (an explicit request is not throttled). */
export const RETRY_ENV = 'EMBEDDING_EDGE_RETRY_DEBIAN';

/** Makes this process and its children retry every recorded skip (`npm run model:build`). */
export function retryDebianNow(): void {
  process.env[RETRY_ENV] = '1';
}

/**
 * Skips, per package spec: why, when, and the cause (one file for the whole machine, so every
 * process of a run, and every run within the hour, sees the same answer).
 */
export const SKIP_RECORD = path.join(GENERATED, 'debian-skipped.json');
export const RETRY_AFTER_MS = 60 * 60 * 1000;

/** "tool missing": apt-get or dpkg-deb not there (or not runnable); "network": the download failed. */
export type SkipCause = 'tool missing' | 'network';

interface SkipRecord {
  reason: string;
  at: number;
  cause: SkipCause;
  /** With "tool missing": the tools as found on PATH then (toolsSignature). */
  tools?: string;
}

export const debianSpec = (d: Pick<DebianFile, 'pkg' | 'version'>): string => `${d.pkg}=${d.version}`;

/** A tool that could not be started: the shell's "command not found", exit 127, or ENOENT. */
const TOOL_NOT_RUNNABLE = /command not found|ENOENT|No such file or directory/i;

function readRecord(): Map<string, SkipRecord> {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(SKIP_RECORD, 'utf8'));
    if (!parsed || typeof parsed !== 'object') return new Map();
    const out = new Map<string, SkipRecord>();
    for (const [spec, v] of Object.entries(parsed as Record<string, Partial<SkipRecord>>)) {
      if (typeof v?.reason !== 'string' || typeof v.at !== 'number') continue;
      // A record of before the cause was kept: a tool that could not be started is told by its reason.
      const cause = v.cause ?? (TOOL_NOT_RUNNABLE.test(v.reason) ? 'tool missing' : 'network');
      out.set(spec, { reason: v.reason, at: v.at, cause, ...(typeof v.tools === 'string' ? { tools: v.tools } : {}) });
    }
    return out;
  } catch {
    return new Map();
  }
}

function writeRecord(all: Map<string, SkipRecord>): void {
  fs.mkdirSync(GENERATED, { recursive: true });
  writeAtomic(SKIP_RECORD, `${JSON.stringify(Object.fromEntries(all), null, 2)}\n`);
}

function record(d: Pick<DebianFile, 'pkg' | 'version'>, skip: SkipRecord): void {
  const all = readRecord();
  all.set(debianSpec(d), skip);
  writeRecord(all);
}

/** Records that `d` was skipped because the tools are missing (the next start with them tries at once). */
export function recordToolsMissing(d: Pick<DebianFile, 'pkg' | 'version'>): void {
  const prev = readRecord().get(debianSpec(d));
  const tools = toolsSignature();
  if (prev?.cause === 'tool missing' && prev.tools === tools) return;
  record(d, { reason: NO_DEBIAN_TOOLS, at: Date.now(), cause: 'tool missing', tools });
}

const PROCESS_STARTED = Date.now() - process.uptime() * 1000;

/**
 * Whether the network answers now: the package's URI as apt would fetch it (`apt-get download
 * --print-uris`, read from the local package lists), asked for its headers with a 5 s timeout.
 * One probe per process: every package comes from the same mirror.
 */
let networkAnswered: boolean | undefined;
function networkAnswers(d: Pick<DebianFile, 'pkg' | 'version'>): boolean {
  if (networkAnswered !== undefined) return networkAnswered;
  const uris = spawnSync('apt-get', ['download', '--print-uris', debianSpec(d)], {
    encoding: 'utf8',
    timeout: 15_000,
  });
  const uri = uris.status === 0 ? /^'(https?:\/\/[^']+)'/m.exec(uris.stdout)?.[1] : undefined;
  if (!uri) return (networkAnswered = false);
  const head = spawnSync(
    process.execPath,
    [
      '-e',
      "fetch(process.argv[1], { method: 'HEAD', signal: AbortSignal.timeout(5000) }).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))",
      uri,
    ],
    { stdio: 'ignore', timeout: 10_000 },
  );
  return (networkAnswered = head.status === 0);
}

/** Why a fetch of `d` is not tried now, and until when (null: until the cause changes). */
export interface Blocked {
  reason: string;
  cause: SkipCause;
  retryAt: number | null;
}

/**
 * The recorded skip of `d` that still holds, if any. Tools missing: while apt-get and dpkg-deb on
 * PATH are what they were. A failed download: within the hour, unless the network answers now.
 * A skip recorded before this process started gives way to EMBEDDING_EDGE_RETRY_DEBIAN=1; one of
 * this run (this process's, or a child's) holds, so a run tries each package once.
 */
export function blockedDownload(d: Pick<DebianFile, 'pkg' | 'version'>): Blocked | null {
  const skip = readRecord().get(debianSpec(d));
  if (!skip) return null;
  const thisRun = skip.at >= PROCESS_STARTED;
  if (!thisRun && process.env[RETRY_ENV] === '1') return null;
  if (skip.cause === 'tool missing')
    return skip.tools === toolsSignature() ? { reason: skip.reason, cause: skip.cause, retryAt: null } : null;
  const retryAt = skip.at + RETRY_AFTER_MS;
  if (Date.now() >= retryAt) return null;
  if (!thisRun && debianToolsAvailable() && networkAnswers(d)) return null;
  return { reason: skip.reason, cause: skip.cause, retryAt };
}

const APT_LOCK = path.join(GENERATED, 'apt.lock');

/**
 * One build process at a time downloads (the aligned models build in two): two `apt-get update` at
 * once fail on apt's own lock, and that failure would block the package for an hour. A lock older
 * than any download (its process was killed) is taken over.
 */
const withAptLock = <T>(work: () => T): T => withLockSync(APT_LOCK, 10 * 60_000, work);

/** The executable `cmd` resolves to on PATH, or null. */
function which(cmd: string): string | null {
  for (const d of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const file = path.join(d, cmd);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not in this directory
    }
  }
  return null;
}

/** apt-get and dpkg-deb as found on PATH (which files, and their size and time): what a tools-missing skip compares. */
function toolsSignature(): string {
  return ['apt-get', 'dpkg-deb']
    .map((cmd) => {
      const file = which(cmd);
      if (!file) return `${cmd}:none`;
      const st = fs.statSync(file);
      return `${file}:${st.size}:${Math.round(st.mtimeMs)}`;
    })
    .join(' ');
}

/** Whether this machine can fetch Debian packages at all (apt-get and dpkg-deb on PATH). */
export function debianToolsAvailable(): boolean {
  return which('apt-get') !== null && which('dpkg-deb') !== null;
}

/** Why `d` would not be fetched now (tools missing, or a recorded skip that still holds), or null. */
export function debianSkipNow(d: Pick<DebianFile, 'pkg' | 'version'>): Blocked | null {
  if (!debianToolsAvailable()) return { reason: NO_DEBIAN_TOOLS, cause: 'tool missing', retryAt: null };
  return blockedDownload(d);
}

/** Whether a fetch of `d` would try a download now. */
export function debianFetchDue(d: DebianFile): boolean {
  return debianSkipNow(d) === null;
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

/** The command that retries every recorded skip now. */
export const RETRY_COMMAND = `${RETRY_ENV}=1 npm start`;

/** What follows from a cause: when it is tried again, or what adds it, and how to retry now. */
function outlook(retryAt: number | null): string {
  if (retryAt === null && !debianToolsAvailable())
    return 'added by a build where apt-get and dpkg-deb are on PATH (Debian/Ubuntu)';
  const retry = `retry now: ${RETRY_COMMAND}`;
  if (retryAt === null) return `the next build with other apt-get/dpkg-deb tries again; ${retry}`;
  const next = `the first build after ${clock(retryAt)} tries again (sooner once the network answers); ${retry}`;
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
    /** Whether it was noted for the run's skip report. */
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
 * be had here, why (recorded with its cause, and noted for the run's skip report as missing from
 * `what`). A recorded skip that still holds (blockedDownload) is not tried again.
 */
export function fetchDebianFile(d: DebianFile, tmp: string, what: string): DebianFetch {
  const spec = debianSpec(d);
  if (!debianToolsAvailable()) {
    recordToolsMissing(d);
    return missing(what, d, NO_DEBIAN_TOOLS, null);
  }
  const seen = readRecord().get(spec)?.at;
  const blocked = blockedDownload(d);
  if (blocked) return missing(what, d, blocked.reason, blocked.retryAt);
  const dir = fs.mkdtempSync(path.join(tmp, `${d.pkg}-`));
  const fetched = withAptLock((): { deb: string } | { reason: string; retryAt: number | null } => {
    // Another process may have tried (and recorded) this very download while this one waited.
    const now = readRecord().get(spec);
    if (now && now.at !== seen)
      return { reason: now.reason, retryAt: now.cause === 'network' ? now.at + RETRY_AFTER_MS : null };
    const download = () => spawnSync('apt-get', ['download', spec], { cwd: dir, encoding: 'utf8' });
    let res = download();
    if (res.status !== 0 && !notRunnable(res)) {
      // Package lists may be missing on a fresh machine.
      spawnSync('apt-get', ['update'], { encoding: 'utf8', stdio: 'ignore' });
      res = download();
    }
    const deb = fs.readdirSync(dir).find((f) => f.endsWith('.deb'));
    if (res.status !== 0 || !deb) {
      const reason = `apt-get download failed: ${firstError(res.stderr || res.error?.message || '')}`;
      const at = Date.now();
      // apt-get there but not runnable (a stub, a broken install): retried once the file changes.
      if (notRunnable(res)) {
        record(d, { reason, at, cause: 'tool missing', tools: toolsSignature() });
        return { reason, retryAt: null };
      }
      record(d, { reason, at, cause: 'network' });
      return { reason, retryAt: at + RETRY_AFTER_MS };
    }
    const all = readRecord();
    if (all.delete(spec)) writeRecord(all);
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

/** apt-get could not be started at all (not a download that failed). */
function notRunnable(res: { status: number | null; stderr: string; error?: Error }): boolean {
  return (
    res.status === 127 ||
    (res.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT' ||
    /command not found/i.test(res.stderr ?? '')
  );
}
