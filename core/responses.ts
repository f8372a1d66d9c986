/**
 * zod schemas of the answers of the scoring, vocabulary and tokenization endpoints, next to their requests
 * (core/requests.ts): the Worker documents them in the OpenAPI document (worker/http/openapi.ts
 * passes @hono/zod-openapi's `.openapi()` as `doc`), and the TypeScript types the engine and the
 * scorers return are derived from them with `z.infer` (core/scoring/types.ts), so a field is
 * declared once.
 */
import { z } from 'zod';
import { LIMITS } from './limits';
import type { Documenter } from './requests';
import { SUPPORTED_LANGUAGES } from './tokenizer/languages';

/** The response schemas, documented with `doc` (by default not at all). */
export function responseSchemas(doc: Documenter = (schema) => schema) {
  const scoreMap = z.record(z.string(), z.number());

  const GoalScoreFactorSchema = doc(
    z.object({
      field: z.string(),
      value: z.number(),
      type: z.enum(['dimension', 'mapper', 'intrinsic']),
      id: doc(z.string(), { description: 'Extension: dimension id as string, mapper id, or modelRank.' }),
    }),
    'GoalScoreFactor',
  );

  const ExplainedTokenSchema = doc(
    z.object({
      string: z.string(),
      token: z.string(),
      indexStart: z.number().int(),
      indexEnd: z.number().int(),
      value: doc(z.number(), { description: "The token's composed value on the factor's scale." }),
      weight: doc(z.number(), { description: 'Its weight in the weighted mean (contrast: 0.5 before, 1.5 after).' }),
      rules: doc(z.array(z.string()), {
        description:
          'negated, intensified, downtoned, contrast, caps, exclamation, emoticon, emoji; mappers: lexicon or shrunk.',
      }),
    }),
    'ExplainedToken',
  );

  const ExplanationSchema = doc(
    z.object({
      dimensions: z.record(
        z.string(),
        z.object({ tokens: z.array(ExplainedTokenSchema), expandedWords: z.array(z.string()).optional() }),
      ),
      mappers: z.record(z.string(), z.object({ tokens: z.array(ExplainedTokenSchema) })),
    }),
    {
      ref: 'Explanation',
      description:
        'Extension (explain: true): per dimension id and mapper id at most 10 tokens by |weight x (value - neutral)|; expandedWords: the words `expand` added to the seeds, best first.',
    },
  );

  const LanguageMismatchSchema = doc(
    z.object({
      modelLanguage: doc(z.enum(SUPPORTED_LANGUAGES), { description: "The model's language." }),
      detectedLanguage: doc(z.enum(SUPPORTED_LANGUAGES), { description: 'The language the text looks like.' }),
      evidence: doc(z.enum(['script', 'stop-words']), {
        description:
          'script: kana/kanji against Latin letters (a ja model given Latin-script text, or an en/de/fr model given mostly kana and kanji); stop-words: frequent function words of another Latin-script language.',
      }),
    }),
    {
      ref: 'LanguageMismatch',
      description:
        'Extension: present only when the text looks like another language than the model\'s (docs/text-scores.md "Language mismatch"). It never changes a score.',
    },
  );

  const ScoredTextSchema = doc(
    z.object({
      modelRankScore: doc(z.number().nullable(), {
        description: 'The mean frequency score over the in-vocabulary tokens; null when the text has none.',
      }),
      goalScoreFactors: z.array(GoalScoreFactorSchema),
      dimensionScores: scoreMap,
      mapperScores: scoreMap,
      goalScore: doc(z.number().nullable().optional(), {
        description:
          'Present only when goalConfig was sent: the weighted mean of the factors with a score; null when no factor has one for this text or every weight is 0.',
      }),
      explanation: ExplanationSchema.optional(),
      languageMismatch: LanguageMismatchSchema.optional(),
    }),
    'ScoredText',
  );

  const TextScoresResponseSchema = doc(z.object({ data: z.array(ScoredTextSchema) }), 'TextScoresResponse');

  const ScoredWordSchema = doc(
    z.object({
      word: z.string(),
      seedScore: z.number().nullable(),
      modelRank: z.number().int(),
      seedScoreQuartile: z.number().int(),
      modelRankQuartile: z.number().int(),
      dimensionScores: scoreMap,
      mapperScores: scoreMap,
      goalScore: z.number().nullable(),
      composed: doc(z.literal(true).optional(), {
        description:
          'Extension (subwordFallback): present and true when the word is outside the vocabulary and its vector was composed of sub-word pieces; its modelRank is then vocabularySize + 1 and its modelRankQuartile 4.',
      }),
    }),
    'ScoredWord',
  );

  const WordScoresAveragesSchema = z.object({
    modelRankScore: z.number().nullable(),
    seedScore: z.number().nullable(),
    dimensionScores: scoreMap,
    mapperScores: scoreMap,
    goalScore: z.number().nullable(),
  });

  const WordScoresResponseSchema = doc(
    z.object({ data: z.array(ScoredWordSchema), averages: WordScoresAveragesSchema }),
    'WordScoresResponse',
  );

  const AutocompleteResponseSchema = doc(
    z.object({ suggestions: z.array(z.string()).max(LIMITS.autocompleteSuggestions) }),
    'AutocompleteResponse',
  );

  const WordAvailabilitiesResponseSchema = doc(
    z.object({ availabilities: z.array(z.object({ word: z.string(), isAvailable: z.boolean() })) }),
    'WordAvailabilitiesResponse',
  );

  const SimilarityMatrixResponseSchema = doc(
    z.object({
      words: z.array(z.string()),
      matrix: z.array(z.array(z.number())),
      composedWords: doc(z.array(z.string()).optional(), {
        description:
          'Extension, present with subwordFallback: true: the words of `words` whose vectors were composed of sub-word pieces (empty when none was, e.g. on a model without a sub-word table).',
      }),
    }),
    'SimilarityMatrixResponse',
  );

  const WordTranslationSchema = z.object({
    word: z.string(),
    isAvailable: z.boolean(),
    translations: z.array(z.object({ word: z.string(), similarity: z.number() })),
  });

  const WordTranslationsResponseSchema = doc(
    z.object({ sourceModelId: z.string(), targetModelId: z.string(), data: z.array(WordTranslationSchema) }),
    'WordTranslationsResponse',
  );

  const TokenSchema = doc(
    z.object({
      string: doc(z.string(), {
        description: 'The text between indexStart and indexEnd, as written (in Python, text[indexStart:indexEnd]).',
      }),
      token: doc(z.string(), {
        description: 'Lemma in lower case (German nouns keep their capital); for ja the string itself.',
      }),
      indexStart: doc(z.number().int(), {
        description:
          "Zero-based offset in characters (Unicode code points) by default, or in the request's offsetUnit (utf16: JavaScript string index; utf8: bytes).",
      }),
      indexEnd: doc(z.number().int(), { description: 'Exclusive end offset, in the same unit.' }),
      isStop: z.boolean(),
      synonyms: doc(z.array(z.string()), {
        description: 'At most 10, deduplicated, without the token itself; [] when none.',
      }),
    }),
    'Token',
  );

  const TokenizationResponseSchema = doc(
    z.object({ tokenCount: z.number().int(), tokens: z.array(TokenSchema) }),
    'Tokenization',
  );

  return {
    GoalScoreFactorSchema,
    ExplainedTokenSchema,
    ExplanationSchema,
    LanguageMismatchSchema,
    ScoredTextSchema,
    TextScoresResponseSchema,
    ScoredWordSchema,
    WordScoresAveragesSchema,
    WordScoresResponseSchema,
    AutocompleteResponseSchema,
    WordAvailabilitiesResponseSchema,
    SimilarityMatrixResponseSchema,
    WordTranslationSchema,
    WordTranslationsResponseSchema,
    TokenSchema,
    TokenizationResponseSchema,
  };
}

type Responses = ReturnType<typeof responseSchemas>;

export type GoalScoreFactor = z.infer<Responses['GoalScoreFactorSchema']>;
/** A token (or emoticon/emoji) that contributed to a factor: its composed value, its weight in the mean and the rules applied. */
export type ExplainedToken = z.infer<Responses['ExplainedTokenSchema']>;
/** Per scored factor (request `explain: true`): at most 10 tokens by |weight * (value - neutral)|, and a dimension's expanded seed words. */
export type Explanation = z.infer<Responses['ExplanationSchema']>;
/** Extension of a scored text: it looks like another language than the model's (core/scoring/language-mismatch.ts). */
export type LanguageMismatch = z.infer<Responses['LanguageMismatchSchema']>;
export type ScoredText = z.infer<Responses['ScoredTextSchema']>;
export type TextScoresResponse = z.infer<Responses['TextScoresResponseSchema']>;
export type ScoredWord = z.infer<Responses['ScoredWordSchema']>;
export type WordScoresAverages = z.infer<Responses['WordScoresAveragesSchema']>;
export type WordScoresResponse = z.infer<Responses['WordScoresResponseSchema']>;
export type AutocompleteResponse = z.infer<Responses['AutocompleteResponseSchema']>;
export type WordAvailabilitiesResponse = z.infer<Responses['WordAvailabilitiesResponseSchema']>;
export type SimilarityMatrixResponse = z.infer<Responses['SimilarityMatrixResponseSchema']>;
export type WordTranslation = z.infer<Responses['WordTranslationSchema']>;
export type WordTranslationsResponse = z.infer<Responses['WordTranslationsResponseSchema']>;
export type Token = z.infer<Responses['TokenSchema']>;
export type Tokenization = z.infer<Responses['TokenizationResponseSchema']>;
