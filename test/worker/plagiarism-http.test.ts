/**
 * The `http` plagiarism provider against a fake upstream service (a test double of the
 * EXTERNAL service, defined here): success, malformed answer, 500, timeout; and the provider
 * selection from the environment, through the real app.
 */
import { env } from 'cloudflare:test';
import { Hono } from 'hono';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { splitWords } from '../../core/plagiarism';
import { createApp } from '../../worker/app';
import type { Env } from '../../worker/env';
import { ApiError } from '../../core/problem';
import { HttpPlagiarismProvider, type FetchFn, type HttpProviderConfig } from '../../worker/plagiarism/http';
import { LocalPlagiarismProvider } from '../../worker/plagiarism/local';
import { createPlagiarismProvider, plagiarismConfigFromEnv } from '../../worker/plagiarism/provider';
import { createWorkspace, freshWords, token, usedChecks, type CheckJson } from './support/plagiarism';

type Mode = 'ok' | 'malformed' | 'not-json' | 'error500' | 'flaky' | 'slow' | 'unauthorized';

interface Received {
  authorization: string | null;
  body: { text: string; wordCount: number; minWordsPerMatch: number };
}

/** A fake upstream plagiarism service. */
function fakeUpstream(mode: Mode) {
  const received: Received[] = [];
  /** Requests the caller aborted (mode slow). */
  const aborted = { count: 0 };
  const app = new Hono();
  app.post('/v1/check', async (c) => {
    const body = (await c.req.json()) as Received['body'];
    received.push({ authorization: c.req.header('authorization') ?? null, body });
    const words = body.text.split(/\s+/).filter(Boolean);
    const good = {
      matches: [
        { url: 'https://b.example/2', title: 'Second', snippet: words.slice(0, 10).join(' '), matchedWords: 10 },
        { url: 'https://a.example/1', snippet: words.slice(0, 12).join(' '), matchedWords: 12, extra: 'ignored' },
        { url: 'https://b.example/2', title: 'Second', snippet: 'less', matchedWords: 4 },
        { url: 'https://c.example/3', title: 'Zero', snippet: '', matchedWords: 0 },
        { url: 'https://d.example/4', title: 'Too many', snippet: 'all', matchedWords: 10_000 },
      ],
    };
    switch (mode) {
      case 'ok':
        return c.json(good);
      case 'malformed':
        return c.json({ matches: [{ url: 'https://a.example/1', snippet: 'x', matchedWords: 'twelve' }] });
      case 'not-json':
        return c.text('<html>gateway</html>', 200);
      case 'error500':
        return c.text('boom', 500);
      case 'flaky':
        return received.length === 1 ? c.text('busy', 503) : c.json(good);
      case 'unauthorized':
        return c.text('bad key', 401);
      case 'slow':
        // Never answers on its own: only the caller giving up (aborting the request) ends it.
        await new Promise<void>((resolve) => {
          c.req.raw.signal.addEventListener('abort', () => {
            aborted.count++;
            resolve();
          });
        });
        return c.json(good);
    }
  });
  const fetcher: FetchFn = async (input, init) => app.fetch(new Request(input, init));
  return { received, aborted, fetcher };
}

const config = (over: Partial<HttpProviderConfig> = {}): HttpProviderConfig => ({
  url: 'https://upstream.test/v1/check',
  apiKey: 'k-123',
  timeoutMs: 2000,
  retries: 2,
  backoffMs: 5,
  ...over,
});

const input = (n = 30) => {
  const text = freshWords(n).join(' ');
  return { text, words: splitWords(text) };
};

async function failure(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('expected an ApiError');
}

describe('http provider against a fake upstream', () => {
  it('sends the text with the API key and maps the answer to the interface fields', async () => {
    const up = fakeUpstream('ok');
    const provider = new HttpPlagiarismProvider(config(), up.fetcher);
    const inp = input(40);
    const matches = await provider.check(inp);
    expect(up.received).toHaveLength(1);
    expect(up.received[0].authorization).toBe('Bearer k-123');
    expect(up.received[0].body).toEqual({ text: inp.text, wordCount: 40, minWordsPerMatch: 8 });
    const words = inp.text.split(' ');
    // One match per url (the best), zero-word entries dropped, wordsMatched capped at wordCount,
    // percentage from our wordCount, title defaulting to "", sorted by wordsMatched.
    expect(matches).toEqual([
      { url: 'https://d.example/4', title: 'Too many', matchSnippet: 'all', wordsMatched: 40, matchPercentage: 100 },
      {
        url: 'https://a.example/1',
        title: '',
        matchSnippet: words.slice(0, 12).join(' '),
        wordsMatched: 12,
        matchPercentage: 30,
      },
      {
        url: 'https://b.example/2',
        title: 'Second',
        matchSnippet: words.slice(0, 10).join(' '),
        wordsMatched: 10,
        matchPercentage: 25,
      },
    ]);
  });

  it('a malformed answer is a 502 and is not retried', async () => {
    for (const mode of ['malformed', 'not-json'] as const) {
      const up = fakeUpstream(mode);
      const err = await failure(new HttpPlagiarismProvider(config(), up.fetcher).check(input()));
      expect(err.code).toBe('UPSTREAM_FAILED');
      expect(err.status).toBe(502);
      expect(up.received).toHaveLength(1);
    }
  });

  it('a 500 is retried the configured number of times, then 502', async () => {
    const up = fakeUpstream('error500');
    const err = await failure(new HttpPlagiarismProvider(config({ retries: 2 }), up.fetcher).check(input()));
    expect(err).toMatchObject({ code: 'UPSTREAM_FAILED', status: 502 });
    expect(err.message).toContain('HTTP 500');
    expect(up.received).toHaveLength(3);

    const none = fakeUpstream('error500');
    await failure(new HttpPlagiarismProvider(config({ retries: 0 }), none.fetcher).check(input()));
    expect(none.received).toHaveLength(1);
  });

  it('recovers when a retry succeeds; a 401 is not retried', async () => {
    const flaky = fakeUpstream('flaky');
    const matches = await new HttpPlagiarismProvider(config({ retries: 1 }), flaky.fetcher).check(input());
    expect(flaky.received).toHaveLength(2);
    expect(matches.map((m) => m.url)).toEqual(['https://d.example/4', 'https://a.example/1', 'https://b.example/2']);

    const denied = fakeUpstream('unauthorized');
    const err = await failure(new HttpPlagiarismProvider(config({ retries: 3 }), denied.fetcher).check(input()));
    expect(err.status).toBe(502);
    expect(denied.received).toHaveLength(1);
  });

  it('a timeout is a 504 after the retries', async () => {
    const up = fakeUpstream('slow');
    const err = await failure(
      new HttpPlagiarismProvider(config({ timeoutMs: 50, retries: 1 }), up.fetcher).check(input()),
    );
    expect(err).toMatchObject({ code: 'UPSTREAM_FAILED', status: 504 });
    expect(up.received).toHaveLength(2);
    // The upstream never answers: the provider itself gave up on (aborted) each attempt.
    expect(up.aborted.count).toBe(2);
  });

  it('a network error is retried and then a 502', async () => {
    let calls = 0;
    const broken: FetchFn = async () => {
      calls++;
      throw new TypeError('connection refused');
    };
    const err = await failure(new HttpPlagiarismProvider(config({ retries: 2 }), broken).check(input()));
    expect(err).toMatchObject({ code: 'UPSTREAM_FAILED', status: 502 });
    expect(calls).toBe(3);
  });
});

describe('provider selection from the environment', () => {
  const base = env as unknown as Env;

  it('defaults to local without snippet context; http reads URL, key, timeout and retries', () => {
    const local = { provider: 'local', snippetContextWords: 0 };
    expect(plagiarismConfigFromEnv({ ...base, PLAGIARISM_PROVIDER: undefined })).toEqual(local);
    expect(plagiarismConfigFromEnv(base)).toEqual(local); // wrangler.toml: local
    expect(plagiarismConfigFromEnv({ ...base, PLAGIARISM_SNIPPET_CONTEXT_WORDS: '20' })).toEqual({
      provider: 'local',
      snippetContextWords: 20,
    });
    expect(createPlagiarismProvider(base)).toBeInstanceOf(LocalPlagiarismProvider);
    const cfg = plagiarismConfigFromEnv({
      ...base,
      PLAGIARISM_PROVIDER: 'http',
      PLAGIARISM_HTTP_URL: 'https://up.example/check',
      PLAGIARISM_HTTP_API_KEY: 'secret',
      PLAGIARISM_HTTP_TIMEOUT_MS: '1500',
      PLAGIARISM_HTTP_RETRIES: '4',
    });
    expect(cfg).toEqual({
      provider: 'http',
      http: { url: 'https://up.example/check', apiKey: 'secret', timeoutMs: 1500, retries: 4, backoffMs: 250 },
    });
    expect(createPlagiarismProvider(base, cfg)).toBeInstanceOf(HttpPlagiarismProvider);
  });

  it('refuses a misconfiguration', () => {
    const bad = [
      { PLAGIARISM_PROVIDER: 'copyscape' },
      { PLAGIARISM_PROVIDER: 'http' },
      { PLAGIARISM_PROVIDER: 'http', PLAGIARISM_HTTP_URL: 'ftp://x' },
      { PLAGIARISM_PROVIDER: 'http', PLAGIARISM_HTTP_URL: 'https://x', PLAGIARISM_HTTP_RETRIES: '99' },
      { PLAGIARISM_PROVIDER: 'http', PLAGIARISM_HTTP_URL: 'https://x', PLAGIARISM_HTTP_TIMEOUT_MS: 'soon' },
      { PLAGIARISM_SNIPPET_CONTEXT_WORDS: '-1' },
      { PLAGIARISM_SNIPPET_CONTEXT_WORDS: '201' },
      { PLAGIARISM_SNIPPET_CONTEXT_WORDS: 'some' },
    ];
    for (const over of bad) expect(() => plagiarismConfigFromEnv({ ...base, ...over })).toThrow(ApiError);
  });
});

describe('check route with PLAGIARISM_PROVIDER=http (the real app, upstream faked at the network edge)', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Routes the Worker's outbound requests for upstream.test to the fake; anything else fails. */
  function installUpstream(mode: Mode) {
    const up = fakeUpstream(mode);
    vi.spyOn(globalThis, 'fetch').mockImplementation(async (input, init) => {
      const req = new Request(input as RequestInfo, init as RequestInit);
      if (new URL(req.url).hostname !== 'upstream.test')
        throw new TypeError(`unexpected outbound request to ${req.url}`);
      return up.fetcher(req);
    });
    return up;
  }

  const httpEnv = (over: Partial<Env> = {}): Env => ({
    ...(env as unknown as Env),
    PLAGIARISM_PROVIDER: 'http',
    PLAGIARISM_HTTP_URL: 'https://upstream.test/v1/check',
    PLAGIARISM_HTTP_API_KEY: 'env-key',
    PLAGIARISM_HTTP_TIMEOUT_MS: '100',
    PLAGIARISM_HTTP_RETRIES: '1',
    ...over,
  });

  async function post(ws: string, text: string, e: Env): Promise<Response> {
    return createApp().request(
      `/api/v1/workspaces/${ws}/plagiarism-checks`,
      {
        method: 'POST',
        headers: { authorization: `Bearer ${await token({ workspaceId: ws })}`, 'content-type': 'application/json' },
        body: JSON.stringify({ text }),
      },
      e,
    );
  }

  it('answers from the upstream and charges one check', async () => {
    const ws = await createWorkspace();
    const up = installUpstream('ok');
    const words = freshWords(20);
    // The local provider's snippet setting does not touch the upstream's snippets.
    const res = await post(ws, words.join(' '), httpEnv({ PLAGIARISM_SNIPPET_CONTEXT_WORDS: '0' }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as CheckJson;
    expect(body.wordCount).toBe(20);
    expect(body.matches.map((m) => m.url)).toEqual([
      'https://d.example/4',
      'https://a.example/1',
      'https://b.example/2',
    ]);
    // The upstream's snippets pass through as it wrote them ('all' is no word of the text).
    expect(body.matches.map((m) => m.matchSnippet)).toEqual([
      'all',
      words.slice(0, 12).join(' '),
      words.slice(0, 10).join(' '),
    ]);
    expect(up.received[0].authorization).toBe('Bearer env-key');
    expect(await usedChecks(ws)).toBe(1);
  });

  it('upstream 500 -> 502 problem+json, timeout -> 504, malformed -> 502; nothing consumed', async () => {
    const ws = await createWorkspace();
    for (const [mode, status] of [
      ['error500', 502],
      ['slow', 504],
      ['malformed', 502],
    ] as const) {
      const up = installUpstream(mode);
      const res = await post(ws, freshWords(20).join(' '), httpEnv());
      expect(res.status, mode).toBe(status);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await res.json()) as { code: string; translationKey: string };
      expect(problem).toMatchObject({ code: 'UPSTREAM_FAILED', translationKey: 'upstreamFailed' });
      expect(up.received.length, mode).toBe(mode === 'malformed' ? 1 : 2);
      vi.restoreAllMocks();
    }
    expect(await usedChecks(ws)).toBe(0);
  });

  it('still rejects a short text before calling the upstream', async () => {
    const ws = await createWorkspace();
    const up = installUpstream('ok');
    const res = await post(ws, freshWords(14).join(' '), httpEnv());
    expect(res.status).toBe(422);
    expect(up.received).toHaveLength(0);
    expect(await usedChecks(ws)).toBe(0);
  });

  it('a misconfigured provider is a 500, nothing consumed', async () => {
    const ws = await createWorkspace();
    const res = await post(ws, freshWords(20).join(' '), httpEnv({ PLAGIARISM_HTTP_URL: '' }));
    expect(res.status).toBe(500);
    expect(await usedChecks(ws)).toBe(0);
  });
});
