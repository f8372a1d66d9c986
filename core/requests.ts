/**
 * zod schemas of the requests that both the Worker (worker/http/openapi.ts, the routes) and the
 * browser's offline scorer (browser/src/scorer-worker.ts) validate: scoring, vocabulary and
 * tokenization. One definition, so both refuse a request with the same 422 VALIDATION_FAILED body.
 * Limits come from core/limits.ts (decisions.md "Limits").
 *
 * Plain zod: the OpenAPI metadata (component names, descriptions, examples) is attached through
 * `doc`. worker/http/openapi.ts passes @hono/zod-openapi's `.openapi()`, which generates the OpenAPI
 * document; the offline scorer only validates, passes nothing, and so does not bundle
 * @hono/zod-openapi (nor hono).
 */
import { z } from 'zod';
import { IDENTIFIER, IDENTIFIER_MESSAGE, LIMITS } from './limits';
import { maxCharacters, OFFSET_UNITS } from './offsets';

import { DEFAULT_REPRESENTATION, REPRESENTATIONS } from './scoring/representation';
import { FIND_LIMIT_DEFAULT } from './scoring/words';
import { DEFAULT_WORDRANK_LIMIT } from './vocab-quality';
import { SUPPORTED_LANGUAGES } from './tokenizer/languages';

export { IDENTIFIER, IDENTIFIER_MESSAGE };

/** An identifier schema: checked before anything is looked up in storage. */
export const identifier = () => z.string().regex(IDENTIFIER, IDENTIFIER_MESSAGE);

/** Top-level text-scores normalization: goalConfig's values plus batchZscore (statistics over the request's texts). */
export const TEXT_NORMALIZATIONS = ['none', 'zscore', 'percentile', 'batchZscore'] as const;

const NORMALIZATION_DOC =
  "none (default): raw scores. zscore: standardized over the model's 20,000 most frequent words, clipped to [-3, 3], divided by 3. percentile: position among those words, mapped to [-1, 1].";

/** OpenAPI metadata of a schema: its component name, or a description and example (and a component name as `ref`). */
export type SchemaDoc = string | { ref?: string; description?: string; example?: string | number };

/** Attaches SchemaDoc to a schema and returns the schema to use in its place. */
export type Documenter = <T extends z.ZodType>(schema: T, doc: SchemaDoc) => T;

/** The request schemas, documented with `doc` (by default not at all). */
export function requestSchemas(doc: Documenter = (schema) => schema) {
  const word = maxCharacters(LIMITS.wordCharacters);
  const offsetUnit = doc(z.enum(OFFSET_UNITS).optional(), {
    description:
      "Extension (default codePoint): the unit of the tokens' indexStart/indexEnd. codePoint: characters (Unicode code points, as Python indexes strings); utf16: UTF-16 code units (JavaScript, Java, C#); utf8: UTF-8 bytes (Go, Rust).",
  });
  const wordList = (description: string) => doc(z.array(word).max(LIMITS.seedOrWhitelistWords), { description });
  const modelId = doc(identifier(), { example: 'en-glove-6b-100d' });

  const DimensionSchema = doc(
    z.object({
      id: doc(z.number().int(), {
        description: 'Dimension id; repeated in goalConfig.dimensions[].id to weight it.',
        example: 1,
      }),
      type: doc(z.enum(['manual', 'dimension', 'axis']), {
        description:
          'manual: the centroid of `words`. dimension: `words` merged with the seeds stored for `id` (unknown id: 422 DIMENSION_NOT_FOUND). axis (extension, SemAxis): `words` is the positive pole and `oppositeWords` the negative pole.',
      }),
      words: wordList(
        'Seed words; a phrase ("ice cream") counts as one seed: the mean of its words\' unit vectors, re-normalized (unknown when any word is).',
      ).optional(),
      oppositeWords: wordList(
        'Negative pole of an `axis` dimension (only allowed for type axis); phrases allowed as in `words`.',
      ).optional(),
      name: doc(z.string().max(LIMITS.nameCharacters).optional(), {
        description: 'Display name (used as goalScoreFactors[].field).',
      }),
      expand: doc(z.number().int().min(0).max(LIMITS.expandMax).optional(), {
        description: `Extension (manual and dimension types; 422 for axis): add the N (0 to ${LIMITS.expandMax}) vocabulary words nearest to the seed centroid to the seeds, as Empath builds categories: among the ${DEFAULT_WORDRANK_LIMIT.toLocaleString('en-US')} most frequent words, containing a letter, dictionary words of the model's language, not stop words, not seeds. The query becomes unit(centroid(seeds) + centroid(added words)): the seeds keep half the weight. text-scores with explain: true lists them in explanation.dimensions[id].expandedWords.`,
        example: 10,
      }),
    }),
    'Dimension',
  );

  const weight = doc(z.number().int().min(-10).max(10), {
    description: 'Integer from -10 to 10: the direction and strength of the factor.',
  });

  const GoalConfigSchema = doc(
    z.object({
      modelRankScore: doc(z.number().min(-1).max(1).optional(), {
        description:
          'Weight of the intrinsic word-frequency factor (s = 2f - 1): -1 rewards infrequent words, 1 frequent ones.',
      }),
      dimensions: z
        .array(z.object({ id: z.number().int(), weight }))
        .max(LIMITS.dimensionsPerRequest)
        .optional(),
      mappers: z
        .array(z.object({ id: identifier(), weight }))
        .max(LIMITS.mapperKeysPerRequest)
        .optional(),
      normalization: doc(z.enum(['none', 'zscore', 'percentile']).optional(), { description: NORMALIZATION_DOC }),
    }),
    'GoalConfig',
  );

  const dimensions = z.array(DimensionSchema).max(LIMITS.dimensionsPerRequest).optional();
  const expansion = doc(z.enum(['nearest', 'contrastive']).optional(), {
    description:
      "Extension: how `expand` ranks the candidate words. nearest (default): by cos(seed centroid, w) - b . w, b the mean unit vector of the 20,000 most frequent words (a hubness correction). contrastive: by cos(seed centroid, w) - max(b . w, the word's cosine with the seed centroid of any other non-axis dimension of the request), so a dimension takes the words that are nearer to its own seeds than to the others' (with one such dimension it ranks as nearest). See docs/dimensions.md.",
  });
  const subwordFallback = doc(z.boolean().optional(), {
    description:
      'Extension (default false). true: a word outside the model\'s vocabulary that the request scores (a text\'s token with a letter that is not a stop word, a whitelist word, a matrix word) gets a vector composed of its character n-grams, learned to match the model, instead of being unknown (docs/api.md "Sub-word fallback"). Seeds and dimension words stay strict, as do word availabilities. A composed word has no frequency rank: its modelRank is vocabularySize + 1, its modelRankQuartile 4 and its frequency score 0; it has no mapper values and no vocabulary flags. Models without a sub-word table (the aligned models, en-glove-6b-100d) accept the option and compose no word.',
  });
  const mapperKeys = doc(z.array(identifier()).max(LIMITS.mapperKeysPerRequest).optional(), {
    description: "Mapper variable ids (bundle key + '_' + variable).",
  });

  const TextScoresRequestSchema = doc(
    z.object({
      texts: z.array(maxCharacters(LIMITS.charactersPerText)).max(LIMITS.textsPerRequest),
      embeddingModelId: modelId,
      goalConfig: GoalConfigSchema.optional(),
      dimensions,
      expansion,
      mapperKeys,
      normalization: doc(z.enum(TEXT_NORMALIZATIONS).optional(), {
        description: `Extension: normalization of dimensionScores and mapperScores (goalConfig.normalization applies to the goal factors only). ${NORMALIZATION_DOC} A dimension's statistics are those of its words' cosines with the dimension, a mapper's those of its word values. batchZscore: standardized over this request's texts that have the score (their mean and population std), clipped to [-3, 3], divided by 3 (0 when the std is 0, e.g. for a single text): how a text stands among the others of the batch, which removes what all of them share (see docs/dimensions.md).`,
      }),
      representation: doc(z.enum(REPRESENTATIONS).optional(), {
        description: `Extension: how a text's content tokens (in-vocabulary, non-stop) become its dimensionScores. meanCosine: the mean of the tokens' cosines with the dimension. meanVector: the cosine of the mean of the tokens' unit vectors. sif: the cosine of their mean weighted by smooth inverse frequency a/(a + p(w)) (Arora et al. 2017, a = 0.001, p from the model rank by Zipf's law). contentMean: the mean cosine over the content words only (dictionary words that are not proper nouns, acronyms, numbers or one/two-letter entries; a text without one falls back to all its tokens). Default: ${DEFAULT_REPRESENTATION} (chosen on a topic benchmark, see docs/dimensions.md). With composition rules and meanCosine the per-token cosines are composed (docs/text-scores.md); mapperScores follow composition.`,
      }),
      composition: doc(z.enum(['rules', 'mean']).optional(), {
        description:
          'Extension. rules (default): negators with scope, boosters and dampeners, contrast ("but"), all-caps and "!" emphasis, emoticons and emoji (VADER constants; docs/text-scores.md). mean: the plain mean over in-vocabulary non-stop tokens.',
        example: 'rules',
      }),
      subwordFallback,
      explain: doc(z.boolean().optional(), {
        description:
          'Extension. true: each data element gets `explanation`: per scored dimension and mapper at most 10 tokens ordered by |weight x (value - neutral)|, with offsets (in `offsetUnit`), composed value, weight and the rules applied (negated, intensified, downtoned, contrast, caps, exclamation, emoticon, emoji; mappers: lexicon or shrunk), and for expanded dimensions the added words (expandedWords).',
      }),
      offsetUnit,
    }),
    'TextScoresRequest',
  );

  const WordScoresRequestSchema = doc(
    z
      .object({
        seedWords: wordList(
          'Anchor words; their centroid defines the seed similarity. A phrase ("ice cream", "New York") is one seed: the mean of its words\' unit vectors, re-normalized; a phrase with an unknown word is unknown (ignored).',
        ),
        whitelistWords: wordList(
          'Words to score (whitelist mode), each returned as written (trimmed; a repeated word once, two forms of one word such as "café" and "cafe" both), looked up by the lookup rule (docs/vocabulary.md). Phrases allowed: returned as written, scored by their vector, modelRank of their least frequent word, mapper values the mean of their words\'.',
        ).optional(),
        embeddingModelId: modelId,
        limit: doc(z.number().int().optional(), {
          description: `Find-and-score mode: at most this many words, 1 to ${LIMITS.findLimitMax} (default ${FIND_LIMIT_DEFAULT}). Ignored, whatever integer it is, when whitelistWords is non-empty.`,
        }),
        wordrankLimit: doc(z.number().int().optional(), {
          description: `Find-and-score mode (ignored, whatever integer it is, when whitelistWords is non-empty), -1 or a positive integer: only the N most frequent words are eligible (default ${DEFAULT_WORDRANK_LIMIT}), and the default quality filter applies: no stop words, pronouns, auxiliaries, numbers, one- or two-letter entries or non-dictionary words, and candidates share a part of speech with the seeds where both are known (docs/vocabulary.md). -1: no rank cutoff and only stop words, pronouns and entries without a letter are skipped.`,
        }),
        excludeAntonyms: doc(z.boolean().optional(), {
          description:
            "Extension, find-and-score mode: skip the seeds' antonyms (WordNet antonym links: direct, between antonymous adjective clusters, and of derivationally related forms) and, of each antonym pair among the seeds' nearest words, the member on the other side of the seeds (by evaluative polarity, else along the axis from the seeds to their own antonyms): cozy loses cramped and dingy. Languages without antonym links: no effect. Default false (docs/vocabulary.md).",
        }),
        seedScore: doc(z.number().min(-1).max(1).nullable().optional(), {
          description: 'Weight of the seed similarity in goalScore; null (default) disables goal scores.',
        }),
        dimensions,
        expansion,
        mapperKeys,
        subwordFallback,
      })
      // The ranges apply in find-and-score mode only: whitelist mode ignores both, as the interface says.
      .superRefine((req, ctx) => {
        if (req.whitelistWords && req.whitelistWords.length > 0) return;
        if (req.limit !== undefined && (req.limit < 1 || req.limit > LIMITS.findLimitMax))
          ctx.addIssue({
            code: 'custom',
            path: ['limit'],
            message: `limit must be 1 to ${LIMITS.findLimitMax} in find-and-score mode`,
          });
        if (req.wordrankLimit !== undefined && (req.wordrankLimit < -1 || req.wordrankLimit === 0))
          ctx.addIssue({
            code: 'custom',
            path: ['wordrankLimit'],
            message: 'wordrankLimit must be -1 (no cutoff) or a positive integer',
          });
      }),
    'WordScoresRequest',
  );

  const AutocompleteRequestSchema = doc(
    z.object({
      word: doc(
        z
          .string()
          .min(1)
          .max(LIMITS.wordCharacters)
          .regex(/\S/, 'Expected at least one character other than white space'),
        {
          description:
            'Prefix to complete (trimmed; white space alone is a 422). Matching folds case and diacritics ("cafe" finds "café", "é" finds é and e); a leading capital is kept in the suggestions and puts proper nouns first. Stop words, pronouns, auxiliaries and modal verbs are never suggested. Order, best to worst in tiers (docs/vocabulary.md): with a leading capital proper nouns and acronyms first, then dictionary words most frequent first, an inflected form of a suggested lemma ranked as if five times rarer ("sus" -> suspect, suspension, sustainable before suspected; "soldie" -> soldier, soldiers); the typed word itself, when it is a word, among the first three; then frequent non-dictionary entries.',
          example: 'comp',
        },
      ),
      embeddingModelId: modelId,
      whitelistWords: wordList('When non-empty, only completions in this list.').optional(),
    }),
    'AutocompleteRequest',
  );

  const WordAvailabilitiesRequestSchema = doc(
    z.object({
      words: wordList('Words to check.'),
      whitelistWords: wordList('When non-empty, a word must also be in this list.').optional(),
    }),
    'WordAvailabilitiesRequest',
  );

  const SimilarityMatrixRequestSchema = doc(
    z.object({ words: z.array(word).max(LIMITS.similarityMatrixWords), subwordFallback }),
    'SimilarityMatrixRequest',
  );

  const TokenizationRequestSchema = doc(
    z.object({
      language: doc(z.string().min(1).max(LIMITS.languageCodeCharacters), {
        description: `ISO 639-1 code, case-insensitive (at most ${LIMITS.languageCodeCharacters} characters). Supported: ${SUPPORTED_LANGUAGES.join(', ')}.`,
        example: 'en',
      }),
      text: doc(maxCharacters(LIMITS.charactersPerText), {
        description: `The text, at most ${LIMITS.charactersPerText} characters (Unicode code points); longer: 422 VALIDATION_FAILED.`,
        example: "The children don't like rainy days.",
      }),
      offsetUnit,
    }),
    'TokenizationRequest',
  );

  return {
    TextScoresRequestSchema,
    WordScoresRequestSchema,
    AutocompleteRequestSchema,
    WordAvailabilitiesRequestSchema,
    SimilarityMatrixRequestSchema,
    TokenizationRequestSchema,
  };
}

type Requests = ReturnType<typeof requestSchemas>;

// The request types the engine and the scorers accept (validated bodies), derived from the schemas.
export type TextScoresRequest = z.infer<Requests['TextScoresRequestSchema']>;
export type WordScoresRequest = z.infer<Requests['WordScoresRequestSchema']>;
export type AutocompleteRequest = z.infer<Requests['AutocompleteRequestSchema']>;
export type WordAvailabilitiesRequest = z.infer<Requests['WordAvailabilitiesRequestSchema']>;
export type SimilarityMatrixRequest = z.infer<Requests['SimilarityMatrixRequestSchema']>;
export type TokenizationRequest = z.infer<Requests['TokenizationRequestSchema']>;
/** A dimension of a request (`dimensions[]`). */
export type DimensionRequest = NonNullable<TextScoresRequest['dimensions']>[number];
export type DimensionType = DimensionRequest['type'];
export type GoalConfig = NonNullable<TextScoresRequest['goalConfig']>;
export type Normalization = NonNullable<GoalConfig['normalization']>;
export type TextNormalization = (typeof TEXT_NORMALIZATIONS)[number];
