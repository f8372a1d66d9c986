/**
 * The local plagiarism provider end to end: admin ingestion into D1/R2, checks through the
 * real Worker (SELF), metering through the quotas.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { countWords } from '../../core/plagiarism';
import { LIMITS } from '../../core/limits';
import { createApp } from '../../worker/app';
import { sha256Hex } from '../../core/digest';
import type { Env } from '../../worker/env';
import { MAX_PARAM_BYTES, PlagiarismCorpus, utf8Bytes, type PageInput } from '../../worker/plagiarism/corpus';
import { R2_PREFIXES } from '../../core/storage-keys';

const R2_PREFIX = R2_PREFIXES.plagiarismPages;
import { GatedBucket } from './storage-gate';
import {
  adminToken,
  api,
  check,
  createWorkspace,
  env,
  freshWords,
  ingest,
  ingestOk,
  token,
  uid,
  usedChecks,
  type CheckJson,
} from './plagiarism-helpers';

const url = () => `https://ref.example/${uid('p')}`;

async function checkOk(ws: string, text: string): Promise<CheckJson> {
  const res = await check(ws, text);
  expect(res.status, await res.clone().text()).toBe(200);
  return res.json();
}

describe('plagiarism checks against the local corpus', () => {
  it('finds an exact copy: one match with url, title, snippet, wordsMatched and percentage', async () => {
    const ws = await createWorkspace();
    const words = freshWords(100);
    const page = { url: url(), title: 'Exact source', text: words.join(' ') };
    expect((await ingest(page)).status).toBe(201);

    const input = words.slice(30, 60).join(' ');
    const body = await checkOk(ws, input);
    expect(body.wordCount).toBe(30);
    expect(body.matches).toHaveLength(1);
    const [m] = body.matches;
    expect(m.url).toBe(page.url);
    expect(m.title).toBe('Exact source');
    expect(m.wordsMatched).toBe(30);
    expect(m.matchPercentage).toBe(100);
    // The passage with 20 words of context either side.
    expect(m.matchSnippet).toBe(`… ${words.slice(10, 80).join(' ')} …`);
  });

  it('matches through changed punctuation and case', async () => {
    const ws = await createWorkspace();
    const words = freshWords(40);
    await ingestOk({ url: url(), title: 't', text: words.map((w, i) => (i % 5 === 4 ? `${w}.` : w)).join(' ') });
    const changed = words.slice(0, 20).map((w, i) => (i % 3 === 0 ? `"${w.toUpperCase()}",` : i % 3 === 1 ? `(${w})` : `${w}!?`));
    const filler = freshWords(20);
    const body = await checkOk(ws, [...changed, ...filler].join(' '));
    expect(body.wordCount).toBe(40);
    expect(body.matches).toHaveLength(1);
    expect(body.matches[0].wordsMatched).toBe(20);
    expect(body.matches[0].matchPercentage).toBe(50);
    // The snippet quotes the source as written, not the input.
    expect(body.matches[0].matchSnippet).toContain(`${words[4]}.`);
  });

  it('reports partial overlaps with several sources, one match each, by wordsMatched descending', async () => {
    const ws = await createWorkspace();
    const a = freshWords(50);
    const b = freshWords(50);
    const c = freshWords(50);
    const d = freshWords(50);
    const pages = [a, b, c, d].map((w, i) => ({ url: url(), title: `source ${i}`, text: w.join(' ') }));
    for (const p of pages) await ingestOk(p);
    // 12 words of c, 30 of a (two separate runs of 15 from different places), 20 of b, 7 of d.
    const input = [
      ...c.slice(5, 17),
      ...freshWords(3),
      ...a.slice(0, 15),
      ...freshWords(2),
      ...b.slice(20, 40),
      ...freshWords(2),
      ...a.slice(30, 45),
      ...freshWords(2),
      ...d.slice(0, 7),
      ...freshWords(2),
    ];
    const body = await checkOk(ws, input.join(' '));
    expect(body.wordCount).toBe(input.length);
    expect(body.matches.map((m) => [m.url, m.wordsMatched])).toEqual([
      [pages[0].url, 30],
      [pages[1].url, 20],
      [pages[2].url, 12],
    ]);
    for (const m of body.matches) expect(m.matchPercentage).toBeCloseTo((100 * m.wordsMatched) / input.length, 2);
  });

  it('a run of 7 words is not a match, a run of 8 is', async () => {
    const ws = await createWorkspace();
    const src = freshWords(30);
    const page = { url: url(), title: 'runs', text: src.join(' ') };
    await ingestOk(page);
    const seven = await checkOk(ws, [...freshWords(10), ...src.slice(5, 12), ...freshWords(10)].join(' '));
    expect(seven.matches).toEqual([]);
    const eight = await checkOk(ws, [...freshWords(10), ...src.slice(5, 13), ...freshWords(10)].join(' '));
    expect(eight.matches.map((m) => [m.url, m.wordsMatched])).toEqual([[page.url, 8]]);
  });

  it('matches Unicode text (Cyrillic, Greek, accents, CJK with spaces) regardless of case and normalization form', async () => {
    const ws = await createWorkspace();
    const tag = uid('');
    const source =
      `Съешь же ещё этих мягких французских булок ${tag} да выпей чаю. Ξεσκεπάζω την ψυχοφθόρα βδελυγμία, ` +
      `café naïve façade élan 日本語 の 文章 です ${tag}x.`;
    const page = { url: url(), title: 'Юникод', text: source };
    await ingestOk(page);
    // Upper case, decomposed accents (NFD), other punctuation.
    const input = `Начало текста здесь: СЪЕШЬ ЖЕ ЕЩЁ ЭТИХ МЯГКИХ ФРАНЦУЗСКИХ БУЛОК ${tag.toUpperCase()} ДА ВЫПЕЙ ЧАЮ — ξεσκεπάζω; конец`.normalize('NFD');
    const body = await checkOk(ws, input);
    expect(body.wordCount).toBe(countWords(input));
    expect(body.matches).toHaveLength(1);
    expect(body.matches[0].url).toBe(page.url);
    expect(body.matches[0].title).toBe('Юникод');
    expect(body.matches[0].wordsMatched).toBe(12);
    expect(body.matches[0].matchSnippet).toContain('Съешь же ещё этих мягких французских булок');
  });

  it('checks a 100,000-character input', async () => {
    const ws = await createWorkspace();
    const src = freshWords(200);
    const page = { url: url(), title: 'big', text: src.join(' ') };
    await ingestOk(page);
    const copied = src.slice(50, 150);
    const filler: string[] = [];
    let len = copied.join(' ').length + 1;
    for (const w of freshWords(20_000)) {
      if (len + w.length + 1 > 100_000) break;
      filler.push(w);
      len += w.length + 1;
    }
    const input = [...filler.slice(0, 3000), ...copied, ...filler.slice(3000)].join(' ');
    expect(input.length).toBeLessThanOrEqual(100_000);
    expect(input.length).toBeGreaterThan(99_000);
    const body = await checkOk(ws, input);
    expect(body.wordCount).toBe(filler.length + copied.length);
    expect(body.matches.map((m) => [m.url, m.wordsMatched])).toEqual([[page.url, 100]]);

    const tooLong = await check(ws, `${input} ${'z'.repeat(100)}`);
    expect(tooLong.status).toBe(422);
    expect(((await tooLong.json()) as { code: string }).code).toBe('VALIDATION_FAILED');
  });

  it('no match gives [] and still counts as one successful check', async () => {
    const ws = await createWorkspace();
    const before = await usedChecks(ws);
    const body = await checkOk(ws, freshWords(30).join(' '));
    expect(body).toEqual({ wordCount: 30, matches: [] });
    expect(await usedChecks(ws)).toBe(before + 1);
  });
});

describe('plagiarism check errors and metering', () => {
  it('rejects fewer than 15 words (after punctuation stripping) with 422 plagiarismTextTooShort, consuming nothing', async () => {
    const ws = await createWorkspace();
    const fourteen = `${freshWords(14).join(', ')} — !!! ...`;
    const res = await check(ws, fourteen);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    const problem = (await res.json()) as { code: string; translationKey: string; status: number };
    expect(problem).toMatchObject({ code: 'PLAGIARISM_TEXT_TOO_SHORT', translationKey: 'plagiarismTextTooShort', status: 422 });
    expect(await usedChecks(ws)).toBe(0);
    expect((await check(ws, freshWords(15).join(', '))).status).toBe(200);
    expect(await usedChecks(ws)).toBe(1);
  });

  it('validates the body (422) and the token (401/403)', async () => {
    const ws = await createWorkspace();
    const bad = await api('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { token: await token({ workspaceId: ws }), json: { txt: 'x' } });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { code: string }).code).toBe('VALIDATION_FAILED');
    expect((await api('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { json: { text: 'x' } })).status).toBe(401);
    const other = await api('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { token: await token({ workspaceId: 'other' }), json: { text: 'x' } });
    expect(other.status).toBe(403);
  });

  it('consumes one plagiarismChecks unit per success and answers 403 ERROR_NO_REMAINING_PLAGIARISM_CHECKS when exhausted', async () => {
    const ws = await createWorkspace(2, 10);
    const text = freshWords(20).join(' ');
    expect((await check(ws, text)).status).toBe(200);
    expect((await check(ws, text)).status).toBe(200);
    expect(await usedChecks(ws)).toBe(2);
    const res = await check(ws, text);
    expect(res.status).toBe(403);
    const problem = (await res.json()) as { code: string; translationKey: string };
    expect(problem).toMatchObject({ code: 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS', translationKey: 'noRemainingPlagiarismChecks' });
    expect(await usedChecks(ws)).toBe(2);
  });
});

describe('reference corpus admin API', () => {
  it('needs the admin scope', async () => {
    const res = await api('POST', '/api/admin/v1/plagiarism/pages', { token: await token({ workspaceId: 'w' }), json: { url: url(), text: 'a' } });
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

    const list = await api('GET', `/api/admin/v1/plagiarism/pages?url=${encodeURIComponent(u)}`, { token: await adminToken() });
    const listed = (await list.json()) as { data: Array<{ id: number; title: string }>; page: { totalElements: number } };
    expect(listed.page.totalElements).toBe(1);
    expect(listed.data[0]).toMatchObject({ id: created.id, title: 'v2' });

    expect((await checkOk(ws, first.slice(0, 20).join(' '))).matches).toEqual([]);
    const now = await checkOk(ws, second.slice(0, 20).join(' '));
    expect(now.matches.map((m) => [m.url, m.title, m.wordsMatched])).toEqual([[u, 'v2', 20]]);

    // Exactly one text object is left for the page, and fingerprints only of the new text.
    const row = await env.DB.prepare('SELECT r2_key, fingerprint_count FROM plagiarism_pages WHERE id = ?').bind(created.id).first<{ r2_key: string; fingerprint_count: number }>();
    const prefix = row!.r2_key.slice(0, row!.r2_key.lastIndexOf('/') + 1);
    const objects = await env.ARTIFACTS.list({ prefix });
    expect(objects.objects.map((o) => o.key)).toEqual([row!.r2_key]);
    const fps = await env.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_fingerprints WHERE page_id = ?').bind(created.id).first<{ n: number }>();
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
      const oldKey = (await env.DB.prepare('SELECT r2_key FROM plagiarism_pages WHERE url = ?').bind(u).first<{ r2_key: string }>())!.r2_key;
      const input = [...a, ...freshWords(3), ...b].join(' ');
      const checkBucket = new GatedBucket(env.ARTIFACTS);
      const textRead = checkBucket.hold('get', (key) => key.startsWith(R2_PREFIX));
      const checking = createApp().request(
        `/api/v1/workspaces/${ws}/plagiarism-checks`,
        { method: 'POST', headers: { authorization: `Bearer ${await token({ workspaceId: ws })}`, 'content-type': 'application/json' }, body: JSON.stringify({ text: input }) },
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
      const list = await api('GET', `/api/admin/v1/plagiarism/pages?url=${encodeURIComponent(u)}`, { token: await adminToken() });
      expect(((await list.json()) as { page: { totalElements: number } }).page.totalElements).toBe(1);
    });

    it('replacement committed but the old text not yet deleted: the check reports A as it was', async () => {
      const { u, b, oldKey, textRead, result } = await setup();
      const writeBucket = new GatedBucket(env.ARTIFACTS);
      const deletion = writeBucket.hold('delete', (key) => key.startsWith(R2_PREFIX));
      const replacing = createApp().request(
        '/api/admin/v1/plagiarism/pages',
        { method: 'POST', headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ url: u, title: 'B', text: b.join(' ') }) },
        { ...env, ARTIFACTS: writeBucket.bucket } as Env,
      );
      // The ingestion deletes the replaced text only after its D1 batch: B is committed now.
      await deletion.reached();
      expect(writeBucket.log.filter((l) => l.startsWith('delete'))).toEqual([`delete ${oldKey}`]);
      const row = await env.DB.prepare('SELECT title, r2_key FROM plagiarism_pages WHERE url = ?').bind(u).first<{ title: string; r2_key: string }>();
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
    const res = await api('POST', '/api/admin/v1/plagiarism/pages:batch', { token: await adminToken(), body: lines.map((l) => JSON.stringify(l)).join('\n') + '\n\n' });
    expect(res.status, await res.clone().text()).toBe(200);
    const out = (await res.json()) as { count: number; created: number; replaced: number; pages: Array<{ url: string; title: string }> };
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
      body: [JSON.stringify({ url: u4, text: 'fine text' }), '{not json', JSON.stringify({ url: 'not a url', text: 'x' }), JSON.stringify({ url: url() })].join('\n'),
    });
    expect(bad.status).toBe(422);
    const problem = (await bad.json()) as { code: string; errors: Array<{ path: string }> };
    expect(problem.code).toBe('VALIDATION_FAILED');
    expect(problem.errors.map((e) => e.path)).toEqual(['line.2', 'line.3.url', 'line.4.text']);
    const list = await api('GET', `/api/admin/v1/plagiarism/pages?url=${encodeURIComponent(u4)}`, { token: await adminToken() });
    expect(((await list.json()) as { page: { totalElements: number } }).page.totalElements).toBe(0);

    // More than 1,000 pages.
    const many = Array.from({ length: 1001 }, (_, i) => JSON.stringify({ url: `https://many.example/${i}`, text: 'x' })).join('\n');
    const tooMany = await api('POST', '/api/admin/v1/plagiarism/pages:batch', { token: await adminToken(), body: many });
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
    const second = (await (await api('GET', '/api/admin/v1/plagiarism/pages?size=1&page=2', { token: admin })).json()) as {
      data: Array<{ id: number }>;
      page: { size: number; totalElements: number; totalPages: number; currentPage: number };
    };
    expect(second.data).toHaveLength(1);
    expect(second.data[0].id).toBe(all.data[1].id);
    expect(second.page).toEqual({ size: 1, totalElements: all.page.totalElements, totalPages: all.page.totalElements, currentPage: 2 });
    expect((await api('GET', '/api/admin/v1/plagiarism/pages?size=201', { token: admin })).status).toBe(422);

    expect((await api('DELETE', `/api/admin/v1/plagiarism/pages/${s1.id}`, { token: admin })).status).toBe(204);
    expect((await api('DELETE', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(p2.url)}`, { token: admin })).status).toBe(204);
    expect((await api('DELETE', `/api/admin/v1/plagiarism/pages/${s1.id}`, { token: admin })).status).toBe(404);
    expect((await api('GET', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(p2.url)}`, { token: admin })).status).toBe(404);
    for (const t of texts) expect((await checkOk(ws, t.join(' '))).matches).toEqual([]);
    const left = await env.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_fingerprints WHERE page_id = ?').bind(s1.id).first<{ n: number }>();
    expect(left!.n).toBe(0);
  });

  it('documents the routes in /api/openapi.json', async () => {
    const doc = (await (await api('GET', '/api/openapi.json')).json()) as { paths: Record<string, unknown> };
    for (const p of [
      '/api/v1/workspaces/{workspaceId}/plagiarism-checks',
      '/api/admin/v1/plagiarism/pages',
      '/api/admin/v1/plagiarism/pages:batch',
      '/api/admin/v1/plagiarism/pages/{ref}',
    ]) {
      expect(doc.paths).toHaveProperty([p]);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Ingestion robustness. R2 and D1 are platform bindings: the wrappers below only make a real
// binding fail or record what it is given; the corpus and the app are the real ones.

/** The real bucket, with `put` and/or `delete` failing on the calls `fail` picks (1-based). */
function flakyBucket(real: R2Bucket, fail: { put?: (n: number) => boolean; delete?: (n: number) => boolean }): R2Bucket {
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
  const ctx = { waitUntil: (p: Promise<unknown>) => void registered.push(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
  return { ctx, registered };
}

/** The R2 objects of a page URL (any ingestion). */
async function objectsOf(u: string): Promise<string[]> {
  const listed = await env.ARTIFACTS.list({ prefix: `${R2_PREFIX}${(await sha256Hex(u)).slice(0, 32)}/` });
  return listed.objects.map((o) => o.key);
}

async function rowsOf(u: string): Promise<number> {
  return (await env.DB.prepare('SELECT COUNT(*) AS n FROM plagiarism_pages WHERE url = ?1').bind(u).first<{ n: number }>())!.n;
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
    const res = await api('POST', '/api/admin/v1/plagiarism/pages:batch', { token: admin, body: lines.map((l) => JSON.stringify(l)).join('\n') });
    expect(res.status, await res.clone().text()).toBe(422);
    const problem = (await res.json()) as { code: string; errors: Array<{ path: string }> };
    expect(problem.code).toBe('VALIDATION_FAILED');
    expect(problem.errors.map((e) => e.path)).toEqual(['line.2.url', 'line.3.title', 'line.4.text', 'line.5.html']);
    for (const page of lines) expect(await rowsOf(page.url)).toBe(0);
    expect(await objectsOf(good.url)).toEqual([]);

    // Well-formed astral characters (surrogate pairs) and U+FFFD itself are fine.
    const fine = { url: `https://s2.example/ok\u{1F600}\ufffd${uid()}`, title: 'emoji \u{1F600}', text };
    const stored = await ingestOk(fine);
    const back = (await (await api('GET', `/api/admin/v1/plagiarism/pages/${encodeURIComponent(fine.url)}`, { token: admin })).json()) as { id: number; url: string; title: string };
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
    const ingested = (list: PageInput[]) => corpus.ingest(list).catch((err: unknown) => Promise.reject(new Error(JSON.stringify(String(err)))));
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
      { method: 'POST', headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/x-ndjson' }, body },
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
    return (await res.json()) as { count: number; created: number; pages: Array<{ url: string; wordCount: number; fingerprintCount: number }> };
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
    expect((await checkOk(ws, words.slice(150_000, 150_030).join(' '))).matches.map((m) => [m.url, m.wordsMatched])).toEqual([[long.url, 30]]);
  });
});

describe('reference corpus ingestion: R2 objects on failures and after the commit', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  const pagesOf = (n: number): PageInput[] => Array.from({ length: n }, () => ({ url: url(), title: 't', text: freshWords(20).join(' ') }));

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

    await expect(new PlagiarismCorpus(db, flakyBucket(env.ARTIFACTS, { delete: () => true })).ingest(pages)).rejects.toThrow('D1 batch failed');
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
    const replaced = await new PlagiarismCorpus(env.DB, flakyBucket(env.ARTIFACTS, { delete: () => true }), failing.ctx).ingest([{ ...page, title: 'v2' }]);
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
      { method: 'POST', headers: { authorization: `Bearer ${await adminToken()}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...page, title: 'v3' }) },
      env,
      viaApp.ctx,
    );
    expect(res.status).toBe(200);
    expect(viaApp.registered.length).toBeGreaterThanOrEqual(1);
    await Promise.all(viaApp.registered);
    const row = await env.DB.prepare('SELECT r2_key FROM plagiarism_pages WHERE url = ?1').bind(page.url).first<{ r2_key: string }>();
    expect(await objectsOf(page.url)).toEqual([row!.r2_key]);
  });
});
