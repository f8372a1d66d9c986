/** Runtime-agnostic plagiarism text logic: word splitting, fingerprints, run verification, snippets. */
export * from './text';
export * from './fingerprint';
export * from './match';
