/**
 * Optional data from Debian packages: `apt-get download` of a pinned version, unpacked with
 * `dpkg-deb -x` into a temp dir (nothing is installed). On a machine without apt-get or
 * dpkg-deb (macOS), or where the download fails (no apt access, not root), the data is skipped:
 * one clear line says what is missing and how to add it, and the build goes on without it.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

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
  if (!debianToolsAvailable()) {
    console.warn(skippedLine(d, what, 'apt-get/dpkg-deb not found on PATH'));
    return null;
  }
  const dir = fs.mkdtempSync(path.join(tmp, `${d.pkg}-`));
  const spec = `${d.pkg}=${d.version}`;
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
    console.warn(skippedLine(d, what, `apt-get download failed: ${said}`));
    return null;
  }
  const x = spawnSync('dpkg-deb', ['-x', path.join(dir, deb), path.join(dir, 'x')], { encoding: 'utf8' });
  if (x.status !== 0) throw new Error(`[debian] dpkg-deb -x ${deb} failed: ${x.stderr}`);
  const file = path.join(dir, 'x', d.file);
  if (!fs.existsSync(file)) throw new Error(`[debian] ${d.pkg} has no ${d.file}`);
  return file;
}
