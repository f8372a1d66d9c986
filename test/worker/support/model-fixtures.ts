/**
 * Generated models in workerd tests: build/generated/ (through the FIXTURES binding) put into R2
 * with their mapper bundles, as the ensure step seeds them for `npm start`.
 */
import { env } from 'cloudflare:test';
import type { ModelManifest } from '../../../core/types';

/** A file of build/generated/, or null when this machine did not build it. */
export async function fixture(rel: string): Promise<ArrayBuffer | null> {
  const res = await env.FIXTURES.fetch(`http://f/${rel}`);
  return res.status === 200 ? res.arrayBuffer() : null;
}

/** Puts a model and its mapper bundles `keys` into R2; its manifest and artifact bytes, or null when not built. */
export async function putModel(
  id: string,
  keys: readonly string[],
): Promise<{ manifest: ModelManifest; bytes: ArrayBuffer } | null> {
  const emb = await fixture(`models/${id}.emb`);
  const json = await fixture(`models/${id}.json`);
  if (!emb || !json) return null;
  await env.ARTIFACTS.put(`models/${id}.emb`, emb);
  await env.ARTIFACTS.put(`models/${id}.json`, json);
  for (const key of keys) {
    const bin = await fixture(`mappers/${id}/${key}.bin`);
    const info = await fixture(`mappers/${id}/${key}.json`);
    if (bin && info) {
      await env.ARTIFACTS.put(`mappers/${id}/${key}.bin`, bin);
      await env.ARTIFACTS.put(`mappers/${id}/${key}.json`, info);
    }
  }
  return { manifest: JSON.parse(new TextDecoder().decode(json)) as ModelManifest, bytes: emb };
}
