/**
 * French lemmas: Lefff full-form lexicon (verbs first, frequent verbs win ties, e.g. suis -> être);
 * after a determiner the noun/adjective reading wins (l'été -> été).
 */
import type { LanguageData } from './data';
import { lemmaLexicon } from './lemma-lexicon';

export const FR_DETERMINERS = new Set([
  'le',
  'la',
  "l'",
  'les',
  'un',
  'une',
  'des',
  'du',
  'au',
  'aux',
  'ce',
  'cet',
  'cette',
  'ces',
  'mon',
  'ma',
  'mes',
  'ton',
  'ta',
  'tes',
  'son',
  'sa',
  'ses',
  'notre',
  'nos',
  'votre',
  'vos',
  'leur',
  'leurs',
  'chaque',
  'quelques',
  "d'",
  'de',
]);
export const FR_ADJ_CONTEXT = new Set(['très', 'si', 'trop', 'plus', 'moins', 'assez', 'aussi', 'bien']);

// Contexts of a French token (bits of its context index): after a determiner, "s'" before il/ils.
export const CTX_FR_NOUN = 1;
export const CTX_FR_S_IL = 2;

/** The lemma of a French form (lower-cased, apostrophes normalized) in its context. */
export function lemmaFr(data: LanguageData, lower: string, ctx: number): string {
  // s' before il/ils is the conjunction si ("s'il"), otherwise the pronoun se.
  return ctx & CTX_FR_S_IL && lower === "s'" ? 'si' : (lemmaLexicon(data, [lower], (ctx & CTX_FR_NOUN) !== 0) ?? lower);
}
