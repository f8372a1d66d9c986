/**
 * Vocabulary quality through the API (docs/vocabulary.md), on the real default model in R2:
 * find-and-score's default filter, `wordrankLimit: -1`, `excludeAntonyms`, phrases, autocomplete
 * casing and folding, and validation of the new field; plus synonyms of the tokenizations route.
 */
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { R2_KEYS } from '../../core/storage-keys';
import { invalidateCatalog } from '../../worker/catalog/store';
import { call, expectProblem, uploadEnglish } from './support/api';

const ID = 'en-glove-6b-100d';
const WS_PATH = '/api/v1/workspaces/ws_demo';

beforeAll(async () => {
  for (const [key, file] of [
    [R2_KEYS.model(ID), `models/${ID}.emb`],
    [R2_KEYS.modelManifest(ID), `models/${ID}.json`],
  ]) {
    const res = await env.FIXTURES.fetch(`http://fixtures/${file}`);
    expect(res.status, file).toBe(200);
    await env.ARTIFACTS.put(key, await res.arrayBuffer());
  }
  await invalidateCatalog(env);
  await uploadEnglish();
});

const find = async (body: Record<string, unknown>) => {
  const r = await call('POST', `${WS_PATH}/word-scores`, { embeddingModelId: ID, limit: 20, ...body });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body as { data: Array<{ word: string; modelRank: number; seedScore: number | null }> };
};

describe('word-scores: vocabulary filter', () => {
  it('no junk, pronouns or auxiliaries by default; wordrankLimit -1 widens it', async () => {
    const eco = (await find({ seedWords: ['eco'] })).data.map((d) => d.word);
    expect(eco).toHaveLength(20);
    for (const junk of ['fea', 'ni', 'hi', 'mex', 'apec', 'tni', 'mrap']) expect(eco).not.toContain(junk);
    const wide = (await find({ seedWords: ['eco'], wordrankLimit: -1, limit: 50 })).data.map((d) => d.word);
    expect(wide).toEqual(expect.arrayContaining(['fea', 'apec']));
    const happy = (await find({ seedWords: ['happy'] })).data.map((d) => d.word);
    for (const junk of ['we', 'you', 'know', 'think']) expect(happy).not.toContain(junk);
    for (const d of (await find({ seedWords: ['bitcoin'] })).data) expect(d.modelRank).toBeLessThanOrEqual(50_000);
  });

  it('excludeAntonyms: organic without inorganic, cozy without cramped and dingy; must be a boolean', async () => {
    expect((await find({ seedWords: ['organic'] })).data.map((d) => d.word)).toContain('inorganic');
    expect((await find({ seedWords: ['organic'], excludeAntonyms: true })).data.map((d) => d.word)).not.toContain(
      'inorganic',
    );
    expect((await find({ seedWords: ['cozy'] })).data.map((d) => d.word)).toEqual(
      expect.arrayContaining(['cramped', 'dingy']),
    );
    const cozy = (await find({ seedWords: ['cozy'], excludeAntonyms: true })).data.map((d) => d.word);
    expect(cozy).toHaveLength(20);
    for (const w of ['cramped', 'dingy', 'uneasy']) expect(cozy).not.toContain(w);
    expectProblem(
      await call('POST', `${WS_PATH}/word-scores`, {
        embeddingModelId: ID,
        seedWords: ['organic'],
        excludeAntonyms: 'yes',
      }),
      422,
      'VALIDATION_FAILED',
    );
  });

  it('phrases as seeds and whitelist words: "ice cream" returns neighbours, phrases come back as written', async () => {
    const ice = await find({ seedWords: ['ice cream'] });
    expect(ice.data).toHaveLength(20);
    expect(ice.data.map((d) => d.word)).not.toContain('cream');
    const wl = await find({ seedWords: ['dessert'], whitelistWords: ['Ice Cream', 'New York', 'qqzzx cream'] });
    expect(wl.data.map((d) => d.word)).toEqual(['Ice Cream', 'New York']);
    expect(wl.data[0]!.seedScore!).toBeGreaterThan(wl.data[1]!.seedScore!);
  });
});

describe('autocomplete-suggestions: casing, folding, junk', () => {
  const ac = async (word: string) => {
    const r = await call('POST', `${WS_PATH}/autocomplete-suggestions`, { word, embeddingModelId: ID });
    expect(r.status).toBe(200);
    return r.body.suggestions as string[];
  };
  it('"Ber" -> "Berlin" first; "e-" -> e-mail, e-commerce; "x" without xfdws; "é" and "ü" answer', async () => {
    expect((await ac('Ber'))[0]).toBe('Berlin');
    expect((await ac('sus')).slice(0, 3)).toContain('sustainable');
    expect((await ac('e-')).slice(0, 2)).toEqual(['e-mail', 'e-commerce']);
    expect(await ac('x')).not.toContain('xfdws');
    expect((await ac('é')).length).toBe(10);
    expect((await ac('ü')).length).toBe(10);
    expect(await ac('café')).toEqual(await ac('cafe'));
  });
});

describe('tokenizations: synonyms for content words only', () => {
  it('I, He, was, could, May have no synonyms; fine has no mulct', async () => {
    const r = await call('POST', `${WS_PATH}/tokenizations`, {
      language: 'en',
      text: 'I think He was fine. Could we? May I? The fine was large.',
    });
    expect(r.status).toBe(200);
    const toks = r.body.tokens as Array<{ string: string; synonyms: string[]; isStop: boolean }>;
    for (const t of toks)
      if (['I', 'He', 'was', 'Could', 'we', 'May'].includes(t.string)) expect(t.synonyms, t.string).toEqual([]);
    for (const t of toks) expect(t.synonyms).not.toContain('mulct');
    expect(toks.find((t) => t.string === 'Could')!.isStop).toBe(true);
  });
});
