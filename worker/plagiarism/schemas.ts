/**
 * Request and response schemas of the plagiarism check and of the reference corpus admin API.
 */
import { z } from '@hono/zod-openapi';
import { LIMITS } from '../../core/limits';
import { PageSchema as PageObjectSchema } from '../http/openapi';
import { ILL_FORMED_MESSAGE, isWellFormed } from '../well-formed';

export const CheckRequest = z
  .object({
    text: z
      .string()
      .max(LIMITS.charactersPerText)
      .openapi({ description: `At least ${LIMITS.plagiarismMinWords} words after punctuation stripping.` }),
  })
  .openapi('PlagiarismCheckRequest');

export const MatchSchema = z
  .object({
    url: z.string(),
    title: z.string(),
    matchSnippet: z.string(),
    wordsMatched: z.number().int(),
    matchPercentage: z.number(),
  })
  .openapi('PlagiarismMatch');

export const CheckResponse = z
  .object({ wordCount: z.number().int(), matches: z.array(MatchSchema) })
  .openapi('PlagiarismCheckResponse');

// Every stored string must be well-formed Unicode: D1 would store a lone surrogate as bytes that
// are not UTF-8 and give back U+FFFD, so the page could no longer be found by its URL.
export const PageInputSchema = z
  .object({
    // Only web pages: javascript:, data:, file: ... URLs are refused (one issue: not an http(s) URL).
    url: z
      .url({ protocol: /^https?$/i, error: 'Expected an http or https URL' })
      .max(LIMITS.plagiarismUrlCharacters)
      .refine(isWellFormed, ILL_FORMED_MESSAGE)
      .openapi({
        description: 'Identity of the page: ingesting a known URL again replaces the page. Well-formed Unicode.',
      }),
    title: z
      .string()
      .max(LIMITS.plagiarismTitleCharacters)
      .refine(isWellFormed, ILL_FORMED_MESSAGE)
      .optional()
      .openapi({ description: 'Defaults to the HTML <title> (html) or "" (text).' }),
    text: z
      .string()
      .refine(isWellFormed, ILL_FORMED_MESSAGE)
      .optional()
      .openapi({ description: 'Plain text of the page. Exactly one of text and html.' }),
    html: z
      .string()
      .refine(isWellFormed, ILL_FORMED_MESSAGE)
      .optional()
      .openapi({ description: 'HTML of the page; the title and visible text are extracted.' }),
  })
  .refine((p) => (p.text === undefined) !== (p.html === undefined), {
    message: 'Give exactly one of text and html',
    path: ['text'],
  })
  .openapi('PlagiarismPageInput');

export const CorpusPageSchema = z
  .object({
    id: z.number().int(),
    url: z.string(),
    title: z.string(),
    wordCount: z.number().int(),
    fingerprintCount: z.number().int(),
    characterCount: z.number().int(),
    contentSha256: z.string(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('PlagiarismPage');

export const IngestedPageSchema = CorpusPageSchema.extend({ replaced: z.boolean() }).openapi('PlagiarismIngestedPage');

export const PageWithTextSchema = CorpusPageSchema.extend({ text: z.string() }).openapi('PlagiarismPageWithText');

export const PageRefParam = z.object({
  // A page's identity is its URL (up to 2,048 characters, as ingested), so a ref may be that long; nothing longer reaches storage.
  ref: z.string().min(1).max(LIMITS.plagiarismUrlCharacters).refine(isWellFormed, ILL_FORMED_MESSAGE).openapi({
    description: 'Numeric page id, or the page URL percent-encoded (encodeURIComponent), at most 2,048 characters.',
  }),
});

export const PageList = z
  .object({
    data: z.array(CorpusPageSchema),
    page: PageObjectSchema,
  })
  .openapi('PlagiarismPageList');
