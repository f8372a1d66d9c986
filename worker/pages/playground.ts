/**
 * The playground page (browser/playground/) served by the Worker itself: `/` is its HTML, `/sw.js`
 * its service worker (offline reloads), `/assets/*` the Vite build output, including the
 * offline-scoring library (`offline-scorer.js` + its Web Worker). The files are built by
 * `npm run build:browser` into build/generated/web/ and stored in R2 under `web/` (npm start
 * seeds them like the model artifacts), so no CDN and no extra wrangler configuration.
 * Not under /api: no token needed to load the page itself (the page asks for one).
 */
import type { Context } from 'hono';
import { R2_KEYS } from '../../core/storage-keys';
import type { AppEnv } from '../env';
import { etagMatches } from '../http-cache';
import { newRouter } from '../http/router';

// Null prototype: the extension comes from the URL ("x.constructor" must not find Object).
const TYPES: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  json: 'application/json; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  wasm: 'application/wasm',
  map: 'application/json; charset=utf-8',
});

function contentType(file: string): string {
  return TYPES[file.slice(file.lastIndexOf('.') + 1).toLowerCase()] ?? 'application/octet-stream';
}

async function serve(c: Context<AppEnv>, file: string, cacheControl: string): Promise<Response> {
  // Bounded: an R2 key over 1,024 bytes is an error, and no built asset has a name this long.
  if (file.length > 256 || !/^[A-Za-z0-9][A-Za-z0-9._/-]*$/.test(file) || file.includes('..')) return c.notFound();
  const key = R2_KEYS.web(file);
  const head = await c.env.ARTIFACTS.head(key);
  if (!head) {
    if (file === 'index.html') {
      // A first `npm start` answers the API before it has built the playground (build/start.ts).
      return c.html(
        '<!doctype html><title>Playground not built</title><p>The playground is not built yet. A first <code>npm start</code> builds it after the API already answers: reload in a few minutes. (Or run <code>npm run build:browser</code> and seed R2.)</p>',
        503,
        { 'retry-after': '60' },
      );
    }
    return c.notFound();
  }
  const headers: Record<string, string> = {
    'content-type': contentType(file),
    etag: head.httpEtag,
    'cache-control': cacheControl,
  };
  if (etagMatches(c.req.header('if-none-match'), head.httpEtag)) return c.body(null, 304, headers);
  const obj = await c.env.ARTIFACTS.get(key);
  if (!obj) return c.notFound();
  headers.etag = obj.httpEtag;
  headers['content-length'] = String(obj.size);
  return c.body(obj.body, 200, headers);
}

export const playgroundRoutes = newRouter();

playgroundRoutes.get('/', (c) => serve(c, 'index.html', 'no-cache'));
playgroundRoutes.get('/index.html', (c) => serve(c, 'index.html', 'no-cache'));
// The service worker must be revalidated on every load so a new build takes over.
playgroundRoutes.get('/sw.js', (c) => serve(c, 'sw.js', 'no-cache'));
// Vite output names carry a content hash, except the library's stable entry points.
playgroundRoutes.get('/assets/:file{.+}', (c) => {
  const file = c.req.param('file');
  const stable = /^offline-scorer(\.worker)?\.js$/.test(file);
  return serve(c, `assets/${file}`, stable ? 'no-cache' : 'public, max-age=31536000, immutable');
});
