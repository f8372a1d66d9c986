/**
 * Artifact downloads for offline scoring (the browser bundle, browser/): the model artifact,
 * tokenizer language data, mapper bundles and the stored dimension seeds, byte for byte as the
 * Worker itself uses them. Authenticated like every /api/v1 route (bearer token, no workspace).
 *
 * Each answer carries
 *   ETag              the R2 object's etag (dimensions: the content checksum), If-None-Match -> 304
 *   X-Content-SHA256  hex SHA-256 of the body, which the browser verifies before caching
 *   Content-Length    R2 bodies are streamed, never buffered in the Worker; language data,
 *                     mapper bundles and model heads go out gzipped instead when accepted (serveObject)
 * The SHA-256 of an R2 object is computed once per etag with a streaming digest and kept in KV
 * (CACHE) and in isolate memory; R2's own sha256 checksum is used when the upload stored one.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { SUPPORTED_LANGUAGES } from '../../core/tokenizer/languages';
import { KV_KEYS, R2_KEYS } from '../../core/storage-keys';
import { IDENTIFIER, IDENTIFIER_MESSAGE } from '../../core/requests';
import { sha256Hex, toHex } from '../../core/digest';
import type { AppEnv, Env } from '../env';
import { ApiError, excerpt } from '../../core/problem';
import { allDimensions } from '../dimensions/store';
import { etagMatches } from '../http-cache';
import { getManifest } from '../sources/models';
import { sharedLoad, type WaitUntil } from '../../core/shared-load';
import { waitUntilOf } from '../sources';
import { derivedLoading, languageLoading } from '../catalog/building';
import { errorResponses, security } from '../http/openapi';
import { newRouter } from '../http/router';

export const CHECKSUM_HEADER = 'X-Content-SHA256';
const SEGMENT = IDENTIFIER;

const segment = (name: string, example: string) =>
  z
    .string()
    .regex(SEGMENT, IDENTIFIER_MESSAGE)
    .openapi({ param: { name, in: 'path' }, example });

const binaryResponses = (what: string) => ({
  200: {
    description: `${what}. Headers: ETag, ${CHECKSUM_HEADER} (hex SHA-256 of the body), Content-Length.`,
    headers: z.object({
      ETag: z.string().openapi({ description: 'Entity tag; send it back in If-None-Match' }),
      [CHECKSUM_HEADER]: z.string().openapi({ description: 'Hex SHA-256 of the body; verify before caching' }),
    }),
    content: { 'application/octet-stream': { schema: z.string().openapi({ format: 'binary' }) } },
  },
  304: { description: 'Not modified (If-None-Match matched the ETag)' },
});

const ifNoneMatch = z.object({
  'if-none-match': z.string().optional().openapi({ description: 'An ETag from an earlier download' }),
});

/** A download of a model's artifact (the whole model or its head), by model id. */
const modelArtifactRoute = (path: string, summary: string, description: string, what: string) =>
  createRoute({
    method: 'get',
    path,
    tags: ['Artifacts'],
    summary,
    description,
    security,
    request: { params: z.object({ id: segment('id', 'en-glove-6b-100d') }), headers: ifNoneMatch },
    responses: { ...binaryResponses(what), ...errorResponses(401, 404, 422, 503) },
  });

const modelRoute = modelArtifactRoute(
  '/models/{id}',
  'Download an embedding-model artifact (offline scoring in the browser)',
  'The model artifact (core/artifact/: vocabulary, sorted index, int8 rows) exactly as the Worker loads it. Also sends X-Model-Version and X-Model-Checksum (the manifest fields).',
  'The model artifact',
);

const modelHeadRoute = modelArtifactRoute(
  '/models/{id}/head',
  "Download the head of an embedding-model artifact: its most frequent rows (the offline scorer's progressive cold start)",
  "A standalone artifact of the model's most frequent 50,000 rows (build/model-heads.ts): the same words, int8 rows and scales as the full artifact, whose manifest it carries as `partialOf`. X-Model-Version and X-Model-Checksum are the full model's. 404 when the model has no head (download the full artifact).",
  'The head artifact',
);

const subwordTableRoute = modelArtifactRoute(
  '/models/{id}/subword-table',
  "Download a model's sub-word table (the offline scorer's subwordFallback)",
  "The model's sub-word table (core/subword.ts: character n-gram buckets with int8 rows in the model's space, learned to match it), which composes vectors for words outside the vocabulary when a request sets subwordFallback. X-Model-Version and X-Model-Checksum are the model's. 404 when the model has none (its requests compose no word).",
  'The sub-word table',
);

const languageRoute = createRoute({
  method: 'get',
  path: '/languages/{language}',
  tags: ['Artifacts'],
  summary: 'Download tokenizer language data (offline scoring in the browser)',
  security,
  request: {
    params: z.object({
      language: z
        .enum(SUPPORTED_LANGUAGES as unknown as [string, ...string[]])
        .openapi({ param: { name: 'language', in: 'path' }, example: 'en' }),
    }),
    headers: ifNoneMatch,
  },
  responses: { ...binaryResponses('The language data (core/tokenizer)'), ...errorResponses(401, 404, 422, 503) },
});

const mapperRoute = createRoute({
  method: 'get',
  path: '/mappers/{modelId}/{key}',
  tags: ['Artifacts'],
  summary: 'Download a mapper bundle of a model (offline scoring in the browser)',
  security,
  request: {
    params: z.object({ modelId: segment('modelId', 'en-glove-6b-100d'), key: segment('key', 'sentiment') }),
    headers: ifNoneMatch,
  },
  responses: { ...binaryResponses('The mapper bundle (core/mapper-bundle.ts)'), ...errorResponses(401, 404, 422, 503) },
});

const mapperHeadRoute = createRoute({
  method: 'get',
  path: '/mappers/{modelId}/{key}/head',
  tags: ['Artifacts'],
  summary:
    "Download the head of a mapper bundle: the values of the model's head rows (the offline scorer's progressive cold start)",
  description:
    "The bundle (core/mapper-bundle.ts, same format, info and quantization) cut to the rows of the model's head (GET .../models/{id}/head: the most frequent 50,000 rows), every value equal to the full bundle's. It applies only to the model's head; the complete model needs the full bundle. 404 when there is none (download the full bundle).",
  security,
  request: {
    params: z.object({ modelId: segment('modelId', 'en-glove-6b-100d'), key: segment('key', 'sentiment') }),
    headers: ifNoneMatch,
  },
  responses: {
    ...binaryResponses("The mapper bundle's head (core/mapper-bundle.ts)"),
    ...errorResponses(401, 404, 422, 503),
  },
});

export const StoredSeedsSchema = z
  .object({
    data: z.array(
      z.object({ id: z.number().int(), name: z.string(), language: z.string(), words: z.array(z.string()) }),
    ),
  })
  .openapi('StoredDimensionSeeds');

const dimensionsRoute = createRoute({
  method: 'get',
  path: '/dimensions',
  tags: ['Artifacts'],
  summary: 'The stored dimension seeds (merged into request dimensions of type dimension), for offline scoring',
  security,
  request: { headers: ifNoneMatch },
  responses: {
    200: {
      description: `Every stored dimension's seeds, by id. Headers: ETag, ${CHECKSUM_HEADER}.`,
      content: { 'application/json': { schema: StoredSeedsSchema } },
    },
    304: { description: 'Not modified' },
    ...errorResponses(401),
  },
});

/** Per-isolate memo of computed digests: `${key}|${etag}` -> hex. */
const digests = new Map<string, Promise<string>>();

async function streamDigest(body: ReadableStream): Promise<string> {
  const digest = new crypto.DigestStream('SHA-256');
  await body.pipeTo(digest);
  return toHex(await digest.digest);
}

/** Hex SHA-256 of an R2 object, computed once per etag (R2 checksum, else KV, else a streaming digest). */
async function sha256Of(env: Env, key: string, obj: R2Object, ctx: WaitUntil | undefined): Promise<string> {
  const stored = obj.checksums?.sha256;
  if (stored) return toHex(stored);
  return sharedLoad(digests, `${key}|${obj.etag}`, ctx, async () => {
    // KV is only a cache here: when it fails (or refuses a write), compute and answer anyway.
    const kvKey = KV_KEYS.artifactSha256(key, obj.etag);
    const cached = await env.CACHE.get(kvKey).catch((err: Error) => {
      console.error(`[artifacts] KV read of ${kvKey} failed: ${err.message}`);
      return null;
    });
    if (cached && /^[0-9a-f]{64}$/.test(cached)) return cached;
    const full = await env.ARTIFACTS.get(key);
    if (!full || full.etag !== obj.etag)
      throw new ApiError('INTERNAL_ERROR', `${key} changed while its checksum was computed; retry`);
    const hex = await streamDigest(full.body);
    await env.CACHE.put(kvKey, hex, { expirationTtl: 60 * 60 * 24 * 90 }).catch((err: Error) => {
      console.error(`[artifacts] KV write of ${kvKey} failed: ${err.message}`);
    });
    return hex;
  });
}

/**
 * Whether the client accepts a gzip body (q=0 refuses). On Cloudflare (and in Miniflare) the
 * Worker always sees `Accept-Encoding: br, gzip`; the client's own header is
 * `request.cf.clientAcceptEncoding` (Cloudflare docs, HTTP request headers: Accept-Encoding), so
 * that one decides when it is there.
 */
function acceptsGzip(c: Context<AppEnv>): boolean {
  const cf = (c.req.raw as { cf?: { clientAcceptEncoding?: unknown } }).cf;
  const ae =
    typeof cf?.clientAcceptEncoding === 'string' ? cf.clientAcceptEncoding : (c.req.header('accept-encoding') ?? '');
  return ae.split(',').some((part) => {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  });
}

/**
 * compress: the runtime gzips the body when the client accepts it (language data and mapper
 * bundles shrink 3-8x, a model's head ~15 %: the offline scorer's cold start waits for them). The
 * full model artifacts (int8 rows, ~15 % smaller gzipped, downloaded in the background) are sent
 * as they are, with a Content-Length for download progress.
 * X-Content-SHA256 is always the digest of the decoded body.
 */
async function serveObject(
  c: Context<AppEnv>,
  key: string,
  notFound: () => ApiError | Promise<ApiError>,
  extra: Record<string, string> = {},
  compress = false,
): Promise<Response> {
  const head = await c.env.ARTIFACTS.head(key);
  if (!head) throw await notFound();
  const sha = await sha256Of(c.env, key, head, waitUntilOf(c));
  const headers: Record<string, string> = {
    ETag: head.httpEtag,
    [CHECKSUM_HEADER]: sha,
    'Cache-Control': 'private, no-cache',
    ...extra,
  };
  if (etagMatches(c.req.header('if-none-match'), head.httpEtag)) return c.body(null, 304, headers);
  const obj = await c.env.ARTIFACTS.get(key);
  if (!obj) throw await notFound();
  if (obj.etag !== head.etag) {
    // Replaced between head and get: describe the bytes actually sent.
    headers.ETag = obj.httpEtag;
    headers[CHECKSUM_HEADER] = await sha256Of(c.env, key, obj, waitUntilOf(c));
  }
  headers['Content-Type'] = 'application/octet-stream';
  if (compress && acceptsGzip(c)) {
    // Compressed by the runtime on the way out (encodeBody 'automatic'); the length is then unknown.
    headers['Content-Encoding'] = 'gzip';
    headers['Vary'] = 'Accept-Encoding';
    return new Response(obj.body, { status: 200, headers });
  }
  headers['Content-Length'] = String(obj.size);
  return c.body(obj.body, 200, headers);
}

export const artifactRoutes = newRouter();

/**
 * The refusal of an artifact of `modelId` that is not in R2: 503 MODEL_LOADING while a local first
 * start is still building it (`what` names it), else `notFound()`.
 */
const missingOf =
  (c: Context<AppEnv>, modelId: string, what: string, notFound: () => ApiError) => async (): Promise<ApiError> =>
    (await derivedLoading(c.env, waitUntilOf(c), modelId, what)) ?? notFound();

/**
 * X-Model-Version and X-Model-Checksum of a model (its manifest); 404 for an unknown model, 503
 * MODEL_LOADING for one a local first start is still building.
 */
async function modelHeaders(c: Context<AppEnv>, id: string): Promise<Record<string, string>> {
  const manifest = await getManifest(c.env, id);
  if (!manifest) throw await missingOf(c, id, `Embedding model '${excerpt(id)}'`, () => modelNotFound(id))();
  const extra: Record<string, string> = {};
  if (manifest.version) extra['X-Model-Version'] = manifest.version;
  if (manifest.checksum) extra['X-Model-Checksum'] = manifest.checksum;
  return extra;
}

const modelNotFound = (id: string) => new ApiError('EMBEDDING_MODEL_NOT_FOUND', `No embedding model '${excerpt(id)}'`);

artifactRoutes.openapi(modelRoute, async (c) => {
  const { id } = c.req.valid('param');
  return serveObject(c, R2_KEYS.model(id), () => modelNotFound(id), await modelHeaders(c, id)) as never;
});

artifactRoutes.openapi(modelHeadRoute, async (c) => {
  const { id } = c.req.valid('param');
  // The full model's version and checksum: the head is scored with the full model's identity.
  return serveObject(
    c,
    R2_KEYS.modelHead(id),
    missingOf(
      c,
      id,
      `The head of embedding model '${excerpt(id)}'`,
      () => new ApiError('NOT_FOUND', `Embedding model '${excerpt(id)}' has no head artifact`),
    ),
    await modelHeaders(c, id),
    // Gzipped when accepted: ~15 % fewer bytes before the first score of a cold start.
    true,
  ) as never;
});

artifactRoutes.openapi(subwordTableRoute, async (c) => {
  const { id } = c.req.valid('param');
  return serveObject(
    c,
    R2_KEYS.subwordTable(id),
    missingOf(
      c,
      id,
      `The sub-word table of model '${excerpt(id)}'`,
      () => new ApiError('NOT_FOUND', `Embedding model '${excerpt(id)}' has no sub-word table`),
    ),
    await modelHeaders(c, id),
    true,
  ) as never;
});

artifactRoutes.openapi(languageRoute, async (c) => {
  const { language } = c.req.valid('param');
  return serveObject(
    c,
    R2_KEYS.languageData(language),
    async () =>
      (await languageLoading(c.env, waitUntilOf(c), language)) ??
      new ApiError('NOT_FOUND', `No tokenizer data for language '${language}'`),
    {},
    true,
  ) as never;
});

artifactRoutes.openapi(mapperRoute, async (c) => {
  const { modelId, key } = c.req.valid('param');
  return serveObject(
    c,
    R2_KEYS.mapper(modelId, key),
    missingOf(
      c,
      modelId,
      `The mapper bundles of embedding model '${excerpt(modelId)}'`,
      () => new ApiError('NOT_FOUND', `No mapper bundle '${excerpt(key)}' for embedding model '${excerpt(modelId)}'`),
    ),
    {},
    true,
  ) as never;
});

artifactRoutes.openapi(mapperHeadRoute, async (c) => {
  const { modelId, key } = c.req.valid('param');
  return serveObject(
    c,
    R2_KEYS.mapperHead(modelId, key),
    missingOf(
      c,
      modelId,
      `The mapper bundles of embedding model '${excerpt(modelId)}'`,
      () =>
        new ApiError(
          'NOT_FOUND',
          `No head of mapper bundle '${excerpt(key)}' for embedding model '${excerpt(modelId)}'`,
        ),
    ),
    {},
    true,
  ) as never;
});

artifactRoutes.openapi(dimensionsRoute, async (c) => {
  const data = (await allDimensions(c.env)).map((d) => ({
    id: d.id,
    name: d.name,
    language: d.language,
    words: d.words,
  }));
  const text = JSON.stringify({ data });
  const sha = await sha256Hex(text);
  const etag = `"${sha.slice(0, 32)}"`;
  const headers = { ETag: etag, [CHECKSUM_HEADER]: sha, 'Cache-Control': 'private, no-cache' };
  if (etagMatches(c.req.header('if-none-match'), etag)) return c.body(null, 304, headers) as never;
  return c.body(text, 200, { ...headers, 'Content-Type': 'application/json; charset=utf-8' }) as never;
});
