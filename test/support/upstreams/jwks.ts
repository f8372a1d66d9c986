/**
 * A fake JWKS server (a test double of the identity provider, not of our code), reached by the
 * Worker's real outbound fetch: vitest.config.ts routes the worker project's outbound requests
 * here (Miniflare outboundService). Runs in Node.
 *
 *   PUT https://jwks.test/{name}   body { status, body } : what GET /{name} answers from now on
 *                                  ({ network: true }: the connection fails)
 *   GET https://jwks.test/{name}   that answer; 404 when nothing was put
 *   GET https://jwks.test/__hits/{name} : how many GET /{name} arrived (JSON number)
 * Any other host is passed on to the real network.
 */
export const JWKS_HOST = 'jwks.test';

interface Answer {
  status?: number;
  body?: unknown;
  network?: boolean;
}

const answers = new Map<string, Answer>();
const hits = new Map<string, number>();

export async function jwksUpstream(request: Request): Promise<Response> {
  const url = new URL(request.url);
  if (url.hostname !== JWKS_HOST) return fetch(request);
  if (url.pathname.startsWith('/__hits/')) {
    return Response.json(hits.get(url.pathname.slice('/__hits'.length)) ?? 0);
  }
  if (request.method === 'PUT') {
    answers.set(url.pathname, (await request.json()) as Answer);
    return new Response(null, { status: 204 });
  }
  hits.set(url.pathname, (hits.get(url.pathname) ?? 0) + 1);
  const answer = answers.get(url.pathname);
  if (!answer) return new Response('no such key set', { status: 404 });
  if (answer.network) throw new Error('connection refused (fake JWKS server)');
  const body = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body);
  return new Response(body, { status: answer.status ?? 200, headers: { 'content-type': 'application/json' } });
}
