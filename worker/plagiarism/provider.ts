/**
 * The plagiarism provider interface and its selection from configuration
 * (wrangler vars / secrets: PLAGIARISM_PROVIDER, PLAGIARISM_HTTP_*, and for the local provider
 * PLAGIARISM_SNIPPET_CONTEXT_WORDS).
 */
import { DEFAULT_SNIPPET_CONTEXT_WORDS, MAX_SNIPPET_CONTEXT_WORDS, type Word } from '../../core/plagiarism';
import type { Env } from '../env';
import { ApiError } from '../../core/problem';
import { HttpPlagiarismProvider, type FetchFn, type HttpProviderConfig } from './http';
import { LocalPlagiarismProvider } from './local';

/** Element of the response's matches (interface: Plagiarism match). */
export interface PlagiarismMatch {
  url: string;
  title: string;
  matchSnippet: string;
  wordsMatched: number;
  matchPercentage: number;
}

export interface CheckInput {
  text: string;
  /** The input's words (core/plagiarism splitWords); wordCount = words.length. */
  words: Word[];
}

export interface PlagiarismProvider {
  readonly name: 'local' | 'http';
  /**
   * One match per source, ordered by wordsMatched descending; [] when nothing matched.
   * Throws ApiError UPSTREAM_FAILED (502, or 504 on timeout) when the source of matches fails.
   */
  check(input: CheckInput): Promise<PlagiarismMatch[]>;
}

/**
 * local: `snippetContextWords` words of the source either side of a match's passage (default 0:
 * the corpus is private, a snippet shows only the matched words). http: the upstream's snippets
 * pass through as they are.
 */
export type PlagiarismConfig =
  { provider: 'local'; snippetContextWords: number } | { provider: 'http'; http: HttpProviderConfig };

export const HTTP_DEFAULTS = { timeoutMs: 10_000, retries: 2, backoffMs: 250 } as const;
export const HTTP_MAX_RETRIES = 5;

function intVar(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ApiError(
      'INTERNAL_ERROR',
      `Misconfigured plagiarism provider: ${name} must be an integer from ${min} to ${max}`,
    );
  }
  return n;
}

/** Reads the provider configuration; a misconfiguration is the operator's error (500). */
export function plagiarismConfigFromEnv(env: Env): PlagiarismConfig {
  const name = (env.PLAGIARISM_PROVIDER ?? '').trim().toLowerCase() || 'local';
  if (name === 'local') {
    return {
      provider: 'local',
      snippetContextWords: intVar(
        'PLAGIARISM_SNIPPET_CONTEXT_WORDS',
        env.PLAGIARISM_SNIPPET_CONTEXT_WORDS,
        DEFAULT_SNIPPET_CONTEXT_WORDS,
        0,
        MAX_SNIPPET_CONTEXT_WORDS,
      ),
    };
  }
  if (name !== 'http') {
    throw new ApiError(
      'INTERNAL_ERROR',
      `Misconfigured plagiarism provider: PLAGIARISM_PROVIDER must be local or http, not '${name}'`,
    );
  }
  const url = env.PLAGIARISM_HTTP_URL?.trim();
  if (!url || !/^https?:\/\//i.test(url)) {
    throw new ApiError(
      'INTERNAL_ERROR',
      'Misconfigured plagiarism provider: PLAGIARISM_HTTP_URL must be an http(s) URL',
    );
  }
  return {
    provider: 'http',
    http: {
      url,
      apiKey: env.PLAGIARISM_HTTP_API_KEY ?? '',
      timeoutMs: intVar(
        'PLAGIARISM_HTTP_TIMEOUT_MS',
        env.PLAGIARISM_HTTP_TIMEOUT_MS,
        HTTP_DEFAULTS.timeoutMs,
        1,
        120_000,
      ),
      retries: intVar(
        'PLAGIARISM_HTTP_RETRIES',
        env.PLAGIARISM_HTTP_RETRIES,
        HTTP_DEFAULTS.retries,
        0,
        HTTP_MAX_RETRIES,
      ),
      backoffMs: HTTP_DEFAULTS.backoffMs,
    },
  };
}

/** The configured provider. `fetcher` is the outbound fetch of the http provider (default: global fetch). */
export function createPlagiarismProvider(
  env: Env,
  config: PlagiarismConfig = plagiarismConfigFromEnv(env),
  fetcher?: FetchFn,
): PlagiarismProvider {
  if (config.provider === 'http') return new HttpPlagiarismProvider(config.http, fetcher);
  return new LocalPlagiarismProvider(env.DB, env.ARTIFACTS, config.snippetContextWords);
}
