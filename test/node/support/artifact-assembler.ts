/**
 * Builders of model artifact inputs (random Unicode/case vocabularies) and an independent
 * assembler written from the documented layout of core/artifact/, used to craft exact and
 * corrupt files (so the documentation is tested too). Shared by the artifact tests.
 */
import { expect } from 'vitest';
import {
  ArtifactError,
  ARTIFACT_FORMAT_VERSION,
  murmur3,
  parseArtifact,
  type ArtifactInput,
} from '../../../core/artifact';
import { quantizeRows } from '../../../core/quantize';
import { prng } from '../../../core/prng';

export const enc = new TextEncoder();

export function baseManifest(id = 'test-model'): ArtifactInput['manifest'] {
  return {
    id,
    language: 'en',
    country: 'US',
    version: '1',
    sources: ['unit test'],
    features: ['random'],
    tag: 'fixture',
    trainingYear: '2020',
    trainingMonth: '02',
    labels: {
      label: 'English (United States), February 2020',
      languageLabel: 'English',
      countryLabel: 'United States',
      monthLabel: 'February',
    },
    tokenCount: 12345,
    hasTranslation: false,
    license: 'CC0-1.0',
  };
}

export const rng = prng;

export const ALPHABET = [
  'a',
  'b',
  'c',
  'z',
  'A',
  'B',
  'Z',
  'é',
  'É',
  'ß',
  'İ',
  'ı',
  'Σ',
  'σ',
  'ς',
  'ǅ',
  'K',
  '中',
  '😀',
  '-',
  "'",
  '0',
];

export function randomVocabulary(n: number, rand: () => number): string[] {
  const out = new Set<string>();
  while (out.size < n) {
    const len = 1 + Math.floor(rand() * 6);
    let w = '';
    for (let i = 0; i < len; i++) w += ALPHABET[Math.floor(rand() * ALPHABET.length)];
    out.add(w);
  }
  return [...out];
}

export function makeInput(words: string[], dims: number, seed = 1, id?: string): ArtifactInput {
  const rand = rng(seed);
  const vectors = new Float32Array(words.length * dims);
  for (let i = 0; i < vectors.length; i++) vectors[i] = rand() * 2 - 1;
  const { rows, scales } = quantizeRows(vectors, words.length, dims);
  return { manifest: baseManifest(id), words, rows, scales, dims };
}

/** Key order of the format: UTF-8 of the lower-cased word, bytewise; ties by row id. */
export function referenceSortedIndex(words: string[]): number[] {
  const keys = words.map((w) => Buffer.from(w.toLowerCase(), 'utf8'));
  return words.map((_, i) => i).sort((a, b) => Buffer.compare(keys[a]!, keys[b]!) || a - b);
}

export function toArrayBuffer(bytes: Uint8Array): ArrayBuffer {
  return bytes.slice().buffer;
}

// ---------------------------------------------------------------------------------------------
// An independent assembler following the documented layout (used to craft corrupt files).
// ---------------------------------------------------------------------------------------------

export interface RawSection {
  tag: string;
  bytes: Uint8Array;
  /** Override the stored offset / length / checksum. */
  offset?: number;
  length?: number;
  checksum?: number;
}

export function mm3(bytes: Uint8Array): number {
  return murmur3(bytes.slice().buffer, 0, bytes.length);
}

export function mm3Words(words: number[]): number {
  const b = new Uint8Array(new Uint32Array(words).buffer);
  return mm3(b);
}

export function assemble(
  sections: RawSection[],
  header: {
    version?: number;
    n: number;
    dims: number;
    fileBytes?: number;
    contentChecksum?: number;
    headerChecksum?: number;
    magic?: string;
  },
): Uint8Array {
  const tableEnd = 64 + 16 * sections.length;
  const align = (x: number) => Math.ceil(x / 16) * 16;
  let p = align(tableEnd);
  const placed = sections.map((s) => {
    const at = p;
    p = align(p + s.bytes.length);
    return at;
  });
  const out = new Uint8Array(p);
  const dv = new DataView(out.buffer);
  const magic = header.magic ?? 'EMBEDART';
  for (let i = 0; i < 8; i++) out[i] = magic.charCodeAt(i);
  dv.setUint32(8, header.version ?? ARTIFACT_FORMAT_VERSION, true);
  dv.setUint32(12, sections.length, true);
  dv.setUint32(16, header.fileBytes ?? p, true);
  dv.setUint32(20, header.n, true);
  dv.setUint32(24, header.dims, true);
  const checksums = sections.map((s) => s.checksum ?? mm3(s.bytes));
  const content =
    header.contentChecksum ??
    mm3Words(sections.map((s, i) => (s.tag === 'MANI' ? -1 : checksums[i]!)).filter((c) => c !== -1));
  dv.setUint32(32, content, true);
  sections.forEach((s, i) => {
    const e = 64 + 16 * i;
    for (let k = 0; k < 4; k++) out[e + k] = s.tag.charCodeAt(k);
    dv.setUint32(e + 4, s.offset ?? placed[i]!, true);
    dv.setUint32(e + 8, s.length ?? s.bytes.length, true);
    dv.setUint32(e + 12, checksums[i]!, true);
    out.set(s.bytes, placed[i]!);
  });
  const headerBytes = new Uint8Array(60 + 16 * sections.length);
  headerBytes.set(out.subarray(0, 60));
  headerBytes.set(out.subarray(64, tableEnd), 60);
  dv.setUint32(60, header.headerChecksum ?? mm3(headerBytes), true);
  return out;
}

/** Sections of a valid artifact, read back from its table. */
export function sectionsOf(file: Uint8Array): RawSection[] {
  const dv = new DataView(file.buffer, file.byteOffset);
  const count = dv.getUint32(12, true);
  const out: RawSection[] = [];
  for (let i = 0; i < count; i++) {
    const e = 64 + 16 * i;
    const tag = String.fromCharCode(...file.subarray(e, e + 4));
    const off = dv.getUint32(e + 4, true);
    const len = dv.getUint32(e + 8, true);
    out.push({ tag, bytes: file.slice(off, off + len) });
  }
  return out;
}

export function headerOf(file: Uint8Array): { n: number; dims: number } {
  const dv = new DataView(file.buffer, file.byteOffset);
  return { n: dv.getUint32(20, true), dims: dv.getUint32(24, true) };
}

export function replaceSection(sections: RawSection[], tag: string, bytes: Uint8Array): RawSection[] {
  return sections.map((s) => (s.tag === tag ? { tag, bytes } : s));
}

/** Replaces a data section and updates the manifest's content checksum to match (a consistent but wrong file). */
export function replaceData(sections: RawSection[], tag: string, bytes: Uint8Array): RawSection[] {
  const next = replaceSection(sections, tag, bytes);
  const content = mm3Words(next.filter((s) => s.tag !== 'MANI').map((s) => mm3(s.bytes)));
  const mani = JSON.parse(new TextDecoder().decode(next.find((s) => s.tag === 'MANI')!.bytes)) as Record<
    string,
    unknown
  >;
  mani.checksum = `murmur3:${content.toString(16).padStart(8, '0')}`;
  return replaceSection(next, 'MANI', enc.encode(JSON.stringify(mani)));
}

export function withManifest(file: Uint8Array, edit: (m: Record<string, unknown>) => unknown): Uint8Array {
  const secs = sectionsOf(file);
  const mani = JSON.parse(new TextDecoder().decode(secs.find((s) => s.tag === 'MANI')!.bytes)) as Record<
    string,
    unknown
  >;
  const edited = edit(mani) ?? mani;
  return assemble(replaceSection(secs, 'MANI', enc.encode(JSON.stringify(edited))), headerOf(file));
}

export function expectError(bytes: Uint8Array | ArrayBuffer, pattern: RegExp): void {
  let thrown: unknown = null;
  try {
    parseArtifact(bytes instanceof Uint8Array ? toArrayBuffer(bytes) : bytes);
  } catch (err) {
    thrown = err;
  }
  expect(thrown, `expected an ArtifactError matching ${pattern}`).toBeInstanceOf(ArtifactError);
  expect((thrown as Error).message).toMatch(pattern);
}
