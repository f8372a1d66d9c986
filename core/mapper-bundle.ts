/**
 * Mapper bundle artifact (R2 key mappers/{modelId}/{bundleKey}.bin): materialized mapper values
 * for every vocabulary row of one embedding model, plus the linear weights of each variable.
 * Runtime-agnostic (Worker, browser, Node).
 *
 * Binary layout, little-endian, every section starts on an 8-byte boundary:
 *
 *   offset  size  field
 *   0       4     magic "EMAP"
 *   4       4     u32 formatVersion (MAPPER_FORMAT_VERSION)
 *   8       4     u32 vocabularySize V (rows of the model the values are aligned with)
 *   12      4     u32 variableCount N (= info.variables.length)
 *   16      4     u32 dims D of the linear weights (0 = the bundle carries no linear weights)
 *   20      4     u32 byte length J of the info JSON
 *   24      4     u32 total byte length of the bundle
 *   28      4     u32 CRC-32 (IEEE) of bytes [32, total)
 *   32      J     MapperBundleInfo as UTF-8 JSON, zero-padded to 8 bytes
 *   ...     16*N  per variable: f64 offset, f64 step (value dequantization, below)
 *   ...     4*N*(D+1)  per variable: D f32 weights then f32 bias (only when D > 0), padded to 8
 *   ...     2*V   per variable, in info.variables order: u16 code per vocabulary row, padded to 8
 *   ...     4+4*L (version 2) u32 L, then the L ascending rows of the training lexicon's words
 *                 (their value is the lexicon's; docs/text-scores.md), padded to 8
 *
 * Values: u16 linear quantization per variable. code 65535 = no value (NaN); otherwise
 * value = offset + code * step with offset = the variable's minimum and
 * step = (max - min) / 65534. The absolute error is at most step / 2 (1.5e-5 on a
 * [-1, 1] scale), finer than f16 (relative 4.9e-4) at the same size.
 *
 * Linear weights: value(vector) = dot(weights, vector) + bias, for a unit-length vector of the
 * model's space (ridge regression fitted on every training word). They let a mapper score
 * vectors that are not vocabulary rows; the endpoints use the materialized values.
 */
import type { MapperBundleInfo, MapperValues } from './types';

export const MAPPER_MAGIC = 'EMAP';
export const MAPPER_FORMAT_VERSION = 2;
/** Version 1 bundles (no lexicon rows) are still read. */
const READABLE_VERSIONS = [1, 2];
const HEADER_BYTES = 32;
const NO_VALUE = 0xffff;
const MAX_CODE = 0xfffe;

export type MapperBundleErrorCode = 'TRUNCATED' | 'CORRUPT' | 'UNSUPPORTED_VERSION' | 'WRONG_MODEL';

export class MapperBundleError extends Error {
  constructor(
    readonly code: MapperBundleErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'MapperBundleError';
  }
}

/** Linear model of one variable over unit word vectors. */
export interface LinearWeights {
  weights: Float32Array;
  bias: number;
}

/** Mapper variable id as carried by mapperKeys and goalConfig.mappers[].id. */
export function mapperVariableId(bundleKey: string, variable: string): string {
  return `${bundleKey}_${variable}`;
}

/** The inverse of mapperVariableId: split at the last '_'; null when either part would be empty. */
export function splitMapperVariableId(id: string): { bundleKey: string; variable: string } | null {
  const cut = id.lastIndexOf('_');
  return cut > 0 && cut < id.length - 1 ? { bundleKey: id.slice(0, cut), variable: id.slice(cut + 1) } : null;
}

const align8 = (n: number): number => (n + 7) & ~7;

/** Byte offsets of the sections (layout above), shared by the writer and the parser. */
function layout(jsonLength: number, nVars: number, dims: number, vocab: number, version: number, lexiconRows: number) {
  const tableStart = align8(HEADER_BYTES + jsonLength);
  const linearStart = tableStart + 16 * nVars;
  const valuesStart = align8(linearStart + (dims > 0 ? 4 * nVars * (dims + 1) : 0));
  const sectionBytes = align8(2 * vocab);
  const lexiconStart = valuesStart + sectionBytes * nVars;
  const total = version >= 2 ? lexiconStart + align8(4 + 4 * lexiconRows) : lexiconStart;
  return { tableStart, linearStart, valuesStart, sectionBytes, lexiconStart, total };
}

let crcTable: Uint32Array | null = null;
export function crc32(bytes: Uint8Array): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  const t = crcTable;
  let c = 0xffffffff;
  for (let i = 0; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** Quantization parameters of a value array: offset = min, step = (max - min) / 65534. */
function quantParams(values: ArrayLike<number>): { offset: number; step: number } {
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (Number.isNaN(v)) continue;
    if (!Number.isFinite(v)) throw new RangeError(`mapper values must be finite or NaN (got ${v} at row ${i})`);
    if (v < min) min = v;
    if (v > max) max = v;
  }
  if (min === Infinity) return { offset: 0, step: 0 };
  return { offset: min, step: (max - min) / MAX_CODE };
}

/** Writes a mapper bundle. `values[variable]` must cover every vocabulary row. */
export function writeMapperBundle(
  info: MapperBundleInfo,
  values: Record<string, ArrayLike<number>>,
  options: { vocabularySize?: number; linear?: Record<string, LinearWeights>; lexiconRows?: ArrayLike<number> } = {},
): Uint8Array {
  const vars = info.variables;
  if (vars.length === 0) throw new RangeError('a mapper bundle needs at least one variable');
  if (new Set(vars).size !== vars.length) throw new RangeError('duplicate mapper variable');
  for (const v of vars) {
    if (!/^[a-z][a-z0-9]*$/.test(v)) throw new RangeError(`mapper variable "${v}" must match [a-z][a-z0-9]*`);
    if (!values[v]) throw new RangeError(`no values for mapper variable "${v}"`);
  }
  const vocab = options.vocabularySize ?? values[vars[0]].length;
  for (const v of vars) {
    if (values[v].length !== vocab)
      throw new RangeError(`values of "${v}" have ${values[v].length} rows, expected ${vocab}`);
  }
  const linear = options.linear;
  let dims = 0;
  if (linear) {
    dims = linear[vars[0]]?.weights.length ?? 0;
    for (const v of vars) {
      const l = linear[v];
      if (!l || l.weights.length !== dims || dims === 0)
        throw new RangeError(`linear weights must cover every variable with the same dims`);
    }
  }
  const json = new TextEncoder().encode(JSON.stringify(info));
  const lexRows = Int32Array.from(options.lexiconRows ?? []).sort();
  for (let i = 0; i < lexRows.length; i++) {
    if (lexRows[i] < 0 || lexRows[i] >= vocab || (i > 0 && lexRows[i] === lexRows[i - 1]))
      throw new RangeError('lexicon rows must be distinct vocabulary rows');
  }
  const { tableStart, linearStart, valuesStart, sectionBytes, lexiconStart, total } = layout(
    json.length,
    vars.length,
    dims,
    vocab,
    MAPPER_FORMAT_VERSION,
    lexRows.length,
  );

  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  out.set(new TextEncoder().encode(MAPPER_MAGIC), 0);
  view.setUint32(4, MAPPER_FORMAT_VERSION, true);
  view.setUint32(8, vocab, true);
  view.setUint32(12, vars.length, true);
  view.setUint32(16, dims, true);
  view.setUint32(20, json.length, true);
  view.setUint32(24, total, true);
  out.set(json, HEADER_BYTES);

  vars.forEach((v, i) => {
    const src = values[v];
    const { offset, step } = quantParams(src);
    view.setFloat64(tableStart + 16 * i, offset, true);
    view.setFloat64(tableStart + 16 * i + 8, step, true);
    if (dims > 0) {
      const l = linear![v];
      const base = linearStart + 4 * i * (dims + 1);
      for (let d = 0; d < dims; d++) view.setFloat32(base + 4 * d, l.weights[d], true);
      view.setFloat32(base + 4 * dims, l.bias, true);
    }
    const codes = new Uint16Array(out.buffer, valuesStart + sectionBytes * i, vocab);
    for (let r = 0; r < vocab; r++) {
      const x = src[r];
      if (Number.isNaN(x)) codes[r] = NO_VALUE;
      else codes[r] = step > 0 ? Math.min(MAX_CODE, Math.max(0, Math.round((x - offset) / step))) : 0;
    }
  });
  view.setUint32(lexiconStart, lexRows.length, true);
  for (let i = 0; i < lexRows.length; i++) view.setUint32(lexiconStart + 4 + 4 * i, lexRows[i], true);
  // Uint16Array views use platform byte order; every supported platform is little-endian.
  view.setUint32(28, crc32(out.subarray(HEADER_BYTES)), true);
  return out;
}

/** A parsed mapper bundle. */
export class MapperBundle implements MapperValues {
  private readonly index: Map<string, number>;

  constructor(
    readonly info: MapperBundleInfo,
    readonly vocabularySize: number,
    readonly dims: number,
    private readonly offsets: Float64Array,
    private readonly steps: Float64Array,
    private readonly codes: Uint16Array[],
    private readonly linearWeights: Float32Array | null,
    private readonly lexiconRows: Uint32Array = new Uint32Array(0),
  ) {
    this.index = new Map(info.variables.map((v, i) => [v, i]));
  }

  /** Bytes this parsed bundle holds (the Worker's memory budget counts them). */
  get byteLength(): number {
    let n = this.offsets.byteLength + this.steps.byteLength + this.lexiconRows.byteLength;
    for (const c of this.codes) n += c.byteLength;
    return n + (this.linearWeights?.byteLength ?? 0);
  }

  /** Mapper variable ids (bundle key + '_' + variable) of this bundle. */
  get variableIds(): string[] {
    return this.info.variables.map((v) => mapperVariableId(this.info.key, v));
  }

  has(variable: string): boolean {
    return this.index.has(variable);
  }

  private slot(variable: string): number {
    const i = this.index.get(variable);
    if (i === undefined) throw new RangeError(`mapper bundle "${this.info.key}" has no variable "${variable}"`);
    return i;
  }

  /** Value of a variable for a vocabulary row; NaN when the row has none or is out of range. Throws for an unknown variable. */
  value(variable: string, row: number): number {
    const i = this.slot(variable);
    if (!(row >= 0 && row < this.vocabularySize)) return NaN;
    const c = this.codes[i][row];
    return c === NO_VALUE ? NaN : this.offsets[i] + c * this.steps[i];
  }

  /** True when the row is a word of the training lexicon (version 2 bundles; its value is the lexicon's). */
  isLexiconRow(row: number): boolean {
    const a = this.lexiconRows;
    let lo = 0;
    let hi = a.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (a[mid] === row) return true;
      if (a[mid] < row) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** Number of lexicon rows (0 for version 1 bundles). */
  get lexiconSize(): number {
    return this.lexiconRows.length;
  }

  /** All values of a variable (one per vocabulary row, NaN = none). */
  values(variable: string): Float32Array {
    const i = this.slot(variable);
    const codes = this.codes[i];
    const off = this.offsets[i];
    const step = this.steps[i];
    const out = new Float32Array(codes.length);
    for (let r = 0; r < codes.length; r++) out[r] = codes[r] === NO_VALUE ? NaN : off + codes[r] * step;
    return out;
  }

  /** Mean of a variable over rows that have a value; NaN when none has. */
  mean(variable: string, rows: ArrayLike<number>): number {
    let sum = 0;
    let n = 0;
    for (let j = 0; j < rows.length; j++) {
      const v = this.value(variable, rows[j]);
      if (!Number.isNaN(v)) {
        sum += v;
        n++;
      }
    }
    return n > 0 ? sum / n : NaN;
  }

  /** Largest absolute error of the stored values of a variable (half a quantization step). */
  precision(variable: string): number {
    return this.steps[this.slot(variable)] / 2;
  }

  /** Linear weights of a variable, or null when the bundle carries none. */
  linear(variable: string): LinearWeights | null {
    const i = this.slot(variable);
    if (!this.linearWeights) return null;
    const base = i * (this.dims + 1);
    return { weights: this.linearWeights.slice(base, base + this.dims), bias: this.linearWeights[base + this.dims] };
  }

  /** Linear model output for a unit vector of the model's space (e.g. a word outside the vocabulary); null without weights. */
  applyLinear(variable: string, vector: ArrayLike<number>): number | null {
    const i = this.slot(variable);
    if (!this.linearWeights) return null;
    if (vector.length !== this.dims)
      throw new RangeError(`vector has ${vector.length} dims, the mapper expects ${this.dims}`);
    const base = i * (this.dims + 1);
    let s = this.linearWeights[base + this.dims];
    for (let d = 0; d < this.dims; d++) s += this.linearWeights[base + d] * vector[d];
    return s;
  }
}

/** What the bundle must belong to; checked when given. */
export interface ExpectedModel {
  id: string;
  vocabularySize: number;
  /** ModelManifest.checksum; compared with info.modelChecksum when both are present. */
  checksum?: string;
  /**
   * The rows present when only the model's head is loaded (core/partial-index.ts): a bundle's
   * head (mapperBundleHead) of exactly these rows is accepted too.
   */
  rowsPresent?: number;
}

/**
 * Parses a mapper bundle. Throws MapperBundleError: TRUNCATED, CORRUPT (magic, checksum,
 * inconsistent header), UNSUPPORTED_VERSION, WRONG_MODEL (trained for another model).
 */
/**
 * `verifyChecksum: false` skips the CRC-32 pass, for bytes whose integrity is already established
 * (the offline scorer verifies every download's SHA-256 before caching it); the structure is
 * still checked.
 */
export function parseMapperBundle(
  input: ArrayBuffer | Uint8Array,
  expectedModel?: ExpectedModel,
  verifyChecksum = true,
): MapperBundle {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  if (bytes.length < HEADER_BYTES)
    throw new MapperBundleError('TRUNCATED', `mapper bundle is ${bytes.length} bytes, shorter than its header`);
  const magic = new TextDecoder().decode(bytes.subarray(0, 4));
  if (magic !== MAPPER_MAGIC) throw new MapperBundleError('CORRUPT', `not a mapper bundle (magic "${magic}")`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4, true);
  if (!READABLE_VERSIONS.includes(version)) {
    throw new MapperBundleError(
      'UNSUPPORTED_VERSION',
      `mapper bundle format version ${version}, this build reads ${MAPPER_FORMAT_VERSION}`,
    );
  }
  const vocab = view.getUint32(8, true);
  const nVars = view.getUint32(12, true);
  const dims = view.getUint32(16, true);
  const jsonLen = view.getUint32(20, true);
  const total = view.getUint32(24, true);
  const crc = view.getUint32(28, true);
  if (bytes.length < total)
    throw new MapperBundleError('TRUNCATED', `mapper bundle is ${bytes.length} bytes, its header says ${total}`);
  if (bytes.length > total)
    throw new MapperBundleError('CORRUPT', `mapper bundle has ${bytes.length - total} trailing bytes`);
  if (nVars === 0 || dims > 100_000) throw new MapperBundleError('CORRUPT', 'mapper bundle header is inconsistent');
  const base = layout(jsonLen, nVars, dims, vocab, version, 0);
  let lexCount = 0;
  if (version >= 2) {
    if (base.lexiconStart + 4 > total)
      throw new MapperBundleError('CORRUPT', 'mapper bundle section sizes do not add up to its length');
    lexCount = view.getUint32(base.lexiconStart, true);
  }
  const {
    tableStart,
    linearStart,
    valuesStart,
    sectionBytes,
    lexiconStart,
    total: expectedTotal,
  } = layout(jsonLen, nVars, dims, vocab, version, lexCount);
  if (expectedTotal !== total)
    throw new MapperBundleError('CORRUPT', 'mapper bundle section sizes do not add up to its length');
  if (verifyChecksum && crc32(bytes.subarray(HEADER_BYTES, total)) !== crc)
    throw new MapperBundleError('CORRUPT', 'mapper bundle checksum mismatch');

  let info: MapperBundleInfo;
  try {
    info = JSON.parse(
      new TextDecoder().decode(bytes.subarray(HEADER_BYTES, HEADER_BYTES + jsonLen)),
    ) as MapperBundleInfo;
  } catch {
    throw new MapperBundleError('CORRUPT', 'mapper bundle info is not valid JSON');
  }
  if (
    !Array.isArray(info.variables) ||
    info.variables.length !== nVars ||
    typeof info.key !== 'string' ||
    typeof info.modelId !== 'string'
  ) {
    throw new MapperBundleError('CORRUPT', 'mapper bundle info does not match its header');
  }
  if (expectedModel) {
    if (info.modelId !== expectedModel.id) {
      throw new MapperBundleError(
        'WRONG_MODEL',
        `mapper bundle "${info.key}" was trained for model "${info.modelId}", not "${expectedModel.id}"`,
      );
    }
    if (vocab !== expectedModel.vocabularySize && vocab !== expectedModel.rowsPresent) {
      throw new MapperBundleError(
        'WRONG_MODEL',
        `mapper bundle "${info.key}" covers ${vocab} rows, model "${expectedModel.id}" has ${expectedModel.vocabularySize}`,
      );
    }
    if (expectedModel.checksum && info.modelChecksum && expectedModel.checksum !== info.modelChecksum) {
      throw new MapperBundleError(
        'WRONG_MODEL',
        `mapper bundle "${info.key}" was built from another build of model "${expectedModel.id}"`,
      );
    }
  }

  // Copy the numeric sections into aligned arrays (the input view may be unaligned).
  const offsets = new Float64Array(nVars);
  const steps = new Float64Array(nVars);
  for (let i = 0; i < nVars; i++) {
    offsets[i] = view.getFloat64(tableStart + 16 * i, true);
    steps[i] = view.getFloat64(tableStart + 16 * i + 8, true);
  }
  let linear: Float32Array | null = null;
  if (dims > 0) {
    linear = new Float32Array(nVars * (dims + 1));
    for (let j = 0; j < linear.length; j++) linear[j] = view.getFloat32(linearStart + 4 * j, true);
  }
  const codes: Uint16Array[] = [];
  for (let i = 0; i < nVars; i++) {
    const start = bytes.byteOffset + valuesStart + sectionBytes * i;
    codes.push(
      start % 2 === 0
        ? new Uint16Array(bytes.buffer, start, vocab)
        : new Uint16Array(bytes.slice(start - bytes.byteOffset, start - bytes.byteOffset + 2 * vocab).buffer),
    );
  }
  const lexiconRows = new Uint32Array(lexCount);
  for (let i = 0; i < lexCount; i++) {
    lexiconRows[i] = view.getUint32(lexiconStart + 4 + 4 * i, true);
    if (lexiconRows[i] >= vocab || (i > 0 && lexiconRows[i] <= lexiconRows[i - 1]))
      throw new MapperBundleError('CORRUPT', 'mapper bundle lexicon rows are not ascending vocabulary rows');
  }
  return new MapperBundle(info, vocab, dims, offsets, steps, codes, linear, lexiconRows);
}

/**
 * The head of a bundle: the same bundle (info, quantization table, linear weights, format
 * version) for the model's first `rows` rows only, its codes copied byte for byte (so every value
 * equals the full bundle's) and the lexicon rows below `rows`. Served beside the model's head
 * (GET /api/v1/artifacts/mappers/{modelId}/{key}/head): the offline scorer's progressive cold start
 * scores the head's rows and needs only their values (~100 KB instead of ~700 KB per variable).
 * The input is verified (checksum included); the output carries its own checksum.
 */
export function mapperBundleHead(input: ArrayBuffer | Uint8Array, rows: number): Uint8Array {
  const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
  const full = parseMapperBundle(bytes);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(4, true);
  const nVars = full.info.variables.length;
  const jsonLen = view.getUint32(20, true);
  const k = Math.max(0, Math.min(Math.floor(rows), full.vocabularySize));
  const src = layout(jsonLen, nVars, full.dims, full.vocabularySize, version, full.lexiconSize);
  const lexicon: number[] = [];
  if (version >= 2) {
    for (let i = 0; i < full.lexiconSize; i++) {
      const r = view.getUint32(src.lexiconStart + 4 + 4 * i, true);
      if (r < k) lexicon.push(r);
    }
  }
  const dst = layout(jsonLen, nVars, full.dims, k, version, lexicon.length);
  const out = new Uint8Array(dst.total);
  const outView = new DataView(out.buffer);
  // Header, info JSON, quantization table and linear weights: unchanged but for V, length, checksum.
  out.set(bytes.subarray(0, dst.valuesStart), 0);
  outView.setUint32(8, k, true);
  outView.setUint32(24, dst.total, true);
  for (let i = 0; i < nVars; i++) {
    const from = src.valuesStart + src.sectionBytes * i;
    out.set(bytes.subarray(from, from + 2 * k), dst.valuesStart + dst.sectionBytes * i);
  }
  if (version >= 2) {
    outView.setUint32(dst.lexiconStart, lexicon.length, true);
    lexicon.forEach((r, i) => outView.setUint32(dst.lexiconStart + 4 + 4 * i, r, true));
  }
  outView.setUint32(28, crc32(out.subarray(HEADER_BYTES)), true);
  return out;
}
