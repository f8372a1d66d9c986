/**
 * English display labels for catalog entries: language (ISO 639-1), country (ISO 3166-1
 * alpha-2) and month names. Uses Intl.DisplayNames where the runtime has it (Node with ICU,
 * workerd, browsers) and a small table otherwise.
 */

const LANGUAGES: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
  en: 'English',
  de: 'German',
  fr: 'French',
  es: 'Spanish',
  it: 'Italian',
  pt: 'Portuguese',
  nl: 'Dutch',
  ja: 'Japanese',
  zh: 'Chinese',
  ko: 'Korean',
  ru: 'Russian',
  pl: 'Polish',
  sv: 'Swedish',
  da: 'Danish',
  fi: 'Finnish',
  no: 'Norwegian',
  nb: 'Norwegian Bokmål',
  tr: 'Turkish',
  ar: 'Arabic',
  hi: 'Hindi',
  cs: 'Czech',
});

const COUNTRIES: Record<string, string> = Object.assign(Object.create(null) as Record<string, string>, {
  US: 'United States',
  GB: 'United Kingdom',
  DE: 'Germany',
  AT: 'Austria',
  CH: 'Switzerland',
  FR: 'France',
  ES: 'Spain',
  IT: 'Italy',
  PT: 'Portugal',
  BR: 'Brazil',
  NL: 'Netherlands',
  JP: 'Japan',
  CN: 'China',
  KR: 'South Korea',
  RU: 'Russia',
  PL: 'Poland',
  SE: 'Sweden',
  DK: 'Denmark',
  FI: 'Finland',
  NO: 'Norway',
  TR: 'Türkiye',
  IN: 'India',
  CA: 'Canada',
  AU: 'Australia',
  IE: 'Ireland',
  MX: 'Mexico',
  BE: 'Belgium',
});

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

function display(type: 'language' | 'region', code: string): string | undefined {
  try {
    if (typeof Intl !== 'undefined' && 'DisplayNames' in Intl) {
      const name = new Intl.DisplayNames(['en'], { type, fallback: 'none' }).of(code);
      if (name && name !== code) return name;
    }
  } catch {
    // invalid code or no ICU data: use the table
  }
  return undefined;
}

export function languageLabel(code: string): string {
  const c = code.toLowerCase();
  return display('language', c) ?? LANGUAGES[c] ?? code;
}

export function countryLabel(code: string): string {
  const c = code.toUpperCase();
  return display('region', c) ?? COUNTRIES[c] ?? code;
}

/** "08" -> "August"; "" or out of range -> "". */
export function monthLabel(month: string): string {
  const m = Number(month);
  return Number.isInteger(m) && m >= 1 && m <= 12 ? MONTHS[m - 1]! : '';
}

/** The catalog labels of a model: label = "English (United States), August 2014". */
export function modelLabels(
  language: string,
  country: string,
  trainingYear: string,
  trainingMonth: string,
): {
  label: string;
  languageLabel: string;
  countryLabel: string;
  monthLabel: string;
} {
  const lang = languageLabel(language);
  const ctry = countryLabel(country);
  const month = monthLabel(trainingMonth);
  const date = [month, trainingYear].filter(Boolean).join(' ');
  return {
    label: `${lang} (${ctry})${date ? `, ${date}` : ''}`,
    languageLabel: lang,
    countryLabel: ctry,
    monthLabel: month,
  };
}
