/** Shared helpers of the API tests (not a test file): synthetic models, mapper bundles, tokens, calls. */
import { createExecutionContext, env, SELF, waitOnExecutionContext } from 'cloudflare:test';
import { SignJWT } from 'jose';
import { expect } from 'vitest';
import { writeArtifact, parseArtifact } from '../../../core/artifact';
import { quantizeRows } from '../../../core/quantize';
import { prng } from '../../../core/prng';
import { writeMapperBundle } from '../../../core/mapper-bundle';
import { quantizeQuery } from '../../../core/kernels';
import { parseLanguageData, tokenize, type LanguageData } from '../../../core/tokenizer';
import type { MapperBundleInfo, ModelManifest } from '../../../core/types';
import { invalidateCatalog } from '../../../worker/catalog/store';
import worker from '../../../worker/index';

export const WS = 'ws_demo';

export async function mintToken(claims: Record<string, unknown>, ttlSeconds = 3600): Promise<string> {
  const secret = env.JWT_SECRET;
  if (!secret) throw new Error('JWT_SECRET missing from the test env (.dev.vars)');
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(Math.floor(Date.now() / 1000) + ttlSeconds)
    .sign(new TextEncoder().encode(secret));
}

let cachedToken: string | null = null;
export async function token(): Promise<string> {
  return (cachedToken ??= await mintToken({ workspaceId: WS, sub: 'api-test' }));
}
export const adminToken = (): Promise<string> => mintToken({ workspaceId: 'ops', scope: 'admin', sub: 'api-admin' });

export interface Called<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export async function call<T = any>(
  method: string,
  path: string,
  body?: unknown,
  opts: { token?: string | null; raw?: string } = {},
): Promise<Called<T>> {
  const headers: Record<string, string> = {};
  const tok = opts.token === undefined ? await token() : opts.token;
  if (tok) headers.authorization = `Bearer ${tok}`;
  let payload: string | undefined;
  if (opts.raw !== undefined) payload = opts.raw;
  else if (body !== undefined) payload = JSON.stringify(body);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await SELF.fetch(`http://x${path}`, { method, headers, body: payload });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, headers: res.headers, body: parsed as T };
}

export function expectProblem(r: Called, status: number, code: string): void {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toContain('application/problem+json');
  expect(r.body.code).toBe(code);
  expect(r.body.status).toBe(status);
  expect(typeof r.body.translationKey).toBe('string');
  expect(typeof r.body.title).toBe('string');
  expect(typeof r.body.detail).toBe('string');
}

/** Deterministic PRNG (mulberry32, core/prng.ts). */
export const rng = prng;

/** Vocabulary of the synthetic English model, in frequency order (row = rank - 1). */
export const BASE_WORDS = [
  'the',
  'of',
  'and',
  'to',
  'a',
  'in',
  'is',
  'it',
  'that',
  'was',
  'good',
  'bad',
  'happy',
  'sad',
  'great',
  'terrible',
  'love',
  'hate',
  'cat',
  'dog',
  'food',
  'bread',
  'cheese',
  'apple',
  'apples',
  'application',
  'apply',
  'applied',
  'banana',
  'river',
  'mountain',
  'forest',
  'tree',
  'science',
  'computer',
  'data',
  'software',
  'research',
  'sport',
  'football',
  'team',
  'match',
  'money',
  'bank',
  'market',
  'run',
  'running',
  'ran',
  'walk',
  'house',
  ',',
  '.',
  '123',
  '2020',
  '!!',
  'wonderful',
  'awful',
  'beautiful',
  'ugly',
  'success',
  'failure',
  'excellent',
  'horrible',
  'positive',
  'negative',
  'best',
  'worst',
  'nature',
  'animal',
  'flower',
  'ocean',
  'cooking',
  'recipe',
  'meal',
  'kitchen',
  'restaurant',
  'dinner',
  'delicious',
  'technology',
  'engineering',
  'physics',
  'laboratory',
  'scientist',
  'soccer',
  'basketball',
  'tennis',
  'championship',
  'athlete',
  'tournament',
  'business',
  'company',
  'finance',
  'investment',
  'profit',
  'economy',
  'stock',
  'revenue',
  'health',
  'medical',
  'doctor',
];

export interface SyntheticModel {
  id: string;
  words: string[];
  dims: number;
  bytes: Uint8Array;
  manifest: ModelManifest;
  /** Dequantized vectors (int8 * scale) in float64, as the model stores them. */
  vectors: Float64Array[];
}

/** A synthetic model: clustered random vectors (words of the same topic group close together). */
export function makeModel(
  id: string,
  opts: { words?: string[]; dims?: number; seed?: number; extra?: number; language?: string; country?: string } = {},
): SyntheticModel {
  const words = [...(opts.words ?? BASE_WORDS)];
  for (let i = 0; i < (opts.extra ?? 0); i++) words.push(`w${i}x`);
  const dims = opts.dims ?? 16;
  const rand = rng(opts.seed ?? 7);
  const gauss = (): number => Math.sqrt(-2 * Math.log(rand() + 1e-12)) * Math.cos(2 * Math.PI * rand());
  const centers = Array.from({ length: 6 }, () => Array.from({ length: dims }, gauss));
  const vec = new Float32Array(words.length * dims);
  words.forEach((_, r) => {
    const c = centers[r % centers.length];
    for (let d = 0; d < dims; d++) vec[r * dims + d] = c[d] + 0.8 * gauss();
  });
  const q = quantizeRows(vec, words.length, dims);
  const bytes = writeArtifact({
    manifest: {
      id,
      language: opts.language ?? 'en',
      country: opts.country ?? 'US',
      version: '1.0.0-test',
      sources: ['synthetic'],
      features: ['test'],
      tag: '',
      trainingYear: '2024',
      trainingMonth: '01',
      labels: {
        label: `Synthetic ${id}`,
        languageLabel: 'English',
        countryLabel: 'United States',
        monthLabel: 'January',
      },
      tokenCount: 1000,
      hasTranslation: false,
      license: 'MIT',
    },
    words,
    rows: q.rows,
    scales: q.scales,
    dims,
  });
  const manifest = parseArtifact(bytes).manifest;
  const vectors = words.map((_, r) => {
    const v = new Float64Array(dims);
    for (let d = 0; d < dims; d++) v[d] = q.rows[r * dims + d] * q.scales[r];
    return v;
  });
  return { id, words, dims, bytes, manifest, vectors };
}

/** Puts the model and its manifest into R2; like every writer of catalog sidecars, invalidates the cached catalog (worker/catalog/store.ts). */
export async function uploadModel(m: SyntheticModel): Promise<void> {
  await env.ARTIFACTS.put(`models/${m.id}.emb`, m.bytes);
  await env.ARTIFACTS.put(`models/${m.id}.json`, JSON.stringify(m.manifest));
  await invalidateCatalog(env);
}

export function mapperInfo(
  modelId: string,
  key: string,
  variables: string[],
  extra: Partial<MapperBundleInfo> = {},
): MapperBundleInfo {
  return {
    key,
    variables,
    translationKey: `mappers.${key}`,
    label: `Test ${key}`,
    language: 'en',
    country: 'US',
    multilingual: false,
    modelId,
    scales: Object.fromEntries(variables.map((v) => [v, { min: -1, max: 1, description: v }])),
    lexicon: { name: 'test', version: '1', license: 'MIT' },
    trainingWords: Object.fromEntries(variables.map((v) => [v, 10])),
    metrics: Object.fromEntries(variables.map((v) => [v, { pearsonR: 0.9, spearmanRho: 0.9 }])),
    method: 'test',
    ...extra,
  };
}

/** Uploads a mapper bundle whose values are given per row (NaN = none) and invalidates the cached catalog; returns the info. */
export async function uploadMapper(
  m: SyntheticModel,
  key: string,
  values: Record<string, Float64Array>,
  extra: Partial<MapperBundleInfo> = {},
): Promise<MapperBundleInfo> {
  const info = mapperInfo(m.id, key, Object.keys(values), { modelChecksum: m.manifest.checksum, ...extra });
  const bytes = writeMapperBundle(info, values);
  await env.ARTIFACTS.put(`mappers/${m.id}/${key}.bin`, bytes);
  await env.ARTIFACTS.put(`mappers/${m.id}/${key}.json`, JSON.stringify(info));
  await invalidateCatalog(env);
  return info;
}

let lang: LanguageData | null = null;
/** Puts the generated English tokenizer data into R2 (lang/en.bin) and returns it parsed. */
export async function uploadEnglish(): Promise<LanguageData> {
  const res = await env.FIXTURES.fetch('http://f/lang/en.bin');
  if (res.status !== 200) throw new Error('build/generated/lang/en.bin is missing: run the tokenizer build');
  const bytes = await res.arrayBuffer();
  await env.ARTIFACTS.put('lang/en.bin', bytes);
  return (lang ??= parseLanguageData(bytes));
}

export function englishTokens(text: string, data: LanguageData) {
  return tokenize(text, data).tokens;
}

// ----- float64 references -----

export function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
}
export function norm(a: ArrayLike<number>): number {
  return Math.sqrt(dot(a, a));
}
export function unit(a: ArrayLike<number>): Float64Array {
  const n = norm(a);
  return Float64Array.from(a, (x) => x / n);
}
export function cos(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return dot(a, b) / (norm(a) * norm(b));
}
/** Mean of the unit vectors of the rows, re-normalized. */
export function centroid64(m: SyntheticModel, rows: number[]): Float64Array {
  const c = new Float64Array(m.dims);
  for (const r of rows) {
    const u = unit(m.vectors[r]);
    for (let d = 0; d < m.dims; d++) c[d] += u[d] / rows.length;
  }
  return unit(c);
}
export const rowOf = (m: SyntheticModel, w: string): number => m.words.indexOf(w.toLowerCase());
export const f = (rank: number, V: number): number => 1 - Math.log(rank) / Math.log(V);

/**
 * float64 cosine of a stored row with a query as the kernels scan it: the query in f32, quantized
 * to i16 (core/kernels.ts quantizeQuery), against the dequantized int8 row.
 */
export function qcos(m: SyntheticModel, row: number, query: ArrayLike<number>): number {
  const q = quantizeQuery(Float32Array.from(query), m.dims);
  let s = 0;
  for (let d = 0; d < m.dims; d++) s += m.vectors[row][d] * q.values[d];
  return s * q.scale;
}

/**
 * One request straight through the Worker's fetch handler with the given bindings (not SELF),
 * so a test can hand it wrapped or failing bindings. The body is parsed as JSON when it is JSON.
 */
export async function fetchWorker(
  bindings: unknown,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: any; headers: Headers }> {
  const h: Record<string, string> = { ...headers };
  if (body !== undefined) h['content-type'] = 'application/json';
  const exec = createExecutionContext();
  const res = await worker.fetch(
    new Request(`http://x${path}`, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) }),
    bindings as never,
    exec,
  );
  await waitOnExecutionContext(exec);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: res.status, body: parsed, headers: res.headers };
}
