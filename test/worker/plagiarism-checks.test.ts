/**
 * The local plagiarism provider end to end, checks through the real Worker (SELF) against pages
 * ingested into D1/R2: matches, snippets, Unicode, a 100,000-character input, validation and
 * metering through the quotas.
 */
import { describe, expect, it } from 'vitest';
import { countWords } from '../../core/plagiarism';
import {
  api,
  check,
  checkOk,
  createWorkspace,
  freshWords,
  ingest,
  ingestOk,
  token,
  uid,
  url,
  usedChecks,
} from './support/plagiarism';

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
    // The matched passage alone: the corpus is private (no context words unless configured).
    expect(m.matchSnippet).toBe(input);
  });

  it('matches through changed punctuation and case', async () => {
    const ws = await createWorkspace();
    const words = freshWords(40);
    await ingestOk({ url: url(), title: 't', text: words.map((w, i) => (i % 5 === 4 ? `${w}.` : w)).join(' ') });
    const changed = words
      .slice(0, 20)
      .map((w, i) => (i % 3 === 0 ? `"${w.toUpperCase()}",` : i % 3 === 1 ? `(${w})` : `${w}!?`));
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
    const input =
      `Начало текста здесь: СЪЕШЬ ЖЕ ЕЩЁ ЭТИХ МЯГКИХ ФРАНЦУЗСКИХ БУЛОК ${tag.toUpperCase()} ДА ВЫПЕЙ ЧАЮ — ξεσκεπάζω; конец`.normalize(
        'NFD',
      );
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
    expect(problem).toMatchObject({
      code: 'PLAGIARISM_TEXT_TOO_SHORT',
      translationKey: 'plagiarismTextTooShort',
      status: 422,
    });
    expect(await usedChecks(ws)).toBe(0);
    expect((await check(ws, freshWords(15).join(', '))).status).toBe(200);
    expect(await usedChecks(ws)).toBe(1);
  });

  it('validates the body (422) and the token (401/403)', async () => {
    const ws = await createWorkspace();
    const bad = await api('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, {
      token: await token({ workspaceId: ws }),
      json: { txt: 'x' },
    });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { code: string }).code).toBe('VALIDATION_FAILED');
    expect((await api('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, { json: { text: 'x' } })).status).toBe(401);
    const other = await api('POST', `/api/v1/workspaces/${ws}/plagiarism-checks`, {
      token: await token({ workspaceId: 'other' }),
      json: { text: 'x' },
    });
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
    expect(problem).toMatchObject({
      code: 'ERROR_NO_REMAINING_PLAGIARISM_CHECKS',
      translationKey: 'noRemainingPlagiarismChecks',
    });
    expect(await usedChecks(ws)).toBe(2);
  });
});
