/**
 * Issue 12, defect 5: HTML ingestion never answers 5xx. Malformed, hostile or deeply nested
 * HTML is extracted (a page of its own, never failing the rest of a batch); extracted titles are
 * capped like explicit ones (1,000 characters).
 */
import { describe, expect, it } from 'vitest';
import { adminToken, api, freshWords, ingest, uid } from './support/plagiarism';

const url = () => `https://hostile.example/${uid('p')}`;

async function pageOf(id: number): Promise<{ title: string; text: string; wordCount: number }> {
  const res = await api('GET', `/api/admin/v1/plagiarism/pages/${id}`, { token: await adminToken() });
  expect(res.status).toBe(200);
  return res.json();
}

const HOSTILE: Array<[string, string]> = [
  ['<svg/>', '<svg/>'],
  ['<math/>', '<math/>'],
  ['<svg/> before text', '<svg/><p>after the svg</p>'],
  ["'<b>' x 20,000", '<b>'.repeat(20_000)],
  ["'<div>' x 50,000", '<div>'.repeat(50_000)],
  ["'<div>' x 50,000 then '</span>' x 50,000", `${'<div>'.repeat(50_000)}x${'</span>'.repeat(50_000)}`],
  ['unclosed <script', '<p>words here</p><script'],
  ['unclosed comment', '<p>seen</p><!-- never closed'],
  ['stray end tags', '</p></div></svg></title>text'],
  ['entities out of range', '<p>&#x110000; &#xD800; &#0; &bogus; ok</p>'],
  ['nested hidden', '<svg><svg><svg></svg></svg>hidden</svg>visible'],
  ['<title> x 10,000', '<title>'.repeat(10_000)],
  ['attributes', `<p ${'a="1" '.repeat(20_000)}>attr</p>`],
];

describe('hostile HTML is extracted, never 5xx (defect 5)', () => {
  it('each hostile page on its own: 201 with extracted text', async () => {
    for (const [name, html] of HOSTILE) {
      const res = await ingest({ url: url(), html });
      const body = (await res.json()) as { id: number; title: string };
      expect(res.status, `${name}: ${JSON.stringify(body).slice(0, 200)}`).toBe(201);
      const page = await pageOf(body.id);
      if (name === '<svg/> before text') expect(page.text).toBe('after the svg');
      if (name === 'nested hidden') expect(page.text).toBe('visible');
      if (name === 'stray end tags') expect(page.text).toBe('text');
      if (name === 'entities out of range') expect(page.text).toContain('ok');
      expect(page.title.length).toBeLessThanOrEqual(1000);
    }
  });

  it('a batch with hostile pages among ordinary ones stores all of them (one does not fail the others)', async () => {
    const words = freshWords(12);
    const lines = [
      JSON.stringify({ url: url(), html: `<title>ok</title><p>${words.join(' ')}</p>` }),
      ...HOSTILE.map(([, html]) => JSON.stringify({ url: url(), html })),
      JSON.stringify({ url: url(), text: words.join(' ') }),
    ];
    const res = await api('POST', '/api/admin/v1/plagiarism/pages:batch', {
      token: await adminToken(),
      body: lines.join('\n'),
    });
    const body = (await res.json()) as { count: number; pages: Array<{ title: string; wordCount: number }> };
    expect(res.status, JSON.stringify(body).slice(0, 300)).toBe(200);
    expect(body.count).toBe(lines.length);
    expect(body.pages[0]).toMatchObject({ title: 'ok', wordCount: 12 });
  });

  it('an extracted title is capped at 1,000 characters, like an explicit one', async () => {
    const long = 'T'.repeat(5000);
    const res = await ingest({
      url: url(),
      html: `<html><head><title>${long}</title></head><body><p>body text</p></body></html>`,
    });
    expect(res.status).toBe(201);
    const stored = (await res.json()) as { id: number; title: string };
    expect(stored.title).toBe('T'.repeat(1000));
    expect((await pageOf(stored.id)).title).toHaveLength(1000);
    const entity = await ingest({ url: url(), html: `<title>${'&amp;'.repeat(3000)}</title>` });
    expect(((await entity.json()) as { title: string }).title).toBe('&'.repeat(1000));
  });
});
