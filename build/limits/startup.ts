/**
 * Global-scope startup of a built bundle, measured in workerd (Miniflare) the way `wrangler check
 * startup` profiles it: a probe Worker holds the bundle's modules and imports the main module in
 * its first request, so the module's parse and global scope run inside that request.
 *
 * workerd freezes the clock while JavaScript runs, so the time is taken from Node around the
 * request: the first request of a fresh runtime that imports the bundle, less the first request of
 * a fresh runtime whose probe imports nothing (the request's own cost). The median of `runs` pairs
 * is reported. Error: wall time on a shared machine (another process on the core adds to it, so it
 * errs high), a few ms of dispatch jitter, and workerd's V8 on this machine, not Cloudflare's.
 */
import { Miniflare } from 'miniflare';
import type { Bundle } from './bundle';
import { median } from './table';

const PROBE = 'limits-startup-probe.mjs';

/** Wall ms of the first request of a fresh runtime holding `bundle`, whose probe imports its main module or not. */
async function firstRequestMs(bundle: Bundle, importMain: boolean): Promise<number> {
  const probe = `export default { async fetch() { ${importMain ? `await import(${JSON.stringify(`./${bundle.mainModule}`)});` : ''} return new Response('ok'); } };`;
  const mf = new Miniflare({
    compatibilityDate: bundle.compatibilityDate,
    compatibilityFlags: bundle.compatibilityFlags,
    modulesRoot: '/',
    modules: [
      { type: 'ESModule', path: `/${PROBE}`, contents: probe },
      ...bundle.modules.map((m) => ({
        type: m.type,
        path: `/${m.name}`,
        contents: m.type === 'ESModule' || m.type === 'Text' ? Buffer.from(m.bytes).toString('utf8') : m.bytes,
      })),
    ],
  });
  try {
    await mf.ready;
    const t0 = performance.now();
    const res = await mf.dispatchFetch('http://startup.probe/');
    await res.text();
    if (!res.ok) throw new Error(`the startup probe of ${bundle.script} answered ${res.status}`);
    return performance.now() - t0;
  } finally {
    await mf.dispose();
  }
}

export interface StartupFigure {
  ms: number;
  /** Medians of the first request with and without the bundle's import, and the runs of each. */
  withImportMs: number;
  emptyMs: number;
  runs: number;
}

/** Startup ms of `bundle` (median over `runs` fresh runtimes each way; never below 0). */
export async function measureStartup(bundle: Bundle, runs: number): Promise<StartupFigure> {
  const withImport: number[] = [];
  const empty: number[] = [];
  for (let i = 0; i < runs; i++) {
    withImport.push(await firstRequestMs(bundle, true));
    empty.push(await firstRequestMs(bundle, false));
  }
  const withImportMs = median(withImport);
  const emptyMs = median(empty);
  return { ms: Math.max(0, withImportMs - emptyMs), withImportMs, emptyMs, runs };
}
