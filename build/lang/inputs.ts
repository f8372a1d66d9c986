/**
 * Where the language builders read their inputs: pinned npm packages (devDependencies, read from
 * node_modules) and two optional Debian packages (fetched by the ensure step, build/lang-data.ts,
 * through build/debian.ts, and handed to the builder as DebianInputs). Each input is named in the
 * language file's meta.sources with its version and licence.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import type { LanguageMeta } from '../../core/tokenizer/format';
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

/** The pinned Debian thesauri (their versions are part of the stamp), with what goes without them. */
export const DEBIAN = {
  openthesaurus: {
    pkg: 'openthesaurus-de-text',
    version: '20160424-4',
    file: 'usr/share/openthesaurus-de/openthesaurus.txt',
    what: 'German synonyms',
  },
  mythes: { pkg: 'mythes-fr', version: '1:7.5.0-1', file: 'usr/share/mythes/thes_fr.dat', what: 'French synonyms' },
} as const;

export type DebianItem = keyof typeof DEBIAN;

/**
 * The Debian data of one language build: per item, the unpacked file, or null where this build
 * goes without it (its language then has no synonyms from it).
 */
export class DebianInputs {
  constructor(private readonly files: ReadonlyMap<DebianItem, string | null>) {}

  /** The text of a Debian data file, or '' when this build goes without it. */
  text(which: DebianItem): string {
    const file = this.files.get(which);
    return file ? fs.readFileSync(file, 'utf8') : '';
  }

  /** The source entry of a Debian package, or none when this build went without it. */
  source(which: DebianItem, license: string, use: string): Source[] {
    if (!this.files.get(which)) return [];
    return [{ name: `debian:${DEBIAN[which].pkg}`, version: DEBIAN[which].version, license, use }];
  }
}

/** A thesaurus term without its annotations: "Wort (ugs.)" -> "Wort" (parentheses or brackets). */
export function cleanTerm(s: string): string {
  return s
    .replace(/\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}
