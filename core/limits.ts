/**
 * Every limit of the contract in one place: what a request may hold, what an answer holds at
 * most, and how long the service keeps what a client can rely on. Request schemas (core/requests.ts,
 * worker/http/openapi.ts, the feature folders' schemas), the scorers and the docs read them here.
 * Sections cited: service-interface.md (SI) and decisions.md (D) of docs/spec/.
 * Internal sizes (caches, memory budgets, storage timeouts) stay next to the code they tune.
 */
import { MAX_K } from './kernels';

export const LIMITS = {
  // Scoring and vocabulary requests (D "Limits (defaults, configurable)").
  /** texts[] of text-scores. */
  textsPerRequest: 100,
  /** Characters (JavaScript string length) of one text (text-scores, tokenizations). */
  charactersPerText: 100_000,
  /** seedWords, whitelistWords, words (availabilities), dimension words and stored dimension words. */
  seedOrWhitelistWords: 10_000,
  /** words of word-similarity-matrices. */
  similarityMatrixWords: 500,
  /** Request body (413 PAYLOAD_TOO_LARGE). */
  bodyBytes: 2 * 1024 * 1024,
  /** Extension: a request body that sends no byte for this long is refused (408 REQUEST_TIMEOUT; docs/api.md). */
  bodyIdleTimeoutMs: 10_000,
  /** Extension: a request body not complete this long after the request arrived is refused (408 REQUEST_TIMEOUT). */
  bodyReadTimeoutMs: 30_000,
  /** Characters of one word, seed or phrase in a request. */
  wordCharacters: 1000,
  /** Characters of an identifier: model ids, mapper keys (D "Identifiers, bodies and cost"). */
  identifierCharacters: 128,
  /** Characters of a workspace id (path and token claim). */
  workspaceIdCharacters: 64,
  /** Characters of a language code in a request (tokenizations; the longest BCP 47 tag RFC 5646 asks to support). */
  languageCodeCharacters: 35,
  /** Characters of a display name (dimension names). */
  nameCharacters: 200,
  /** dimensions[] and goalConfig.dimensions[] of a request. */
  dimensionsPerRequest: 100,
  /** mapperKeys[] and goalConfig.mappers[] of a request. */
  mapperKeysPerRequest: 100,
  /** Find-and-score mode's `limit`: at most the kernels' top-k (default: core FIND_LIMIT_DEFAULT; SI word-scores). */
  findLimitMax: MAX_K,
  /** Extension: a dimension's `expand` (nearest vocabulary words added to its seeds; docs/dimensions.md). */
  expandMax: 50,
  /** Extension: words of one word-translations request (each is one scan of the target model; docs/multilingual.md). */
  translationWords: 100,
  /** Extension: translations per word (`limit` of word-translations). */
  translationsPerWord: 50,

  // Answers (SI "Limits").
  /** Suggestions of autocomplete-suggestions. */
  autocompleteSuggestions: 10,
  /** Synonyms of one token (tokenizations; D "Vocabulary quality"). */
  synonymsPerToken: 10,
  /** Extension: tokens per factor in a text's explanation (explain: true; docs/text-scores.md). */
  explainedTokens: 10,

  // Lists (SI "Limits": page size maximum).
  /** embedding-models and mappers pages. */
  catalogPageSize: 100,
  /** Other list endpoints ("typically 200"). */
  listPageSize: 200,

  // Stored dimensions (admin).
  /** Characters of a stored dimension's description. */
  dimensionDescriptionCharacters: 2000,

  // Plagiarism (SI "Limits", D "Plagiarism").
  /** Words of a checked text after punctuation stripping (fewer: plagiarismTextTooShort). */
  plagiarismMinWords: 15,
  /** Pages of one batch ingestion request (JSON lines, all or nothing). */
  plagiarismBatchPages: 1000,
  /** Characters of a reference page URL (its identity, and so of a page ref in a path). */
  plagiarismUrlCharacters: 2048,
  /** Characters of a reference page title. */
  plagiarismTitleCharacters: 1000,

  // Quotas and workspaces (admin; D "Quotas and usage").
  /** Largest amount an admin can set or add in one call (keeps every sum an exact JS integer). */
  quotaAmountMax: 1_000_000_000_000,
  /** Characters of a usage type key. */
  usageTypeKeyCharacters: 64,
  /** Characters of a workspace name. */
  workspaceNameCharacters: 200,
  /** Quotas set with one created workspace. */
  quotasPerWorkspace: 100,
  /** Characters of a bonus' reason. */
  bonusReasonCharacters: 500,

  // Idempotency (D "Idempotency").
  /** An Idempotency-Key record is kept (and replayed) for 24 hours. */
  idempotencyKeyTtlMs: 24 * 3600 * 1000,
} as const;

/** An identifier: letters, digits, `.`, `_`, `-`, starting with a letter or digit, at most 128 characters. */
export const IDENTIFIER = new RegExp(`^[A-Za-z0-9][A-Za-z0-9._-]{0,${LIMITS.identifierCharacters - 1}}$`);
export const IDENTIFIER_MESSAGE = `Letters, digits, . _ - (1 to ${LIMITS.identifierCharacters} characters, starting with a letter or digit)`;
