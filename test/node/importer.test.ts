/**
 * Importer (build/import-model.ts): the same vectors written by this test in each of the four
 * formats import to identical artifacts; chunk boundaries anywhere; skip rules; clear errors;
 * the CLI in a non-TTY; the local R2 upload.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { parseArtifact, decodeWord } from '../../core/artifact';
import { EmbeddingModel } from '../../core/model';
import { importModel, type ImportOptions } from '../../build/import-model';
import { detectFormat, parseDecimal, type VectorFormat } from '../../build/vector-readers';
import { loadKernels, readArrayBuffer } from '../../build/load-model';
import { ROOT, QUIET_ENV } from '../../build/wrangler';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'importer-test-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const WORDS = [
  'the',
  'of',
  'Paris',
  'paris',
  'café',
  'naïve',
  '日本',
  '😀',
  "don't",
  'e-mail',
  'x',
  'zebra',
  'Ölçü',
  'straße',
];
const DIMS = 7;

function randomVectors(n: number, dims: number, seed: number): Float32Array {
  let a = seed >>> 0;
  const v = new Float32Array(n * dims);
  for (let i = 0; i < v.length; i++) {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0;
    v[i] = Math.fround(((a >>> 8) / 2 ** 24 - 0.5) * (i % 3 === 0 ? 3 : 0.01)); // mixed magnitudes -> exponents in the text
  }
  return v;
}

const VECTORS = randomVectors(WORDS.length, DIMS, 99);
const row = (r: number, vectors = VECTORS, dims = DIMS) => Array.from(vectors.subarray(r * dims, (r + 1) * dims));

/** Shortest decimal that reads back as the same float64 (= the float32 value). */
const num = (x: number) => String(x);

function writeGlove(file: string, words = WORDS, vectors = VECTORS, dims = DIMS): string {
  fs.writeFileSync(file, words.map((w, r) => `${w} ${row(r, vectors, dims).map(num).join(' ')}\n`).join(''));
  return file;
}

function writeVec(file: string, words = WORDS, vectors = VECTORS, dims = DIMS): string {
  // fastText style: trailing space before the newline, CRLF on one line.
  const lines = words.map((w, r) => `${w} ${row(r, vectors, dims).map(num).join(' ')} ${r === 3 ? '\r' : ''}\n`);
  fs.writeFileSync(file, `${words.length} ${dims}\n${lines.join('')}`);
  return file;
}

function writeW2vBin(file: string, newlineAfterVector: boolean, words = WORDS, vectors = VECTORS, dims = DIMS): string {
  const parts: Buffer[] = [Buffer.from(`${words.length} ${dims}\n`)];
  words.forEach((w, r) => {
    parts.push(Buffer.from(`${w} `, 'utf8'));
    const f = Buffer.alloc(dims * 4);
    row(r, vectors, dims).forEach((v, d) => f.writeFloatLE(v, d * 4));
    parts.push(f);
    if (newlineAfterVector) parts.push(Buffer.from('\n'));
  });
  fs.writeFileSync(file, Buffer.concat(parts));
  return file;
}

function writeWink(file: string, words = WORDS, vectors = VECTORS, dims = DIMS): string {
  const vecs: Record<string, number[]> = {};
  words.forEach((w, r) => {
    const v = row(r, vectors, dims);
    vecs[w] = [...v, Math.hypot(...v), r];
  });
  // Same field order as the npm package; pretty-printed to add whitespace everywhere.
  const json = {
    precision: 8,
    l2NormIndex: dims,
    wordIndex: dims + 1,
    size: words.length,
    dimensions: dims,
    words,
    vectors: vecs,
    unkVector: [...new Array(dims).fill(0), 0, -1],
  };
  fs.writeFileSync(file, JSON.stringify(json, null, 1));
  return file;
}

const base = (input: string, extra: Partial<ImportOptions> = {}): ImportOptions => ({
  input,
  id: 'fixture-model',
  language: 'en',
  country: 'us',
  trainingYear: '2021',
  trainingMonth: '3',
  sources: ['test'],
  features: ['fixture'],
  tokenCount: 1000,
  license: 'CC0-1.0',
  progress: false,
  log: () => {},
  ...extra,
});

function fixtures(): Record<string, { file: string; format: VectorFormat }> {
  return {
    glove: { file: writeGlove(path.join(dir, 'vectors.txt')), format: 'glove' },
    vec: { file: writeVec(path.join(dir, 'vectors.vec')), format: 'vec' },
    binC: { file: writeW2vBin(path.join(dir, 'vectors-c.bin'), true), format: 'w2v-bin' },
    binGensim: { file: writeW2vBin(path.join(dir, 'vectors-gensim.bin'), false), format: 'w2v-bin' },
    wink: { file: writeWink(path.join(dir, 'vectors.json')), format: 'wink' },
  };
}

describe('importer formats', () => {
  it('detects each format from the file', async () => {
    for (const f of Object.values(fixtures())) expect(await detectFormat(f.file), f.file).toBe(f.format);
    // Without telling extensions: a headerless text file named .bin-less, a .vec named .txt
    const vecAsTxt = writeVec(path.join(dir, 'vec-as.txt'));
    expect(await detectFormat(vecAsTxt)).toBe('vec');
  });

  it('parseDecimal reads exactly what parseFloat reads', () => {
    for (const s of [
      '0',
      '-0.5',
      '1e-7',
      '3.4028234663852886e+38',
      '0.1234567890123456789',
      '-12.5E3',
      '1.17549435e-38',
      '+7',
      '5.',
      '.5',
      '123456789012345678901',
    ]) {
      const b = Buffer.from(s);
      expect(parseDecimal(b, 0, b.length), s).toBe(parseFloat(s));
    }
  });

  it('the same vectors in every format give byte-identical artifacts, at any chunk size', async () => {
    const fx = fixtures();
    const outputs: Record<string, Buffer> = {};
    for (const [name, f] of Object.entries(fx)) {
      for (const chunkSize of [undefined, 1, 7, 64]) {
        const out = path.join(dir, `${name}-${chunkSize ?? 'default'}.emb`);
        const res = await importModel(base(f.file, { out, chunkSize }));
        expect(res.stats.format).toBe(f.format);
        expect(res.stats.kept).toBe(WORDS.length);
        outputs[`${name}/${chunkSize}`] = fs.readFileSync(out);
      }
    }
    const reference = outputs['glove/undefined']!;
    for (const [key, bytes] of Object.entries(outputs)) expect(bytes.equals(reference), key).toBe(true);

    // A different id changes only the manifest.
    const other = await importModel(base(fx.wink.file, { out: path.join(dir, 'other.emb'), id: 'other-id' }));
    const a = parseArtifact(readArrayBuffer(path.join(dir, 'glove-default.emb')));
    const b = parseArtifact(readArrayBuffer(other.file));
    expect(b.manifest.id).toBe('other-id');
    expect({ ...b.manifest, id: 'x' }).toEqual({ ...a.manifest, id: 'x' });
    expect(
      Buffer.from(b.rows.buffer, b.rows.byteOffset, b.rows.byteLength).equals(
        Buffer.from(a.rows.buffer, a.rows.byteOffset, a.rows.byteLength),
      ),
    ).toBe(true);
  });

  it('the artifact holds the input order, the normalized vectors and the catalog fields', async () => {
    const res = await importModel(base(fixtures().glove.file, { out: path.join(dir, 'check.emb'), tag: 'unit' }));
    const model = EmbeddingModel.fromArrayBuffer(readArrayBuffer(res.file), loadKernels());
    WORDS.forEach((w, r) => {
      expect(model.word(r)).toBe(w);
      expect(model.rowOf(w)).toBe(r);
      const v = model.vector(r);
      const src = row(r);
      const norm = Math.hypot(...src);
      let dot = 0;
      src.forEach((x, d) => (dot += (x / norm) * v[d]!));
      expect(dot).toBeGreaterThan(0.99);
    });
    const m = model.manifest;
    expect(m).toMatchObject({
      id: 'fixture-model',
      language: 'en',
      country: 'US',
      trainingYear: '2021',
      trainingMonth: '03',
      tag: 'unit',
      sources: ['test'],
      features: ['fixture'],
      tokenCount: 1000,
      license: 'CC0-1.0',
      hasTranslation: false,
      dimensions: DIMS,
      vocabularySize: WORDS.length,
    });
    expect(m.labels).toEqual({
      label: 'English (United States), March 2021',
      languageLabel: 'English',
      countryLabel: 'United States',
      monthLabel: 'March',
    });
    // The sidecar is the artifact's manifest.
    expect(JSON.parse(fs.readFileSync(res.manifestFile, 'utf8'))).toEqual(m);
  });

  it('skips duplicates (keeping the first), over-long words and malformed lines; --max-words keeps the most frequent', async () => {
    const file = path.join(dir, 'messy.txt');
    const v = (k: number) => Array.from({ length: 3 }, (_, d) => (k + d + 1) / 8).join(' ');
    fs.writeFileSync(
      file,
      [`a ${v(1)}`, `b ${v(2)}`, `a ${v(3)}`, `${'x'.repeat(300)} ${v(4)}`, `c 0.5 0.25`, '', `d ${v(5)}`].join('\n'),
    );
    const res = await importModel(base(file, { out: path.join(dir, 'messy.emb') }));
    expect(res.stats).toMatchObject({ kept: 3, duplicates: 1, tooLong: 1, malformed: 1 });
    const a = parseArtifact(readArrayBuffer(res.file));
    expect([0, 1, 2].map((r) => decodeWord(a.vocab, a.wordOffsets, r))).toEqual(['a', 'b', 'd']);
    const model = EmbeddingModel.fromArrayBuffer(readArrayBuffer(res.file), loadKernels());
    const first = [2 / 8, 3 / 8, 4 / 8];
    const norm = Math.hypot(...first);
    model.vector(0).forEach((x, d) => expect(x).toBeCloseTo(first[d]! / norm, 2));

    const limited = await importModel(base(fixtures().vec.file, { out: path.join(dir, 'limited.emb'), maxWords: 5 }));
    expect(limited.stats.kept).toBe(5);
    const l = parseArtifact(readArrayBuffer(limited.file));
    expect(Array.from({ length: 5 }, (_, r) => decodeWord(l.vocab, l.wordOffsets, r))).toEqual(WORDS.slice(0, 5));
  });

  it('fails with clear errors on broken inputs and bad options', async () => {
    const badHeader = path.join(dir, 'bad.vec');
    fs.writeFileSync(badHeader, 'hello 1 2\nworld 3 4\n');
    await expect(importModel(base(badHeader, { format: 'vec', out: path.join(dir, 'x.emb') }))).rejects.toThrow(
      /first line of a \.vec file must be "count dims"/,
    );

    const bin = fs.readFileSync(fixtures().binC.file);
    const truncated = path.join(dir, 'truncated.bin');
    fs.writeFileSync(truncated, bin.subarray(0, bin.length - 20));
    await expect(importModel(base(truncated, { out: path.join(dir, 'x.emb') }))).rejects.toThrow(
      /truncated: the header declares 14 vectors, the file holds 13/,
    );

    const json = fs.readFileSync(fixtures().wink.file);
    const cut = path.join(dir, 'cut.json');
    fs.writeFileSync(cut, json.subarray(0, Math.floor(json.length * 0.7)));
    await expect(importModel(base(cut, { out: path.join(dir, 'x.emb') }))).rejects.toThrow(/wink JSON: unexpected end/);

    const file = fixtures().glove.file;
    await expect(importModel(base(file, { language: 'english' }))).rejects.toThrow(
      /--language must be an ISO 639-1 code/,
    );
    await expect(importModel(base(file, { country: 'USA' }))).rejects.toThrow(
      /--country must be an ISO 3166-1 alpha-2 code/,
    );
    await expect(importModel(base(file, { id: '../evil' }))).rejects.toThrow(/--id must be/);
    await expect(importModel(base(file, { trainingMonth: '13' }))).rejects.toThrow(/--training-month must be 01\.\.12/);
    await expect(importModel(base(path.join(dir, 'missing.txt')))).rejects.toThrow(/input file not found/);
  });
});

describe('importer CLI', () => {
  const tsx = path.join(ROOT, 'node_modules', 'tsx', 'dist', 'cli.mjs');
  const cli = (args: string[]) =>
    spawnSync(process.execPath, [tsx, path.join(ROOT, 'build', 'import-model.ts'), ...args], {
      cwd: ROOT,
      env: QUIET_ENV,
      encoding: 'utf8',
      timeout: 120_000,
    });

  it('runs in a non-TTY: progress as plain lines on stderr, a JSON summary on stdout', () => {
    const input = writeGlove(path.join(dir, 'cli.txt'));
    const out = path.join(dir, 'cli.emb');
    const r = cli([
      input,
      '--id',
      'cli-model',
      '--language',
      'de',
      '--country',
      'AT',
      '--sources',
      'a, b',
      '--token-count',
      '42',
      '--training-year',
      '2019',
      '--training-month',
      '11',
      '--out',
      out,
      '--no-upload',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[import\] cli\.txt \(glove\) 100%/);
    // eslint-disable-next-line no-control-regex -- ESC is what the test looks for
    expect(r.stderr).not.toMatch(/\x1b\[/); // no terminal control sequences in a pipe
    const summary = JSON.parse(r.stdout.trim().split('\n').pop()!);
    expect(summary.file).toBe(out);
    expect(summary.stats.kept).toBe(WORDS.length);
    const m = parseArtifact(readArrayBuffer(out)).manifest;
    expect(m).toMatchObject({
      id: 'cli-model',
      language: 'de',
      country: 'AT',
      sources: ['a', 'b'],
      tokenCount: 42,
      trainingYear: '2019',
      trainingMonth: '11',
    });
    expect(m.labels).toEqual({
      label: 'German (Austria), November 2019',
      languageLabel: 'German',
      countryLabel: 'Austria',
      monthLabel: 'November',
    });
  });

  it('exits 1 with a readable error on bad usage', () => {
    const r = cli([path.join(dir, 'nothing.txt'), '--id', 'x', '--language', 'en', '--country', 'US', '--no-upload']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^error: input file not found/m);
    const usage = cli(['--id', 'x']);
    expect(usage.status).toBe(1);
    // It names what is missing (here the vectors file, --language and --country; --id was given).
    expect(usage.stderr).toMatch(/^error: an import needs the vectors FILE, --language, --country$/m);
  });

  it('puts the artifact and its manifest into local R2', () => {
    const input = writeWink(path.join(dir, 'r2.json'));
    const out = path.join(dir, 'r2.emb');
    const state = path.join(dir, 'r2-state');
    const r = cli([
      input,
      '--id',
      'r2-model',
      '--language',
      'en',
      '--country',
      'GB',
      '--out',
      out,
      '--persist-to',
      state,
      '--quiet',
    ]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/put models\/r2-model\.emb and models\/r2-model\.json into local R2/);
    const wrangler = path.join(ROOT, 'node_modules', 'wrangler', 'bin', 'wrangler.js');
    for (const [key, file] of [
      ['models/r2-model.emb', out],
      ['models/r2-model.json', out.replace(/\.emb$/, '.json')],
    ] as const) {
      const back = path.join(dir, `back-${path.basename(file)}`);
      const g = spawnSync(
        process.execPath,
        [
          wrangler,
          'r2',
          'object',
          'get',
          `embedding-edge-artifacts/${key}`,
          '--file',
          back,
          '--local',
          '--persist-to',
          state,
        ],
        {
          cwd: ROOT,
          env: QUIET_ENV,
          encoding: 'utf8',
          timeout: 120_000,
        },
      );
      expect(g.status, g.stderr).toBe(0);
      expect(fs.readFileSync(back).equals(fs.readFileSync(file)), key).toBe(true);
    }
  });
});
