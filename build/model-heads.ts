/**
 * The head of each model artifact, for the offline scorer's progressive cold start
 * (docs/offline-browser.md): a complete, standalone artifact (core/artifact/) of the model's
 * most frequent HEAD_ROWS rows (rows are in frequency order, so the head is rows [0, HEAD_ROWS)),
 * byte for byte the same words, int8 rows, scales and flags as the full artifact, with its own
 * sorted/folded indexes and the antonym pairs inside the head. Its manifest carries the full
 * model's manifest as `partialOf` (a ModelManifest): the browser scores with the full
 * model's identity (vocabulary size for the rank factors, checksum for the mapper bundles).
 *
 * R2 key `model-heads/{id}.emb` (outside `models/`, which the catalog lists), served by
 * GET /api/v1/artifacts/models/{id}/head. Rebuilt when the full artifact changes.
 *
 * Beside it, the head of each of the model's mapper bundles (core/mapper-bundle.ts
 * mapperBundleHead: the values of the same rows, ~7x smaller), R2 `mapper-heads/{id}/{key}.bin`,
 * served by GET /api/v1/artifacts/mappers/{id}/{key}/head: the first score of a cold start needs
 * the bundles its request names, but only for the head's rows.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeWord, parseArtifact, writeArtifact, type ArtifactInput } from '../core/artifact';
import { mapperBundleHead } from '../core/mapper-bundle';
import { HEAD_ROWS } from '../core/model-head';
import { R2_KEYS } from '../core/storage-keys';
import type { R2Artifact } from './ensure';
import { stampMatches, writeAtomic, writeStamp } from './stamp';
import { MAPPER_HEADS_DIR, MODEL_HEADS_DIR } from './paths';

/** Rows of the head (core/model-head.ts: the offline scorer derives the same head from a cached model). */
export { HEAD_ROWS };
export const HEAD_VERSION = 1;

/** The head artifact of a full artifact (rows [0, min(rows, n))). */
export function buildHead(full: Uint8Array, rows = HEAD_ROWS): Uint8Array {
  const p = parseArtifact(full);
  const k = Math.min(rows, p.size);
  const words: string[] = new Array(k);
  for (let r = 0; r < k; r++) words[r] = decodeWord(p.vocab, p.wordOffsets, r);
  const antonyms: Array<[number, number]> = [];
  for (let i = 0; i + 1 < p.antonyms.length; i += 2) {
    if (p.antonyms[i]! < k && p.antonyms[i + 1]! < k) antonyms.push([p.antonyms[i]!, p.antonyms[i + 1]!]);
  }
  const { dimensions: _d, vocabularySize: _v, quantization: _q, formatVersion: _f, checksum: _c, ...rest } = p.manifest;
  const manifest: ArtifactInput['manifest'] = { ...rest, partialOf: p.manifest } as ArtifactInput['manifest'];
  return writeArtifact({
    manifest,
    words,
    rows: p.rows.slice(0, k * p.dims),
    scales: p.scales.slice(0, k),
    dims: p.dims,
    flags: p.flags.slice(0, k),
    antonyms,
  });
}

/**
 * Writes `file` = build(source bytes) unless its stamp says it was made from this very source
 * (a source is rewritten atomically when rebuilt: size + mtime identify it); returns whether it
 * was (re)built.
 */
function ensureDerived(source: string, file: string, build: (bytes: Uint8Array) => Uint8Array): boolean {
  const stampFile = file.replace(/\.[^./]+$/, '.stamp.json');
  const stat = fs.statSync(source);
  const quick = { version: HEAD_VERSION, rows: HEAD_ROWS, size: stat.size, mtimeMs: stat.mtimeMs };
  if (fs.existsSync(file) && stampMatches(stampFile, quick)) return false;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  writeAtomic(file, build(new Uint8Array(fs.readFileSync(source))));
  writeStamp(stampFile, quick);
  return true;
}

/** Ensure step: a head for every model artifact produced by the earlier steps. */
export function ensureModelHeads(earlier: readonly R2Artifact[]): R2Artifact[] {
  const out: R2Artifact[] = [];
  for (const a of earlier) {
    const m = /^models\/(.+)\.emb$/.exec(a.key);
    if (!m || !fs.existsSync(a.file)) continue;
    const id = m[1]!;
    const file = path.join(MODEL_HEADS_DIR, `${id}.emb`);
    if (ensureDerived(a.file, file, (bytes) => buildHead(bytes)))
      console.error(`[build] model head ${id}: ${HEAD_ROWS} rows, ${(fs.statSync(file).size / 1e6).toFixed(1)} MB`);
    out.push({ key: R2_KEYS.modelHead(id), file, contentType: 'application/octet-stream' });
  }
  return out;
}

/** Ensure step: the head of every mapper bundle produced by the earlier steps (HEAD_ROWS rows). */
export function ensureMapperHeads(earlier: readonly R2Artifact[]): R2Artifact[] {
  const out: R2Artifact[] = [];
  for (const a of earlier) {
    const m = /^mappers\/([^/]+)\/([^/]+)\.bin$/.exec(a.key);
    if (!m || !fs.existsSync(a.file)) continue;
    const [, modelId, key] = m as unknown as [string, string, string];
    const file = path.join(MAPPER_HEADS_DIR, modelId, `${key}.bin`);
    ensureDerived(a.file, file, (bytes) => mapperBundleHead(bytes, HEAD_ROWS));
    out.push({ key: R2_KEYS.mapperHead(modelId, key), file, contentType: 'application/octet-stream' });
  }
  return out;
}
