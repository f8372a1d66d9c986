/**
 * The model artifact in workerd: the default model built by the global setup goes through R2
 * (env.ARTIFACTS) and loads with the Worker's kernels module; a corrupted copy is rejected.
 */
import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import kernelsWasm from '../../build/generated/kernels.wasm';
import { Kernels } from '../../core/kernels';
import { ArtifactError } from '../../core/artifact';
import { EmbeddingModel } from '../../core/model';
import { R2_KEYS } from '../../core/storage-keys';
import { type ModelManifest } from '../../core/types';

const ID = 'en-glove-6b-100d';

async function fixture(name: string): Promise<Response> {
  const res = await env.FIXTURES.fetch(`http://fixtures/${name}`);
  expect(res.status, `build/generated/${name}`).toBe(200);
  return res;
}

describe('model artifact through R2 in workerd', () => {
  it('loads the default model from an R2 object and answers lookups', async () => {
    await env.ARTIFACTS.put(R2_KEYS.model(ID), await (await fixture(`models/${ID}.emb`)).arrayBuffer());
    const sidecar = (await (await fixture(`models/${ID}.json`)).json()) as ModelManifest;
    const obj = await env.ARTIFACTS.get(R2_KEYS.model(ID));
    expect(obj).not.toBeNull();
    const model = EmbeddingModel.fromArrayBuffer(await obj!.arrayBuffer(), Kernels.fromModule(kernelsWasm));
    expect(model.manifest).toEqual(sidecar);
    expect(model.size).toBe(sidecar.vocabularySize);
    for (let r = 0; r < model.size; r += 4999) expect(model.rowOf(model.word(r))).toBe(r);
    const prefix = model.prefixRows('inter', 10);
    expect(prefix.length).toBe(10);
    expect([...prefix].sort((a, b) => a - b)).toEqual(prefix);
    for (const r of prefix) expect(model.word(r).startsWith('inter')).toBe(true);
    const king = model.rowOf('King');
    expect(model.word(king)).toBe('king');
    expect(model.topK(model.vector(king), 5).rows[0]).toBe(king);
  });

  it('rejects a corrupted R2 object with an ArtifactError', async () => {
    const bytes = new Uint8Array(await (await fixture(`models/${ID}.emb`)).arrayBuffer());
    bytes[bytes.length - 1000]! ^= 0x40;
    await env.ARTIFACTS.put('models/corrupt.emb', bytes);
    const obj = await env.ARTIFACTS.get('models/corrupt.emb');
    const buf = await obj!.arrayBuffer();
    expect(() => EmbeddingModel.fromArrayBuffer(buf, Kernels.fromModule(kernelsWasm))).toThrow(ArtifactError);
    expect(() => EmbeddingModel.fromArrayBuffer(buf.slice(0, 1_000_000), Kernels.fromModule(kernelsWasm))).toThrow(
      /truncated: section \w+ ends at/,
    );
  });
});
