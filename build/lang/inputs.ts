/**
 * Where the language builders read their inputs: pinned npm packages (devDependencies, read from
 * node_modules) and two optional Debian packages (build/debian.ts: downloaded and unpacked into a
 * temp dir, skipped with one line where apt cannot provide them). Each input is named in the
 * language file's meta.sources with its version and licence.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { LanguageMeta } from '../../core/tokenizer/format';
import { fetchDebianFile } from '../debian';
import { ROOT } from '../paths';

export type Source = LanguageMeta['sources'][number];

const require = createRequire(import.meta.url);

export function pkgVersion(name: string): string {
  return (
    JSON.parse(fs.readFileSync(path.join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
  ).version;
}

/** A file of an installed package; a clear error when the package is missing. */
export function pkgFile(name: string, rel: string): string {
  const file = path.join(ROOT, 'node_modules', name, rel);
  if (!fs.existsSync(file)) throw new Error(`[lang-data] missing ${file}: run npm install (devDependency ${name})`);
  return file;
}

/** A package's JSON or CommonJS file, loaded with require. */
export function pkgRequire<T>(name: string, rel: string): T {
  return require(pkgFile(name, rel)) as T;
}

export function npmSource(name: string, license: string, use: string): Source {
  return { name: `npm:${name}`, version: pkgVersion(name), license, use };
}

/** The stop words of stopwords-iso for a language (de, fr and ja use them). */
export function isoStopWords(language: string): string[] {
  return pkgRequire<Record<string, string[]>>('stopwords-iso', 'stopwords-iso.json')[language];
}

/** The pinned Debian thesauri (their versions are part of the stamp). */
export const DEBIAN = {
  openthesaurus: {
    pkg: 'openthesaurus-de-text',
    version: '20160424-4',
    file: 'usr/share/openthesaurus-de/openthesaurus.txt',
  },
  mythes: { pkg: 'mythes-fr', version: '1:7.5.0-1', file: 'usr/share/mythes/thes_fr.dat' },
} as const;

/** Debian data that could not be had in this build (its language then has no synonyms from it). */
const skippedDebian = new Set<keyof typeof DEBIAN>();

/** The text of a Debian data file, or '' (after one clear line) when apt cannot provide it. */
export function debianText(which: keyof typeof DEBIAN, tmp: string, what: string): string {
  const file = fetchDebianFile(DEBIAN[which], tmp, what);
  if (file === null) {
    skippedDebian.add(which);
    return '';
  }
  return fs.readFileSync(file, 'utf8');
}

/** The source entry of a Debian package, or none when this build skipped it. */
export function debSource(which: keyof typeof DEBIAN, license: string, use: string): Source[] {
  if (skippedDebian.has(which)) return [];
  return [{ name: `debian:${DEBIAN[which].pkg}`, version: DEBIAN[which].version, license, use }];
}

/** A thesaurus term without its annotations: "Wort (ugs.)" -> "Wort" (parentheses or brackets). */
export function cleanTerm(s: string): string {
  return s
    .replace(/\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
