/**
 * Dictionary projection: a foreign word's vector is the normalised, weighted sum of its
 * translations' unit vectors in a source space (the English model, or an already projected
 * model such as German for French), so the result lives in the source's coordinates.
 *
 *   v(word) = normalize( sum_t w(t) * u(t) ),   w(t) = ln((N + 1) / rank(t))
 *
 * u(t) is the unit vector of translation t; N the size of the source space and rank(t) its
 * 1-based frequency rank there (frequent translations weigh more: a measured improvement over
 * uniform, position and first-only weighting). A multi-word translation ("eel spear") is the
 * normalised mean of its content words' unit vectors, with the rank of its rarest word; they
 * are used only for words that have no single-word translation. A word's own rank is the best
 * (lowest) rank among the translations it used: no de/fr word frequency lists exist in the
 * registries, so the source's frequency stands in for the foreign word's.
 *
 * With `senseOrder` (the models projected onto the distilled English space), a translation's
 * weight is also divided by the square root of its place in its dictionary's list (1, 2, ...,
 * counted per source space among the translations used): dictionaries list the main sense first,
 * and in a space retrofitted to WordNet a long list of synonyms of a minor sense (Käse: cheese,
 * then 17 words for "nonsense") would otherwise outweigh it.
 *
 * Runtime-agnostic and deterministic (the same inputs give the same vectors).
 */

/** A space translations are looked up in: unit vectors by word, with 1-based frequency ranks. */
export interface SourceSpace {
  readonly dims: number;
  /** Number of words (N of the weight). */
  readonly size: number;
  /** 1-based rank of a word, 0 when absent. */
  rank(word: string): number;
  /** Adds weight * unit vector of the word (rank > 0) into acc. */
  addScaled(word: string, weight: number, acc: Float64Array): void;
}

/** Words of English translations that carry no meaning of their own. */
const FUNCTION_WORDS = new Set([
  'a',
  'an',
  'the',
  'to',
  'of',
  'and',
  'or',
  'in',
  'on',
  'at',
  'for',
  'with',
  'by',
  'from',
  'as',
  'be',
  'is',
  'are',
  'sth',
  'sb',
  'sth.',
  'sb.',
  "sb's",
  "sth's",
  "sb.'s",
  "sth.'s",
  "one's",
  'oneself',
  'someone',
  'something',
  'somebody',
  'etc',
  'etc.',
]);

/** Content words of a cleaned translation phrase (lower-cased, function words dropped). */
export function contentWords(phrase: string): string[] {
  const out: string[] = [];
  for (const raw of phrase.toLowerCase().split(/[\s/]+/)) {
    const w = raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}.']+$/gu, '').replace(/\.$/, '');
    if (w && !FUNCTION_WORDS.has(w)) out.push(w);
  }
  return out;
}

/** Longest phrase (content words) still used as a translation. */
export const MAX_PHRASE_WORDS = 3;

export interface ProjectionOptions {
  /** Use multi-word translations for words without a single-word one (default true). */
  phrases?: boolean;
  /** Weigh translations by their place in the dictionary's list too: weight / sqrt(place). */
  senseOrder?: boolean;
}

export interface ProjectedWord {
  word: string;
  /** Best source rank among the translations used. */
  rank: number;
  /** Unit vector (Float32Array of dims). */
  vector: Float32Array;
}

/** One weighted translation contribution (a single word or a phrase). */
interface Contribution {
  words: string[];
  rank: number;
  weight: number;
}

function contribution(space: SourceSpace, phrase: string): Contribution | null {
  const words = contentWords(phrase);
  if (words.length === 0 || words.length > MAX_PHRASE_WORDS) return null;
  let rank = 0;
  for (const w of words) {
    const r = space.rank(w);
    if (r === 0) return null;
    if (r > rank) rank = r;
  }
  return { words, rank, weight: Math.log((space.size + 1) / rank) };
}

/**
 * Projects one word from its translations; null when none of them is in the space. Several
 * spaces may contribute (French through English and through German): each translation is looked
 * up in its own space, weighted by that space's rank.
 */
export function projectWord(
  word: string,
  translations: ReadonlyArray<{ space: SourceSpace; phrase: string }>,
  options: ProjectionOptions = {},
): ProjectedWord | null {
  const dims = translations[0]?.space.dims ?? 0;
  const singles: Array<{ space: SourceSpace; c: Contribution }> = [];
  const phrases: Array<{ space: SourceSpace; c: Contribution }> = [];
  const seen = new Set<string>();
  for (const t of translations) {
    const c = contribution(t.space, t.phrase);
    if (!c) continue;
    const key = `${t.space.size}\u0000${c.words.join(' ')}`;
    if (seen.has(key)) continue; // the same translation listed twice counts once
    seen.add(key);
    (c.words.length === 1 ? singles : phrases).push({ space: t.space, c });
  }
  const used = singles.length > 0 ? singles : options.phrases === false ? [] : phrases;
  if (used.length === 0) return null;
  const acc = new Float64Array(dims);
  const part = new Float64Array(dims);
  let rank = Infinity;
  // Place of each translation in its own space's list (French: the English and the German list).
  const places = new Map<SourceSpace, number>();
  for (const { space, c } of used) {
    if (c.rank < rank) rank = c.rank;
    const place = (places.get(space) ?? 0) + 1;
    places.set(space, place);
    const weight = options.senseOrder ? c.weight / Math.sqrt(place) : c.weight;
    if (c.words.length === 1) {
      space.addScaled(c.words[0]!, weight, acc);
      continue;
    }
    part.fill(0);
    for (const w of c.words) space.addScaled(w, 1, part);
    let norm = 0;
    for (let d = 0; d < dims; d++) norm += part[d]! * part[d]!;
    norm = Math.sqrt(norm);
    if (!(norm > 0)) continue;
    for (let d = 0; d < dims; d++) acc[d] += (weight * part[d]!) / norm;
  }
  let norm = 0;
  for (let d = 0; d < dims; d++) norm += acc[d]! * acc[d]!;
  norm = Math.sqrt(norm);
  if (!(norm > 0)) return null;
  const vector = new Float32Array(dims);
  for (let d = 0; d < dims; d++) vector[d] = acc[d]! / norm;
  return { word, rank, vector };
}

/** Orders projected words as model rows: by rank, then (optionally) a priority, then the word. */
export function orderProjected<T extends ProjectedWord>(words: T[], priority?: (w: T) => number): T[] {
  return words.sort(
    (a, b) =>
      (priority ? priority(a) - priority(b) : 0) || a.rank - b.rank || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0),
  );
}

/** A SourceSpace over row-major unit vectors in rank order (row r has rank r + 1). */
export class ArraySpace implements SourceSpace {
  private readonly rows = new Map<string, number>();
  constructor(
    readonly dims: number,
    words: readonly string[],
    private readonly vectors: Float32Array,
    /** Unknown compounds take their longest known head (a German pivot space). */
    private readonly compoundHeads = false,
  ) {
    // The first (most frequent) row of a lower-cased key wins, as the model's rowOf does.
    words.forEach((w, r) => {
      if (!this.rows.has(w)) this.rows.set(w, r);
      const k = w.toLowerCase();
      if (!this.rows.has(k)) this.rows.set(k, r);
    });
  }
  get size(): number {
    return this.vectors.length / this.dims;
  }
  rank(word: string): number {
    return this.row(word) + 1;
  }
  private row(word: string): number {
    const r = this.rows.get(word) ?? this.rows.get(word.toLowerCase());
    if (r !== undefined) return r;
    return this.compoundHeads
      ? compoundHeadRow(word, (w) => this.rows.get(w) ?? this.rows.get(w.toLowerCase()) ?? -1)
      : -1;
  }
  addScaled(word: string, weight: number, acc: Float64Array): void {
    const r = this.row(word);
    if (r < 0) return;
    const base = r * this.dims;
    for (let d = 0; d < this.dims; d++) acc[d] += weight * this.vectors[base + d]!;
  }
}

// ---------------------------------------------------------------------------------------------
// Compound fallback (German): an unknown compound takes the vector of its longest known head.
// ---------------------------------------------------------------------------------------------

/** Manifest feature that turns the fallback on in core/model.ts rowOf. */
export const COMPOUND_FEATURE = 'compound-head-fallback';

/** Shortest head tried ("Platz" in "Spielplatz" is 5; 4 keeps "Haus", "Bahn", "Zeit"). */
export const MIN_HEAD_CHARS = 4;
/** Longer tokens are not split (keeps lookups linear in the text). */
export const MAX_COMPOUND_CHARS = 48;

/**
 * The row of the longest proper suffix of `word` (at least MIN_HEAD_CHARS characters, after a
 * modifier of at least 3) that `rowOf` finds, tried capitalised first (German nouns) and then as
 * is; -1 when none. "Kinderspielplatz" -> row of "Spielplatz".
 */
export function compoundHeadRow(word: string, rowOf: (w: string) => number): number {
  const chars = Array.from(word);
  if (chars.length > MAX_COMPOUND_CHARS || chars.length < 3 + MIN_HEAD_CHARS) return -1;
  for (let i = 3; i <= chars.length - MIN_HEAD_CHARS; i++) {
    if (chars[i] === '-') continue;
    const head = chars.slice(i).join('');
    if (!/^\p{L}/u.test(head)) continue;
    const cap = head[0]!.toUpperCase() + head.slice(1);
    let row = rowOf(cap);
    if (row < 0) row = rowOf(head);
    if (row >= 0) return row;
  }
  return -1;
}

// ---------------------------------------------------------------------------------------------
// The English companion of an aligned model
// ---------------------------------------------------------------------------------------------

/** Manifest feature of models built into an English model's space. */
export const ALIGNED_FEATURE = 'aligned-en';
/** The English model of an aligned model whose manifest names none (built before `englishModelId`). */
export const LEGACY_ENGLISH_MODEL_ID = 'en-glove-6b-100d';

export interface SpaceManifest {
  id: string;
  features?: readonly string[];
  englishModelId?: string;
}

/** True for a model projected into an English model's space (features `aligned-en`). */
export function isAligned(manifest: Omit<SpaceManifest, 'id'>): boolean {
  return Array.isArray(manifest.features) && manifest.features.includes(ALIGNED_FEATURE);
}

/**
 * The English companion of a model: for an aligned model, the English model it was projected
 * onto (its manifest's `englishModelId`, else LEGACY_ENGLISH_MODEL_ID); null for any other model.
 */
export function englishCompanionOf(manifest: Omit<SpaceManifest, 'id'>): string | null {
  if (!isAligned(manifest)) return null;
  return typeof manifest.englishModelId === 'string' && manifest.englishModelId
    ? manifest.englishModelId
    : LEGACY_ENGLISH_MODEL_ID;
}

/** The model whose vector space a model's vectors live in: an aligned model's companion, else itself. */
export function vectorSpaceOf(manifest: SpaceManifest): string {
  return englishCompanionOf(manifest) ?? manifest.id;
}
