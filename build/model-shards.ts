/**
 * The artifacts of the row-sharded models of a placement (core/placement.ts, core/sharded-index.ts):
 * for each, its parts (`models/<id>/rows-<start>-<end>.emb`, the rows of that range with their
 * words, flags and the antonym links inside the range) and its word map (`models/<id>/words.emb`,
 * every word, flag and antonym link with a one-dimension placeholder matrix), cut from the model's
 * artifact in build/generated/models (or the directory given) and written beside it. Files already
 * cut from the same artifact are kept. Keys with a '/' after models/ are outside the catalog
 * (core/storage-keys.ts isCatalogKey): the catalog lists the model, not its parts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeWord, parseArtifact, writeArtifact, type ParsedArtifact } from '../core/artifact';
import type { Placement } from '../core/placement';
import { SHARD_PART_FEATURE } from '../core/sharded-index';
import { R2_KEYS } from '../core/storage-keys';
import type { R2Artifact } from './ensure';
import { writeStamp } from './stamp';
import { MODELS_DIR } from './paths';

/** Bump when the cut changes: parts and maps cut before are cut again. */
const SHARDS_FORMAT = 3;

/** Writes the missing part and map artifacts of every sharded model of `placement`; returns all of them as R2 objects. */
export function ensureShardArtifacts(placement: Placement, modelsDir = MODELS_DIR): R2Artifact[] {
  const out: R2Artifact[] = [];
  for (const [id, layout] of Object.entries(placement.sharded ?? {})) {
    const source = path.join(modelsDir, `${id}.emb`);
    const st = fs.statSync(source);
    const from = `${st.size}:${st.mtimeMs}`;
    const dir = path.join(modelsDir, id);
    const stampFile = path.join(dir, 'stamp.json');
    const stamp = fs.existsSync(stampFile)
      ? (JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { from: string; format?: number })
      : null;
    if (stamp?.from !== from || stamp.format !== SHARDS_FORMAT) fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const wanted = [
      { id: layout.map.id, range: null },
      ...layout.parts.map((p) => ({ id: p.id, range: { start: p.start, end: p.end } })),
    ];
    let parsed: ParsedArtifact | null = null;
    for (const w of wanted) {
      const file = path.join(modelsDir, `${w.id}.emb`);
      const manifestFile = path.join(modelsDir, `${w.id}.json`);
      if (!fs.existsSync(file) || !fs.existsSync(manifestFile)) {
        parsed ??= parseArtifact(new Uint8Array(fs.readFileSync(source)));
        const bytes = w.range ? cutPart(parsed, w.id, w.range.start, w.range.end) : cutMap(parsed, w.id);
        fs.writeFileSync(file, bytes);
        fs.writeFileSync(manifestFile, `${JSON.stringify(parseArtifact(bytes).manifest, null, 2)}\n`);
        console.log(`[shards] wrote ${path.relative(process.cwd(), file)} (${(bytes.byteLength / 1e6).toFixed(1)} MB)`);
      }
      out.push(
        { key: R2_KEYS.model(w.id), file, contentType: 'application/octet-stream' },
        { key: R2_KEYS.modelManifest(w.id), file: manifestFile, contentType: 'application/json' },
      );
    }
    writeStamp(stampFile, { from, format: SHARDS_FORMAT });
    // The model's catalog entry (the shipped models' is seeded by their build step as well).
    out.push({
      key: R2_KEYS.modelManifest(id),
      file: path.join(modelsDir, `${id}.json`),
      contentType: 'application/json',
    });
  }
  return out;
}

function wordsOf(a: ParsedArtifact, start: number, end: number): string[] {
  const words = new Array<string>(end - start);
  for (let r = start; r < end; r++) words[r - start] = decodeWord(a.vocab, a.wordOffsets, r);
  return words;
}

/** The manifest fields an artifact's writer takes (the derived ones it fills in). */
function manifestFor(a: ParsedArtifact, id: string) {
  const { dimensions: _d, vocabularySize: _n, quantization: _q, formatVersion: _f, checksum, ...rest } = a.manifest;
  return { ...rest, id, shardOf: checksum };
}

/** Rows [start, end) of `a` as an artifact of their own (antonym links inside the range, renumbered). */
export function cutPart(a: ParsedArtifact, id: string, start: number, end: number): Uint8Array {
  const antonyms: Array<[number, number]> = [];
  for (let i = 0; i < a.antonyms.length; i += 2) {
    const x = a.antonyms[i]!;
    const y = a.antonyms[i + 1]!;
    if (x >= start && x < end && y >= start && y < end) antonyms.push([x - start, y - start]);
  }
  const manifest = manifestFor(a, id);
  return writeArtifact({
    manifest: { ...manifest, features: [...(manifest.features ?? []), SHARD_PART_FEATURE] },
    words: wordsOf(a, start, end),
    rows: a.rows.slice(start * a.dims, end * a.dims),
    scales: a.scales.slice(start, end),
    dims: a.dims,
    flags: a.flags.slice(start, end),
    antonyms,
  });
}

/** The word map of `a`: its whole vocabulary (words, flags, antonyms), with a one-byte zero row each. */
export function cutMap(a: ParsedArtifact, id: string): Uint8Array {
  const antonyms: Array<[number, number]> = [];
  for (let i = 0; i < a.antonyms.length; i += 2) antonyms.push([a.antonyms[i]!, a.antonyms[i + 1]!]);
  return writeArtifact({
    manifest: manifestFor(a, id),
    words: wordsOf(a, 0, a.size),
    rows: new Int8Array(a.size),
    scales: new Float32Array(a.size),
    dims: 1,
    flags: a.flags.slice(),
    antonyms,
  });
}
