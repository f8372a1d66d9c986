/**
 * The local state of an e2e server (and of the benches that start one): D1 migrated and R2 seeded
 * as `npm start` does (build/start.ts prepareLocalState), in the server's own directory. A
 * directory that was never seeded starts as a copy of one template seeded the same way, its R2
 * blobs hard links (Miniflare writes a new blob file for every put and unlinks the old one, so a
 * server that deletes or replaces an object leaves the template as it was) and its databases
 * copied. Each server keeps its own D1, KV and R2, while the artifacts (about 600 MB, eight models)
 * go through Miniflare once a run instead of once a server.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { R2Artifact } from '../../../build/ensure';
import { prepareLocalState } from '../../../build/start';
import { withLock } from '../../../build/stamp';
import { ROOT } from '../../../build/wrangler';

const TEMPLATE = path.join(ROOT, '.wrangler', 'e2e-seeded-template');
const STAMP = 'seeded-artifacts.json';

/** Migrates and seeds `persistTo` with `common` (what every server holds) and `own` (its placement's shards). */
export async function seedState(persistTo: string, common: R2Artifact[], own: R2Artifact[] = []): Promise<void> {
  if (!fs.existsSync(path.join(persistTo, STAMP))) {
    await withLock(
      `${TEMPLATE}.lock`,
      15 * 60_000,
      () => false,
      async () => {
        await prepareLocalState(common, TEMPLATE);
        // A directory without a stamp holds no seeded state (new, or a run stopped before its first put).
        fs.rmSync(persistTo, { recursive: true, force: true });
        copyState(TEMPLATE, persistTo);
      },
      () => undefined,
    );
  }
  // What the template lacks or what changed since this directory was seeded.
  await prepareLocalState([...common, ...own], persistTo);
}

function copyState(from: string, to: string): void {
  fs.mkdirSync(to, { recursive: true });
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const src = path.join(from, entry.name);
    const dst = path.join(to, entry.name);
    if (entry.isDirectory()) copyState(src, dst);
    else if (path.basename(from) === 'blobs') link(src, dst);
    else fs.copyFileSync(src, dst);
  }
}

/** A hard link; a copy where the two directories are on different file systems. */
function link(src: string, dst: string): void {
  try {
    fs.linkSync(src, dst);
  } catch {
    fs.copyFileSync(src, dst);
  }
}
