/**
 * The scoring core (core/) of an earlier commit, for a bench's baseline of the same run ("the code
 * before the change"): `git archive <rev> core` unpacked under build/generated/bench/core-<rev>/
 * and imported from there (tsx compiles it like the current core). The model, kernels and
 * language files are the current ones; an earlier core ignores what it does not know of them.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { GENERATED, ROOT } from '../build/wrangler';

export interface PreviousCore {
  rev: string;
  scoring: typeof import('../core/scoring');
  tokenizer: typeof import('../core/tokenizer');
}

/** The core of `rev`, or null (with the reason) when git cannot give it (no history, no git). */
export async function previousCore(rev: string): Promise<PreviousCore | { rev: string; skipped: string }> {
  const dir = path.join(GENERATED, 'bench', `core-${rev}`);
  try {
    if (!fs.existsSync(path.join(dir, 'core', 'scoring', 'index.ts'))) {
      const tmp = `${dir}.tmp-${process.pid}`;
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.mkdirSync(tmp, { recursive: true });
      const tar = execFileSync('git', ['archive', '--format=tar', rev, 'core'], { cwd: ROOT, maxBuffer: 1 << 28 });
      execFileSync('tar', ['-x', '-C', tmp], { input: tar });
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(tmp, dir);
    }
  } catch (err) {
    return { rev, skipped: `git archive ${rev} failed: ${(err as Error).message.split('\n')[0]}` };
  }
  const load = (rel: string) => import(pathToFileURL(path.join(dir, 'core', rel, 'index.ts')).href);
  return { rev, scoring: await load('scoring'), tokenizer: await load('tokenizer') };
}
