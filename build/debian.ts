/**
 * Optional data from Debian packages: `apt-get download` of a pinned version, unpacked with
 * `dpkg-deb -x` into a temp dir (nothing is installed). On a machine without apt-get or
 * dpkg-deb (macOS), or where the download fails (no apt access, not root), the data is skipped:
 * one clear line says what is missing and how to add it, and the build goes on without it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { GENERATED } from './paths';
import { writeAtomic } from './stamp';

/**
 * Packages that could not be had, with the line said and when (one file for the whole machine):
 * every build step of a run (`npm start`, each test project's setup, each e2e server) asks again,
 * and within RETRY_AFTER_MS the answer is the same, so the line is printed once and apt-get is
 * not run again.
 */
const SKIPPED_FILE = path.join(GENERATED, 'debian-skipped.json');
const RETRY_AFTER_MS = 60 * 60 * 1000;

type Skipped = Record<string, { line: string; at: number }>;

function readSkipped(): Skipped {
  try {
    const parsed: unknown = JSON.parse(fs.readFileSync(SKIPPED_FILE, 'utf8'));
    return parsed && typeof parsed === 'object' ? (parsed as Skipped) : {};
  } catch {
    return {};
  }
}

/** Whether `spec` was found missing within the hour (its line was printed then). */
function skippedLately(spec: string): boolean {
  const seen = readSkipped()[spec];
  return seen !== undefined && Date.now() - seen.at < RETRY_AFTER_MS;
}

/** Prints the skipped line of `spec` and records it. */
function skip(spec: string, line: string): null {
  console.warn(line);
  const all = readSkipped();
  all[spec] = { line, at: Date.now() };
  fs.mkdirSync(GENERATED, { recursive: true });
  writeAtomic(SKIPPED_FILE, JSON.stringify(all));
  return null;
}

export interface DebianFile {
  /** Package name, e.g. "mythes-fr". */
  pkg: string;
  /** Exact Debian version, e.g. "1:7.5.0-1". */
  version: string;
  /** Path of the wanted file inside the package. */
  file: string;
}

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

/** The one line printed when optional Debian data is skipped. */
export function skippedLine(d: DebianFile, what: string, reason: string): string {
  return (
    `[debian] skipped ${what}: needs the Debian package ${d.pkg}=${d.version} (${reason}); ` +
    'on Debian/Ubuntu with apt access run the build again as root (npm start) to add it.'
  );
}

/**
 * The local path of `d.file` from the package, unpacked below `tmp`; null (after printing one
 * line) when the package cannot be had here.
 */
export function fetchDebianFile(d: DebianFile, tmp: string, what: string): string | null {
  const spec = `${d.pkg}=${d.version}`;
  if (skippedLately(spec)) return null;
  if (!debianToolsAvailable()) return skip(spec, skippedLine(d, what, 'apt-get/dpkg-deb not found on PATH'));
  const dir = fs.mkdtempSync(path.join(tmp, `${d.pkg}-`));
  const download = () => spawnSync('apt-get', ['download', spec], { cwd: dir, encoding: 'utf8' });
  let res = download();
  if (res.status !== 0) {
    // Package lists may be missing on a fresh machine.
    spawnSync('apt-get', ['update'], { encoding: 'utf8', stdio: 'ignore' });
    res = download();
  }
  const deb = fs.readdirSync(dir).find((f) => f.endsWith('.deb'));
  if (res.status !== 0 || !deb) {
    const said = (res.stderr || res.error?.message || '').trim().split('\n').pop() ?? '';
    return skip(spec, skippedLine(d, what, `apt-get download failed: ${said}`));
  }
  const x = spawnSync('dpkg-deb', ['-x', path.join(dir, deb), path.join(dir, 'x')], { encoding: 'utf8' });
  if (x.status !== 0) throw new Error(`[debian] dpkg-deb -x ${deb} failed: ${x.stderr}`);
  const file = path.join(dir, 'x', d.file);
  if (!fs.existsSync(file)) throw new Error(`[debian] ${d.pkg} has no ${d.file}`);
  return file;
}
