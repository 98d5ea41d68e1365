// Drops from the linked core's glue (dist/onestore-core.mjs) the code that
// finds and fetches the .wasm itself: about 300 bytes of the gzipped download
// (issue 13: the .wasm plus JS stay within 500 KB).
//
//   node wasm/trim-glue.mjs <module.mjs>
//
// Why it is dead: the package's loaders always hand the glue the module.
// js/loader-browser.js and js/loader-workerd.js pass `instantiateWasm` (the
// glue then never reaches its own instantiation), and js/loader-node.js and
// bench/lib/bench-core.mjs pass `wasmBinary` (the bytes: the glue compiles
// them and fetches nothing). What goes:
//
// - the web and worker branch that works out the script's folder and makes
//   XMLHttpRequest readers (readBinary, readAsync) and setWindowTitle: with
//   it gone they stay undefined, as they are in Node and workerd today;
// - getBinaryPromise's fetch of the .wasm (taken only without wasmBinary);
// - instantiateAsync's instantiateStreaming of a fetched .wasm (taken only
//   without wasmBinary, and only when instantiateWasm was not given).
//
// Each piece must be found exactly once, as Emscripten 3.1.6 writes it;
// anything else fails the script (and the build with it) rather than guess.

import { readFileSync, writeFileSync } from "node:fs";

const CUTS = [
  {
    what: "the web and worker branch that locates the script and reads files by XMLHttpRequest",
    from: "if(ENVIRONMENT_IS_WEB||ENVIRONMENT_IS_WORKER){if(ENVIRONMENT_IS_WORKER){scriptDirectory=",
    to: "setWindowTitle=(title=>document.title=title)}else{}",
    with: "",
  },
  {
    what: "getBinaryPromise's fetch of the .wasm",
    from: "if(!wasmBinary&&(ENVIRONMENT_IS_WEB||ENVIRONMENT_IS_WORKER)){if(typeof fetch==\"function\"){",
    to: ".catch(function(){return getBinary(wasmBinaryFile)})}}",
    with: "",
  },
  {
    what: "instantiateAsync's streaming compile of a fetched .wasm",
    from: "function instantiateAsync(){if(!wasmBinary&&typeof WebAssembly.instantiateStreaming==\"function\"",
    to: "return instantiateArrayBuffer(receiveInstantiationResult)})})}else{return instantiateArrayBuffer(receiveInstantiationResult)}}",
    with: "function instantiateAsync(){return instantiateArrayBuffer(receiveInstantiationResult)}",
  },
];

/** The glue text without the CUTS; throws when one is not found exactly once. */
export function trimGlue(text) {
  for (const cut of CUTS) {
    const at = text.indexOf(cut.from);
    const end = at < 0 ? -1 : text.indexOf(cut.to, at);
    if (at < 0 || end < 0 || text.indexOf(cut.from, at + 1) >= 0) {
      throw new Error(`trim-glue: ${cut.what} is not in the glue exactly once as Emscripten 3.1.6 writes it; update wasm/trim-glue.mjs`);
    }
    text = text.slice(0, at) + cut.with + text.slice(end + cut.to.length);
  }
  return text;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [file] = process.argv.slice(2);
  if (!file) throw new Error("usage: node wasm/trim-glue.mjs <module.mjs>");
  writeFileSync(file, trimGlue(readFileSync(file, "utf8")));
}
