/**
 * Plagiarism checks (interface: POST /api/v1/workspaces/{workspaceId}/plagiarism-checks) and
 * the admin API of the local provider's reference corpus (/api/admin/v1/plagiarism/pages...).
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { splitWords } from '../../core/plagiarism';
import type { AppEnv } from '../env';
import { LIMITS } from '../../core/limits';
import { charge } from '../quotas/charge';
import { admit, price } from '../admission/admit';
import { ApiError, excerpt, PROBLEM_ERRORS_MAX, zodIssuesToProblems, type FieldProblem } from '../../core/problem';
import { jsonBody, listQuery, pageObject, security, WorkspaceParams, errorResponses } from '../http/openapi';
import { CORPUS_PAGE_SORT, PlagiarismCorpus, type PageInput } from './corpus';
import { extractHtml } from './html';
import { createPlagiarismProvider } from './provider';
import { waitUntilOf } from '../sources';
import { newRouter } from '../http/router';
import {
  CheckRequest,
  CheckResponse,
  IngestedPageSchema,
  PageInputSchema,
  PageList,
  PageRefParam,
  PageWithTextSchema,
} from './schemas';

// ---------------------------------------------------------------------------------------------
// Check

const checkRoute = createRoute({
  method: 'post',
  path: '/plagiarism-checks',
  summary: 'Find verbatim matches (runs of 8+ words) of a text in the reference corpus or the upstream service',
  tags: ['Plagiarism'],
  security,
  request: {
    params: WorkspaceParams,
    body: jsonBody(CheckRequest),
  },
  responses: {
    200: {
      description: 'Matches, one per source, by wordsMatched descending',
      content: { 'application/json': { schema: CheckResponse } },
    },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'Wrong workspace, or ERROR_NO_REMAINING_PLAGIARISM_CHECKS',
      404: 'NOT_FOUND: no such workspace',
      413: 'PAYLOAD_TOO_LARGE: body over 2 MB; REQUEST_TOO_EXPENSIVE: estimated cost above the cap',
      422: 'VALIDATION_FAILED or PLAGIARISM_TEXT_TOO_SHORT',
      429: 'DAILY_LIMIT_REACHED, or RATE_LIMITED (the workspace is over its rate); Retry-After',
      502: 'UPSTREAM_FAILED: the upstream service failed',
      503: 'STORAGE_UNAVAILABLE: the workspace meter did not answer (Retry-After)',
      504: 'UPSTREAM_FAILED: the upstream service timed out',
    }),
  },
});

// ---------------------------------------------------------------------------------------------
// Admin: reference corpus

const ingestRoute = createRoute({
  method: 'post',
  path: '/pages',
  summary: 'Add or replace one reference page (text or HTML)',
  tags: ['Plagiarism corpus (admin)'],
  security,
  request: { body: jsonBody(PageInputSchema) },
  responses: {
    201: { description: 'Created', content: { 'application/json': { schema: IngestedPageSchema } } },
    200: {
      description: 'Replaced the page with this URL (same id)',
      content: { 'application/json': { schema: IngestedPageSchema } },
    },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'ADMIN_SCOPE_REQUIRED',
      422: 'VALIDATION_FAILED',
    }),
  },
});

const batchRoute = createRoute({
  method: 'post',
  path: '/pages:batch',
  summary: `Add or replace up to ${LIMITS.plagiarismBatchPages} pages, one JSON object per line ({url, title?, text | html}); all or nothing`,
  tags: ['Plagiarism corpus (admin)'],
  security,
  request: {
    body: {
      required: true,
      content: {
        'application/x-ndjson': { schema: z.string().openapi({ description: 'JSON lines of PlagiarismPageInput' }) },
      },
    },
  },
  responses: {
    200: {
      description: 'All pages stored (one transaction)',
      content: {
        'application/json': {
          schema: z
            .object({
              count: z.number().int(),
              created: z.number().int(),
              replaced: z.number().int(),
              pages: z.array(IngestedPageSchema),
            })
            .openapi('PlagiarismBatchResult'),
        },
      },
    },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'ADMIN_SCOPE_REQUIRED',
      413: 'PAYLOAD_TOO_LARGE',
      422: 'VALIDATION_FAILED: a line is invalid (errors[].path = line.N...) or more than 1,000 pages; nothing stored',
    }),
  },
});

const listRoute = createRoute({
  method: 'get',
  path: '/pages',
  summary: 'List reference pages, by id unless `sort` says otherwise',
  tags: ['Plagiarism corpus (admin)'],
  security,
  request: {
    query: listQuery(CORPUS_PAGE_SORT).extend({
      url: z
        .string()
        .max(LIMITS.plagiarismUrlCharacters)
        .optional()
        .openapi({
          description: `Only the page with exactly this URL (at most ${LIMITS.plagiarismUrlCharacters} characters)`,
        }),
    }),
  },
  responses: {
    200: { description: 'One page of the corpus', content: { 'application/json': { schema: PageList } } },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'ADMIN_SCOPE_REQUIRED',
      422: 'VALIDATION_FAILED',
    }),
  },
});

const getRoute = createRoute({
  method: 'get',
  path: '/pages/{ref}',
  summary: 'One reference page with its stored (extracted) text',
  tags: ['Plagiarism corpus (admin)'],
  security,
  request: { params: PageRefParam },
  responses: {
    200: { description: 'The page', content: { 'application/json': { schema: PageWithTextSchema } } },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'ADMIN_SCOPE_REQUIRED',
      404: 'NOT_FOUND',
    }),
  },
});

const deleteRoute = createRoute({
  method: 'delete',
  path: '/pages/{ref}',
  summary: 'Delete a reference page (fingerprints, row and text)',
  tags: ['Plagiarism corpus (admin)'],
  security,
  request: { params: PageRefParam },
  responses: {
    204: { description: 'Deleted' },
    ...errorResponses({
      401: 'Missing or invalid token',
      403: 'ADMIN_SCOPE_REQUIRED',
      404: 'NOT_FOUND',
    }),
  },
});

function parseRef(ref: string): { id: number } | { url: string } {
  return /^[0-9]{1,15}$/.test(ref) ? { id: Number(ref) } : { url: ref };
}

async function toPageInput(p: z.infer<typeof PageInputSchema>): Promise<PageInput> {
  if (p.html !== undefined) {
    const extracted = await extractHtml(p.html);
    return { url: p.url, title: p.title ?? extracted.title, text: extracted.text };
  }
  return { url: p.url, title: p.title ?? '', text: p.text ?? '' };
}

function corpusOf(c: Context<AppEnv>): PlagiarismCorpus {
  return new PlagiarismCorpus(c.env.DB, c.env.ARTIFACTS, waitUntilOf(c));
}

/** Parses a JSON-lines body; every invalid line is reported, and nothing is stored then. */
async function parseBatch(body: string): Promise<PageInput[]> {
  const lines = body.split(/\r?\n/);
  const errors: FieldProblem[] = [];
  const valid: Array<z.infer<typeof PageInputSchema>> = [];
  let count = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].trim();
    if (line === '') continue;
    count++;
    if (count > LIMITS.plagiarismBatchPages) {
      throw new ApiError('VALIDATION_FAILED', `A batch holds at most ${LIMITS.plagiarismBatchPages} pages`, {
        errors: [{ path: `line.${i + 1}`, message: `more than ${LIMITS.plagiarismBatchPages} pages` }],
      });
    }
    let json: unknown;
    try {
      json = JSON.parse(line);
    } catch {
      errors.push({ path: `line.${i + 1}`, message: 'not valid JSON' });
      continue;
    }
    const parsed = PageInputSchema.safeParse(json);
    if (!parsed.success) {
      for (const problem of zodIssuesToProblems(parsed.error.issues))
        errors.push({
          path: problem.path === '(root)' ? `line.${i + 1}` : `line.${i + 1}.${problem.path}`,
          message: problem.message,
        });
      continue;
    }
    valid.push(parsed.data);
  }
  if (errors.length > 0)
    throw new ApiError('VALIDATION_FAILED', `${errors.length} invalid line(s); nothing was stored`, {
      errors: errors.slice(0, PROBLEM_ERRORS_MAX),
    });
  if (count === 0)
    throw new ApiError('VALIDATION_FAILED', 'The batch holds no pages', {
      errors: [{ path: '(root)', message: 'no JSON lines' }],
    });
  const pages: PageInput[] = [];
  for (const p of valid) pages.push(await toPageInput(p));
  return pages;
}

/** POST plagiarism-checks of a workspace (mounted under /api/v1/workspaces/{workspaceId}). */
export const plagiarismCheckRoutes = newRouter();

plagiarismCheckRoutes.openapi(checkRoute, async (c) => {
  const { text } = c.req.valid('json');
  price(c, 'plagiarismCheck', { text });
  const words = splitWords(text);
  if (words.length < LIMITS.plagiarismMinWords) {
    throw new ApiError(
      'PLAGIARISM_TEXT_TOO_SHORT',
      `The text has ${words.length} words after punctuation stripping; a check needs at least ${LIMITS.plagiarismMinWords}`,
    );
  }
  // Admission first: an exhausted or unknown workspace never causes a corpus query or an upstream call.
  await admit(c, 'plagiarismCheck', { text }, { usageTypeKey: 'plagiarismChecks' });
  const provider = createPlagiarismProvider(c.env);
  const matches = await provider.check({ text, words });
  // Only a successful check is charged (throws 403/429 when the allowance is exhausted).
  await charge(c, { usageTypeKey: 'plagiarismChecks', amount: 1 });
  return c.json({ wordCount: words.length, matches }, 200);
});

/** The reference corpus (mounted under /api/admin/v1/plagiarism). */
export const plagiarismPageRoutes = newRouter();

plagiarismPageRoutes.openapi(ingestRoute, async (c) => {
  const page = await toPageInput(c.req.valid('json'));
  const [stored] = await corpusOf(c).ingest([page]);
  // ingest() reads back every page it committed (it logs, never throws, if one were missing).
  if (!stored)
    throw new ApiError(
      'INTERNAL_ERROR',
      'The page was stored but could not be read back; the request id identifies it in the logs',
    );
  return c.json(stored, stored.replaced ? 200 : 201);
});

plagiarismPageRoutes.openapi(batchRoute, async (c) => {
  // Decoded as UTF-8 explicitly: the body's media type (JSON lines) is not text/*.
  const pages = await parseBatch(new TextDecoder().decode(await c.req.arrayBuffer()));
  const stored = await corpusOf(c).ingest(pages);
  const replaced = stored.filter((p) => p.replaced).length;
  return c.json({ count: stored.length, created: stored.length - replaced, replaced, pages: stored }, 200);
});

plagiarismPageRoutes.openapi(listRoute, async (c) => {
  const { page, size, url, sort, order } = c.req.valid('query');
  const { data, total } = await corpusOf(c).list(page, size, url, sort, order);
  return c.json({ data, page: pageObject(page, size, total) }, 200);
});

plagiarismPageRoutes.openapi(getRoute, async (c) => {
  const { ref } = c.req.valid('param');
  const corpus = corpusOf(c);
  const page = await corpus.find(parseRef(ref));
  if (!page) throw new ApiError('NOT_FOUND', `No reference page '${excerpt(ref)}'`);
  const source = await corpus.text({ id: page.id, url: page.url, title: page.title, r2Key: page.r2Key, shared: 0 });
  if (!source) throw new ApiError('NOT_FOUND', `No reference page '${excerpt(ref)}'`);
  const { r2Key: _key, ...record } = page;
  return c.json({ ...record, text: source.text }, 200);
});

plagiarismPageRoutes.openapi(deleteRoute, async (c) => {
  const { ref } = c.req.valid('param');
  if (!(await corpusOf(c).delete(parseRef(ref))))
    throw new ApiError('NOT_FOUND', `No reference page '${excerpt(ref)}'`);
  return c.body(null, 204);
});
