/**
 * The build's lock files (build/stamp.ts): withLock (async work, e.g. a model build) and
 * withLockSync (the Debian downloads) share one way of taking a lock, taking over a stale one: one
 * older than the stale age, or one whose process has ended.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { withLock, withLockSync } from '../../build/stamp';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-locks-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A lock file written `ageMs` ago by process `pid` (default: a live one, this process). */
function leftBehind(name: string, ageMs: number, pid = process.pid): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, String(pid));
  const then = (Date.now() - ageMs) / 1000;
  fs.utimesSync(file, then, then);
  return file;
}

/** The pid of a process that has ended. */
function endedPid(): number {
  return Number(
    spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout,
  );
}

describe('withLockSync', () => {
  it('holds the lock while the work runs and removes it after, also when the work throws', () => {
    const lock = path.join(dir, 'a.lock');
    expect(withLockSync(lock, 60_000, () => fs.existsSync(lock))).toBe(true);
    expect(fs.existsSync(lock)).toBe(false);
    expect(() =>
      withLockSync(lock, 60_000, () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(fs.existsSync(lock)).toBe(false);
  });

  it('takes over a lock older than the stale age, and waits for a live one to be released', async () => {
    const stale = leftBehind('b.lock', 10_000, endedPid());
    expect(withLockSync(stale, 5_000, () => fs.readFileSync(stale, 'utf8'))).toBe(String(process.pid));
    // A live lock (another holder) released 300 ms later, after it writes a marker: the sync
    // waiter's work runs after that, so it sees the marker.
    const live = leftBehind('c.lock', 0);
    const marker = path.join(dir, 'c.released');
    const worker = new Worker(
      `const fs = require('node:fs'); setTimeout(() => { fs.writeFileSync(${JSON.stringify(marker)}, ''); fs.rmSync(${JSON.stringify(live)}); }, 300);`,
      { eval: true },
    );
    expect(withLockSync(live, 60_000, () => fs.existsSync(marker))).toBe(true);
    await worker.terminate();
  });
});

describe('withLock', () => {
  it('returns done() without the work when it becomes done while another holds the lock', async () => {
    const live = leftBehind('d.lock', 0);
    let ran = false;
    const out = await withLock(
      live,
      60_000,
      () => true,
      async () => {
        ran = true;
        return 'work';
      },
      () => 'done',
    );
    expect(out).toBe('done');
    expect(ran).toBe(false);
    expect(fs.existsSync(live)).toBe(true);
  });

  it('takes over a stale lock', async () => {
    const stale = leftBehind('e.lock', 10_000);
    expect(
      await withLock(
        stale,
        5_000,
        () => false,
        async () => 'work',
        () => 'done',
      ),
    ).toBe('work');
    expect(fs.existsSync(stale)).toBe(false);
  });

  it('takes over at once a fresh lock whose process has ended (a build stopped with Ctrl-C)', async () => {
    const orphan = leftBehind('f.lock', 0, endedPid());
    const started = Date.now();
    expect(
      await withLock(
        orphan,
        600_000,
        () => false,
        async () => 'work',
        () => 'done',
      ),
    ).toBe('work');
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
