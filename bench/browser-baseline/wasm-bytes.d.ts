// The baseline worker's modules import browser/src, whose early-reads.ts inlines kernels.wasm
// (browser/src/env.d.ts declares this for the browser's own type check).
declare module '*.wasm?bytes' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
