/**
 * `http` provider: an upstream plagiarism service at a configured URL.
 *
 * Request:  POST {PLAGIARISM_HTTP_URL}
 *           Authorization: Bearer {PLAGIARISM_HTTP_API_KEY}
 *           Content-Type: application/json
 *           { "text": string, "wordCount": integer, "minWordsPerMatch": 8 }
 * Response: 200, application/json
 *           { "matches": [ { "url": string, "title"?: string, "snippet": string, "matchedWords": integer >= 0 } ] }
 *
 * Mapping: snippet -> matchSnippet, matchedWords -> wordsMatched (capped at our wordCount),
 * matchPercentage = 100 * wordsMatched / wordCount (decisions.md), title defaults to "".
 * Entries with matchedWords 0 are dropped; several entries for one url become one (the
 * highest matchedWords). Anything else in the body is ignored; a body that does not have this
 * shape is a failure of the upstream (502).
 *
 * Each attempt has its own timeout (PLAGIARISM_HTTP_TIMEOUT_MS, covering the body too).
 * Network errors, timeouts, 408, 429 and 5xx are retried up to PLAGIARISM_HTTP_RETRIES times
 * with exponential backoff (backoffMs * 2^attempt, plus jitter); other 4xx answers and
 * malformed bodies are not. The last failure decides the answer: timeout -> 504, otherwise
 * 502, both UPSTREAM_FAILED.
 */
import { z } from 'zod';
import { compareMatches, MIN_RUN_WORDS, percentage } from '../../core/plagiarism';
import { ApiError } from '../../core/problem';
import type { CheckInput, PlagiarismMatch, PlagiarismProvider } from './provider';

export type FetchFn = (input: Request | string | URL, init?: RequestInit) => Promise<Response>;

export interface HttpProviderConfig {
  url: string;
  apiKey: string;
  timeoutMs: number;
  /** Retries after the first attempt. */
  retries: number;
  /** Base of the exponential backoff between attempts. */
  backoffMs: number;
}

export const upstreamResponseSchema = z.object({
  matches: z.array(
    z.object({
      url: z.string().min(1),
      title: z.string().optional().nullable(),
      snippet: z.string(),
      matchedWords: z.number().int().nonnegative(),
    }),
  ),
});

class AttemptFailure extends Error {
  constructor(
    message: string,
    readonly kind: 'timeout' | 'network' | 'status' | 'malformed',
    readonly retryable: boolean,
  ) {
    super(message);
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class HttpPlagiarismProvider implements PlagiarismProvider {
  readonly name = 'http' as const;
  private readonly fetcher: FetchFn;

  constructor(
    readonly config: HttpProviderConfig,
    fetcher?: FetchFn,
  ) {
    // Looked up at call time so the platform's fetch is used as it is then.
    this.fetcher = fetcher ?? ((input, init) => fetch(input, init));
  }

  async check(input: CheckInput): Promise<PlagiarismMatch[]> {
    const wordCount = input.words.length;
    const body = JSON.stringify({ text: input.text, wordCount, minWordsPerMatch: MIN_RUN_WORDS });
    let last: AttemptFailure | null = null;
    for (let attempt = 0; attempt <= this.config.retries; attempt++) {
      if (attempt > 0) {
        const base = this.config.backoffMs * 2 ** (attempt - 1);
        await sleep(base + Math.random() * base * 0.5);
      }
      try {
        const answer = await this.attempt(body);
        return mapUpstreamMatches(answer, wordCount);
      } catch (err) {
        if (!(err instanceof AttemptFailure)) throw err;
        last = err;
        if (!err.retryable) break;
      }
    }
    const failure = last ?? new AttemptFailure('no attempt made', 'network', false);
    if (failure.kind === 'timeout') {
      throw new ApiError('UPSTREAM_FAILED', `The plagiarism service did not answer in time: ${failure.message}`, {
        status: 504,
      });
    }
    throw new ApiError('UPSTREAM_FAILED', `The plagiarism service failed: ${failure.message}`);
  }

  /** One request with its own deadline covering headers and body. */
  private async attempt(body: string): Promise<z.infer<typeof upstreamResponseSchema>> {
    const controller = new AbortController();
    const timeout = () => new AttemptFailure(`no answer within ${this.config.timeoutMs} ms`, 'timeout', true);
    let timedOut = false;
    let timer: ReturnType<typeof setTimeout> | null = null;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        controller.abort();
        reject(timeout());
      }, this.config.timeoutMs);
    });
    const run = async () => {
      let res: Response;
      try {
        res = await this.fetcher(this.config.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json',
            authorization: `Bearer ${this.config.apiKey}`,
          },
          body,
          signal: controller.signal,
        });
      } catch (err) {
        if (timedOut) throw timeout();
        throw new AttemptFailure(`network error: ${err instanceof Error ? err.message : String(err)}`, 'network', true);
      }
      if (!res.ok) {
        await res.body?.cancel().catch(() => {});
        const retryable = res.status === 408 || res.status === 429 || res.status >= 500;
        throw new AttemptFailure(`HTTP ${res.status}`, 'status', retryable);
      }
      let json: unknown;
      try {
        json = await res.json();
      } catch (err) {
        if (timedOut) throw timeout();
        throw new AttemptFailure('the answer is not JSON', 'malformed', false);
      }
      const parsed = upstreamResponseSchema.safeParse(json);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new AttemptFailure(
          `unexpected answer shape at ${issue.path.join('.') || '(root)'}: ${issue.message}`,
          'malformed',
          false,
        );
      }
      return parsed.data;
    };
    try {
      return await Promise.race([run(), deadline]);
    } finally {
      if (timer !== null) clearTimeout(timer);
    }
  }
}

/** Upstream answer -> the interface's matches (see the module comment for the rules). */
export function mapUpstreamMatches(
  answer: z.infer<typeof upstreamResponseSchema>,
  wordCount: number,
): PlagiarismMatch[] {
  const byUrl = new Map<string, PlagiarismMatch>();
  for (const m of answer.matches) {
    const wordsMatched = Math.min(m.matchedWords, wordCount);
    if (wordsMatched === 0) continue;
    const prev = byUrl.get(m.url);
    if (prev && prev.wordsMatched >= wordsMatched) continue;
    byUrl.set(m.url, {
      url: m.url,
      title: m.title ?? '',
      matchSnippet: m.snippet,
      wordsMatched,
      matchPercentage: percentage(wordsMatched, wordCount),
    });
  }
  return [...byUrl.values()].sort(compareMatches);
}
