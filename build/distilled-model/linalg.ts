/**
 * Dense matrix products of the distilled model's build on TensorFlow.js's WASM SIMD backend
 * (exported by @energetic-ai/core, which the encoder needs anyway): about 10x plain JavaScript
 * loops. Row-major Float32Arrays in and out; large inputs go through in row blocks so the WASM
 * heap stays small. Deterministic: the same inputs give the same bytes on a machine.
 */
/** The part of TensorFlow.js used here (the package's own types name a module it bundles). */
interface Tensor2D {
  data(): Promise<Float32Array>;
  dispose(): void;
}
interface Tf {
  setBackend(name: string): Promise<boolean>;
  ready(): Promise<void>;
  tensor2d(values: Float32Array, shape: [number, number]): Tensor2D;
  zeros(shape: [number, number]): Tensor2D;
  matMul(a: Tensor2D, b: Tensor2D): Tensor2D;
  transpose(a: Tensor2D): Tensor2D;
  add(a: Tensor2D, b: Tensor2D): Tensor2D;
  tidy<T>(fn: () => T): T;
}
/** Loaded on first use: importing a build step (the tests do, for its paths) must not load TensorFlow.js. */
let tf: Tf;

const BLOCK = 32_768;
let ready: Promise<void> | null = null;

export function linalgReady(): Promise<void> {
  ready ??= (async () => {
    tf = (await import('@energetic-ai/core')) as unknown as Tf;
    await tf.setBackend('wasm');
    await tf.ready();
  })();
  return ready;
}

function block(a: Float32Array, cols: number, from: number, to: number): Tensor2D {
  return tf.tensor2d(a.subarray(from * cols, to * cols), [to - from, cols]);
}

/** A^T B over the rows of A (n x p) and B (n x q): p x q. */
export async function crossProduct(
  a: Float32Array,
  p: number,
  b: Float32Array,
  q: number,
  rows?: number,
): Promise<Float32Array> {
  await linalgReady();
  const n = rows ?? a.length / p;
  let acc = tf.zeros([p, q]);
  for (let from = 0; from < n; from += BLOCK) {
    const to = Math.min(n, from + BLOCK);
    const next = tf.tidy(() => {
      const ab = block(a, p, from, to);
      const bb = a === b ? ab : block(b, q, from, to);
      return tf.add(acc, tf.matMul(tf.transpose(ab), bb));
    });
    acc.dispose();
    acc = next;
  }
  const out = await acc.data();
  acc.dispose();
  return out;
}

/** A (n x p) times W (p x q): n x q. */
export async function multiply(a: Float32Array, p: number, w: Float32Array, q: number): Promise<Float32Array> {
  await linalgReady();
  const n = a.length / p;
  const out = new Float32Array(n * q);
  const wt = tf.tensor2d(w, [p, q]);
  for (let from = 0; from < n; from += BLOCK) {
    const to = Math.min(n, from + BLOCK);
    const r = tf.tidy(() => tf.matMul(block(a, p, from, to), wt));
    out.set(await r.data(), from * q);
    r.dispose();
  }
  wt.dispose();
  return out;
}
