/**
 * Well-formed Unicode strings. A JSON string may hold a lone UTF-16 surrogate ("\ud800"), which
 * JSON.parse and zod's string checks accept; D1 stores it as bytes that are not UTF-8 and reads
 * it back as U+FFFD, so a stored key no longer equals the one that was written. Request fields
 * that are stored are refused with 422 VALIDATION_FAILED instead (zod `.refine(isWellFormed, …)`).
 */

/** Message of the field-level validation error. */
export const ILL_FORMED_MESSAGE = 'Must be well-formed Unicode (no lone UTF-16 surrogates)';

/** String.prototype.isWellFormed (ES2024; the project's TypeScript lib is ES2023). */
export function isWellFormed(s: string): boolean {
  return (s as string & { isWellFormed(): boolean }).isWellFormed();
}
