import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../core/limits';
import { meterQuotas } from '../../worker/quotas/meter-client';
import { call, expectProblem, mintToken } from './support/api';

// The migration seeds a tokens quota for ws_demo.
const WS = 'ws_demo';
const path = `/api/v1/workspaces/${WS}/tokenizations`;

async function upload(language: string): Promise<void> {
  const res = await env.FIXTURES.fetch(`http://f/lang/${language}.bin`);
  if (res.status !== 200) throw new Error(`build/generated/lang/${language}.bin is missing: run the tokenizer build`);
  await env.ARTIFACTS.put(`lang/${language}.bin`, await res.arrayBuffer());
}

/** Tokens used by ws_demo, from its meter (the authority for the counters; D1 holds a snapshot). */
async function usedTokens(): Promise<number> {
  const { quotas } = await meterQuotas(env, WS, Date.now(), 'tokens');
  return quotas[0]?.usedAmount ?? 0;
}

describe('POST /tokenizations', () => {
  beforeAll(async () => {
    for (const l of ['en', 'de', 'fr']) await upload(l);
  });

  // Runs first: ja is not in R2 yet and no other test of this file has loaded it.
  it('missing language data: 503 LANGUAGE_DATA_UNAVAILABLE, nothing charged; the next request retries', async () => {
    await env.ARTIFACTS.delete('lang/ja.bin');
    const before = await usedTokens();
    const r = await call('POST', path, { language: 'ja', text: '東京' });
    expectProblem(r, 503, 'LANGUAGE_DATA_UNAVAILABLE');
    expect(await usedTokens()).toBe(before);
    await upload('ja');
    const again = await call('POST', path, { language: 'ja', text: '東京' });
    expect(again.status).toBe(200);
    expect(again.body.tokens.map((t: any) => t.string)).toEqual(['東京']);
  });

  it('tokenizes English with lemmas, stop words, synonyms and exact offsets', async () => {
    const text = "The children don't like rainy days.";
    const r = await call('POST', path, { language: 'en', text });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.tokenCount).toBe(r.body.tokens.length);
    expect(r.body.tokens.map((t: any) => t.string)).toEqual(['The', 'children', 'do', "n't", 'like', 'rainy', 'days']);
    expect(r.body.tokens.map((t: any) => t.token)).toEqual(['the', 'child', 'do', 'not', 'like', 'rainy', 'day']);
    expect(r.body.tokens[0]).toMatchObject({ indexStart: 0, indexEnd: 3, isStop: true, synonyms: [] });
    for (const t of r.body.tokens) {
      expect(text.slice(t.indexStart, t.indexEnd)).toBe(t.string);
      expect(Array.isArray(t.synonyms)).toBe(true);
      expect(t.synonyms.length).toBeLessThanOrEqual(10);
    }
    expect(r.body.tokens[1].synonyms).toContain('kid');
  });

  it('offsets count code points by default; offsetUnit utf16 and utf8 give other units; another unit is 422', async () => {
    const text = '😀🎉 so happy';
    const happy = async (offsetUnit?: string) => {
      const r = await call('POST', path, { language: 'en', text, ...(offsetUnit ? { offsetUnit } : {}) });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      const t = r.body.tokens.find((x: any) => x.string === 'happy');
      return [t.indexStart, t.indexEnd];
    };
    expect(await happy()).toEqual([6, 11]);
    expect(await happy('codePoint')).toEqual([6, 11]);
    expect(await happy('utf16')).toEqual([8, 13]);
    expect(await happy('utf8')).toEqual([12, 17]);
    expectProblem(await call('POST', path, { language: 'en', text, offsetUnit: 'bytes' }), 422, 'VALIDATION_FAILED');
  });

  it('language codes are case-insensitive and every supported language works', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['EN', 'Geese ran', ['goose', 'run']],
      ['De', 'Die Häuser', ['der', 'Haus']],
      ['fr', "L'homme", ['le', 'homme']],
      ['JA', '住んでいます', ['住ん', 'で', 'い', 'ます']],
    ];
    for (const [language, text, lemmas] of cases) {
      const r = await call('POST', path, { language, text });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.tokens.map((t: any) => t.token)).toEqual(lemmas);
    }
  });

  it('empty text gives no tokens', async () => {
    const r = await call('POST', path, { language: 'en', text: '' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ tokenCount: 0, tokens: [] });
  });

  it('meters tokens = tokenCount', async () => {
    const before = await usedTokens();
    const r = await call('POST', path, { language: 'en', text: 'one two three four' });
    expect(r.status).toBe(200);
    expect(await usedTokens()).toBe(before + 4);
  });

  it('unsupported language: 422 UNSUPPORTED_LANGUAGE listing the supported languages; nothing charged', async () => {
    const before = await usedTokens();
    const r = await call('POST', path, { language: 'es', text: 'hola' });
    expectProblem(r, 422, 'UNSUPPORTED_LANGUAGE');
    expect(r.body.detail).toContain('en, de, fr, ja');
    expect(r.body.errors[0].path).toBe('language');
    expect(await usedTokens()).toBe(before);
  });

  it('bad bodies: 422 VALIDATION_FAILED problem+json', async () => {
    expectProblem(await call('POST', path, { language: 'en' }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', path, { text: 'x' }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', path, { language: 'en', text: 5 }), 422, 'VALIDATION_FAILED');
    expectProblem(await call('POST', path, undefined, { raw: '{not json' }), 422, 'VALIDATION_FAILED');
  });

  it('text over 100,000 characters: 422 VALIDATION_FAILED', async () => {
    const r = await call('POST', path, { language: 'en', text: 'a '.repeat(50_001) });
    expectProblem(r, 422, 'VALIDATION_FAILED');
    expect(r.body.errors.some((e: any) => e.path === 'text')).toBe(true);
  });

  it('a body over 2 MB: 413 PAYLOAD_TOO_LARGE, nothing charged', async () => {
    const before = await usedTokens();
    const body = JSON.stringify({ language: 'en', text: 'a '.repeat(LIMITS.bodyBytes / 2 + 1) });
    expect(body.length).toBeGreaterThan(LIMITS.bodyBytes);
    const r = await call('POST', path, undefined, { raw: body });
    expectProblem(r, 413, 'PAYLOAD_TOO_LARGE');
    expect(await usedTokens()).toBe(before);
  });

  it('needs a token for the same workspace', async () => {
    expectProblem(await call('POST', path, { language: 'en', text: 'x' }, { token: null }), 401, 'UNAUTHORIZED');
    const other = await mintToken({ workspaceId: 'ws_other' });
    expectProblem(
      await call('POST', path, { language: 'en', text: 'x' }, { token: other }),
      403,
      'WORKSPACE_FORBIDDEN',
    );
  });

  it('is documented as it behaves: text and language required, the Tokenization answer, a problem+json answer for every refusal', async () => {
    const r = await call('GET', '/api/openapi.json', undefined, { token: null });
    expect(r.status).toBe(200);
    const schemaOf = (s: any): any => (s.$ref ? r.body.components.schemas[s.$ref.split('/').pop()] : s);
    const op = r.body.paths['/api/v1/workspaces/{workspaceId}/tokenizations'].post;
    expect([...schemaOf(op.requestBody.content['application/json'].schema).required].sort()).toEqual([
      'language',
      'text',
    ]);
    expect(Object.keys(schemaOf(op.responses['200'].content['application/json'].schema).properties).sort()).toEqual([
      'tokenCount',
      'tokens',
    ]);
    // The refusals the tests above observe, and the daily limit.
    for (const status of ['401', '403', '413', '422', '429', '503']) {
      expect(Object.keys(op.responses[status]?.content ?? {}), status).toEqual(['application/problem+json']);
    }
  });
});
