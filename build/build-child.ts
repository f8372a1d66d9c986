/**
 * A build step's work in a child process, one core each (the machines have two): `node --import
 * tsx <script> <args>` in ROOT, its output shared with this process's. The child leaves its results
 * on disk under their locks; one that fails is logged, and the caller does what it left.
 */
import { spawn } from 'node:child_process';
import { ROOT } from './paths';

/** Resolves once the child has ended; `what` and `fallback` word its failure ("[build] what: the child process exited with 1; fallback"). */
export function runBuildChild(script: string, args: string[], what: string, fallback: string): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const done = (why: string | null): void => {
      if (why) console.error(`[build] ${what}: the child process ${why}; ${fallback}`);
      resolve();
    };
    child.on('error', (err) => done(`failed (${err.message})`));
    child.on('exit', (code, signal) => done(code === 0 ? null : `exited with ${code ?? signal}`));
  });
}
