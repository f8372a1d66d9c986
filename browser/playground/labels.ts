/**
 * Plain names for the API's keys (mapper variables, goal factors, languages): the page shows
 * these; the keys themselves stay in the JSON view and in each label's tooltip.
 */

export interface MapperLabel {
  name: string;
  /** The scale of the mapper's score, in words. */
  scale: string;
}

/** The mapper variables of the service's bundles (build/mapper/lexicons.ts). */
const MAPPERS: ReadonlyMap<string, MapperLabel> = new Map([
  ['sentiment_valence', { name: 'Sentiment (VADER)', scale: '−1 negative … +1 positive' }],
  ['afinn_valence', { name: 'Sentiment (AFINN)', scale: '−1 negative … +1 positive' }],
  ['pattern_polarity', { name: 'Positive or negative (pattern)', scale: '−1 negative … +1 positive' }],
  ['pattern_subjectivity', { name: 'Opinion or fact (pattern)', scale: '0 factual … 1 opinion' }],
  ['pattern_intensity', { name: 'Strength of wording (pattern)', scale: '0 plain … 1 strong' }],
]);

/** A mapper variable's plain name and scale; an unknown one by its bundle's label and variable. */
export function mapperLabel(key: string, option?: { bundleLabel: string; variable: string }): MapperLabel {
  const known = MAPPERS.get(key);
  if (known) return known;
  return { name: option ? `${option.bundleLabel}: ${option.variable}` : key, scale: '' };
}

/** The goal factor `modelRank` (the text's word frequency). */
export const COMMON_WORDS = 'Common words';

/** "English" for "en" (the catalog's own labels, core/labels.ts); the code itself when none is known. */
export { languageLabel as languageName } from '../../core/labels';

/** "43 MB". */
export const megabytes = (bytes: number): string => `${Math.max(1, Math.round(bytes / 1e6))} MB`;
