/**
 * Shared pieces of the ensure steps: a stamp file recording what an output was built from, and
 * a lock file so that two processes (`npm start` and `npm test`, say) never build the same
 * output at once: one builds, the other waits and then finds the output fresh; and an atomic
 * write (temp file + rename) so that a reader never sees half a file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** True when the JSON stamp file exists and holds exactly `expected` (key order included). */
export function stampMatches(file: string, expected: unknown): boolean {
  if (!fs.existsSync(file)) return false;
  try {
    return JSON.stringify(JSON.parse(fs.readFileSync(file, 'utf8'))) === JSON.stringify(expected);
  } catch {
    return false;
  }
}

/** The SHA-256 of a file's bytes (hex), or null when it does not exist: a stamp input for a generated file. */
export function fileChecksum(file: string): string | null {
  if (!fs.existsSync(file)) return null;
  return crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Writes a stamp as pretty JSON with a trailing newline. */
export function writeStamp(file: string, stamp: unknown): void {
  writeAtomic(file, `${JSON.stringify(stamp, null, 2)}\n`);
}

/** Writes through a temp file beside `file` and a rename, so no reader ever sees half a file. */
export function writeAtomic(file: string, data: string | Uint8Array): void {
  const tmp = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`;
  fs.writeFileSync(tmp, data);
  fs.renameSync(tmp, file);
}

/**
 * Runs `work` holding `lockFile` (created exclusively), unless `isDone()` turns true first, in
 * which case `done()` is returned. A lock older than `staleMs`, or whose process has ended, is
 * taken to be left behind by a killed build and removed; waiting longer than `staleMs` for a live
 * one is an error.
 */
export async function withLock<T>(
  lockFile: string,
  staleMs: number,
  isDone: () => boolean,
  work: () => Promise<T>,
  done: () => T,
): Promise<T> {
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  const started = Date.now();
  for (;;) {
    const attempt = tryLock(lockFile, staleMs, started);
    if (attempt === 'taken') break;
    if (isDone()) return done();
    if (attempt === 'wait') await new Promise((r) => setTimeout(r, 500));
  }
  try {
    return isDone() ? done() : await work();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}

/** withLock for synchronous work (the Debian downloads, build/debian.ts): the thread sleeps while it waits. */
export function withLockSync<T>(lockFile: string, staleMs: number, work: () => T): T {
  fs.mkdirSync(path.dirname(lockFile), { recursive: true });
  const started = Date.now();
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  for (;;) {
    const attempt = tryLock(lockFile, staleMs, started);
    if (attempt === 'taken') break;
    if (attempt === 'wait') Atomics.wait(sleeper, 0, 0, 250);
  }
  try {
    return work();
  } finally {
    fs.rmSync(lockFile, { force: true });
  }
}

/**
 * One try at creating `lockFile` exclusively: 'taken'; 'again' when it was released or found stale
 * (and removed) meanwhile; 'wait' while a live process holds it. Waiting since `started` for
 * longer than `staleMs` is an error.
 */
function tryLock(lockFile: string, staleMs: number, started: number): 'taken' | 'again' | 'wait' {
  try {
    fs.writeFileSync(lockFile, String(process.pid), { flag: 'wx' });
    return 'taken';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    const age = lockAge(lockFile);
    if (age === null) return 'again';
    const stale = (f: string): boolean => (lockAge(f) ?? Infinity) > staleMs || holderGone(f);
    if (stale(lockFile)) {
      removeStaleLock(lockFile, stale);
      return 'again';
    }
    if (Date.now() - started > staleMs) throw new Error(`timed out waiting for ${lockFile}`, { cause: err });
    return 'wait';
  }
}

/** Milliseconds since `file` was written, or null when it does not exist. */
function lockAge(file: string): number | null {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * Whether the process that wrote the lock (its pid is the content) has ended: a build stopped
 * with Ctrl-C (a first `npm start` builds while it serves) leaves its lock behind, and the next
 * run need not wait for the lock to age.
 */
function holderGone(file: string): boolean {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8'));
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid) return false;
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Removes a lock found stale. Two waiters may find the same lock stale; had each simply removed
 * the path, the later one could remove the fresh lock the earlier one had taken meanwhile. So
 * the lock is renamed to a name of this waiter's own (atomic: one waiter gets it, the others
 * find nothing) and what was taken is checked again: stale, it is deleted; fresh (another waiter
 * already replaced the stale lock), it is linked back, unless yet another lock was taken in that
 * instant, which then stands.
 */
function removeStaleLock(lockFile: string, stale: (file: string) => boolean): void {
  const taken = `${lockFile}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.stale`;
  try {
    fs.renameSync(lockFile, taken);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another waiter took it
    throw err;
  }
  try {
    if (!stale(taken)) fs.linkSync(taken, lockFile);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    fs.rmSync(taken, { force: true });
  }
}

/**
 * Records how long a model's build took on this machine in `dir`/build-times.json; returns every
 * recorded time, so a build can print its time beside another model's.
 */
export function recordBuildTime(dir: string, id: string, ms: number): Record<string, { ms: number; at: string }> {
  const file = path.join(dir, 'build-times.json');
  const times = (fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, 'utf8')) : {}) as Record<
    string,
    { ms: number; at: string }
  >;
  times[id] = { ms: Math.round(ms), at: new Date().toISOString() };
  fs.mkdirSync(dir, { recursive: true });
  writeAtomic(
    file,
    `${JSON.stringify(times, null, 2)}
`,
  );
  return times;
}
