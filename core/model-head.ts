/**
 * The head of a parsed model (core/partial-index.ts): rows [0, HEAD_ROWS) of a full artifact, with
 * the same content as the head artifact build/model-heads.ts writes (same words, int8 rows, scales,
 * flags; the sorted and folded indexes and the antonym pairs restricted to the head, in the same
 * order, since both are sorted by key then row id), derived in one linear pass without sorting.
 * The offline scorer keeps it beside the full model in IndexedDB, so a cached load reads only
 * the head before it scores (browser/src/model-store.ts).
 *
 * All typed arrays of the result are views into one ArrayBuffer (structured clone stores one
 * buffer, one IndexedDB blob). Its manifest is the full one with the head's vocabulary size and
 * the full manifest as `partialOf` (HeadManifest), as in a head artifact.
 */
import type { ParsedArtifact } from './artifact';
import type { HeadManifest } from './partial-index';

/** Rows of a head: the most frequent words, enough for nearly every token of running text. */
export const HEAD_ROWS = 50_000;

const ALIGN = 16;
const align = (n: number): number => Math.ceil(n / ALIGN) * ALIGN;

/** Row ids of `index` below `k`, in their order (a sorted index restricted to the head's rows). */
function below(index: Uint32Array, k: number, out: Uint32Array): void {
  let j = 0;
  for (let i = 0; i < index.length; i++) {
    const r = index[i]!;
    if (r < k) out[j++] = r;
  }
}

/** The head (the first `rows` rows) of a parsed artifact; null when the model is not larger than that. */
export function headOf(parsed: ParsedArtifact, rows = HEAD_ROWS): ParsedArtifact | null {
  const n = parsed.size;
  if (n <= rows) return null;
  const k = rows;
  const d = parsed.dims;
  let pairs = 0;
  for (let i = 0; i + 1 < parsed.antonyms.length; i += 2)
    if (parsed.antonyms[i]! < k && parsed.antonyms[i + 1]! < k) pairs++;
  const vocabBytes = parsed.wordOffsets[k]!;
  // One buffer: the 4-byte sections first (alignment), then the rest.
  const sizes = {
    wordOffsets: (k + 1) * 4,
    sortedIndex: k * 4,
    foldedIndex: k * 4,
    antonyms: pairs * 8,
    scales: k * 4,
    flags: k * 2,
    rows: k * d,
    wordLengths: k,
    vocab: vocabBytes,
  };
  let total = 0;
  const at: Record<string, number> = {};
  for (const [name, size] of Object.entries(sizes)) {
    at[name] = total;
    total += align(size);
  }
  const buf = new ArrayBuffer(total);
  const wordOffsets = new Uint32Array(buf, at.wordOffsets, k + 1);
  wordOffsets.set(parsed.wordOffsets.subarray(0, k + 1));
  const sortedIndex = new Uint32Array(buf, at.sortedIndex, k);
  below(parsed.sortedIndex, k, sortedIndex);
  const foldedIndex = new Uint32Array(buf, at.foldedIndex, k);
  below(parsed.foldedIndex, k, foldedIndex);
  const antonyms = new Uint32Array(buf, at.antonyms, pairs * 2);
  for (let i = 0, j = 0; i + 1 < parsed.antonyms.length; i += 2) {
    const a = parsed.antonyms[i]!;
    const b = parsed.antonyms[i + 1]!;
    if (a < k && b < k) {
      antonyms[j++] = a;
      antonyms[j++] = b;
    }
  }
  const scales = new Float32Array(buf, at.scales, k);
  scales.set(parsed.scales.subarray(0, k));
  const flags = new Uint16Array(buf, at.flags, k);
  flags.set(parsed.flags.subarray(0, k));
  const rowBytes = new Int8Array(buf, at.rows, k * d);
  rowBytes.set(parsed.rows.subarray(0, k * d));
  const wordLengths = new Uint8Array(buf, at.wordLengths, k);
  wordLengths.set(parsed.wordLengths.subarray(0, k));
  const vocab = new Uint8Array(buf, at.vocab, vocabBytes);
  vocab.set(parsed.vocab.subarray(0, vocabBytes));
  const manifest: HeadManifest = { ...parsed.manifest, vocabularySize: k, partialOf: parsed.manifest };
  return {
    manifest,
    size: k,
    dims: d,
    rows: rowBytes,
    scales,
    wordLengths,
    vocab,
    wordOffsets,
    sortedIndex,
    flags,
    foldedIndex,
    antonyms,
    byteLength: total,
  };
}
