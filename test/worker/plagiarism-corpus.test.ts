/**
 * The reference corpus admin API of the local plagiarism provider: scope, replacement under the
 * same URL (a check overlapping it, forced with gated R2, sees the old or the new page, never a
 * mix), all-or-nothing batches, HTML extraction, listing, deletion, OpenAPI entries.
 */
import { describe, expect, it } from 'vitest';
import { createApp } from '../../worker/app';
import type { Env } from '../../worker/env';
import { R2_PREFIXES } from '../../core/storage-keys';

const R2_PREFIX = R2_PREFIXES.plagiarismPages;
import { GatedBucket } from './support/storage-gate';
import {
  adminToken,
  api,
  checkOk,
  createWorkspace,
  env,
  freshWords,
  ingest,
  ingestOk,
  token,
  url,
  type CheckJson,
} from './support/plagiarism';

describe('reference corpus admin API', () => {
  it('needs the admin scope', async () => {
    const res = await api('POST', '/api/admin/v1/plagiarism/pages', {
      token: await token({ workspaceId: 'w' }),
      json: { url: url(), text: 'a' },
    });
    expect(res.status).toBe(403);
    expect((await api('GET', '/api/admin/v1/plagiarism/pages')).status).toBe(401);
  });

  it('replaces a page ingested again under the same URL (same id, no duplicate, old text gone)', async () => {
    const ws = await createWorkspace();
    const first = freshWords(30);
    const second = freshWords(30);
    const u = url();
    const created = await ingestOk({ url: u, title: 'v1', text: first.join(' ') });
    expect(created.replaced).toBe(false);
    const again = await ingest({ url: u, title: 'v2', text: second.join(' ') });
    expect(again.status).toBe(200);
    const replaced = (await again.json()) as { id: number; replaced: boolean; title: string };
    expect(replaced).toMatchObject({ id: created.id, replaced: true, title: 'v2' });

    const list = await api('GET', `/api/admin/v1/plagiarism/pages?url=${encodeURIComponent(u)}`, {
      token: await adminToken(),
    });
    const listed = (await list.json()) as {
      data: Array<{ id: number; title: string }>;
      page: { totalElements: number };
    };
    expect(listed.page.totalElements).toBe(1);
    expect(listed.data[0]).toMatchObject({ id: created.id, title: 'v2' });

    expect((await checkOk(ws, first.slice(0, 20).join(' '))).matches).toEqual([]);
    const now = await checkOk(ws, second.slice(0, 20).join(' '));
    expect(now.matches.map((m) => [m.url, m.title, m.wordsMatched])).toEqual([[u, 'v2', 20]]);

    // Exactly one text object is left for the page, and fingerprints only of the new text.
    const row = await env.DB.prepare('SELECT r2_key, fingerprint_count FROM plagiarism_pages WHERE id = ?')
      .bind(created.id)
      .first<{ r2_key: string; fingerprint_count: number }>();
    const prefix = row!.r2_key.slice(0, row!.r2_key.lastIndexOf('/') + 1);
    const objects = await env.ARTIFACTS.list({ prefix });
    expect(objects.objects.map((o) => o.key)).toEqual([row!.r2_key]);
    const fps = await env.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_fingerprints WHERE page_id = ?')
      .bind(created.id)
      .first<{ n: number }>();
    expect(fps!.n).toBe(row!.fingerprint_count);
  });

  describe('a check that overlaps a replacement sees the old or the new page, never a half-replaced one', () => {
    // Gated R2 (storage-gate.ts) forces the overlap: the check has its candidates (page A, the
    // old text key) and is held at reading that text while the replacement by B runs.
    async function setup() {
      const ws = await createWorkspace(1000, 1000);
      const a = freshWords(20);
      const b = freshWords(30);
      const u = url();
      await ingestOk({ url: u, title: 'A', text: a.join(' ') });
      const oldKey = (await env.DB.prepare('SELECT r2_key FROM plagiarism_pages WHERE url = ?')
        .bind(u)
        .first<{ r2_key: string }>())!.r2_key;
      const input = [...a, ...freshWords(3), ...b].join(' ');
      const checkBucket = new GatedBucket(env.ARTIFACTS);
      const textRead = checkBucket.hold('get', (key) => key.startsWith(R2_PREFIX));
      const checking = createApp().request(
        `/api/v1/workspaces/${ws}/plagiarism-checks`,
        {
          method: 'POST',
          headers: { authorization: `Bearer ${await token({ workspaceId: ws })}`, 'content-type': 'application/json' },
          body: JSON.stringify({ text: input }),
        },
        { ...env, ARTIFACTS: checkBucket.bucket } as Env,
      );
      await textRead.reached();
      expect(checkBucket.log.filter((l) => l.startsWith(`get ${R2_PREFIX}`))).toEqual([`get ${oldKey}`]);
      const result = async () => {
        const res = await checking;
        expect(res.status, await res.clone().text()).toBe(200);
        const body = (await res.json()) as CheckJson;
        return body.matches.map((m) => [m.url, m.title, m.wordsMatched]);
      };
      return { u, b, oldKey, textRead, result };
    }

    it('replacement committed and the old text deleted before the check reads it: the check re-reads the row and reports B', async () => {
      const { u, b, oldKey, textRead, result } = await setup();
      expect((await ingestOk({ url: u, title: 'B', text: b.join(' ') })).replaced).toBe(true);
      expect(await env.ARTIFACTS.head(oldKey)).toBeNull();
      await textRead.open();
      expect(await result()).toEqual([[u, 'B', 30]]);
      const list = await api('GET', `/api/admin/v1/plagiarism/pages?url=${encodeURIComponent(u)}`, {
        token: await adminToken(),
      });
      expect(((await list.json()) as { page: { totalElements: number } }).page.totalElements).toBe(1);
    });

    it('replacement committed but the old text not yet deleted: the check reports A as it was', async () => {
      const { u, b, oldKey, textRead, result } = await setup();
      const writeBucket = new GatedBucket(env.ARTIFACTS);
      const deletion = writeBucket.hold('delete', (key) => key.startsWith(R2_PREFIX));
      const replacing = createApp().request(
        '/api/admin/v1/plagiarism/pages',
        {
          method: 'POST',
          headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' },
          body: JSON.stringify({ url: u, title: 'B', text: b.join(' ') }),
        },
        { ...env, ARTIFACTS: writeBucket.bucket } as Env,
      );
      // The ingestion deletes the replaced text only after its D1 batch: B is committed now.
      await deletion.reached();
      expect(writeBucket.log.filter((l) => l.startsWith('delete'))).toEqual([`delete ${oldKey}`]);
      const row = await env.DB.prepare('SELECT title, r2_key FROM plagiarism_pages WHERE url = ?')
        .bind(u)
        .first<{ title: string; r2_key: string }>();
      expect(row!.title).toBe('B');
      expect(await env.ARTIFACTS.head(oldKey)).not.toBeNull();
      await textRead.open();
      expect(await result()).toEqual([[u, 'A', 20]]);
      await deletion.open();
      expect((await replacing).status).toBe(200);
      expect(await env.ARTIFACTS.head(oldKey)).toBeNull();
    });
  });

  it('ingests a batch of JSON lines (a URL twice: the last wins), all or nothing', async () => {
    const ws = await createWorkspace();
    const texts = [freshWords(25), freshWords(25), freshWords(25), freshWords(25)];
    const urls = [url(), url(), url()];
    const lines = [
      { url: urls[0], title: 'one', text: texts[0].join(' ') },
      { url: urls[1], title: 'two', text: texts[1].join(' ') },
      { url: urls[2], html: `<html><head><title>three</title></head><body><p>${texts[2].join(' ')}</p></body></html>` },
      { url: urls[0], title: 'one again', text: texts[3].join(' ') },
    ];
    const res = await api('POST', '/api/admin/v1/plagiarism/pages:batch', {
      token: await adminToken(),
      body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n\n',
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const out = (await res.json()) as {
      count: number;
      created: number;
      replaced: number;
      pages: Array<{ url: string; title: string }>;
    };
    expect(out).toMatchObject({ count: 3, created: 3, replaced: 0 });
    expect(out.pages.map((p) => [p.url, p.title])).toEqual([
      [urls[1], 'two'],
      [urls[2], 'three'],
      [urls[0], 'one again'],
    ]);
    expect((await checkOk(ws, texts[2].slice(0, 16).join(' '))).matches.map((m) => m.url)).toEqual([urls[2]]);
    expect((await checkOk(ws, texts[0].slice(0, 16).join(' '))).matches).toEqual([]);

    // One bad line: nothing stored, every bad line reported.
    const u4 = url();
    const bad = await api('POST', '/api/admin/v1/plagiarism/pages:batch', {
      token: await adminToken(),
      body: [
        JSON.stringify({ url: u4, text: 'fine text' }),
        '{not json',
        JSON.stringify({ url: 'not a url', text: 'x' }),
        JSON.stringify({ url: url() }),
      ].join('\n'),
    });
    expect(bad.status).toBe(422);
    const problem = (await bad.json()) as { code: string; errors: Array<{ path: string }> };
    expect(problem.code).toBe('VALIDATION_FAILED');
    expect(problem.errors.map((e) => e.path)).toEqual(['line.2', 'line.3.url', 'line.4.text']);
    const list = await api('GET', `/api/admin/v1/plagiarism/pages?url=${encodeURIComponent(u4)}`, {
      token: await adminToken(),
    });
    expect(((await list.json()) as { page: { totalElements: number } }).page.totalElements).toBe(0);

    // More than 1,000 pages.
    const many = Array.from({ length: 1001 }, (_, i) =>
      JSON.stringify({ url: `https://many.example/${i}`, text: 'x' }),
    ).join('\n');
    const tooMany = await api('POST', '/api/admin/v1/plagiarism/pages:batch', {
      token: await adminToken(),
      body: many,
    });
    expect(tooMany.status).toBe(422);
  });

  it('extracts the title and the visible text of HTML', async () => {
    const ws = await createWorkspace();
    const words = freshWords(30);
    const html = `<!doctype html><html><head><title>Caf&eacute; &amp; Co</title><style>p { color: red }</style>
      <script>var hidden = "${freshWords(10).join(' ')}";</script></head>
      <body><h1>${words.slice(0, 5).join(' ')}</h1><p>${words.slice(5, 12).join(' ')} &lt;tag&gt;</p><div>${words.slice(12).join('&nbsp;')}</div>
      <noscript>enable javascript</noscript><svg><title>icon</title></svg></body></html>`;
    const stored = await ingestOk({ url: url(), html });
    const res = await api('GET', `/api/admin/v1/plagiarism/pages/${stored.id}`, { token: await adminToken() });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { title: string; text: string; wordCount: number };
    expect(page.title).toBe('Café & Co');
    expect(page.text).not.toContain('hidden');
    expect(page.text).not.toContain('color');
    expect(page.text).not.toContain('javascript');
    expect(page.text).not.toContain('icon');
    expect(page.text).toContain('<tag>');
    // Block boundaries separate words; &nbsp; is white space.
    expect(page.wordCount).toBe(31);
    const body = await checkOk(ws, words.join(' '));
    expect(body.matches.map((m) => [m.title, m.wordsMatched])).toEqual([['Café & Co', 30]]);
  });

  it('lists pages with pagination and deletes by id or by URL', async () => {
    const ws = await createWorkspace();
    const admin = await adminToken();
    const texts = [freshWords(20), freshWords(20)];
    const p1 = { url: url(), title: 'del-1', text: texts[0].join(' ') };
    const p2 = { url: url(), title: 'del-2', text: texts[1].join(' ') };
    const s1 = await ingestOk(p1);
    await ingestOk(p2);

    const all = (await (await api('GET', '/api/admin/v1/plagiarism/pages?size=200', { token: admin })).json()) as {
      data: Array<{ id: number; url: string }>;
      page: { size: number; totalElements: number; totalPages: number; currentPage: number };
    };
    expect(all.data.map((p) => p.url)).toEqual(expect.arrayContaining([p1.url, p2.url]));
    expect(all.page.totalElements).toBeGreaterThanOrEqual(2);
    const second = (await (
      await api('GET', '/api/admin/v1/plagiarism/pages?size=1&page=2', { token: admin })
    ).json()) as {
      data: Array<{ id: number }>;
      page: { size: number; totalElements: number; totalPages: number; currentPage: number };
    };
    expect(second.data).toHaveLength(1);
    expect(second.data[0].id).toBe(all.data[1].id);
    expect(second.page).toEqual({
      size: 1,
      totalElements: all.page.totalElements,
      totalPages: all.page.totalElements,
      currentPage: 2,
    });
    expect((await api('GET', '/api/admin/v1/plagiarism/pages?size=201', { token: admin })).status).toBe(422);

    expect((await api('DELETE', `/api/admin/v1/plagiarism/pages/${s1.id}`, { token: admin })).status).toBe(204);
    expect(
      (await api('DELETE', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(p2.url)}`, { token: admin })).status,
    ).toBe(204);
    expect((await api('DELETE', `/api/admin/v1/plagiarism/pages/${s1.id}`, { token: admin })).status).toBe(404);
    expect(
      (await api('GET', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(p2.url)}`, { token: admin })).status,
    ).toBe(404);
    for (const t of texts) expect((await checkOk(ws, t.join(' '))).matches).toEqual([]);
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_fingerprints WHERE page_id = ?')
      .bind(s1.id)
      .first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it('documents the corpus routes as they behave: created or replaced, JSON lines, paging and URL filter, 404 and 204', async () => {
    const doc = (await (await api('GET', '/api/openapi.json')).json()) as {
      paths: Record<string, Record<string, any>>;
    };
    const statuses = (op: any) => Object.keys(op.responses).sort();
    expect(
      doc.paths['/api/v1/workspaces/{workspaceId}/plagiarism-checks'].post.responses['422'].content,
    ).toHaveProperty(['application/problem+json']);
    const pages = doc.paths['/api/admin/v1/plagiarism/pages'];
    // 201 for a new URL, 200 for a replacement (same id), as the replacement test above sees.
    expect(statuses(pages.post)).toEqual(expect.arrayContaining(['200', '201', '401', '403', '422']));
    expect(
      (pages.get.parameters as Array<{ name: string; in: string }>)
        .filter((p) => p.in === 'query')
        .map((p) => p.name)
        .sort(),
    ).toEqual(['order', 'page', 'size', 'sort', 'url']);
    expect(Object.keys(doc.paths['/api/admin/v1/plagiarism/pages:batch'].post.requestBody.content)).toEqual([
      'application/x-ndjson',
    ]);
    const byRef = doc.paths['/api/admin/v1/plagiarism/pages/{ref}'];
    expect(statuses(byRef.get)).toEqual(expect.arrayContaining(['200', '404']));
    expect(statuses(byRef.delete)).toEqual(expect.arrayContaining(['204', '404']));
    expect(byRef.delete.responses['404'].content).toHaveProperty(['application/problem+json']);
  });
});

// ---------------------------------------------------------------------------------------------
// Ingestion robustness. R2 and D1 are platform bindings: the wrappers below only make a real
// binding fail or record what it is given; the corpus and the app are the real ones.

/** The real bucket, with `put` and/or `delete` failing on the calls `fail` picks (1-based). */
