/**
 * `import wasmUrl from "onestore/onestore-core.wasm"`: the core's .wasm as a
 * bundler's file loader hands it over, its URL (esbuild's
 * `--loader:.wasm=file` gives a path relative to the bundle). For
 * configureBrowserCore; docs/guide.md, "Use it with your bundler".
 *
 * @example
 * import wasmUrl from "onestore/onestore-core.wasm";
 * configureBrowserCore({ wasmUrl: new URL(wasmUrl, import.meta.url) });
 */
declare const wasmUrl: string;
export default wasmUrl;
