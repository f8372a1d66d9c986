/**
 * The local provider's corpus is private: a match's snippet is the matched passage as written in
 * the source, without words beyond it, so chained checks cannot read a page out of the corpus.
 * With PLAGIARISM_SNIPPET_CONTEXT_WORDS (an operator with a public corpus) the snippet shows that
 * many words of the source either side again, and the same chain recovers the page.
 */
import { createExecutionContext, waitOnExecutionContext } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { splitWords } from '../../core/plagiarism';
import worker from '../../worker/index';
import type { Env } from '../../worker/env';
import { createWorkspace, env, freshWords, ingestOk, token, url, type CheckJson } from './support/plagiarism';

const PAGE_WORDS = 300;
const KNOWN_AT_START = 8;
const CHECKS = 15;
const MIN_CHECK_WORDS = 15;

/** A check through the Worker's fetch handler with these bindings (the env var under test). */
async function checkWith(bindings: Env, ws: string, text: string): Promise<CheckJson> {
  const exec = createExecutionContext();
  const res = await worker.fetch(
    new Request(`http://x/api/v1/workspaces/${ws}/plagiarism-checks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${await token({ workspaceId: ws })}`, 'content-type': 'application/json' },
      body: JSON.stringify({ text }),
    }),
    bindings as never,
    exec,
  );
  await waitOnExecutionContext(exec);
  const body = await res.text();
  expect(res.status, body.slice(0, 300)).toBe(200);
  return JSON.parse(body) as CheckJson;
}

/** The page: ~300 words written as prose (capitals, commas and full stops), from words no other test uses. */
function writtenPage(words: string[]): string {
  return words
    .map((w, i) => {
      const capital = i === 0 || i % 12 === 0 ? w[0].toUpperCase() + w.slice(1) : w;
      return i % 12 === 11 ? `${capital}.` : i % 5 === 4 ? `${capital},` : capital;
    })
    .join(' ');
}

/**
 * What a checker who knows the page's first words learns by chaining checks: each check sends the
 * words known so far (padded with fresh words up to the 15-word minimum), and every word of the
 * snippet after the known words' last occurrence in it is added to them.
 */
async function chain(bindings: Env, ws: string, pageUrl: string, known: string[]): Promise<string[]> {
  const learned = [...known];
  for (let i = 0; i < CHECKS; i++) {
    const padding = freshWords(Math.max(0, MIN_CHECK_WORDS - learned.length));
    const answer = await checkWith(bindings, ws, [...learned, ...padding].join(' '));
    const match = answer.matches.find((m) => m.url === pageUrl);
    expect(match, `check ${i + 1}`).toBeDefined();
    const shown = splitWords(match!.matchSnippet).map((w) => w.norm);
    const tail = learned.slice(-KNOWN_AT_START).join(' ');
    for (let at = shown.length - KNOWN_AT_START; at >= 0; at--) {
      if (shown.slice(at, at + KNOWN_AT_START).join(' ') === tail) {
        learned.push(...shown.slice(at + KNOWN_AT_START));
        break;
      }
    }
  }
  return learned;
}

let words: string[] = [];
let text = '';
let pageUrl = '';

beforeAll(async () => {
  words = freshWords(PAGE_WORDS);
  text = writtenPage(words);
  pageUrl = url();
  // The admin's private reference page.
  await ingestOk({ url: pageUrl, title: 'Private page', text });
});

describe('snippets of the private corpus', () => {
  it('are the matched passage as written, so chained checks from 8 known words recover nothing more', async () => {
    const ws = await createWorkspace(100, 100);
    const known = words.slice(0, KNOWN_AT_START);
    // One check: the snippet is the source's first 8 words exactly as written (case, punctuation), nothing else.
    const first = await checkWith(env, ws, [...known, ...freshWords(MIN_CHECK_WORDS - KNOWN_AT_START)].join(' '));
    expect(first.matches).toHaveLength(1);
    const sourceWords = splitWords(text);
    expect(first.matches[0]).toMatchObject({
      url: pageUrl,
      wordsMatched: KNOWN_AT_START,
      matchSnippet: text.slice(sourceWords[0].start, sourceWords[KNOWN_AT_START - 1].end),
    });
    expect(first.matches[0].matchSnippet).toBe(
      `${words[0][0].toUpperCase()}${words[0].slice(1)} ${words.slice(1, 4).join(' ')} ${words[4]}, ${words.slice(5, 8).join(' ')}`,
    );
    // Fifteen chained checks: still only the words the checker had.
    const learned = await chain(env, ws, pageUrl, known);
    expect(learned).toEqual(known);
    expect(learned.length).toBeLessThan(PAGE_WORDS);
  });

  it('a passage in the middle of the page: the snippet is that passage alone', async () => {
    const ws = await createWorkspace(100, 100);
    const middle = words.slice(140, 170);
    const answer = await checkWith(env, ws, [...freshWords(5), ...middle, ...freshWords(5)].join(' '));
    const sourceWords = splitWords(text);
    expect(answer.matches[0].wordsMatched).toBe(30);
    expect(answer.matches[0].matchSnippet).toBe(text.slice(sourceWords[140].start, sourceWords[169].end));
    expect(splitWords(answer.matches[0].matchSnippet).map((w) => w.norm)).toEqual(middle);
  });

  it('with PLAGIARISM_SNIPPET_CONTEXT_WORDS the context words return, and the same chain reads the whole page', async () => {
    const ws = await createWorkspace(100, 100);
    const withContext = { ...env, PLAGIARISM_SNIPPET_CONTEXT_WORDS: '20' } as Env;
    const known = words.slice(0, KNOWN_AT_START);
    const first = await checkWith(
      withContext,
      ws,
      [...known, ...freshWords(MIN_CHECK_WORDS - KNOWN_AT_START)].join(' '),
    );
    const sourceWords = splitWords(text);
    // The run and 20 words after it (the page starts with the run), an ellipsis where the page goes on.
    expect(first.matches[0].matchSnippet).toBe(
      `${text.slice(sourceWords[0].start, sourceWords[KNOWN_AT_START + 19].end)} …`,
    );
    const learned = await chain(withContext, ws, pageUrl, known);
    expect(learned).toEqual(words);
  });
});
