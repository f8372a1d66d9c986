/**
 * The distilled default model (#36, build/default-model.ts, build/distilled-model/): the build is
 * deterministic, phrase rows mean the phrase, and they are never suggested.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDefaultModel, DEFAULT_MODEL_FILE } from '../../build/default-model';
import { RECIPE } from '../../build/distilled-model/recipe';
import { GLOVE_MODEL_FILE, GLOVE_MODEL_ID, gloveImportOptions } from '../../build/glove-model';
import { importModel } from '../../build/import-model';
import { MAPPERS_DIR } from '../../build/paths';
import { loadModelFile } from '../../build/load-model';
import type { EmbeddingModel } from '../../core/model';
import { phraseOf, scoreWords, seedCentroid, seedSet } from '../../core/scoring';
import { VOCAB_FLAG } from '../../core/vocab-quality';

const sha = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const cosine = (a: Float32Array, b: Float32Array): number => {
  let s = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    s += a[i]! * b[i]!;
    na += a[i]! ** 2;
    nb += b[i]! ** 2;
  }
  return s / Math.sqrt(na * nb);
};

describe('the distilled model build', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'distilled-'));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('gives the same bytes for the same inputs (a small model by the same recipe)', async () => {
    // 4,000 rows: 3,000 words and the phrases encoded afresh each time (no cache), the rest by the ridge map.
    const small = { ...RECIPE, rows: 4000, encodeLimit: 3000, stride: 2, cache: false, progress: false, log: () => {} };
    const a = await buildDefaultModel(small, path.join(dir, 'a.emb'));
    const b = await buildDefaultModel(small, path.join(dir, 'b.emb'));
    expect(sha(a.file)).toBe(sha(b.file));
    const model = loadModelFile(a.file);
    expect(model.size).toBe(4000);
    // Phrases among the rows, flagged, right after their rarest word.
    const phrases = Array.from({ length: model.size }, (_, r) => r).filter((r) => model.flags(r) & VOCAB_FLAG.PHRASE);
    expect(phrases.length).toBeGreaterThan(0);
    for (const r of phrases) {
      const rarest = Math.max(
        ...model
          .word(r)
          .split(' ')
          .map((w) => model.rowOf(w)),
      );
      expect(rarest).toBeGreaterThanOrEqual(0);
      expect(rarest).toBeLessThan(r);
    }
  }, 300_000);
});

describe('en-glove-6b-100d stays what it was', () => {
  it('its artifact is the output of the importer for its own source, and its mappers were trained on it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glove-'));
    try {
      const again = path.join(dir, 'glove.emb');
      await importModel({ ...gloveImportOptions(again), progress: false, log: () => {} });
      expect(sha(again)).toBe(sha(GLOVE_MODEL_FILE));
      const manifest = loadModelFile(GLOVE_MODEL_FILE).manifest;
      for (const key of ['sentiment', 'afinn']) {
        const info = JSON.parse(fs.readFileSync(path.join(MAPPERS_DIR, GLOVE_MODEL_ID, `${key}.json`), 'utf8'));
        expect(info.modelId).toBe(GLOVE_MODEL_ID);
        expect(info.modelChecksum).toBe(manifest.checksum);
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('phrase rows of the default model', () => {
  let model: EmbeddingModel;
  beforeAll(() => {
    model = loadModelFile(DEFAULT_MODEL_FILE);
  });

  it('look a phrase seed up whole: the phrase, not the mean of its words', () => {
    const row = model.rowOf('hot dog');
    expect(row).toBeGreaterThanOrEqual(0);
    expect(model.flags(row) & VOCAB_FLAG.PHRASE).toBeTruthy();
    // Any spacing of the seed finds the row.
    const seeds = seedSet(model, ['  hot   dog ']);
    expect(seeds.rows).toEqual([row]);
    expect(seeds.phrases).toEqual([]);
    const own = seedCentroid(model, seeds)!;
    const mean = phraseOf(model, 'hot dog')!.vector;
    // Closer to what a hot dog is than hot + dog are.
    for (const w of ['sausage', 'hamburger', 'frankfurter'])
      expect(cosine(own, model.vector(model.rowOf(w)))).toBeGreaterThan(cosine(mean, model.vector(model.rowOf(w))));
  });

  it('keep the rule of decisions.md for a phrase without a row', () => {
    expect(model.rowOf('purple dog')).toBe(-1);
    const seeds = seedSet(model, ['purple dog']);
    expect(seeds.rows).toEqual([]);
    expect(seeds.phrases.map((p) => p.key)).toEqual(['purple dog']);
  });

  it('are scored as whitelist words and never suggested by find-and-score', () => {
    const input = { index: model, mappers: [], storedDimensions: new Map() };
    const listed = scoreWords({ embeddingModelId: model.manifest.id, whitelistWords: ['Ice Cream'] } as never, input);
    // As written, as every whitelist entry (the phrase row is found case-insensitively).
    expect(listed.data.map((w) => w.word)).toEqual(['Ice Cream']);
    // The rank of its least frequent word, as for any phrase (a phrase row has no corpus frequency).
    expect(listed.data[0]!.modelRank).toBe(Math.max(model.rowOf('ice'), model.rowOf('cream')) + 1);
    const found = scoreWords(
      {
        embeddingModelId: model.manifest.id,
        seedWords: ['hot dog', 'ice cream'],
        limit: 50,
        wordrankLimit: -1,
      } as never,
      input,
    );
    expect(found.data.length).toBe(50);
    for (const w of found.data) expect(w.word).not.toContain(' ');
  });
});
