// The bench-only wasm build (build/wasm/bench/onestore-bench.mjs + .wasm):
// the shipped core's objects linked once more with RawSqlite
// (wasm/raw_sqlite.cc), the "same SQL, raw" anchor, which the shipped
// dist/onestore-core.wasm no longer carries (issue 13: users do not
// download the bench's code). Loaded once per process in Node, with the
// package's Node file system, and its VFS registered (a Core's open does
// that; RawSqlite's does not), so that a RawSqlite opens files as the
// store's SQLite does.

import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

const loaded = new Map();

/**
 * The bench build of the repository at `root` (a file: URL ending in "/"),
 * loaded once.
 *
 * @example
 * const mod = await loadBenchCore(); const db = new mod.RawSqlite();
 */
export function loadBenchCore(root = new URL("../../", import.meta.url)) {
  const key = String(root);
  if (!loaded.has(key)) loaded.set(key, instantiate(root));
  return loaded.get(key);
}

async function instantiate(root) {
  const dir = new URL("build/wasm/bench/", root);
  let factory;
  let wasmBinary;
  try {
    ({ default: factory } = await import(new URL("onestore-bench.mjs", dir).href));
    wasmBinary = await readFile(new URL("onestore-bench.wasm", dir));
  } catch (e) {
    throw new Error(`bench: the bench-only wasm build is missing from ${fileURLToPath(dir)} (run \`npm run build\`): ${e.message}`, { cause: e });
  }
  const { nodeFiles } = await import(new URL("js/files-node.js", root).href);
  // As js/loader-node.js does: 3.1.6's glue reads `__dirname` while the
  // factory starts and adds process-wide handlers that rethrow; give it the
  // one and take the others away.
  const events = ["uncaughtException", "unhandledRejection"];
  const before = new Map(events.map((e) => [e, new Set(process.listeners(e))]));
  const hadDirname = Object.prototype.hasOwnProperty.call(globalThis, "__dirname");
  if (!hadDirname) globalThis.__dirname = fileURLToPath(dir).replace(/[\\/]$/, "");
  let pending;
  try {
    pending = factory({ wasmBinary, onestoreFiles: nodeFiles });
  } finally {
    if (!hadDirname) delete globalThis.__dirname;
    for (const e of events) {
      for (const l of process.listeners(e)) if (!before.get(e).has(l)) process.removeListener(e, l);
    }
  }
  const mod = await pending;
  const core = new mod.Core();
  core.open(JSON.stringify({ backend: "memory" }));
  core.close();
  core.delete();
  return mod;
}
