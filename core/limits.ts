import { MAX_K } from './kernels';

/** Request limits of decisions.md ("Limits (defaults, configurable)"). */
export const LIMITS = {
  textsPerRequest: 100,
  charactersPerText: 100_000,
  seedOrWhitelistWords: 10_000,
  similarityMatrixWords: 500,
  bodyBytes: 2 * 1024 * 1024,
  catalogPageSize: 100,
  listPageSize: 200,
  /** Find-and-score mode's `limit`: at most the kernels' top-k (default: core FIND_LIMIT_DEFAULT). */
  findLimitMax: MAX_K,
  autocompleteSuggestions: 10,
} as const;
