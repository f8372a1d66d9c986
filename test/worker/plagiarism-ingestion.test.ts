/**
 * Reference corpus ingestion under hostile input and failing storage: lone surrogates refused,
 * committed rows mapped back by position, D1 limits of a maximal batch (recorded statements), and
 * R2 texts cleaned up after failed writes or batches and replaced after the commit.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LIMITS } from '../../core/limits';
import { createApp } from '../../worker/app';
import { sha256Hex } from '../../core/digest';
import type { Env } from '../../worker/env';
import { MAX_PARAM_BYTES, PlagiarismCorpus, utf8Bytes, type PageInput } from '../../worker/plagiarism/corpus';
import { R2_PREFIXES } from '../../core/storage-keys';

const R2_PREFIX = R2_PREFIXES.plagiarismPages;
import {
  adminToken,
  api,
  checkOk,
  createWorkspace,
  env,
  freshWords,
  ingest,
  ingestOk,
  uid,
  url,
} from './support/plagiarism';

function flakyBucket(
  real: R2Bucket,
  fail: { put?: (n: number) => boolean; delete?: (n: number) => boolean },
): R2Bucket {
  const calls = { put: 0, delete: 0 };
  return new Proxy(real, {
    get(target, prop) {
      if ((prop === 'put' || prop === 'delete') && fail[prop]) {
        const method = prop;
        return async (...args: unknown[]) => {
          if (fail[method]!(++calls[method])) throw new Error(`R2 ${method} #${calls[method]} failed`);
          return (target[method] as (...a: unknown[]) => Promise<unknown>)(...args);
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
}

/** The real database; records every statement's SQL and bound values, or fails its batches. */
function recordingDb(real: D1Database, opts: { failBatch?: boolean } = {}) {
  const seen: Array<{ sql: string; values: unknown[] }> = [];
  const db = new Proxy(real, {
    get(target, prop) {
      if (prop === 'prepare') {
        return (sql: string) => {
          const stmt = target.prepare(sql);
          const entry = { sql, values: [] as unknown[] };
          seen.push(entry);
          const bind = stmt.bind.bind(stmt);
          stmt.bind = (...values: unknown[]) => {
            entry.values = values;
            return bind(...values);
          };
          return stmt;
        };
      }
      if (prop === 'batch' && opts.failBatch) {
        return async () => {
          throw new Error('D1 batch failed');
        };
      }
      const v = Reflect.get(target, prop, target);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  return { db, seen };
}

function fakeCtx() {
  const registered: Promise<unknown>[] = [];
  const ctx = {
    waitUntil: (p: Promise<unknown>) => void registered.push(p),
    passThroughOnException() {},
    props: {},
  } as unknown as ExecutionContext;
  return { ctx, registered };
}

/** The R2 objects of a page URL (any ingestion). */
async function objectsOf(u: string): Promise<string[]> {
  const listed = await env.ARTIFACTS.list({ prefix: `${R2_PREFIX}${(await sha256Hex(u)).slice(0, 32)}/` });
  return listed.objects.map((o) => o.key);
}

async function rowsOf(u: string): Promise<number> {
  return (await env.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_pages WHERE url = ?1')
    .bind(u)
    .first<{ n: number }>())!.n;
}

describe('reference corpus ingestion: ill-formed strings', () => {
  // A log line holding a lone surrogate breaks the test runner's connection to workerd.
  beforeEach(() => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refuses a lone UTF-16 surrogate in any stored field with 422 and a field path, storing nothing (single page and batch)', async () => {
    const admin = await adminToken();
    const text = freshWords(20).join(' ');
    const cases: Array<[string, { url: string; title?: string; text?: string; html?: string }]> = [
      ['url', { url: `https://s2.example/bad\ud800${uid()}`, text }],
      ['title', { url: url(), title: 'half \udc00 a pair', text }],
      ['text', { url: url(), text: `${text} \ud83d` }],
      ['html', { url: url(), html: `<p>${text} \udfff</p>` }],
    ];
    for (const [field, page] of cases) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await ingest(page);
        expect(res.status, `${field}: ${await res.clone().text()}`).toBe(422);
        const problem = (await res.json()) as { code: string; errors: Array<{ path: string; message: string }> };
        expect(problem.code).toBe('VALIDATION_FAILED');
        expect(problem.errors).toEqual([{ path: field, message: expect.stringContaining('well-formed') }]);
      }
      expect(await rowsOf(page.url), field).toBe(0);
      expect(await objectsOf(page.url), field).toEqual([]);
    }

    // Batch: every bad line reported with its line number; the good line is not stored either.
    const good = { url: url(), text };
    const lines = [good, ...cases.map(([, page]) => page)];
    const res = await api('POST', '/api/admin/v1/plagiarism/pages:batch', {
      token: admin,
      body: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    expect(res.status, await res.clone().text()).toBe(422);
    const problem = (await res.json()) as { code: string; errors: Array<{ path: string }> };
    expect(problem.code).toBe('VALIDATION_FAILED');
    expect(problem.errors.map((e) => e.path)).toEqual(['line.2.url', 'line.3.title', 'line.4.text', 'line.5.html']);
    for (const page of lines) expect(await rowsOf(page.url)).toBe(0);
    expect(await objectsOf(good.url)).toEqual([]);

    // Well-formed astral characters (surrogate pairs) and U+FFFD itself are fine.
    const fine = { url: `https://s2.example/ok\u{1F600}\ufffd${uid()}`, title: 'emoji \u{1F600}', text };
    const stored = await ingestOk(fine);
    const back = (await (
      await api('GET', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(fine.url)}`, { token: admin })
    ).json()) as { id: number; url: string; title: string };
    expect(back).toMatchObject({ id: stored.id, url: fine.url, title: fine.title });
  });

  it('maps the committed rows back by position: a URL D1 does not return verbatim does not fail a committed ingestion', async () => {
    // The routes refuse such URLs (above); the corpus itself must still not throw after its commit.
    const corpus = new PlagiarismCorpus(env.DB, env.ARTIFACTS);
    const bad = `https://s2.example/bad\ud800${uid()}`;
    const good = url();
    const pages: PageInput[] = [
      { url: bad, title: 'bad', text: freshWords(20).join(' ') },
      { url: good, title: 'good', text: freshWords(20).join(' ') },
    ];
    // An error message holding the lone surrogate would break the runner's connection: escaped.
    const ingested = (list: PageInput[]) =>
      corpus.ingest(list).catch((err: unknown) => Promise.reject(new Error(JSON.stringify(String(err)))));
    const first = await ingested(pages);
    expect(first.map((p) => [p.title, p.replaced])).toEqual([
      ['bad', false],
      ['good', false],
    ]);
    expect(first[1].url).toBe(good);
    const again = await ingested([...pages].reverse());
    expect(again.map((p) => [p.id, p.title, p.replaced])).toEqual([
      [first[1].id, 'good', true],
      [first[0].id, 'bad', true],
    ]);
    for (const p of first) expect(await corpus.delete({ id: p.id })).toBe(true);
  });
});

describe('reference corpus ingestion: D1 limits of a maximal batch', () => {
  /** Posts a batch through the real app with a recording D1; checks every statement and bound value. */
  async function postRecorded(body: string) {
    expect(new TextEncoder().encode(body).length).toBeLessThanOrEqual(LIMITS.bodyBytes);
    const { db, seen } = recordingDb(env.DB);
    const res = await createApp().request(
      '/api/admin/v1/plagiarism/pages:batch',
      {
        method: 'POST',
        headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/x-ndjson' },
        body,
      },
      { ...env, DB: db } as Env,
    );
    expect(res.status, (await res.clone().text()).slice(0, 500)).toBe(200);
    expect(seen.length).toBeGreaterThan(0);
    let largest = 0;
    for (const { sql, values } of seen) {
      expect(utf8Bytes(sql)).toBeLessThan(100_000); // D1: SQL statement length
      for (const v of values) if (typeof v === 'string') largest = Math.max(largest, utf8Bytes(v));
    }
    // D1: 2,000,000 bytes per string value; the corpus keeps each under MAX_PARAM_BYTES.
    expect(largest).toBeLessThanOrEqual(MAX_PARAM_BYTES);
    expect(MAX_PARAM_BYTES).toBeLessThanOrEqual(500_000);
    return (await res.json()) as {
      count: number;
      created: number;
      pages: Array<{ url: string; wordCount: number; fingerprintCount: number }>;
    };
  }

  it('1,000 pages with 2,048-character URLs (2 MB of body, ASCII and 3-byte characters) and one very long text', async () => {
    const tag = uid('');
    // ASCII: 1,000 URLs of 2,048 characters, about 2 MB of URLs in one body.
    const ascii = Array.from({ length: 1000 }, (_, i) => {
      const head = `https://big.example/${tag}/${i}/`;
      return { url: head + 'u'.repeat(2048 - head.length), text: `page ${i}` };
    });
    const out = await postRecorded(ascii.map((p) => JSON.stringify(p)).join('\n'));
    expect(out).toMatchObject({ count: 1000, created: 1000 });
    expect(out.pages.map((p) => p.url)).toEqual(ascii.map((p) => p.url));

    // 3 bytes per character: as many 2,048-character URLs as fit into the body limit.
    const cjk: Array<{ url: string; text: string }> = [];
    let bytes = 0;
    for (let i = 0; ; i++) {
      const head = `https://cjk.example/${tag}/${i}/`;
      const page = { url: head + '文'.repeat(2048 - head.length), text: `页 ${i}` };
      const size = new TextEncoder().encode(JSON.stringify(page)).length + 1;
      if (bytes + size > LIMITS.bodyBytes) break;
      cjk.push(page);
      bytes += size;
    }
    expect(cjk.length).toBeGreaterThan(300);
    const outCjk = await postRecorded(cjk.map((p) => JSON.stringify(p)).join('\n'));
    expect(outCjk.count).toBe(cjk.length);
    expect(outCjk.pages.map((p) => p.url)).toEqual(cjk.map((p) => p.url));

    // One page of about 1.8 MB of distinct short words: its fingerprints span several statements.
    const short = uid('').slice(0, 4);
    const words = Array.from({ length: 200_000 }, (_, i) => `${short}${i.toString(36)}`);
    const long = { url: url(), text: words.join(' ') };
    const outLong = await postRecorded(JSON.stringify(long));
    expect(outLong.pages[0].wordCount).toBe(200_000);
    expect(outLong.pages[0].fingerprintCount).toBeGreaterThan(2 * 20_000);
    const ws = await createWorkspace();
    expect(
      (await checkOk(ws, words.slice(150_000, 150_030).join(' '))).matches.map((m) => [m.url, m.wordsMatched]),
    ).toEqual([[long.url, 30]]);
  });
});

describe('reference corpus ingestion: R2 objects on failures and after the commit', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const pagesOf = (n: number): PageInput[] =>
    Array.from({ length: n }, () => ({ url: url(), title: 't', text: freshWords(20).join(' ') }));

  it('a failed R2 write stops the ingestion and deletes the texts already written', async () => {
    const errors = vi.spyOn(console, 'error');
    const pages = pagesOf(40);
    // The 30th write fails: by then at least 14 have completed (16 run at a time).
    const corpus = new PlagiarismCorpus(env.DB, flakyBucket(env.ARTIFACTS, { put: (n) => n === 30 }));
    await expect(corpus.ingest(pages)).rejects.toThrow('R2 put #30 failed');
    for (const p of pages) {
      expect(await objectsOf(p.url)).toEqual([]);
      expect(await rowsOf(p.url)).toBe(0);
    }
    expect(errors).not.toHaveBeenCalled();
  });

  it('a failed D1 batch deletes the texts; a failing cleanup is logged and the D1 error is the one reported', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const pages = pagesOf(3);
    const { db } = recordingDb(env.DB, { failBatch: true });
    await expect(new PlagiarismCorpus(db, env.ARTIFACTS).ingest(pages)).rejects.toThrow('D1 batch failed');
    for (const p of pages) expect(await objectsOf(p.url)).toEqual([]);
    expect(errors).not.toHaveBeenCalled();

    await expect(
      new PlagiarismCorpus(db, flakyBucket(env.ARTIFACTS, { delete: () => true })).ingest(pages),
    ).rejects.toThrow('D1 batch failed');
    expect(errors).toHaveBeenCalledWith(expect.stringContaining('after a failed D1 batch'), expect.any(Error));
    // The orphans the log names are the texts written; removed here by hand.
    const orphans = (await Promise.all(pages.map((p) => objectsOf(p.url)))).flat();
    expect(orphans).toHaveLength(3);
    await env.ARTIFACTS.delete(orphans);
  });

  it('after the commit, replaced texts are deleted under waitUntil; a failing deletion is logged, the ingestion still succeeds', async () => {
    const errors = vi.spyOn(console, 'error').mockImplementation(() => {});
    const [page] = pagesOf(1);
    const first = await new PlagiarismCorpus(env.DB, env.ARTIFACTS).ingest([page]);
    const [oldKey] = await objectsOf(page.url);

    // R2 deletion fails: the committed replacement is still answered; the old text is an orphan (logged).
    const failing = fakeCtx();
    const replaced = await new PlagiarismCorpus(
      env.DB,
      flakyBucket(env.ARTIFACTS, { delete: () => true }),
      failing.ctx,
    ).ingest([{ ...page, title: 'v2' }]);
    expect(replaced.map((p) => [p.id, p.title, p.replaced])).toEqual([[first[0].id, 'v2', true]]);
    expect(failing.registered).toHaveLength(1);
    await Promise.all(failing.registered);
    expect(errors).toHaveBeenCalledWith(expect.stringContaining(oldKey), expect.any(Error));
    expect((await objectsOf(page.url)).sort()).toContain(oldKey);
    await env.ARTIFACTS.delete(oldKey);

    // Through the app: the route hands the request's ExecutionContext to the corpus.
    const viaApp = fakeCtx();
    const res = await createApp().request(
      '/api/admin/v1/plagiarism/pages',
      {
        method: 'POST',
        headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ...page, title: 'v3' }),
      },
      env,
      viaApp.ctx,
    );
    expect(res.status).toBe(200);
    expect(viaApp.registered.length).toBeGreaterThanOrEqual(1);
    await Promise.all(viaApp.registered);
    const row = await env.DB.prepare('SELECT r2_key FROM plagiarism_pages WHERE url = ?1')
      .bind(page.url)
      .first<{ r2_key: string }>();
    expect(await objectsOf(page.url)).toEqual([row!.r2_key]);
  });
});
