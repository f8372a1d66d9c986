/** Test models of the node project: vectors -> quantized artifact (a fixed test manifest) -> loaded model. */
import { writeArtifact } from '../../../core/artifact';
import { EmbeddingModel, type ModelLoadOptions } from '../../../core/model';
import { quantizeRows } from '../../../core/quantize';
import { loadKernels } from '../../../build/load-model';

/** The manifest of every test artifact written here and by the head tests. */
export const TEST_MANIFEST = {
  id: 'm',
  language: 'en',
  country: 'US',
  version: '1',
  sources: [],
  features: [],
  tag: '',
  trainingYear: '2020',
  trainingMonth: '01',
  labels: { label: 'x', languageLabel: 'English', countryLabel: 'United States', monthLabel: 'January' },
  tokenCount: 0,
  hasTranslation: false,
  license: 'CC0-1.0',
};

/** Writes `words` with their row-major `vectors` as an artifact and loads it; also returns the artifact bytes. */
export function modelFromVectors(
  words: string[],
  vectors: Float32Array,
  dims: number,
  options?: ModelLoadOptions,
): { model: EmbeddingModel; buffer: ArrayBuffer } {
  const { rows, scales } = quantizeRows(vectors, words.length, dims);
  const bytes = writeArtifact({
    manifest: TEST_MANIFEST,
    words,
    rows,
    scales,
    dims,
  });
  const buffer = bytes.buffer as ArrayBuffer;
  return { model: EmbeddingModel.fromArrayBuffer(buffer, loadKernels(), options), buffer };
}
