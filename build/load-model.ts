/**
 * Node loaders of generated artifacts, for the CLI, build scripts, benchmarks and node tests:
 * the WASM kernels and model artifacts from build/generated, and the default model's original
 * float vectors (for recall measurements against exact cosine). No build step is loaded here, so
 * reading a file costs no more than the file.
 */
import fs from 'node:fs';
import { Kernels } from '../core/kernels';
import { EmbeddingModel, type ModelLoadOptions } from '../core/model';
import { DEFAULT_MODEL_FILE, KERNELS_WASM } from './paths';
import type { WinkVectors } from './vector-readers';

let kernelsModule: WebAssembly.Module | null = null;

/** A fresh Kernels instance (own WASM memory) on build/generated/kernels.wasm. */
export function loadKernels(): Kernels {
  if (!kernelsModule) {
    if (!fs.existsSync(KERNELS_WASM))
      throw new Error(`${KERNELS_WASM} is missing: run npm test or npm start once (ensureBuilt) to build it`);
    kernelsModule = new WebAssembly.Module(fs.readFileSync(KERNELS_WASM));
  }
  return Kernels.fromModule(kernelsModule);
}

/** Reads a file into an ArrayBuffer of exactly its size (no Buffer pool sharing). */
export function readArrayBuffer(file: string): ArrayBuffer {
  const bytes = fs.readFileSync(file);
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength
    ? (bytes.buffer as ArrayBuffer)
    : (bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
}

/** Loads a model artifact file with its own kernels instance. */
export function loadModelFile(file: string, options?: ModelLoadOptions & { kernels?: Kernels }): EmbeddingModel {
  return EmbeddingModel.fromArrayBuffer(readArrayBuffer(file), options?.kernels ?? loadKernels(), options);
}

/** The default model (build/generated/models/en-glove-6b-100d.emb; built by ensureBuilt). */
export function loadDefaultModel(options?: ModelLoadOptions & { kernels?: Kernels }): EmbeddingModel {
  if (!fs.existsSync(DEFAULT_MODEL_FILE))
    throw new Error(`${DEFAULT_MODEL_FILE} is missing: run npm test or npm start once (ensureBuilt) to build it`);
  return loadModelFile(DEFAULT_MODEL_FILE, options);
}

/**
 * The default model's original float32 vectors (not normalized), row r = the artifact's row r,
 * streamed from the wink JSON (~3 s, ~140 MB). For recall against exact float64 cosine.
 */
export async function loadGloveFloatVectors(): Promise<WinkVectors> {
  // Loaded on use: the source package is the default-model step's business.
  const [{ winkSource }, { readWinkJson }] = await Promise.all([import('./glove-model'), import('./vector-readers')]);
  return readWinkJson(winkSource().file);
}
