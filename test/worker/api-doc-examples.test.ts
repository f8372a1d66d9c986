/**
 * Executed docs: every request example of docs/api.md runs against the Worker (SELF.fetch) with
 * the real default model, its mapper bundles and the English language data in R2, and its answer
 * must match the documented one (conventions in test/worker/support/doc-examples.ts and at the top
 * of docs/api.md). A change that alters a documented answer fails here until the doc is updated.
 */
import { env, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import apiDoc from '../../docs/api.md?raw';
import { invalidateCatalog } from '../../worker/catalog/store';
import { adminToken, token, uploadEnglish } from './support/api';
import { DocNumber, docExamples, mismatches, parseDocJson, type DocExample } from './support/doc-examples';
import { SUBWORD_MODEL } from '../support/engine-source-suite';

const MODEL = 'en-glove-6b-100d';

async function putFixture(key: string, optional = false): Promise<void> {
  const res = await env.FIXTURES.fetch(`http://f/${key}`);
  if (res.status !== 200) {
    if (optional) return;
    throw new Error(`build/generated/${key} is missing (the ensure step builds it)`);
  }
  await env.ARTIFACTS.put(key, await res.arrayBuffer());
}

// What `npm start` seeds for English: the default model, its mapper bundles (pattern only where
// its Debian lexicon was built) and the English language data.
beforeAll(async () => {
  await putFixture(`models/${MODEL}.emb`);
  await putFixture(`models/${MODEL}.json`);
  for (const key of ['afinn', 'sentiment', 'pattern']) {
    const optional = key === 'pattern';
    await putFixture(`mappers/${MODEL}/${key}.bin`, optional);
    await putFixture(`mappers/${MODEL}/${key}.json`, optional);
  }
  // The default model and its sub-word table (the subwordFallback examples).
  await putFixture(`models/${SUBWORD_MODEL}.emb`);
  await putFixture(`models/${SUBWORD_MODEL}.json`);
  await putFixture(`subword/${SUBWORD_MODEL}.bin`);
  await invalidateCatalog(env);
  await uploadEnglish();
});

const examples: DocExample[] = docExamples(apiDoc, { TOKEN: 'TOKEN', ADMIN: 'ADMIN' });

async function run(ex: DocExample): Promise<{ status: number; text: string }> {
  const req = ex.request!;
  const headers = { ...req.headers };
  // The doc's $TOKEN and $ADMIN stand for tokens minted here (the local JWT secret).
  if (headers.authorization === 'Bearer TOKEN') headers.authorization = `Bearer ${await token()}`;
  if (headers.authorization === 'Bearer ADMIN') headers.authorization = `Bearer ${await adminToken()}`;
  const res = await SELF.fetch(`http://127.0.0.1:8787${req.path}`, { method: req.method, headers, body: req.body });
  return { status: res.status, text: await res.text() };
}

describe('docs/api.md examples', () => {
  it('has examples, each marked', () => {
    expect(examples.filter((e) => !e.skip).length).toBeGreaterThan(10);
  });

  // In document order: later examples may rely on earlier ones (a page ingested, then checked).
  for (const ex of examples) {
    it.skipIf(ex.skip !== null)(`${ex.name} (docs/api.md line ${ex.line})`, async () => {
      const { status, text } = await run(ex);
      expect(status, text).toBe(ex.status);
      if (ex.answer === undefined) {
        expect(text).toBe('');
        return;
      }
      const diff = mismatches(ex.answer, JSON.parse(text));
      expect(diff, `answer of docs/api.md line ${ex.line}: ${text.slice(0, 2000)}`).toEqual([]);
    });
  }
});

describe('the comparison of documented answers', () => {
  const cmp = (doc: string, actual: unknown) => mismatches(parseDocJson(doc), actual);

  it('compares floats to their printed digits and integers exactly', () => {
    expect(cmp('0.516', 0.51649)).toEqual([]);
    expect(cmp('0.516', 0.5166)).toHaveLength(1);
    expect(cmp('0.52', 0.516)).toEqual([]);
    expect(cmp('781', 781)).toEqual([]);
    expect(cmp('781', 781.2)).toHaveLength(1);
    expect(cmp('1.5e-3', 0.00152)).toEqual([]);
    expect((parseDocJson('0.10') as DocNumber).tolerance).toBeCloseTo(0.005, 12);
  });

  it('checks every field unless the doc leaves some out with "...": "..."', () => {
    expect(cmp('{"a":1}', { a: 1, b: 2 })).toEqual(['$.b: in the answer (2), not documented']);
    expect(cmp('{"a":1,"...":"..."}', { a: 1, b: 2 })).toEqual([]);
    expect(cmp('{"a":1,"b":"..."}', { a: 1 })).toEqual(['$.b: documented, missing from the answer']);
    expect(cmp('{"a":"..."}', { a: [1, 2] })).toEqual([]);
  });

  it('checks every element unless the array ends with "..."', () => {
    expect(cmp('[1,2]', [1, 2, 3])).toHaveLength(1);
    expect(cmp('[1,2,"..."]', [1, 2, 3])).toEqual([]);
    expect(cmp('[1,2,"..."]', [1])).toHaveLength(1);
    expect(cmp('["a",null,true]', ['a', null, false])).toEqual(['$[2]: documented true, got false']);
  });
});

describe('reading the examples of a document', () => {
  const vars = { TOKEN: 't0k' };

  it('reads a marked curl command and the answer right after it', () => {
    const md = [
      '<!-- example: one status=201 -->',
      '```sh',
      'curl -s http://127.0.0.1:8787/api/x?a=1 \\',
      `  -H "Authorization: Bearer $TOKEN" -d '{"t":"don'\\''t"}' # a comment`,
      '```',
      '```json',
      '{"id":1}',
      '```',
      '<!-- example skip: not deterministic -->',
      '```bash',
      'curl -s http://127.0.0.1:8787/api/y',
      '```',
    ].join('\n');
    const [one, two] = docExamples(md, vars);
    expect(one).toMatchObject({ name: 'one', line: 2, status: 201, skip: null });
    expect(one.request).toEqual({
      method: 'POST',
      path: '/api/x?a=1',
      headers: { authorization: 'Bearer t0k' },
      body: '{"t":"don\'t"}',
    });
    expect(mismatches(one.answer, { id: 1 })).toEqual([]);
    expect(two).toMatchObject({ skip: 'not deterministic', request: null });
  });

  it('refuses an unmarked shell block, a missing answer, unknown variables and a second command', () => {
    const block = (marker: string, cmd: string, answer = '```json\n{}\n```') =>
      `${marker}\n\`\`\`sh\n${cmd}\n\`\`\`\n${answer}`;
    expect(() => docExamples(block('Text.', 'curl -s http://h/a'), vars)).toThrow(/without an <!-- example/);
    expect(() => docExamples(block('<!-- example: a -->', 'curl -s http://h/a', 'Prose.'), vars)).toThrow(
      /no ```json answer/,
    );
    expect(() => docExamples(block('<!-- example: a -->', 'curl -s http://h/a -H "x: $OTHER"'), vars)).toThrow(
      /unknown variable/,
    );
    expect(() => docExamples(block('<!-- example: a -->', 'curl -s http://h/a\ncurl -s http://h/b'), vars)).toThrow(
      /exactly one curl command/,
    );
    expect(
      docExamples(block('<!-- example: a status=204 -->', 'curl -s -X DELETE http://h/a', ''), vars)[0],
    ).toMatchObject({ status: 204, answer: undefined, request: { method: 'DELETE', path: '/a' } });
  });
});
