/**
 * The synthetic model of `npm run bench:sharding` (docs/benchmarks.md "Row sharding"): 1,500,000
 * words x 300 dimensions (about 460 MB as an artifact, over four times one isolate's budget),
 * derived from the real default model so its neighbourhoods mean something:
 *   - rows 0..340,478 are the real English GloVe words in their frequency order, their 100-d unit
 *     vectors mapped to 300 dimensions by one fixed Gaussian random projection (seed 32), which
 *     keeps cosines close (Johnson-Lindenstrauss);
 *   - every further row j is a noisy copy of real row b = (j - 341,479) mod 341,479, named
 *     `<word>~<copy>`: the projected unit vector plus uniform noise of norm about 0.8 (each copy is
 *     a near neighbour of its word, far below the word itself), with the word's vocabulary flags.
 * Written to build/generated/bench/models/ (not the catalog's models directory, so `npm start`
 * never places it) and kept while the default model it is derived from is unchanged.
 */
import fs from 'node:fs';
import path from 'node:path';
import { decodeWord, parseArtifact, writeArtifact } from '../core/artifact';
import { prng } from '../core/prng';
import { quantizeRows } from '../core/quantize';
import { DEFAULT_MODEL_FILE } from '../build/default-model';
import { writeStamp } from '../build/stamp';
import { GENERATED } from '../build/wrangler';

export const SYNTHETIC_ID = 'en-synthetic-1500k-300d';
export const SYNTHETIC_DIR = path.join(GENERATED, 'bench', 'models');
export const SYNTHETIC_ROWS = 1_500_000;
export const SYNTHETIC_DIMS = 300;
/** Bump when the derivation changes. */
const VERSION = 1;

/** The synthetic model's artifact and manifest, generated when missing or stale; returns the artifact's path. */
export function ensureSyntheticModel(): string {
  const file = path.join(SYNTHETIC_DIR, `${SYNTHETIC_ID}.emb`);
  const manifestFile = path.join(SYNTHETIC_DIR, `${SYNTHETIC_ID}.json`);
  const stampFile = path.join(SYNTHETIC_DIR, `${SYNTHETIC_ID}.stamp.json`);
  const st = fs.statSync(DEFAULT_MODEL_FILE);
  const from = `${VERSION}:${st.size}:${st.mtimeMs}`;
  const stamp = fs.existsSync(stampFile) ? (JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { from: string }) : null;
  if (stamp?.from === from && fs.existsSync(file) && fs.existsSync(manifestFile)) return file;
  const started = performance.now();
  console.log(`[synthetic] generating ${SYNTHETIC_ID} (${SYNTHETIC_ROWS} x ${SYNTHETIC_DIMS}) from the default model`);
  const real = parseArtifact(new Uint8Array(fs.readFileSync(DEFAULT_MODEL_FILE)));
  const n = real.size;
  const d0 = real.dims;
  const D = SYNTHETIC_DIMS;
  // The projection: D x d0 Gaussian entries (Box-Muller), scaled so projected unit vectors stay near unit length.
  const rand = prng(32);
  const gauss = (): number => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());
  const P = new Float32Array(D * d0);
  for (let i = 0; i < P.length; i++) P[i] = gauss() / Math.sqrt(D);
  // The real rows projected (unit length), kept as floats to derive the copies from.
  const projected = new Float32Array(n * D);
  const x = new Float32Array(d0);
  for (let r = 0; r < n; r++) {
    const s = real.scales[r]!;
    for (let k = 0; k < d0; k++) x[k] = real.rows[r * d0 + k]! * s;
    let norm = 0;
    const base = r * D;
    for (let i = 0; i < D; i++) {
      let v = 0;
      const row = i * d0;
      for (let k = 0; k < d0; k++) v += P[row + k]! * x[k]!;
      projected[base + i] = v;
      norm += v * v;
    }
    const inv = norm > 0 ? 1 / Math.sqrt(norm) : 0;
    for (let i = 0; i < D; i++) projected[base + i]! *= inv;
  }
  const rows = new Int8Array(SYNTHETIC_ROWS * D);
  const scales = new Float32Array(SYNTHETIC_ROWS);
  const flags = new Uint16Array(SYNTHETIC_ROWS);
  const words = new Array<string>(SYNTHETIC_ROWS);
  const taken = new Set<string>();
  const v = new Float32Array(D);
  const noise = 0.08; // uniform in [-a, a]: norm sqrt(D / 3) * a, about 0.8 at D = 300
  for (let j = 0; j < SYNTHETIC_ROWS; j++) {
    const b = j < n ? j : (j - n) % n;
    const word = decodeWord(real.vocab, real.wordOffsets, b);
    let name = j < n ? word : `${word}~${Math.floor((j - n) / n) + 1}`;
    while (taken.has(name)) name += '~';
    taken.add(name);
    words[j] = name;
    flags[j] = real.flags[b]!;
    for (let i = 0; i < D; i++) v[i] = projected[b * D + i]! + (j < n ? 0 : (2 * rand() - 1) * noise);
    const q = quantizeRows(v, 1, D);
    rows.set(q.rows, j * D);
    scales[j] = q.scales[0]!;
  }
  taken.clear();
  const {
    dimensions: _d,
    vocabularySize: _n,
    quantization: _q,
    formatVersion: _f,
    checksum: _c,
    ...rest
  } = real.manifest;
  const bytes = writeArtifact({
    manifest: {
      ...rest,
      id: SYNTHETIC_ID,
      sources: [
        'synthetic: the default model projected to 300 dimensions, with noisy copies (bench/synthetic-model.ts)',
      ],
      tag: 'synthetic-1500k',
      labels: { ...rest.labels, label: 'Synthetic 1.5M x 300 (bench)' },
      hasTranslation: false,
    },
    words,
    rows,
    scales,
    dims: D,
    flags,
  });
  fs.mkdirSync(SYNTHETIC_DIR, { recursive: true });
  fs.writeFileSync(file, bytes);
  fs.writeFileSync(manifestFile, `${JSON.stringify(parseArtifact(bytes).manifest, null, 2)}\n`);
  writeStamp(stampFile, { from });
  console.log(
    `[synthetic] wrote ${path.relative(process.cwd(), file)} (${(bytes.byteLength / 1e6).toFixed(0)} MB) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  return file;
}
