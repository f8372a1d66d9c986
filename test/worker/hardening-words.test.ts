/**
 * Issue 12, defect 1: words that are property names of Object.prototype or Function.prototype
 * ("constructor", "__proto__", "toString", ...) are ordinary words on every text and word
 * endpoint, in every language: 200 with correct tokens, never a 500 or a token that is not a string.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { SUPPORTED_LANGUAGES } from '../../core/tokenizer';
import { BASE_WORDS, adminToken, call, f, makeModel, uploadModel, type SyntheticModel } from './support/api';

/** Every own property name of Object.prototype and Function.prototype. */
export const PROTO_WORDS = [
  ...new Set([...Object.getOwnPropertyNames(Object.prototype), ...Object.getOwnPropertyNames(Function.prototype)]),
];

const WS = 'ws_demo';
const models = new Map<string, SyntheticModel>();
const modelId = (l: string) => `proto-${l}`;
/** The vocabulary key of a word (the model lower-cases its lookup keys). */
const lower = (w: string) => w.toLowerCase();

/**
 * The token (lemma) each prototype word must get: its lower-cased form, except for the few that
 * are dictionary words with another lemma (en, fr "arguments" -> "argument"); ja: the string itself.
 */
const LEMMA_EXCEPTIONS: Record<string, Map<string, string>> = {
  en: new Map([['arguments', 'argument']]),
  de: new Map(),
  fr: new Map([['arguments', 'argument']]),
  ja: new Map(),
};
function expectedToken(language: string, word: string): string {
  if (language === 'ja') return word;
  return LEMMA_EXCEPTIONS[language].get(word) ?? lower(word);
}

beforeAll(async () => {
  expect(PROTO_WORDS).toEqual(
    expect.arrayContaining([
      'constructor',
      '__proto__',
      'toString',
      'hasOwnProperty',
      'valueOf',
      'call',
      'apply',
      'bind',
      'caller',
      'arguments',
    ]),
  );
  for (const l of SUPPORTED_LANGUAGES) {
    const res = await env.FIXTURES.fetch(`http://f/lang/${l}.bin`);
    expect(res.status).toBe(200);
    await env.ARTIFACTS.put(`lang/${l}.bin`, await res.arrayBuffer());
    const m = makeModel(modelId(l), {
      words: [...new Set([...BASE_WORDS, ...PROTO_WORDS.map(lower)])],
      language: l,
      seed: 3,
    });
    await uploadModel(m);
    models.set(l, m);
  }
});

describe('prototype property names are ordinary words (defect 1)', () => {
  for (const l of SUPPORTED_LANGUAGES) {
    it(`${l}: tokenizations gives each word one token with a string lemma`, async () => {
      for (const w of PROTO_WORDS) {
        const text = `${w} ${w}.`;
        const r = await call('POST', `/api/v1/workspaces/${WS}/tokenizations`, { language: l, text });
        expect(r.status, `${w}: ${JSON.stringify(r.body)}`).toBe(200);
        expect(r.body.tokenCount).toBe(2);
        for (const t of r.body.tokens) {
          expect(t.string, w).toBe(w);
          expect(text.slice(t.indexStart, t.indexEnd)).toBe(w);
          expect(typeof t.token, w).toBe('string');
          expect(t.token, `${l} ${w}`).toBe(expectedToken(l, w));
          expect(typeof t.isStop).toBe('boolean');
          expect(Array.isArray(t.synonyms) && t.synonyms.every((s: unknown) => typeof s === 'string')).toBe(true);
        }
      }
    });

    it(`${l}: text-scores scores every word (one batch of one text per word) from its own vocabulary row`, async () => {
      const m = models.get(l)!;
      const r = await call('POST', `/api/v1/workspaces/${WS}/text-scores`, {
        texts: PROTO_WORDS,
        embeddingModelId: m.id,
        dimensions: [
          { id: 1, type: 'manual', words: PROTO_WORDS },
          { id: 2, type: 'axis', words: ['constructor'], oppositeWords: ['__proto__'] },
        ],
        goalConfig: { modelRankScore: 1, dimensions: [{ id: 1, weight: 2 }] },
      });
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body.data).toHaveLength(PROTO_WORDS.length);
      PROTO_WORDS.forEach((w, i) => {
        const row = m.words.indexOf(lower(w));
        expect(row, w).toBeGreaterThanOrEqual(0);
        expect(r.body.data[i].modelRankScore, `${l} ${w}`).toBeCloseTo(f(row + 1, m.words.length), 9);
      });
    });

    it(`${l}: word-scores, autocomplete, word-availabilities and similarity matrices take the words as words`, async () => {
      const m = models.get(l)!;
      const ws = await call('POST', `/api/v1/workspaces/${WS}/word-scores`, {
        seedWords: PROTO_WORDS,
        whitelistWords: PROTO_WORDS,
        embeddingModelId: m.id,
        dimensions: [{ id: 3, type: 'manual', words: ['constructor', 'toString'] }],
      });
      expect(ws.status, JSON.stringify(ws.body)).toBe(200);
      // Whitelist words come back as written, each found in the (lower-cased) vocabulary.
      expect(ws.body.data.map((d: any) => d.word)).toEqual(PROTO_WORDS);
      for (const d of ws.body.data) expect(d.modelRank).toBe(m.words.indexOf(lower(d.word)) + 1);

      const find = await call('POST', `/api/v1/workspaces/${WS}/word-scores`, {
        seedWords: ['__proto__', 'constructor'],
        embeddingModelId: m.id,
        limit: 5,
      });
      expect(find.status, JSON.stringify(find.body)).toBe(200);

      for (const prefix of ['constr', '__pro', 'hasOwn', 'toS', '__']) {
        const ac = await call('POST', `/api/v1/workspaces/${WS}/autocomplete-suggestions`, {
          word: prefix,
          embeddingModelId: m.id,
        });
        expect(ac.status, JSON.stringify(ac.body)).toBe(200);
        const expected = PROTO_WORDS.map(lower).filter((w) => w.startsWith(lower(prefix)));
        expect(ac.body.suggestions.map(lower)).toEqual(expect.arrayContaining(expected.slice(0, 10)));
      }

      const av = await call('POST', `/api/v1/embedding-models/${m.id}/word-availabilities`, {
        words: [...PROTO_WORDS, 'prototype'],
      });
      expect(av.status, JSON.stringify(av.body)).toBe(200);
      expect(av.body.availabilities.map((a: any) => a.isAvailable)).toEqual([...PROTO_WORDS.map(() => true), false]);

      const sm = await call('POST', `/api/v1/embedding-models/${m.id}/word-similarity-matrices`, {
        words: PROTO_WORDS,
      });
      expect(sm.status, JSON.stringify(sm.body)).toBe(200);
      expect(sm.body.words).toHaveLength(PROTO_WORDS.length);
    });
  }

  it('as ids: model id, mapper key and JSON member names are refused or ignored cleanly, never 500', async () => {
    for (const w of PROTO_WORDS) {
      const byModel = await call('POST', `/api/v1/workspaces/${WS}/text-scores`, {
        texts: ['cat'],
        embeddingModelId: w,
      });
      expect([404, 422], `${w}: ${JSON.stringify(byModel.body)}`).toContain(byModel.status);
      const byMapper = await call('POST', `/api/v1/workspaces/${WS}/text-scores`, {
        texts: ['cat'],
        embeddingModelId: modelId('en'),
        mapperKeys: [w, `${w}_${w}`],
      });
      expect(byMapper.status, `${w}: ${JSON.stringify(byMapper.body)}`).toBe(422);
      const catalog = await call('GET', `/api/v1/embedding-models/${encodeURIComponent(w)}`);
      expect([404, 422], w).toContain(catalog.status);
    }
    const raw = `{"texts":["constructor __proto__"],"embeddingModelId":"${modelId('en')}","__proto__":{"texts":[1]},"constructor":{"prototype":1},"toString":1}`;
    const r = await call('POST', `/api/v1/workspaces/${WS}/text-scores`, undefined, { raw });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body.data).toHaveLength(1);
  });

  it('plagiarism checks and stored dimensions take the words as words', async () => {
    const text = [...PROTO_WORDS, ...PROTO_WORDS].join(' ');
    const check = await call('POST', `/api/v1/workspaces/${WS}/plagiarism-checks`, { text });
    expect(check.status, JSON.stringify(check.body)).toBe(200);
    expect(check.body.wordCount).toBe(2 * PROTO_WORDS.length);
    const admin = await adminToken();
    const created = await call(
      'POST',
      '/api/admin/v1/dimensions',
      { name: 'constructor', words: PROTO_WORDS, language: 'en' },
      { token: admin },
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const scored = await call('POST', `/api/v1/workspaces/${WS}/text-scores`, {
      texts: ['constructor'],
      embeddingModelId: modelId('en'),
      dimensions: [{ id: created.body.id, type: 'dimension' }],
    });
    expect(scored.status, JSON.stringify(scored.body)).toBe(200);
    expect(typeof scored.body.data[0].dimensionScores[String(created.body.id)]).toBe('number');
  });
});
