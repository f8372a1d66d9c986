/**
 * Which Debian-sourced data this machine built (build/debian.ts): de/fr synonyms, the pattern
 * mapper lexicon, the aligned de/fr/ja models. Without apt-get (macOS, not root) the build skips
 * them with one line each, and the tests that need them are skipped with one line each too
 * (`needs`), so `npm test` passes on such a machine and still says what it did not check.
 * Node side only (node and e2e projects); workerd tests ask the FIXTURES binding instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseLanguageData } from '../../core/tokenizer';
import { GENERATED } from '../../build/wrangler';
import { DEFAULT_MODEL_ID } from '../../build/default-model';
import { ALIGNED } from '../../build/aligned-specs';

export type OptionalData = 'de-synonyms' | 'fr-synonyms' | 'pattern-mapper' | 'de-model' | 'fr-model' | 'ja-model';

const ALIGNED_MODEL = { 'de-model': 'de', 'fr-model': 'fr', 'ja-model': 'ja' } as const;

function hasSynonymsFromDebian(lang: 'de' | 'fr'): boolean {
  const file = path.join(GENERATED, 'lang', `${lang}.bin`);
  if (!fs.existsSync(file)) return false;
  return parseLanguageData(fs.readFileSync(file)).meta.sources.some((s) => s.name.startsWith('debian:'));
}

const cache = new Map<OptionalData, boolean>();
const said = new Set<string>();

/** Whether the optional data was built here (read from the generated files, cached per run). */
export function hasOptionalData(what: OptionalData): boolean {
  let known = cache.get(what);
  if (known === undefined) {
    if (what === 'de-synonyms' || what === 'fr-synonyms')
      known = hasSynonymsFromDebian(what === 'de-synonyms' ? 'de' : 'fr');
    else if (what === 'pattern-mapper')
      known = fs.existsSync(path.join(GENERATED, 'mappers', DEFAULT_MODEL_ID, 'pattern.bin'));
    // The language's default aligned model (the one the tests score with).
    else known = fs.existsSync(path.join(GENERATED, 'models', `${ALIGNED[ALIGNED_MODEL[what]].id}.emb`));
    cache.set(what, known);
  }
  return known;
}

/**
 * True when every listed piece was built; otherwise prints (once per check) the one line saying which check is
 * skipped and why, and returns false (use with `it.skipIf(!needs(...))` or to drop a part).
 */
export function needs(check: string, ...what: OptionalData[]): boolean {
  const missing = what.filter((w) => !hasOptionalData(w));
  if (missing.length === 0) return true;
  if (said.has(check)) return false;
  said.add(check);
  console.warn(
    `[tests] skipped "${check}": needs ${missing.join(', ')} (Debian data, not built on this machine; see build/debian.ts)`,
  );
  return false;
}
