/** The full-form lexicon lookup the German and French lemma rules share (lemma-de.ts, lemma-fr.ts). */
import { FLAG, type LanguageData } from './data';

/** Lemma by the full-form lexicon (de, fr): exact case first, then lower case. */
export function lemmaLexicon(data: LanguageData, candidates: string[], nounContext: boolean): string | null {
  for (const c of candidates) {
    const i = data.find(c);
    if (i < 0) continue;
    if (nounContext) {
      const n = data.nounLemmaOf(i);
      if (n) return n;
    }
    const l = data.lemmaOf(i);
    if (l) return l;
    if (data.flagsOf(i) & FLAG.KNOWN) return c;
  }
  return null;
}
