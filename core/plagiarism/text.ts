/**
 * Word splitting for plagiarism checks (decisions.md "Plagiarism": words are counted after
 * removing Unicode punctuation and splitting on white space).
 *
 * A word is a white-space-delimited chunk of the text that still has characters left after
 * Unicode punctuation (\p{P}) and invisible format characters (\p{Cf}: soft hyphens,
 * zero-width spaces) are removed. Its normalized form (what matching compares) is that
 * remainder in Unicode NFKC, lower-cased; its offsets point at the whole chunk in the
 * original text, so snippets are cut from the source exactly as it was written.
 *
 * Runtime-agnostic: used by the Worker and the Node tests alike.
 */
export interface Word {
  /** Normalized form: punctuation stripped, NFKC, lower case. Never empty. */
  norm: string;
  /** Zero-based offset of the chunk in the original text (inclusive). */
  start: number;
  /** Offset of the end of the chunk (exclusive). */
  end: number;
}

const CHUNK = /\S+/gu;
const STRIP = /[\p{P}\p{Cf}]/gu;

/** The normalized form of one white-space-free chunk; '' when nothing but punctuation is left. */
export function normalizeChunk(chunk: string): string {
  // NFKC first: it folds full-width letters and compatibility forms, and may turn
  // compatibility punctuation into ordinary punctuation, which is stripped afterwards.
  return chunk.normalize('NFKC').replace(STRIP, '').toLowerCase();
}

/** The words of a text, in order, with offsets into the original string. */
export function splitWords(text: string): Word[] {
  const words: Word[] = [];
  CHUNK.lastIndex = 0;
  for (let m = CHUNK.exec(text); m !== null; m = CHUNK.exec(text)) {
    const norm = normalizeChunk(m[0]);
    if (norm.length > 0) words.push({ norm, start: m.index, end: m.index + m[0].length });
  }
  return words;
}

/** Number of words after punctuation stripping (the interface's wordCount). */
export function countWords(text: string): number {
  return splitWords(text).length;
}
