/**
 * Interactive API docs at /api/docs: Swagger UI, whose assets (swagger-ui-dist, bundled into the
 * Worker as text modules, see the Text rule in wrangler.toml) are served by the Worker itself;
 * no CDN. The page reads the OpenAPI 3.1 document at /api/openapi.json.
 */
import swaggerBundle from 'swagger-ui-dist/swagger-ui-bundle.js';
import swaggerCss from 'swagger-ui-dist/swagger-ui.css';
import { newRouter } from '../http/router';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Embedding Edge API</title><link rel="stylesheet" href="/api/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/api/docs/swagger-ui-bundle.js"></script><script src="/api/docs/init.js"></script>
</body></html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: '/api/openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  persistAuthorization: true,
  tryItOutEnabled: true,
  // No badge from validator.swagger.io: the page loads nothing from other origins (its CSP allows none).
  validatorUrl: null,
});
`;

// A Map: the key is the URL's path segment ("constructor" or "__proto__" must not find Object's members).
const ASSETS = new Map<string, { body: string; type: string }>([
  ['swagger-ui-bundle.js', { body: swaggerBundle, type: 'text/javascript; charset=utf-8' }],
  ['swagger-ui.css', { body: swaggerCss, type: 'text/css; charset=utf-8' }],
  ['init.js', { body: INIT, type: 'text/javascript; charset=utf-8' }],
]);

export const docsRoutes = newRouter();

docsRoutes.get('/', (c) => c.html(PAGE));
docsRoutes.get('/:asset', (c) => {
  const asset = ASSETS.get(c.req.param('asset'));
  if (!asset) return c.notFound();
  return c.body(asset.body, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=86400' });
});
