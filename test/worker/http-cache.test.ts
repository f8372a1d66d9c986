/**
 * If-None-Match (worker/http-cache.ts etagMatches, RFC 9110 weak comparison) and the playground
 * route's 304 answers (worker/pages/playground.ts), which use it like the artifact downloads.
 */
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { etagMatches } from '../../worker/http-cache';

describe('etagMatches', () => {
  it('compares opaque tags, W/ ignored on both sides', () => {
    expect(etagMatches('"abc"', '"abc"')).toBe(true);
    expect(etagMatches('W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"abc"', 'W/"abc"')).toBe(true);
    expect(etagMatches('W/"abc"', 'W/"abc"')).toBe(true);
    expect(etagMatches('"abd"', '"abc"')).toBe(false);
    expect(etagMatches('"ABC"', '"abc"')).toBe(false);
  });

  it('matches * (any existing representation)', () => {
    expect(etagMatches('*', '"abc"')).toBe(true);
    expect(etagMatches(' * ', 'W/"x"')).toBe(true);
  });

  it('reads comma-separated lists, with or without white space', () => {
    expect(etagMatches('"x", "abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x",W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x" ,\t"y" , W/"abc"', '"abc"')).toBe(true);
    expect(etagMatches('"x", "y"', '"abc"')).toBe(false);
    expect(etagMatches(', ,"abc",', '"abc"')).toBe(true);
  });

  it('keeps commas inside a quoted tag, and skips malformed members', () => {
    expect(etagMatches('"a,b"', '"a,b"')).toBe(true);
    expect(etagMatches('"a,b"', '"a"')).toBe(false);
    expect(etagMatches('"a,b"', '"b"')).toBe(false);
    // Not entity tags: unquoted, trailing garbage, an unterminated quote.
    expect(etagMatches('abc', '"abc"')).toBe(false);
    expect(etagMatches('"abc"x', '"abc"')).toBe(false);
    expect(etagMatches('w/"abc"', '"abc"')).toBe(false);
    expect(etagMatches('"abc', '"abc"')).toBe(false);
    expect(etagMatches('junk, "abc"', '"abc"')).toBe(true);
  });

  it('never matches without a header', () => {
    expect(etagMatches(undefined, '"abc"')).toBe(false);
    expect(etagMatches(null, '"abc"')).toBe(false);
    expect(etagMatches('', '"abc"')).toBe(false);
    expect(etagMatches('  ', '"abc"')).toBe(false);
  });
});

describe('playground If-None-Match', () => {
  const html = `<!doctype html><p>http-cache ${Math.random()}</p>`;
  let pageTag: string;
  let assetTag: string;

  beforeAll(async () => {
    await env.ARTIFACTS.put('web/index.html', html);
    await env.ARTIFACTS.put('web/assets/app-1234.js', 'console.log(2)');
    const page = await SELF.fetch('http://x/');
    pageTag = page.headers.get('etag')!;
    await page.text();
    const asset = await SELF.fetch('http://x/assets/app-1234.js');
    assetTag = asset.headers.get('etag')!;
    await asset.text();
    expect(pageTag).toMatch(/^"[^"]+"$/);
    expect(assetTag).toMatch(/^"[^"]+"$/);
  });

  async function get(path: string, ifNoneMatch?: string): Promise<Response> {
    return SELF.fetch(`http://x${path}`, {
      headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch },
    });
  }

  async function expect304(path: string, ifNoneMatch: string, etag: string, cacheControl: string): Promise<void> {
    const res = await get(path, ifNoneMatch);
    expect(res.status, `${path} If-None-Match: ${ifNoneMatch}`).toBe(304);
    expect(await res.text()).toBe('');
    expect(res.headers.get('etag')).toBe(etag);
    expect(res.headers.get('cache-control')).toBe(cacheControl);
  }

  async function expect200(path: string, ifNoneMatch: string, body: string): Promise<void> {
    const res = await get(path, ifNoneMatch);
    expect(res.status, `${path} If-None-Match: ${ifNoneMatch}`).toBe(200);
    expect(await res.text()).toBe(body);
  }

  it('answers 304 to the current tag, its weak form, * and a list holding it', async () => {
    for (const inm of [
      pageTag,
      `W/${pageTag}`,
      '*',
      `"other", ${pageTag}`,
      `"other",W/${pageTag}`,
      `W/"x" , ${pageTag} , "y"`,
    ]) {
      await expect304('/', inm, pageTag, 'no-cache');
      await expect304('/index.html', inm, pageTag, 'no-cache');
    }
    for (const inm of [assetTag, `W/${assetTag}`, '*', `"stale", ${assetTag}`]) {
      await expect304('/assets/app-1234.js', inm, assetTag, 'public, max-age=31536000, immutable');
    }
  });

  it("answers 200 with the body to other tags, malformed ones and another file's tag", async () => {
    for (const inm of ['"other"', '"a", "b"', pageTag.slice(1, -1), `${pageTag}x`, assetTag, '']) {
      await expect200('/', inm, html);
    }
    await expect200('/assets/app-1234.js', pageTag, 'console.log(2)');
  });

  it('* does not turn a missing file into a 304', async () => {
    const missing = await get('/assets/none-5678.js', '*');
    expect(missing.status).toBe(404);
    await missing.text();
  });

  it('a new upload changes the tag: the old one gets 200 with the new body', async () => {
    await env.ARTIFACTS.put('web/assets/app-1234.js', 'console.log(3)');
    await expect200('/assets/app-1234.js', assetTag, 'console.log(3)');
  });
});
