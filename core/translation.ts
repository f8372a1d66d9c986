/**
 * Word translation through the shared space of the aligned models (extension,
 * docs/multilingual.md): a word's nearest words in another model that lives in the same
 * coordinates (an aligned model and its English companion, core/projection.ts).
 */
import { ApiError } from './problem';
import { COST } from './cost';
import { drain, type Steps } from './scoring/steps';
import { englishCompanionOf, vectorSpaceOf, type SpaceManifest } from './projection';
import type { WordTranslation } from './responses';
import type { RowSource, VectorIndex } from './types';
import { VOCAB_FLAG } from './vocab-quality';

export type { WordTranslation };

/** Translations per word when the request sets no `limit` (at most LIMITS.translationsPerWord, core/limits.ts). */
export const TRANSLATION_LIMIT_DEFAULT = 5;

const LETTER = /\p{L}/u;

function invalid(path: string, message: string): ApiError {
  return new ApiError('VALIDATION_FAILED', message, { errors: [{ path, message }] });
}

/**
 * The model a translation from `sourceId` scans: `targetModelId`, else an aligned model's English
 * companion; an English model has no default (it is the companion of every model aligned to it).
 * 422 for a source without translations or a target that is the source.
 */
export function translationTarget(
  sourceId: string,
  source: Omit<SpaceManifest, 'id'> & { language: string },
  targetModelId?: string,
): string {
  const companion = englishCompanionOf(source);
  const targetId = targetModelId ?? companion ?? sourceId;
  if (!companion && source.language !== 'en')
    throw invalid('embeddingModelId', `Model '${sourceId}' is not aligned to English: it has no translations`);
  if (targetId === sourceId) {
    throw invalid(
      'targetModelId',
      targetModelId
        ? 'targetModelId must differ from the source model'
        : `On '${sourceId}' targetModelId is required (a model aligned to it)`,
    );
  }
  return targetId;
}

/** 422 unless the target lives in the source's vector space, with as many dimensions. */
export function checkSameSpace(
  sourceId: string,
  source: SpaceManifest,
  sourceDims: number,
  targetId: string,
  target: SpaceManifest,
  targetDims: number,
): void {
  if (vectorSpaceOf(target) !== vectorSpaceOf(source) || targetDims !== sourceDims)
    throw invalid('targetModelId', `Model '${targetId}' does not share the vector space of '${sourceId}'`);
}

/**
 * Nearest target words of each source word, best first (cosine similarity). Target entries
 * without a letter and phrase rows are skipped, and so is the word itself when source and target are one model.
 * A word the source does not know gets isAvailable false and no translations.
 */
export function translateWords(
  source: RowSource,
  target: VectorIndex,
  words: readonly string[],
  limit: number,
): WordTranslation[] {
  return drain(translateWordsSteps(source, target, words, limit));
}

/** translateWords in steps (core/scoring/steps.ts): one after each word's scan of the target. */
export function* translateWordsSteps(
  source: RowSource,
  target: VectorIndex,
  words: readonly string[],
  limit: number,
): Steps<WordTranslation[]> {
  if (source.dims !== target.dims) throw new RangeError(`source has ${source.dims} dimensions, target ${target.dims}`);
  // Extra candidates cover skipped entries (punctuation, the word itself, phrase rows: the
  // distilled English model's phrases crowd round their head word, "dog" -> "sled dog", ...).
  const k = Math.min(1000, Math.max(limit + 50, 5 * limit), target.size);
  // Every word's scan, made together by a row-sharded target's view.
  if (target.prefetchTopK) {
    const rows = words.map((w) => source.rowOf(w.trim())).filter((r) => r >= 0);
    target.prefetchTopK(
      rows.map((r) => source.vector(r)),
      k,
    );
  }
  const out: WordTranslation[] = [];
  for (const raw of words) {
    const word = raw.trim();
    const row = source.rowOf(word);
    if (row < 0) {
      out.push({ word: raw, isAvailable: false, translations: [] });
      continue;
    }
    const top = target.topK(source.vector(row), k);
    const translations: WordTranslation['translations'] = [];
    for (let i = 0; i < top.rows.length && translations.length < limit; i++) {
      const r = top.rows[i]!;
      if ((target as RowSource) === source && r === row) continue;
      const w = target.word(r);
      // A phrase row ("tap water" in the distilled English model) is not a word's translation.
      if (!LETTER.test(w) || target.flags(r) & VOCAB_FLAG.PHRASE) continue;
      translations.push({ word: w, similarity: Math.round(top.scores[i]! * 1e6) / 1e6 });
    }
    out.push({ word: raw, isAvailable: true, translations });
    yield COST.vocabularyScan;
  }
  return out;
}
