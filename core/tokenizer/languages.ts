/** Languages the tokenizer supports (ISO 639-1). */
export const SUPPORTED_LANGUAGES = ['en', 'de', 'fr', 'ja'] as const;
export type Language = (typeof SUPPORTED_LANGUAGES)[number];

/** Case-insensitive language code ("EN", " en ") -> supported code, or null. */
export function normalizeLanguage(code: string): Language | null {
  const c = code.trim().toLowerCase();
  return (SUPPORTED_LANGUAGES as readonly string[]).includes(c) ? (c as Language) : null;
}
