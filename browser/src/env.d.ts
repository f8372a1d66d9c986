// `*.wasm?bytes`: the file inlined as a Uint8Array by browser/vite.config.ts (wasmBytes plugin).
declare module '*.wasm?bytes' {
  const bytes: Uint8Array<ArrayBuffer>;
  export default bytes;
}
