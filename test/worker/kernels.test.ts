import { env } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
// The Worker's own import path: wrangler's CompiledWasm rule turns it into a WebAssembly.Module.
import kernelsWasm from '../../build/generated/kernels.wasm';
import { Kernels } from '../../core/kernels';
import { kernelSelfTest } from '../../core/kernels-selftest';

async function fixture(name: string): Promise<Response> {
  const res = await env.FIXTURES.fetch(`http://fixtures/${name}`);
  expect(res.status).toBe(200);
  return res;
}

describe('kernels in workerd', () => {
  it('instantiates the imported module with an empty import object', () => {
    expect(kernelsWasm).toBeInstanceOf(WebAssembly.Module);
    expect(WebAssembly.Module.imports(kernelsWasm)).toEqual([]);
  });

  it('serves the same bytes the build hashed', async () => {
    const bytes = await (await fixture('kernels.wasm')).arrayBuffer();
    const digest = await crypto.subtle.digest('SHA-256', bytes);
    const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
    expect(hex).toBe((await (await fixture('kernels.wasm.sha256')).text()).trim());
  });

  it('computes exactly the numbers Node computed from the same bytes', async () => {
    const recorded = await (await fixture('kernels.selftest.json')).json();
    const result = kernelSelfTest(Kernels.fromModule(kernelsWasm));
    expect(result.topAll.rows.length).toBe(17);
    expect(result).toEqual(recorded);
  });
});
