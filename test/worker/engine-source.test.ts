/**
 * The shared EngineSource suite (test/support/engine-source-suite.ts) on the Worker's source in
 * workerd: the generated model, mapper bundles and language data put into R2 (through the
 * FIXTURES binding), the stored dimension into D1; the default model and its sub-word table too.
 */
import { env } from 'cloudflare:test';
import { createEngine } from '../../core/engine';
import { R2_KEYS } from '../../core/storage-keys';
import { invalidateCatalog } from '../../worker/catalog/store';
import { createDimension } from '../../worker/dimensions/store';
import { workerSource } from '../../worker/sources';
import {
  describeEngineSource,
  engineCalls,
  LANGUAGES,
  MAPPER_BUNDLES,
  MODEL,
  STORED_DIMENSION,
  SUBWORD_MODEL,
} from '../support/engine-source-suite';

/** build/generated/<file> into R2 under `key`. */
async function put(file: string, key: string): Promise<void> {
  const res = await env.FIXTURES.fetch(`http://f/${file}`);
  if (res.status !== 200) throw new Error(`build/generated/${file} is missing (the ensure step builds it)`);
  await env.ARTIFACTS.put(key, await res.arrayBuffer());
}

describeEngineSource(
  'Worker (R2, D1 and KV in workerd)',
  async () => {
    await put(`models/${MODEL}.emb`, R2_KEYS.model(MODEL));
    await put(`models/${MODEL}.json`, R2_KEYS.modelManifest(MODEL));
    for (const key of MAPPER_BUNDLES) {
      await put(`mappers/${MODEL}/${key}.bin`, R2_KEYS.mapper(MODEL, key));
      await put(`mappers/${MODEL}/${key}.json`, R2_KEYS.mapperInfo(MODEL, key));
    }
    for (const language of LANGUAGES) await put(`lang/${language}.bin`, R2_KEYS.languageData(language));
    await put(`models/${SUBWORD_MODEL}.emb`, R2_KEYS.model(SUBWORD_MODEL));
    await put(`models/${SUBWORD_MODEL}.json`, R2_KEYS.modelManifest(SUBWORD_MODEL));
    await put(`subword/${SUBWORD_MODEL}.bin`, R2_KEYS.subwordTable(SUBWORD_MODEL));
    await invalidateCatalog(env);
    await createDimension(env, STORED_DIMENSION, null);
    return engineCalls(createEngine(workerSource(env, undefined)));
  },
  {
    // The CLI's engine in Node, through the NODE_ENGINE binding (vitest.config.ts).
    reference: async (call, args) => {
      const res = await env.NODE_ENGINE.fetch('http://node/', { method: 'POST', body: JSON.stringify({ call, args }) });
      if (res.status !== 200) throw new Error(`NODE_ENGINE: ${res.status} ${await res.text()}`);
      return res.json();
    },
  },
);
