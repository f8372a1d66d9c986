/** Request limits of decisions.md ("Limits (defaults, configurable)"). */
export const LIMITS = {
  textsPerRequest: 100,
  charactersPerText: 100_000,
  seedOrWhitelistWords: 10_000,
  similarityMatrixWords: 500,
  bodyBytes: 2 * 1024 * 1024,
  catalogPageSize: 100,
  listPageSize: 200,
  findLimitDefault: 100,
  findLimitMax: 1000,
  autocompleteSuggestions: 10,
} as const;
