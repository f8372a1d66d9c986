/**
 * `local` provider: matches against the private reference corpus (corpus.ts).
 * Fingerprint the input -> candidate pages by shared fingerprints (one D1 statement) ->
 * fetch the top candidates' texts from R2 -> verify runs of >= 8 words word by word, best
 * candidate first, within PLAGIARISM_SOURCE_CHARS characters of source text per check (a bound
 * on the check's work, which admission prices before it starts).
 * A match's snippet is its longest run as written in the source, plus the configured context
 * words (default none: the corpus is private).
 */
import {
  compareMatches,
  DEFAULT_SNIPPET_CONTEXT_WORDS,
  fingerprints,
  matchInput,
  matchSource,
} from '../../core/plagiarism';
import { PLAGIARISM_SOURCE_CHARS } from '../../core/cost';
import { PlagiarismCorpus } from './corpus';
import type { CheckInput, PlagiarismMatch, PlagiarismProvider } from './provider';

/** Sources verified per check (the best by shared fingerprints); also the most matches reported. */
export const MAX_CANDIDATES = 25;

export class LocalPlagiarismProvider implements PlagiarismProvider {
  readonly name = 'local' as const;
  private readonly corpus: PlagiarismCorpus;

  constructor(
    db: D1Database,
    bucket: R2Bucket,
    /** Words of the source shown either side of a match's passage (PLAGIARISM_SNIPPET_CONTEXT_WORDS). */
    private readonly snippetContextWords: number = DEFAULT_SNIPPET_CONTEXT_WORDS,
  ) {
    this.corpus = new PlagiarismCorpus(db, bucket);
  }

  async check(input: CheckInput): Promise<PlagiarismMatch[]> {
    const prepared = matchInput(input.words);
    const hashes = fingerprints(prepared.norms);
    const candidates = await this.corpus.candidates(hashes, MAX_CANDIDATES);
    const sources = await Promise.all(candidates.map((candidate) => this.corpus.text(candidate)));
    // Verified best first within the check's budget of source characters (core/cost.ts prices it).
    let budget = PLAGIARISM_SOURCE_CHARS;
    const matches = candidates.map((candidate, i): PlagiarismMatch | null => {
      const source = sources[i];
      if (!source || source.text.length > budget) return null;
      budget -= source.text.length;
      const m = matchSource(prepared, source.text, undefined, this.snippetContextWords);
      if (!m) return null;
      return {
        url: candidate.url,
        title: source.title,
        matchSnippet: m.matchSnippet,
        wordsMatched: m.wordsMatched,
        matchPercentage: m.matchPercentage,
      };
    });
    return matches.filter((m): m is PlagiarismMatch => m !== null).sort(compareMatches);
  }
}
