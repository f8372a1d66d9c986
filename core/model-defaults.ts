/**
 * The model a language is served by when a client names none (the playground's language switch,
 * the docs' examples): the default English model and the models of German, French and Japanese
 * projected onto it (build/aligned-specs.ts builds them; test/node/model-defaults.test.ts checks
 * that the two agree). Earlier models stay in the catalog under their own ids.
 */
const DEFAULT_MODELS: ReadonlyMap<string, string> = new Map([
  ['en', 'en-distilled-glove-use-100d'],
  ['de', 'de-aligned-distilled-100d'],
  ['fr', 'fr-aligned-distilled-100d'],
  ['ja', 'ja-aligned-distilled-100d'],
]);

/** The default model id of a language (ISO 639-1), or undefined for a language without one. */
export function defaultModelOf(language: string): string | undefined {
  return DEFAULT_MODELS.get(language);
}

/** The languages with a default model, and their models. */
export function defaultModels(): Array<[language: string, modelId: string]> {
  return [...DEFAULT_MODELS];
}
