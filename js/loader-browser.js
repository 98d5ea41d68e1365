// The browser runtime of the package (a page or a dedicated Worker): loads
// the wasm core once per realm, streaming it from next to the .mjs.
//
// The factory gets an `instantiateWasm` hook, so Emscripten never guesses the
// .wasm's address itself; a bundler that moves the file can pass its URL as
// `wasmUrl` to configureBrowserCore().

let modulePromise = null;
let wasmUrlOverride = null;

/**
 * Sets where the core's .wasm is fetched from (a bundler's asset URL, say).
 * Call it before the first openStore().
 *
 * @example
 * configureBrowserCore({ wasmUrl: new URL("./onestore-core.wasm", import.meta.url) });
 */
export function configureBrowserCore({ wasmUrl } = {}) {
  wasmUrlOverride = wasmUrl ? String(wasmUrl) : null;
}

/**
 * The wasm module (the factory's instance), loaded once and shared by every
 * store of this realm.
 *
 * @example
 * const mod = await loadBrowserCore(); const core = new mod.Core();
 */
export function loadBrowserCore(extra = {}) {
  if (!modulePromise) {
    modulePromise = instantiate(extra).catch((e) => {
      modulePromise = null;
      throw e;
    });
  }
  return modulePromise;
}

async function instantiate(extra) {
  const dist = new URL("../dist/", import.meta.url);
  const wasmUrl = wasmUrlOverride ?? new URL("onestore-core.wasm", dist).href;
  const { default: factory } = await import(new URL("onestore-core.mjs", dist).href);
  // A failed fetch must reject the open, not leave the factory waiting.
  let fail;
  const failed = new Promise((_, reject) => { fail = reject; });
  return Promise.race([failed, factory({
    ...extra,
    instantiateWasm(imports, done) {
      streamWasm(wasmUrl, imports).then(
        ({ instance, module }) => done(instance, module),
        (e) => fail(new Error(`onestore: cannot load the wasm core from ${wasmUrl}: ${e.message}`, { cause: e })));
      return {};  // Emscripten's "instantiating asynchronously" answer
    },
  })]);
}

async function streamWasm(url, imports) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  if (WebAssembly.instantiateStreaming && response.headers.get("content-type")?.startsWith("application/wasm")) {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
}

/** Open options as the core takes them (nothing to prepare for memory). */
export async function prepareBrowserOpen(options) {
  const out = { ...options };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
}

/** The runtime handed to openStoreWith. */
export const browserRuntime = Object.freeze({ backends: ["memory"], load: () => loadBrowserCore(), prepare: prepareBrowserOpen });
